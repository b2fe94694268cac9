# cmake --install: the public headers, libwgx with its SONAME, the pinned Dawn library it loads,
# the wgx command line, a CMake package (find_package(wgx CONFIG) gives wgx::wgx) and wgx.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS wgx EXPORT wgxTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/wgx/wgx.hpp ${PROJECT_SOURCE_DIR}/include/wgx/wgx.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/wgx)
# libwgx finds Dawn beside itself ($ORIGIN).
install(FILES ${WGX_DAWN_COPY} DESTINATION ${CMAKE_INSTALL_LIBDIR})
set_target_properties(wgx_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS wgx_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(WGX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/wgx)
install(EXPORT wgxTargets NAMESPACE wgx:: DESTINATION ${WGX_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/wgxConfig.cmake.in
  ${PROJECT_BINARY_DIR}/wgxConfig.cmake INSTALL_DESTINATION ${WGX_CMAKE_DIR})
# 0.x: a minor release may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/wgxConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/wgxConfig.cmake ${PROJECT_BINARY_DIR}/wgxConfigVersion.cmake
        DESTINATION ${WGX_CMAKE_DIR})

# Relocatable: the prefix is found from where wgx.pc lies (--prefix at install time works).
file(RELATIVE_PATH WGX_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/wgx.pc.in ${PROJECT_BINARY_DIR}/wgx.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/wgx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
