# Shader families: WGSL templates with variant lists, expanded at build time by tools/shadergen into
# C++ sources that embed every variant (tools/shadergen/README.md has the formats).
#
#   wgx_shader_family(<target> FAMILY <name> [LIBRARY <dir>] VARIANTS <list.variants.toml>...)
#   wgx_shader_flags(<target> <flags.toml>...)
#
# wgx_shader_family generates <build>/generated/shaders/<name>_shaders.{h,cpp}, adds them to
# <target> (call it in the folder that created <target>) and gives <target> the include path for
# #include "shaders/<name>_shaders.h". Templates #include library files from LIBRARY (default
# src/shaders/lib). The generator reruns when a variant list, a template, a library file one of
# them includes or the generator changes. The .cpp static_asserts that the input hash it embeds
# equals WGX_SHADERS_<NAME>_HASH, computed here at configure time from the same files; CMake
# reconfigures when any of them changes, so only a .cpp generated from exactly these inputs
# compiles.
#
# wgx_shader_flags generates <build>/generated/shaders/<stem>.h from each flags file (the C++ side
# of constants that templates #include as WGSL) and adds it to <target>.
#
# This file also works in script mode (cmake -P) for wgx_shader_input_hash alone; the tests use that.

cmake_path(SET WGX_SHADERGEN_DIR NORMALIZE "${CMAKE_CURRENT_LIST_DIR}/../tools/shadergen")
cmake_path(SET WGX_SHADER_LIBRARY NORMALIZE "${CMAKE_CURRENT_LIST_DIR}/../src/shaders/lib")

# The generator's sources, in the order the input hash takes them (the regex matches the Python
# side, tools/shadergen/inputhash.py).
function(_wgx_shadergen_files out)
  if(CMAKE_SCRIPT_MODE_FILE)
    file(GLOB files "${WGX_SHADERGEN_DIR}/*.py")
  else()
    file(GLOB files CONFIGURE_DEPENDS "${WGX_SHADERGEN_DIR}/*.py")
  endif()
  list(FILTER files INCLUDE REGEX "/[a-z_][a-z0-9_]*\\.py$")
  list(SORT files)
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

# The template a variant list names. CMake has no TOML parser, so the list must name it on one line
# of the form template = "name.wgsl"; the generator enforces the same form (variants.py).
function(_wgx_shader_template out list)
  file(STRINGS "${list}" lines REGEX "^[ \t]*template[ \t]*=" ENCODING UTF-8)
  list(LENGTH lines count)
  if(NOT count EQUAL 1 OR NOT lines MATCHES "^[ \t]*template[ \t]*=[ \t]*\"([A-Za-z0-9_./-]+)\"[ \t\r]*$")
    message(FATAL_ERROR "${list}: name the template once, on a line of its own: template = \"name.wgsl\"")
  endif()
  cmake_path(GET list PARENT_PATH dir)
  cmake_path(APPEND dir "${CMAKE_MATCH_1}" OUTPUT_VARIABLE template)
  cmake_path(NORMAL_PATH template)
  if(NOT EXISTS "${template}")
    message(FATAL_ERROR "${list}: its template ${template} does not exist")
  endif()
  set(${out} "${template}" PARENT_SCOPE)
endfunction()

