# Runs wheelbeat-config as a process and checks its exit status and output.
#   -DCLI=<binary> -DARGS=<;-list> -DWORK_DIR=<dir> -DEXPECT_STATUS=<n>
#   [-DSTDOUT_REGEX=<regex>] [-DSTDOUT_EMPTY=ON] [-DSTDERR_FILE=<exact expected stderr>]
#   [-DSTDERR_REGEX=<regex>] [-DSTDERR_EMPTY=ON]
execute_process(COMMAND ${CLI} ${ARGS}
                WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(failures "")
if(NOT status STREQUAL EXPECT_STATUS)
  string(APPEND failures "exit status ${status}, expected ${EXPECT_STATUS}\n")
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  string(APPEND failures "stdout does not match ${STDOUT_REGEX}\n")
endif()
if(STDOUT_EMPTY AND NOT out STREQUAL "")
  string(APPEND failures "stdout is not empty\n")
endif()
if(DEFINED STDERR_FILE)
  file(READ ${STDERR_FILE} expected_err)
  if(NOT err STREQUAL expected_err)
    string(APPEND failures "stderr differs from ${STDERR_FILE}\n")
  endif()
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  string(APPEND failures "stderr does not match ${STDERR_REGEX}\n")
endif()
if(STDERR_EMPTY AND NOT err STREQUAL "")
  string(APPEND failures "stderr is not empty\n")
endif()
if(failures)
  message(FATAL_ERROR "${failures}--- stdout:\n${out}--- stderr:\n${err}")
endif()
