# The installed CMake package: lib/cmake/actionloop/ holds actionloop-config.cmake (with its
# version file), the exported launcher target actionloop::launcher, actionloop_add_action and
# actionloop_add_lambda.
# Included by the top-level CMakeLists.txt after the launcher's targets exist.
include(CMakePackageConfigHelpers)
set(ACTIONLOOP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/actionloop)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/actionloop-config.cmake.in
                              ${PROJECT_BINARY_DIR}/actionloop-config.cmake
                              INSTALL_DESTINATION ${ACTIONLOOP_CMAKE_DIR})
# 0.x: a new minor version may change the SDK, so only the same minor version matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/actionloop-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/actionloop-config.cmake
              ${PROJECT_BINARY_DIR}/actionloop-config-version.cmake
              ${PROJECT_SOURCE_DIR}/cmake/actionloop-action.cmake
              ${PROJECT_SOURCE_DIR}/cmake/actionloop-lambda.cmake
        DESTINATION ${ACTIONLOOP_CMAKE_DIR})
