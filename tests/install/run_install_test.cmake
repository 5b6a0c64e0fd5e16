# cmake -P script behind the install_consumer test (arguments: see CMakeLists.txt here).
#   1. cmake --install BUILD_DIR --prefix WORK_DIR/prefix   (a fresh prefix every run)
#   2. configure WORK_DIR/consumer from CONSUMER_SOURCE_DIR with CMAKE_PREFIX_PATH = the prefix
#   3. check that find_package found the package *in that prefix*, then build and run it
cmake_minimum_required(VERSION 3.22)

foreach(var BUILD_DIR WORK_DIR CONSUMER_SOURCE_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer)
file(REMOVE_RECURSE ${prefix} ${consumer_build})

function(run)
  string(JOIN " " shown ${ARGN})
  message(STATUS "install_consumer: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: failed (${rc}): ${shown}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${consumer_build} -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
    -DCMAKE_PREFIX_PATH=${prefix}
    # Only the prefix: neither a user's package registry nor an older system-wide install.
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)

file(STRINGS ${consumer_build}/CMakeCache.txt found REGEX "^wheelbeat_DIR:")
string(REGEX REPLACE "^[^=]*=" "" found "${found}")
file(REAL_PATH "${found}" found)
file(REAL_PATH "${prefix}" real_prefix)
string(FIND "${found}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "install_consumer: wheelbeat was found in '${found}', not in '${prefix}'")
endif()

run(${CMAKE_COMMAND} --build ${consumer_build})
run(${consumer_build}/wheelbeat_consumer)
run(${consumer_build}/wheelbeat_registry_consumer)
run(${consumer_build}/wheelbeat_runtime_consumer)
