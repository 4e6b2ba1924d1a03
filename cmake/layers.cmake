# The layering check (test slinky_layers): base <- runtime <- builder <- scheduler, and the test
# support of each layer. No source of a layer or of its tests includes a header of a higher
# layer, and no test executable of a layer links a library of a higher layer (directly or
# through the libraries it links). slinky_write_link_graph() records, at configure time, what
# each library and test links; check_layers.cmake reads it and the sources.

# The layer of each library the tests may link: the library's own, or for test support, the
# highest layer it depends on.
set(SLINKY_LAYER_OF_slinky_base base)
set(SLINKY_LAYER_OF_slinky_runtime runtime)
set(SLINKY_LAYER_OF_slinky_builder builder)
set(SLINKY_LAYER_OF_slinky_random_pipeline builder)
set(SLINKY_LAYER_OF_slinky_scheduler scheduler)
set(SLINKY_LAYER_OF_slinky_random_pipeline_auto scheduler)
set(SLINKY_LAYER_OF_slinky scheduler)

# Writes ${PROJECT_BINARY_DIR}/slinky_link_graph.cmake: for each slinky library and each test
# executable of the layers (target names slinky_<layer>_*), the targets it links.
function(slinky_write_link_graph)
  set(content "")
  set(targets slinky slinky_base slinky_runtime slinky_builder slinky_scheduler slinky_random_pipeline
              slinky_random_pipeline_auto)
  foreach(layer base runtime builder scheduler)
    get_property(tests DIRECTORY ${PROJECT_SOURCE_DIR}/slinky/${layer}/test PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t ${tests})
      string(APPEND content "set(SLINKY_TEST_LAYER_OF_${t} ${layer})\nlist(APPEND SLINKY_TESTS ${t})\n")
      list(APPEND targets ${t})
    endforeach()
  endforeach()
  foreach(t ${targets})
    if(NOT TARGET ${t})
      continue()
    endif()
    get_target_property(direct ${t} LINK_LIBRARIES)
    get_target_property(interface ${t} INTERFACE_LINK_LIBRARIES)
    set(links "")
    foreach(l ${direct} ${interface})
      if(TARGET ${l} AND l MATCHES "^slinky")
        list(APPEND links ${l})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES links)
    string(APPEND content "set(SLINKY_LINKS_OF_${t} \"${links}\")\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/slinky_link_graph.cmake "${content}")
endfunction()
