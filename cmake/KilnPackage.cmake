# The installed CMake package (docs/cmake.md): `find_package(Kiln)` gives
# Kiln::kiln (the compiler), Kiln::kiln-run, Kiln::kiln-opt, Kiln::runtime
# (libkiln_runtime.so), Kiln::runtime_static (libkiln_runtime.a) and the
# kiln_add_kernels() function. Every path in it is relative to the file, so
# an installed prefix can move. The build tree has the same package in
# build/lib/cmake/Kiln (the tests use it without installing).
include(CMakePackageConfigHelpers)

set_target_properties(kiln PROPERTIES EXPORT_NAME kiln)
set_target_properties(kiln-run PROPERTIES EXPORT_NAME kiln-run)
set_target_properties(kiln-opt PROPERTIES EXPORT_NAME kiln-opt)
install(TARGETS kiln kiln-run kiln-opt EXPORT KilnTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(KILN_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kiln)
set(KILN_BUILD_PACKAGE_DIR ${PROJECT_BINARY_DIR}/lib/cmake/Kiln)
install(EXPORT KilnTargets NAMESPACE Kiln:: DESTINATION ${KILN_PACKAGE_DIR})
export(EXPORT KilnTargets NAMESPACE Kiln::
  FILE ${KILN_BUILD_PACKAGE_DIR}/KilnTargets.cmake)

# KilnConfig.cmake records the backends this kiln has (Kiln_BACKENDS).
string(REPLACE ";" " " KILN_PACKAGE_BACKENDS "${KILN_BUILT_BACKENDS}")
configure_file(cmake/KilnConfig.cmake.in
  ${KILN_BUILD_PACKAGE_DIR}/KilnConfig.cmake @ONLY)
configure_file(cmake/KilnAddKernels.cmake
  ${KILN_BUILD_PACKAGE_DIR}/KilnAddKernels.cmake COPYONLY)
# 0.x: a minor version may change the package; 0.1.2 satisfies 0.1.
write_basic_package_version_file(
  ${KILN_BUILD_PACKAGE_DIR}/KilnConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${KILN_BUILD_PACKAGE_DIR}/KilnConfig.cmake
  ${KILN_BUILD_PACKAGE_DIR}/KilnConfigVersion.cmake
  cmake/KilnAddKernels.cmake
  DESTINATION ${KILN_PACKAGE_DIR})

# The example kernels and the downstream project that uses the package.
file(GLOB KILN_EXAMPLE_KERNELS CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/examples/*.tile)
install(FILES ${KILN_EXAMPLE_KERNELS}
  DESTINATION ${CMAKE_INSTALL_DATADIR}/kiln/examples)
# The project's files only (not a build folder someone made inside it).
install(FILES
  examples/downstream/CMakeLists.txt
  examples/downstream/typed_launchers.cpp
  examples/downstream/c_api.c
  DESTINATION ${CMAKE_INSTALL_DATADIR}/kiln/examples/downstream)
