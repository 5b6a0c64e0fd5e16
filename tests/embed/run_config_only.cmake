# embed_config_without_registry: wheelbeat built from source without the registry
# (WHEELBEAT_WITH_REGISTRY=OFF) but with its JSON configuration, static (the default), for a
# heartbeat-only client; the client must link neither hiredis nor ZooKeeper.
#
#   1. Configure where hiredis cannot be found (PKG_CONFIG_LIBDIR holding only libuv.pc, as in
#      embed_core_only) and check that neither hiredis nor ZooKeeper was even looked up (a lookup
#      leaves HIREDIS_* / ZOOKEEPER_* in CMakeCache.txt); nothing but the libraries and
#      wheelbeat-config is built.
#   2. Install; the install holds config (features.h saying 0) and no header, library, pkg-config
#      file or CMake file of registry, cluster, dubbo or runtime.
#   3. `pkg-config --static --libs wheelbeat-config` names neither hiredis nor ZooKeeper.
#   4. config_consumer/ (find_package(wheelbeat COMPONENTS config)) is built verbosely: its link
#      line names wheelbeat_config and neither hiredis nor ZooKeeper nor a wheelbeat layer of the
#      registry; the program's NEEDED entries and symbols have neither; it runs and exits 0.
#   5. wheelbeat-config says why the discovery sections are refused (validate and explain).
# Arguments: -DSOURCE_DIR -DWORK_DIR -DGENERATOR -DCXX_COMPILER [-DLAUNCHER].
cmake_minimum_required(VERSION 3.22)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
embed_require(SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
find_program(PKG_CONFIG pkg-config)
find_program(READELF readelf)
find_program(NM nm)
if(NOT PKG_CONFIG OR NOT READELF OR NOT NM)
  message(STATUS "skipped: pkg-config, readelf or nm is not installed")
  return()
endif()

set(build ${WORK_DIR}/build)
set(prefix ${WORK_DIR}/prefix)
set(consumer ${WORK_DIR}/consumer)
set(visible_pc ${WORK_DIR}/visible-pkgconfig)
# The build tree is kept between runs (an incremental rebuild); the rest is made afresh.
file(REMOVE_RECURSE ${prefix} ${consumer} ${visible_pc})
file(MAKE_DIRECTORY ${visible_pc})

# Hiredis and ZooKeeper are not names a pattern below may meet by chance in a path or option.
set(left_out_pattern "hiredis|zookeeper|libwheelbeat_(registry|cluster|dubbo|runtime)")

# 1. Only libuv visible to pkg-config; the libraries alone (no tools, tests, samples, benchmarks).
embed_output(libuv_pc_dir ${PKG_CONFIG} --variable=pcfiledir libuv)
file(CREATE_LINK ${libuv_pc_dir}/libuv.pc ${visible_pc}/libuv.pc SYMBOLIC)
# With a compiler cache, no precompiled headers (ccache would compile every file again); without
# one (a fresh CI machine), config's nlohmann/json is parsed once per target.
set(launcher)
set(pch)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
  set(pch -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON)
endif()
embed_run(${CMAKE_COMMAND} -E env PKG_CONFIG_LIBDIR=${visible_pc} PKG_CONFIG_PATH=
          ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${build} -G ${GENERATOR}
          -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${launcher} -DCMAKE_BUILD_TYPE=None
          -DWHEELBEAT_WITH_REGISTRY=OFF -DWHEELBEAT_DEVELOPER=OFF -DWHEELBEAT_BUILD_TOOLS=ON
          -DWHEELBEAT_BUILD_BENCH=OFF ${pch} -DCMAKE_INSTALL_MESSAGE=NEVER --log-level=WARNING)
embed_cache_value(with_config ${build} WHEELBEAT_WITH_CONFIG)
if(NOT with_config STREQUAL "ON")
  message(FATAL_ERROR "WHEELBEAT_WITH_CONFIG is '${with_config}' without the registry "
                      "(expected: ON, the configuration kept)")
endif()
file(STRINGS ${build}/CMakeCache.txt tried REGEX "^(ZOOKEEPER_|HIREDIS_)")
if(tried)
  message(FATAL_ERROR "the configure without the registry looked up an engine: ${tried}")
endif()
embed_run(${CMAKE_COMMAND} --build ${build} --parallel ${EMBED_JOBS})
embed_run(${CMAKE_COMMAND} --install ${build} --prefix ${prefix})

# 2. What is installed.
file(GLOB_RECURSE features ${prefix}/*/wheelbeat/config/features.h)
if(NOT features)
  message(FATAL_ERROR "wheelbeat/config/features.h is not installed")
endif()
file(STRINGS ${features} discovery REGEX "^#define WHEELBEAT_CONFIG_DISCOVERY ")
if(NOT discovery STREQUAL "#define WHEELBEAT_CONFIG_DISCOVERY 0")
  message(FATAL_ERROR "${features}: '${discovery}' (expected WHEELBEAT_CONFIG_DISCOVERY 0)")
endif()
file(GLOB_RECURSE libraries RELATIVE ${prefix} ${prefix}/*/libwheelbeat_*)
list(TRANSFORM libraries REPLACE "^.*/" "")
list(SORT libraries)
set(expected_libraries libwheelbeat_config.a libwheelbeat_core.a libwheelbeat_hessian.a
    libwheelbeat_net.a libwheelbeat_tasks.a)
if(NOT libraries STREQUAL expected_libraries)
  message(FATAL_ERROR "installed libraries: ${libraries} (expected: ${expected_libraries})")
endif()
file(GLOB_RECURSE left_out ${prefix}/*/wheelbeat/registry/* ${prefix}/*/wheelbeat/cluster/*
     ${prefix}/*/wheelbeat/dubbo/* ${prefix}/*/wheelbeat/runtime/* ${prefix}/*wheelbeat-registry*
     ${prefix}/*wheelbeat-cluster* ${prefix}/*wheelbeat-dubbo* ${prefix}/*wheelbeat-runtime*)
if(left_out)
  message(FATAL_ERROR "installed although left out: ${left_out}")
endif()

# 3. pkg-config (the default search path again: fmt.pc, libuv.pc).
file(GLOB_RECURSE pc_files ${prefix}/*/wheelbeat-config.pc)
get_filename_component(pc_dir "${pc_files}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
embed_output(pc_libs ${PKG_CONFIG} --static --libs wheelbeat-config)
if(NOT pc_libs MATCHES "-lwheelbeat_config .*-lwheelbeat_net" OR pc_libs MATCHES "zookeeper"
   OR pc_libs MATCHES "hiredis" OR pc_libs MATCHES "wheelbeat_(registry|cluster)")
  message(FATAL_ERROR "pkg-config --static --libs wheelbeat-config: '${pc_libs}' (expected "
                      "config down to net, without hiredis, ZooKeeper, registry or cluster)")
endif()

# 4. The CMake consumer: its link line, its program, its run.
embed_run(${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/config_consumer -B ${consumer}
          -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${launcher}
          -DCMAKE_BUILD_TYPE=None -DCMAKE_PREFIX_PATH=${prefix}
          -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
# The build's output is the link line to check (and the compiler's errors when it fails).
execute_process(COMMAND ${CMAKE_COMMAND} --build ${consumer} --verbose RESULT_VARIABLE rc
                OUTPUT_VARIABLE build_log ERROR_VARIABLE build_log)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the consumer's build failed (${rc}):\n${build_log}")
endif()
string(REGEX MATCH "[^\n]* -o heartbeat_config_client [^\n]*" link_line "${build_log}")
if(link_line STREQUAL "")
  message(FATAL_ERROR "no link command of heartbeat_config_client in the build's output")
endif()
message(STATUS "link line: ${link_line}")
if(NOT link_line MATCHES "libwheelbeat_config\\.a" OR link_line MATCHES "${left_out_pattern}")
  message(FATAL_ERROR "the link line does not name libwheelbeat_config.a, or names hiredis, "
                      "ZooKeeper or a layer of the registry: ${link_line}")
endif()
set(program ${consumer}/heartbeat_config_client)
embed_output(dynamic ${READELF} -d ${program})
execute_process(COMMAND ${NM} -C ${program} RESULT_VARIABLE rc OUTPUT_VARIABLE symbols)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -C ${program} failed (${rc})")
endif()
if(dynamic MATCHES "hiredis|zookeeper"
   OR symbols MATCHES "[Rr]edis|zoo_|[Zz]oo[Kk]eeper|wheelbeat::(registry|cluster)::")
  message(FATAL_ERROR "heartbeat_config_client needs or holds hiredis, ZooKeeper or the registry")
endif()
embed_run(${program})

# 5. The command line: the exit status and the first line on stderr of each (explain's usage
#    follows).
set(off_text "this wheelbeat was built without the registry (WHEELBEAT_WITH_REGISTRY=OFF)")
file(WRITE ${WORK_DIR}/cluster.json "{\"cluster\": {\"mode\": \"failfast\"}}\n")
set(expect_validate
    "cluster.json: /cluster: {\"mode\":\"failfast\"} (expected: no \"cluster\" section: ${off_text})")
set(expect_explain "wheelbeat-config: explain: no key \"registry.kind\" (${off_text})")
foreach(command validate explain)
  if(command STREQUAL "validate")
    set(arguments validate cluster.json)
    set(status 1)
  else()
    set(arguments explain registry.kind)
    set(status 2)
  endif()
  execute_process(COMMAND ${build}/bin/wheelbeat-config ${arguments} WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  ERROR_STRIP_TRAILING_WHITESPACE)
  string(REGEX MATCH "^[^\n]*" err "${err}")
  message(STATUS "wheelbeat-config ${arguments} -> ${rc}: ${err}")
  if(NOT rc EQUAL status OR NOT out STREQUAL "" OR NOT err STREQUAL "${expect_${command}}")
    message(FATAL_ERROR "wheelbeat-config ${arguments}: exit ${rc}, stdout '${out}', stderr "
                        "'${err}' (expected: exit ${status}, no stdout, stderr starting "
                        "'${expect_${command}}')")
  endif()
endforeach()
message(STATUS "embed_config_without_registry: passed")