# The names of the library files a template pulls in, directly or through other library files,
# sorted. Include lines are found with the generator's pattern (INCLUDE_LINE in
# tools/shadergen/includes.py); the generator also rejects what this does not look at (a
# malformed line, a cycle) with the file and line.
function(_wgx_shader_includes out template library)
  set(pending "${template}")
  set(names "")
  while(pending)
    list(POP_FRONT pending file)
    if(NOT file MATCHES "\\.wgsl$")
      continue()  # a flags file includes nothing
    endif()
    file(STRINGS "${file}" lines REGEX "^#include" ENCODING UTF-8)
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "^#include \"([a-z0-9_]+\\.(wgsl|toml))\"[ \t\r]*$")
        message(FATAL_ERROR "${file}: malformed include '${line}': write #include \"name.wgsl\" alone on a line")
      endif()
      set(name "${CMAKE_MATCH_1}")
      list(FIND names "${name}" seen)  # not IN_LIST: script mode (cmake -P) has no policies set
      if(seen EQUAL -1)
        if(NOT library OR NOT EXISTS "${library}/${name}")
          message(FATAL_ERROR "${file}: #include \"${name}\": no such file in ${library}")
        endif()
        list(APPEND names "${name}")
        list(APPEND pending "${library}/${name}")
      endif()
    endforeach()
  endwhile()
  list(SORT names)
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# wgx_shader_input_hash(<out-var> FAMILY <name> [LIBRARY <dir>] VARIANTS <absolute paths>...): the
# recipe written out in tools/shadergen/shadergen.py; <out-var>_INPUTS gets every file it read.
function(wgx_shader_input_hash out)
  cmake_parse_arguments(PARSE_ARGV 1 H "" "FAMILY;LIBRARY" "VARIANTS")
  if(NOT DEFINED H_LIBRARY)
    set(H_LIBRARY "${WGX_SHADER_LIBRARY}")
  endif()
  _wgx_shadergen_files(generator)
  set(inputs ${generator})
  set(manifest "wgx-shadergen-input 2\nfamily ${H_FAMILY}\n")
  foreach(file IN LISTS generator)
    file(SHA256 "${file}" digest)
    cmake_path(GET file FILENAME name)
    string(APPEND manifest "generator ${name} ${digest}\n")
  endforeach()
  foreach(list IN LISTS H_VARIANTS)
    _wgx_shader_template(template "${list}")
    file(SHA256 "${list}" list_digest)
    file(SHA256 "${template}" template_digest)
    string(APPEND manifest "variants ${list_digest}\ntemplate ${template_digest}\n")
    list(APPEND inputs "${list}" "${template}")
    _wgx_shader_includes(names "${template}" "${H_LIBRARY}")
    foreach(name IN LISTS names)
      file(SHA256 "${H_LIBRARY}/${name}" digest)
      string(APPEND manifest "include ${name} ${digest}\n")
      list(APPEND inputs "${H_LIBRARY}/${name}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES inputs)
  string(SHA256 digest "${manifest}")
  set(${out} "${digest}" PARENT_SCOPE)
  set(${out}_INPUTS "${inputs}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  return()
endif()

find_package(Python3 3.11 REQUIRED COMPONENTS Interpreter)  # 3.11 for tomllib
set(WGX_SHADERS_GENERATED_DIR "${PROJECT_BINARY_DIR}/generated")
# Made now, not at the first generation: an include folder of a target exists from configure on.
file(MAKE_DIRECTORY "${WGX_SHADERS_GENERATED_DIR}/shaders")

function(wgx_shader_family target)
  cmake_parse_arguments(PARSE_ARGV 1 S "" "FAMILY;LIBRARY" "VARIANTS")
  set(usage "wgx_shader_family(<target> FAMILY <name> [LIBRARY <dir>] VARIANTS <list.variants.toml>...)")
  if(S_UNPARSED_ARGUMENTS OR NOT S_FAMILY OR NOT S_VARIANTS)
    message(FATAL_ERROR "usage: ${usage}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "wgx_shader_family: no target '${target}'")
  endif()
  # Source file properties (the hash definition) only reach targets of the same folder.
  get_target_property(target_dir ${target} SOURCE_DIR)
  if(NOT target_dir STREQUAL CMAKE_CURRENT_SOURCE_DIR)
    message(FATAL_ERROR "wgx_shader_family(${target} ...): call it in ${target_dir}, where ${target} is created")
  endif()
  # Same rule as tools/shadergen/family.py: the name becomes C++ function names and a macro.
  if(NOT S_FAMILY MATCHES "^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
    message(FATAL_ERROR "wgx_shader_family: family name '${S_FAMILY}' must be lower case letters and digits, words joined by single underscores")
  endif()
  get_property(families GLOBAL PROPERTY WGX_SHADER_FAMILIES)
  if(S_FAMILY IN_LIST families)
    message(FATAL_ERROR "wgx_shader_family: family '${S_FAMILY}' is declared twice (its functions would clash)")
  endif()
  set_property(GLOBAL APPEND PROPERTY WGX_SHADER_FAMILIES ${S_FAMILY})

  set(lists "")
  foreach(list IN LISTS S_VARIANTS)
    cmake_path(ABSOLUTE_PATH list BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
    if(NOT EXISTS "${list}")
      message(FATAL_ERROR "wgx_shader_family(${target} FAMILY ${S_FAMILY}): ${list} does not exist")
    endif()
    list(APPEND lists "${list}")
  endforeach()
  if(S_LIBRARY)
    cmake_path(ABSOLUTE_PATH S_LIBRARY BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
  else()
    set(S_LIBRARY "${WGX_SHADER_LIBRARY}")
  endif()
  wgx_shader_input_hash(digest FAMILY ${S_FAMILY} LIBRARY "${S_LIBRARY}" VARIANTS ${lists})
  # Any edit to an input changes the hash, so it must rerun configure as well as the generator.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${digest_INPUTS})

  set(out_dir "${WGX_SHADERS_GENERATED_DIR}/shaders")
  set(header "${out_dir}/${S_FAMILY}_shaders.h")
  set(source "${out_dir}/${S_FAMILY}_shaders.cpp")
  add_custom_command(
    OUTPUT "${header}" "${source}"
    COMMAND "${Python3_EXECUTABLE}" -B "${WGX_SHADERGEN_DIR}/shadergen.py"
            --out-dir "${out_dir}" --lib-dir "${S_LIBRARY}" --family ${S_FAMILY} ${lists}
    DEPENDS ${digest_INPUTS}
    COMMENT "Generating shader family ${S_FAMILY}"
    VERBATIM)
  target_sources(${target} PRIVATE "${header}" "${source}")
  # The generated header includes shaders/shader_variant.h from src/.
  target_include_directories(${target} PUBLIC "${WGX_SHADERS_GENERATED_DIR}" "${PROJECT_SOURCE_DIR}/src")
  # Only on the generated .cpp: a template edit then recompiles that file alone, not the target.
  string(TOUPPER "WGX_SHADERS_${S_FAMILY}_HASH" macro)
  set_property(SOURCE "${source}" APPEND PROPERTY COMPILE_DEFINITIONS "${macro}=\"${digest}\"")
endfunction()

function(wgx_shader_flags target)
  if(ARGC LESS 2)
    message(FATAL_ERROR "usage: wgx_shader_flags(<target> <flags.toml>...)")
  endif()
  _wgx_shadergen_files(generator)
  set(out_dir "${WGX_SHADERS_GENERATED_DIR}/shaders")
  foreach(flags IN LISTS ARGN)
    cmake_path(ABSOLUTE_PATH flags BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
    cmake_path(GET flags STEM LAST_ONLY stem)
    set(header "${out_dir}/${stem}.h")
    add_custom_command(
      OUTPUT "${header}"
      COMMAND "${Python3_EXECUTABLE}" -B "${WGX_SHADERGEN_DIR}/shadergen.py"
              --out-dir "${out_dir}" --flags "${flags}"
      DEPENDS "${flags}" ${generator}
      COMMENT "Generating shader flags ${stem}.h"
      VERBATIM)
    target_sources(${target} PRIVATE "${header}")
  endforeach()
  target_include_directories(${target} PUBLIC "${WGX_SHADERS_GENERATED_DIR}")
endfunction()
