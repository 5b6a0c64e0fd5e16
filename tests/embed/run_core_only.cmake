# embed_core_only: wheelbeat built from source for a user of core, tasks, net and the registry's
# embedded engine, as a shared library, on a machine without hiredis, ZooKeeper or nlohmann/json.
#
# The packages cannot be uninstalled on a developer's or CI's machine, so the configure step is
# run where their lookups cannot succeed, and afterwards it is checked that none was even tried:
#   - nlohmann/json: CMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON (find_package then finds nothing;
#     a REQUIRED lookup is a configure error);
#   - hiredis: PKG_CONFIG_LIBDIR names a directory holding only libuv.pc, so pkg-config cannot
#     see hiredis.pc;
#   - ZooKeeper (found by find_path / find_library, which search the compiler's own directories,
#     where the header and library are): a lookup always leaves its result in CMakeCache.txt, so
#     the cache must hold no ZOOKEEPER_* entry; likewise no HIREDIS_* and no nlohmann_json_DIR;
#   - and no built library has hiredis or ZooKeeper among its NEEDED entries.
# Then: the SONAME is libwheelbeat_core.so.<major>.<minor> (0.x: each minor may break the ABI),
# the install holds no header or pkg-config file of what was left out, and programs built with
# plain g++ from `pkg-config --cflags --libs` (no --static: shared) link and run, one of them
# checking makeRegistry()'s error for the engines left out.
# Arguments: -DSOURCE_DIR -DWORK_DIR -DGENERATOR -DCXX_COMPILER -DVERSION [-DLAUNCHER].
cmake_minimum_required(VERSION 3.22)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
embed_require(SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER VERSION)
find_program(PKG_CONFIG pkg-config)
find_program(READELF readelf)
if(NOT PKG_CONFIG OR NOT READELF)
  message(STATUS "skipped: pkg-config or readelf is not installed")
  return()
endif()

set(build ${WORK_DIR}/build)
set(prefix ${WORK_DIR}/prefix)
set(visible_pc ${WORK_DIR}/visible-pkgconfig)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${visible_pc})

# Only libuv visible to pkg-config.
embed_output(libuv_pc_dir ${PKG_CONFIG} --variable=pcfiledir libuv)
file(CREATE_LINK ${libuv_pc_dir}/libuv.pc ${visible_pc}/libuv.pc SYMBOLIC)
set(launcher)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
# Build type "None" (Debian's choice for packages): no optimisation flags, the fastest compile.
embed_run(${CMAKE_COMMAND} -E env PKG_CONFIG_LIBDIR=${visible_pc} PKG_CONFIG_PATH=
          ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${build} -G ${GENERATOR}
          -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${launcher} -DCMAKE_BUILD_TYPE=None
          -DBUILD_SHARED_LIBS=ON -DWHEELBEAT_WITH_REDIS=OFF -DWHEELBEAT_WITH_ZOOKEEPER=OFF
          -DWHEELBEAT_WITH_CONFIG=OFF -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
          -DWHEELBEAT_BUILD_BENCH=OFF -DCMAKE_INSTALL_MESSAGE=NEVER --log-level=WARNING)

file(STRINGS ${build}/CMakeCache.txt tried REGEX "^(ZOOKEEPER_|HIREDIS_|nlohmann_json_DIR)")
if(tried)
  message(FATAL_ERROR "the core-only configure looked up an optional dependency: ${tried}")
endif()
embed_run(${CMAKE_COMMAND} --build ${build} --parallel ${EMBED_JOBS})
embed_run(${CMAKE_COMMAND} --install ${build} --prefix ${prefix})
if(EXISTS ${build}/bin/wheelbeat-config)
  message(FATAL_ERROR "the wheelbeat-config tool was built without the config layer")
endif()

# SONAME and NEEDED of every installed library.
string(REGEX MATCH "^[0-9]+\\.[0-9]+" major_minor "${VERSION}")
file(GLOB_RECURSE libraries ${prefix}/*/libwheelbeat_*.so)
list(LENGTH libraries count)
if(NOT count EQUAL 7)
  message(FATAL_ERROR "expected 7 shared libraries (core, tasks, net, hessian, registry, "
                      "cluster, dubbo): ${libraries}")
endif()
foreach(library IN LISTS libraries)
  get_filename_component(name ${library} NAME)
  embed_output(dynamic ${READELF} -d ${library})
  if(NOT dynamic MATCHES "Library soname: \\[${name}\\.${major_minor}\\]")
    message(FATAL_ERROR "${name}: SONAME is not ${name}.${major_minor}:\n${dynamic}")
  endif()
  if(dynamic MATCHES "hiredis|zookeeper")
    message(FATAL_ERROR "${name} needs hiredis or ZooKeeper:\n${dynamic}")
  endif()
endforeach()

# Nothing of what was left out is installed.
file(GLOB_RECURSE left_out ${prefix}/*redis_engine.h ${prefix}/*zookeeper_engine.h
     ${prefix}/*wheelbeat-config.pc ${prefix}/*/wheelbeat/config/*)
if(left_out)
  message(FATAL_ERROR "installed although left out: ${left_out}")
endif()

# Shared programs through pkg-config (the default search path again: fmt.pc, libuv.pc).
embed_pkgconfig_program(${prefix} wheelbeat-net ${CMAKE_CURRENT_LIST_DIR}/programs/net_main.cpp
                        ${WORK_DIR}/net_consumer)
embed_pkgconfig_program(${prefix} wheelbeat-registry
                        ${CMAKE_CURRENT_LIST_DIR}/programs/engines_left_out_main.cpp
                        ${WORK_DIR}/engines_left_out)
message(STATUS "embed_core_only: passed")
