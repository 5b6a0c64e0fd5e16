# embed_subproject: a parent project (tests/embed/subproject) embeds wheelbeat by add_subdirectory.
#   1. configure it with no build type and no C++ standard; wheelbeat must not write
#      CMAKE_BUILD_TYPE into the parent's cache, nor define its CLI, tests or samples
#   2. build the parent's program (linking wheelbeat::core only) and run it
#   3. compile commands: none has -Werror; the parent's -Wall and C++20 reach its own source
#   4. `cmake --install` of the parent installs the parent's program and nothing of wheelbeat
# Arguments: -DWHEELBEAT_SOURCE_DIR -DWORK_DIR -DGENERATOR -DCXX_COMPILER [-DLAUNCHER].
cmake_minimum_required(VERSION 3.22)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
embed_require(WHEELBEAT_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)

set(build ${WORK_DIR}/build)
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${build} ${prefix})

set(launcher)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
embed_run(${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/subproject -B ${build} -G ${GENERATOR}
          -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${launcher}
          -DWHEELBEAT_SOURCE_DIR=${WHEELBEAT_SOURCE_DIR} --log-level=WARNING)

# 1. The parent's build type is the parent's: still empty.
embed_cache_value(build_type ${build} CMAKE_BUILD_TYPE)
if(NOT build_type STREQUAL "" AND NOT build_type STREQUAL "<absent>")
  message(FATAL_ERROR "wheelbeat wrote CMAKE_BUILD_TYPE='${build_type}' into the parent's cache")
endif()

# 2. Only the parent's program and what it links: wheelbeat::core.
embed_run(${CMAKE_COMMAND} --build ${build} --parallel ${EMBED_JOBS} --target subproject_app)
embed_run(${build}/subproject_app)

# 3. -Werror nowhere; the parent's source compiled with -Wall and C++20.
file(READ ${build}/compile_commands.json commands)
string(FIND "${commands}" "-Werror" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "a compile command of the parent's build has -Werror")
endif()
string(JSON count LENGTH "${commands}")
math(EXPR last "${count} - 1")
set(app_command "")
foreach(i RANGE ${last})
  string(JSON file GET "${commands}" ${i} file)
  if(file MATCHES "subproject_main\\.cpp$")
    string(JSON app_command GET "${commands}" ${i} command)
  endif()
endforeach()
if(NOT app_command MATCHES " -Wall( |$)"
   OR NOT app_command MATCHES " -std=(c|gnu)\\+\\+(20|2a)( |$)")
  message(FATAL_ERROR "the parent's source is not compiled with its -Wall and C++20 (from "
                      "wheelbeat::core's cxx_std_20): ${app_command}")
endif()
message(STATUS "${count} compile commands, none with -Werror; the parent's: ${app_command}")

# 4. The parent's install: its program only.
embed_run(${CMAKE_COMMAND} --install ${build} --prefix ${prefix})
file(GLOB_RECURSE installed RELATIVE ${prefix} ${prefix}/*)
if(NOT installed STREQUAL "bin/subproject_app")
  message(FATAL_ERROR "the parent's install put more than bin/subproject_app: ${installed}")
endif()
message(STATUS "embed_subproject: passed")
