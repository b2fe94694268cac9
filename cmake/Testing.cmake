# wgx_add_test(name SOURCES ... LIBS ... [INCLUDES ...]): one GoogleTest binary whose test cases each become a
# CTest test. A no-op when tests are off, so op folders can declare their tests unconditionally.
function(wgx_add_test name)
  if(NOT WGX_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;INCLUDES" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${T_INCLUDES})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ENVIRONMENT "XDG_RUNTIME_DIR=/tmp")
endfunction()
