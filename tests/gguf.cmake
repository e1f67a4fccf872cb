# GGUF tests (runtime/io), included by tests/CMakeLists.txt: the unit tests with hand-made and
# hostile files, and the interop test with an independent writer and reader in Python
# (tests/gguf_interop.py, stdlib struct only), skipped (not passed) without python3.
td_add_test(test_gguf ${CMAKE_CURRENT_LIST_DIR}/test_gguf.c)
set(td_gguf_work ${CMAKE_CURRENT_BINARY_DIR}/gguf_work)
file(MAKE_DIRECTORY ${td_gguf_work})
set_tests_properties(test_gguf PROPERTIES WORKING_DIRECTORY ${td_gguf_work})
