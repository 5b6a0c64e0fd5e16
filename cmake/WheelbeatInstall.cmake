# Install headers and libraries and export a CMake package: find_package(wheelbeat) then link
# wheelbeat::wheelbeat (or one layer, e.g. wheelbeat::core).
include(CMakePackageConfigHelpers)

set(WHEELBEAT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/wheelbeat)

install(TARGETS wheelbeat_core wheelbeat_tasks wheelbeat_net wheelbeat_config wheelbeat
        EXPORT wheelbeatTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(layer core tasks net config)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(EXPORT wheelbeatTargets NAMESPACE wheelbeat:: DESTINATION ${WHEELBEAT_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/wheelbeatConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/wheelbeatConfig.cmake
                              INSTALL_DESTINATION ${WHEELBEAT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/wheelbeatConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/wheelbeatConfig.cmake
              ${PROJECT_BINARY_DIR}/wheelbeatConfigVersion.cmake
        DESTINATION ${WHEELBEAT_CMAKE_DIR})
