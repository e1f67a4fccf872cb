# In the ordinary build (tests/CMakeLists.txt): the API fuzzer's generated op table
# (${TD_GENERATED}/fuzz_ops.c, gen/tdgen/emit_fuzz.lua) must hold every op and tuple the
# specs declare, and with Vulkan the fuzzer's programs run on cpu and vulkan and agree.

# fuzz_table_check: every td_op with a name (td_kinds.h, td_op_name) has its entry, under
# that name, and the table holds nothing else but the tuples.
add_executable(fuzz_table_check ${CMAKE_CURRENT_LIST_DIR}/fuzz_table_check.c ${TD_GENERATED}/fuzz_ops.c)
target_include_directories(fuzz_table_check PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${TD_GENERATED})
target_compile_options(fuzz_table_check PRIVATE -Wall -Wextra $<$<BOOL:${TD_WERROR}>:-Werror>)
target_link_libraries(fuzz_table_check PRIVATE tdispatch)
add_test(NAME fuzz_table_check COMMAND fuzz_table_check)
# ... and the same names as the generator's own listing (ops and tuples): a second view
# of the model, through the command line.
add_test(NAME fuzz_table_lists_every_op
         COMMAND ${TD_LUA} ${CMAKE_CURRENT_LIST_DIR}/check_table.lua ${TD_LUA} ${PROJECT_SOURCE_DIR}
                 ${TD_GENERATED}/fuzz_ops.c ${PROJECT_SOURCE_DIR}/specs ${TD_EXTRA_SPECS})

# fuzz_surface_vulkan: fuzz_surface.c as a replay driver (no libFuzzer, any compiler): each
# program of the seed corpus (or of the files and directories given) on cpu, then on vulkan
# with the CPU fallback on; statuses and results compared (floats within a loose tolerance).
if("vulkan" IN_LIST TD_ENABLED_BACKENDS)
  add_executable(fuzz_surface_vulkan ${CMAKE_CURRENT_LIST_DIR}/fuzz_surface.c ${TD_GENERATED}/fuzz_ops.c)
  target_compile_definitions(fuzz_surface_vulkan PRIVATE FZ_COMPARE=1)
  target_include_directories(fuzz_surface_vulkan PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${TD_GENERATED})
  target_compile_options(fuzz_surface_vulkan PRIVATE -Wall -Wextra $<$<BOOL:${TD_WERROR}>:-Werror>)
  # the test-only driver pin, as every Vulkan test program: under ASan, LeakSanitizer
  # reports lavapipe's globals once the loader unloads it (tests/backends/vulkan/ctest.cmake)
  target_link_libraries(fuzz_surface_vulkan PRIVATE tdispatch m $<TARGET_NAME_IF_EXISTS:tdt_vulkan_pin>)
  # The suite replays each op's first example, plain and through backward (the whole
  # corpus takes minutes on lavapipe): every op and tuple with an example, on both; and
  # every input a fuzzing campaign found (found_surface/: kept by hand, as
  # make_corpus_surface.lua rewrites corpus_surface/ from the specs).
  file(GLOB td_fuzz_replay CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/corpus_surface/*-1-plain
       ${CMAKE_CURRENT_LIST_DIR}/corpus_surface/*-1-grad ${CMAKE_CURRENT_LIST_DIR}/corpus_surface/x-*
       ${CMAKE_CURRENT_LIST_DIR}/found_surface/*-*)
  add_test(NAME fuzz_surface_vulkan_replay COMMAND fuzz_surface_vulkan ${td_fuzz_replay})
  set_tests_properties(fuzz_surface_vulkan_replay PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS "fuzz;vulkan")
endif()
