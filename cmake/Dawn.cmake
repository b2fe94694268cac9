# Imports the Dawn library as the target wgx::dawn and copies it into the build's lib/ folder.
if(NOT WGX_DAWN_LIBRARY)
  message(FATAL_ERROR
    "WGX_DAWN_LIBRARY is not set. Run scripts/setup.sh (it fetches the pinned Dawn and "
    "configures the build), or pass -DWGX_DAWN_LIBRARY=/path/to/libwebgpu_dawn.so.")
endif()
if(NOT EXISTS "${WGX_DAWN_LIBRARY}")
  message(FATAL_ERROR "WGX_DAWN_LIBRARY='${WGX_DAWN_LIBRARY}' does not exist. Run scripts/setup.sh.")
endif()

get_filename_component(_wgx_dawn_name "${WGX_DAWN_LIBRARY}" NAME)
set(_wgx_dawn_copy "${PROJECT_BINARY_DIR}/lib/${_wgx_dawn_name}")
set(WGX_DAWN_COPY "${_wgx_dawn_copy}")
configure_file("${WGX_DAWN_LIBRARY}" "${_wgx_dawn_copy}" COPYONLY)

add_library(wgx_dawn SHARED IMPORTED GLOBAL)
set_target_properties(wgx_dawn PROPERTIES IMPORTED_LOCATION "${_wgx_dawn_copy}")
# The pinned build has no SONAME; link it by name so binaries look it up through their rpath.
execute_process(COMMAND readelf -d "${_wgx_dawn_copy}" OUTPUT_VARIABLE _wgx_dawn_dynamic ERROR_QUIET)
if(NOT _wgx_dawn_dynamic MATCHES "SONAME")
  set_target_properties(wgx_dawn PROPERTIES IMPORTED_NO_SONAME TRUE)
endif()
add_library(wgx::dawn ALIAS wgx_dawn)
message(STATUS "wgx: Dawn library ${WGX_DAWN_LIBRARY}")
