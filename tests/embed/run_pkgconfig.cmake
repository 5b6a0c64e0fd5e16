# embed_pkgconfig: this (static) build installed into a scratch prefix, then programs built by a
# plain g++ command line from its pkg-config files, as a user without CMake would:
#   1. wheelbeat-net's libuv and http-parser are private: absent from `--libs`, present with
#      `--static`
#   2. net (server and client on loopback) and registry (hiredis, libzookeeper_st) link and run
# The shared side (no --static) is embed_core_only's. Skipped when pkg-config is not installed.
# Arguments: -DBUILD_DIR -DWORK_DIR -DSOURCE_DIR (wheelbeat's) -DCXX_COMPILER.
cmake_minimum_required(VERSION 3.22)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
embed_require(BUILD_DIR WORK_DIR SOURCE_DIR CXX_COMPILER)
find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(STATUS "skipped: pkg-config is not installed")
  return()
endif()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
embed_run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# 1. Private dependencies (libuv, http-parser) only for a static link.
file(GLOB_RECURSE pc_files ${prefix}/*/wheelbeat-net.pc)
get_filename_component(pc_dir "${pc_files}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
embed_output(shared_libs ${PKG_CONFIG} --libs wheelbeat-net)
embed_output(static_libs ${PKG_CONFIG} --static --libs wheelbeat-net)
if(NOT shared_libs MATCHES "^-L[^ ]+ -lwheelbeat_net -lwheelbeat_tasks -lwheelbeat_core -lfmt$")
  message(FATAL_ERROR "pkg-config --libs wheelbeat-net: '${shared_libs}' (expected wheelbeat's "
                      "three libraries and fmt, and no private dependency)")
endif()
if(NOT static_libs MATCHES " -luv( |$)" OR NOT static_libs MATCHES " -lhttp_parser( |$)")
  message(FATAL_ERROR "pkg-config --static --libs wheelbeat-net: '${static_libs}' (expected "
                      "its private -luv and -lhttp_parser)")
endif()

# 2. Programs over the static libraries.
embed_pkgconfig_program(${prefix} wheelbeat-net ${CMAKE_CURRENT_LIST_DIR}/programs/net_main.cpp
                        ${WORK_DIR}/net_consumer STATIC)
embed_pkgconfig_program(${prefix} wheelbeat-registry
                        ${SOURCE_DIR}/tests/install/consumer/registry_main.cpp
                        ${WORK_DIR}/registry_consumer STATIC)
message(STATUS "embed_pkgconfig: passed")
