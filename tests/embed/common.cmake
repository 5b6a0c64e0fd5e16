# Helpers of the embed tests' cmake -P scripts (run_*.cmake).

# embed_require(VAR...): each -DVAR=... must be given.
function(embed_require)
  foreach(var IN LISTS ARGN)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
      message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE}: -D${var}=... is required")
    endif()
  endforeach()
endfunction()

# embed_run(<command...>): runs it (output shown), fails the test on a non-zero exit.
function(embed_run)
  string(JOIN " " shown ${ARGN})
  message(STATUS "run: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${shown}")
  endif()
endfunction()

# embed_output(<var> <command...>): runs it and returns its stdout, stripped; fails on an error.
function(embed_output var)
  string(JOIN " " shown ${ARGN})
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${shown}\n${err}")
  endif()
  message(STATUS "${shown} -> ${out}")
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

# embed_cache_value(<var> <build dir> <entry>): the value of a CMakeCache.txt entry, or
# "<absent>" when the cache has no such entry.
function(embed_cache_value var build_dir entry)
  file(STRINGS ${build_dir}/CMakeCache.txt line REGEX "^${entry}:[A-Z]+=")
  if(line STREQUAL "")
    set(${var} "<absent>" PARENT_SCOPE)
  else()
    string(REGEX REPLACE "^[^=]*=" "" value "${line}")
    set(${var} "${value}" PARENT_SCOPE)
  endif()
endfunction()

# embed_pkgconfig_program(<prefix> <module> <source> <exe> [STATIC]): compiles and links <source>
# with a plain g++ command line from `pkg-config --cflags --libs <module>` (--static too for a
# static install) against the install in <prefix>, then runs it (the prefix's libdir on
# LD_LIBRARY_PATH, for a shared install).
function(embed_pkgconfig_program prefix module source exe)
  cmake_parse_arguments(P "STATIC" "" "" ${ARGN})
  file(GLOB_RECURSE pc_files ${prefix}/*/wheelbeat-core.pc)
  list(GET pc_files 0 pc_file)
  get_filename_component(pc_dir ${pc_file} DIRECTORY)
  get_filename_component(lib_dir ${pc_dir} DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pc_dir})
  set(static)
  if(P_STATIC)
    set(static --static)
  endif()
  embed_output(flags ${PKG_CONFIG} ${static} --cflags --libs ${module})
  separate_arguments(flags UNIX_COMMAND "${flags}")
  embed_run(${CXX_COMPILER} -std=c++20 ${source} -o ${exe} ${flags})
  embed_run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${lib_dir} ${exe})
endfunction()

# EMBED_JOBS: the build tool's jobs, one per core (Make alone builds one file at a time; a CI
# machine without Ninja uses it).
include(ProcessorCount)
ProcessorCount(EMBED_JOBS)
if(EMBED_JOBS EQUAL 0)
  set(EMBED_JOBS 2)
endif()
