# safetensors tests (runtime/io), included by tests/CMakeLists.txt: the unit tests with the
# hostile files, and the interop tests with an independent writer and reader in Python
# (tests/safetensors_interop.py, stdlib only), skipped (not passed) without python3.
td_add_test(test_safetensors ${CMAKE_CURRENT_LIST_DIR}/test_safetensors.c)
set(td_st_work ${CMAKE_CURRENT_BINARY_DIR}/safetensors_work)
file(MAKE_DIRECTORY ${td_st_work})
set_tests_properties(test_safetensors PROPERTIES WORKING_DIRECTORY ${td_st_work})
