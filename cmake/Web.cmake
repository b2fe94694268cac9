# The WebAssembly build (emcmake; scripts/build-web.sh): the same libraries as the native build, with
# the browser's WebGPU under the GPU layer (src/gpu/web/webgpu.js) where native builds link Dawn.
# Tests, the command line, Python and the install rules are native only; web/ builds wgx.js.
# C++ exceptions are how every layer reports errors: Emscripten's JavaScript-based ones (wasm
# exceptions do not combine with Asyncify in this Emscripten).
add_compile_options(-fexceptions)
add_link_options(-fexceptions)
# What the pinned Emscripten's standard library lacks of C++20 (std::bit_cast).
add_compile_options("SHELL:-include ${PROJECT_SOURCE_DIR}/src/gpu/web/compat.h")

if(NOT WGX_WEB_DEPS OR NOT EXISTS "${WGX_WEB_DEPS}/lib/libpcre2-8.a")
  message(FATAL_ERROR "WGX_WEB_DEPS must name the WebAssembly PCRE2 and utf8proc that "
                      "scripts/setup-web.sh builds (scripts/build-web.sh passes it)")
endif()
set(WGX_PCRE2_INCLUDE "${WGX_WEB_DEPS}/include" CACHE PATH "" FORCE)
set(WGX_PCRE2_LIBRARY "${WGX_WEB_DEPS}/lib/libpcre2-8.a" CACHE FILEPATH "" FORCE)
set(WGX_UTF8PROC_INCLUDE "${WGX_WEB_DEPS}/include" CACHE PATH "" FORCE)
set(WGX_UTF8PROC_LIBRARY "${WGX_WEB_DEPS}/lib/libutf8proc.a" CACHE FILEPATH "" FORCE)

# nlohmann/json is header-only: Debian's headers, seen through a folder that holds them alone (the
# rest of /usr/include is the host's C library, not Emscripten's).
find_file(WGX_NLOHMANN_JSON nlohmann/json.hpp PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH NO_DEFAULT_PATH)
if(NOT WGX_NLOHMANN_JSON)
  message(FATAL_ERROR "nlohmann/json.hpp not found: install nlohmann-json3-dev (scripts/setup.sh does)")
endif()
cmake_path(GET WGX_NLOHMANN_JSON PARENT_PATH _wgx_nlohmann_dir)
file(MAKE_DIRECTORY "${PROJECT_BINARY_DIR}/web-include")
file(CREATE_LINK "${_wgx_nlohmann_dir}" "${PROJECT_BINARY_DIR}/web-include/nlohmann" SYMBOLIC)
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED GLOBAL)
set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${PROJECT_BINARY_DIR}/web-include")
add_library(Threads::Threads INTERFACE IMPORTED GLOBAL)

# The GPU layer's WebGPU: our JavaScript implementation of the C API subset that
# src/gpu/webgpu_api.h declares, over navigator.gpu (a browser) or the `webgpu` package (Node.js).
add_library(wgx_dawn INTERFACE)
target_link_options(wgx_dawn INTERFACE "SHELL:--js-library ${PROJECT_SOURCE_DIR}/src/gpu/web/webgpu.js")
set_property(TARGET wgx_dawn APPEND PROPERTY INTERFACE_LINK_DEPENDS ${PROJECT_SOURCE_DIR}/src/gpu/web/webgpu.js)
add_library(wgx::dawn ALIAS wgx_dawn)
