# The API reference check (tools/apidoc.sh, docs/Doxyfile) as a test: doxygen over the public
# headers must give no warning (an undocumented public declaration, a broken doc command). Only
# in builds without sanitizers (the headers are the same; once per test run is enough). Without
# doxygen the test reports a skip; tools/apidoc.sh installs it (apt-get install doxygen).
find_program(SLINKY_DOXYGEN doxygen)
if(SLINKY_SANITIZE)
  return()
endif()
if(SLINKY_DOXYGEN)
  add_test(NAME slinky_apidoc_warnings COMMAND ${PROJECT_SOURCE_DIR}/tools/apidoc.sh ${PROJECT_BINARY_DIR}/apidoc)
  set_tests_properties(slinky_apidoc_warnings PROPERTIES ENVIRONMENT "SLINKY_APIDOC_NO_INSTALL=1;DOXYGEN=${SLINKY_DOXYGEN}"
                                                         SKIP_RETURN_CODE 77)
else()
  add_test(NAME slinky_apidoc_warnings
           COMMAND sh -c "echo 'SKIP: doxygen was not found when this build was configured; install it (tools/apidoc.sh does: apt-get install doxygen) and re-run cmake'; exit 77")
  set_tests_properties(slinky_apidoc_warnings PROPERTIES SKIP_RETURN_CODE 77)
endif()
