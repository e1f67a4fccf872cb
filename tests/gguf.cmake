# GGUF tests (runtime/io), included by tests/CMakeLists.txt: the unit tests with hand-made and
# hostile files, and the interop test with an independent writer and reader in Python
# (tests/gguf_interop.py, stdlib struct only), skipped (not passed) without python3.
td_add_test(test_gguf ${CMAKE_CURRENT_LIST_DIR}/test_gguf.c)
set(td_gguf_work ${CMAKE_CURRENT_BINARY_DIR}/gguf_work)
file(MAKE_DIRECTORY ${td_gguf_work})
set_tests_properties(test_gguf PROPERTIES WORKING_DIRECTORY ${td_gguf_work})

# Interop on the cpu (the file format does not depend on the device; test_gguf covers the
# autodiff device): built as td_add_test builds a test, run only through the driver script.
add_executable(test_gguf_interop ${CMAKE_CURRENT_LIST_DIR}/test_gguf_interop.c)
target_link_libraries(test_gguf_interop PRIVATE tdispatch)
target_compile_options(test_gguf_interop PRIVATE -Wall -Wextra $<$<BOOL:${TD_WERROR}>:-Werror>)
add_test(NAME gguf_interop
         COMMAND ${TD_SH} ${CMAKE_CURRENT_LIST_DIR}/gguf_interop.sh $<TARGET_FILE:test_gguf_interop>
                 ${CMAKE_CURRENT_LIST_DIR}/gguf_interop.py ${td_gguf_work}/interop)
set_tests_properties(gguf_interop PROPERTIES SKIP_RETURN_CODE 77)
