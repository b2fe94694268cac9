# cmake -DFAMILY=<name> -DVARIANTS=<list;...> [-DLIBRARY=<dir>] -P print_shader_hash.cmake
# Prints the input hash the build would compute (test_shadergen_hash.py compares it with Python's).
include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/Shaders.cmake")
if(NOT DEFINED LIBRARY)
  set(LIBRARY "${WGX_SHADER_LIBRARY}")
endif()
wgx_shader_input_hash(digest FAMILY "${FAMILY}" LIBRARY "${LIBRARY}" VARIANTS ${VARIANTS})
execute_process(COMMAND "${CMAKE_COMMAND}" -E echo "${digest}")
