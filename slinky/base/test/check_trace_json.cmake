# Runs the chrome_trace test with SLINKY_TRACE set (so chrome_trace::global() writes a trace
# at exit), then checks the file with python3 -m json.tool.
file(REMOVE ${OUT})
execute_process(COMMAND ${CMAKE_COMMAND} -E env SLINKY_TRACE=${OUT} ${TEST} --gtest_filter=chrome_trace.global*
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST} failed")
endif()
if(NOT EXISTS ${OUT})
  message(FATAL_ERROR "no trace written to ${OUT}")
endif()
execute_process(COMMAND ${PYTHON} -m json.tool ${OUT} OUTPUT_QUIET RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${OUT} is not valid JSON")
endif()
