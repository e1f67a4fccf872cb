# safetensors tests (runtime/io), included by tests/CMakeLists.txt: the unit tests with the
# hostile files, and the interop tests with an independent writer and reader in Python
# (tests/safetensors_interop.py, stdlib only), skipped (not passed) without python3.
td_add_test(test_safetensors ${CMAKE_CURRENT_LIST_DIR}/test_safetensors.c)
set(td_st_work ${CMAKE_CURRENT_BINARY_DIR}/safetensors_work)
file(MAKE_DIRECTORY ${td_st_work})
set_tests_properties(test_safetensors PROPERTIES WORKING_DIRECTORY ${td_st_work})

# Interop, per device: cpu, autodiff(cpu), and vulkan in a build with the backend (skipped
# at run time without a Vulkan device).
# (built as td_add_test builds a test, but run only through the driver script)
add_executable(test_safetensors_interop ${CMAKE_CURRENT_LIST_DIR}/test_safetensors_interop.c)
target_link_libraries(test_safetensors_interop PRIVATE tdt $<TARGET_NAME_IF_EXISTS:tdt_vulkan_pin>)
target_compile_options(test_safetensors_interop PRIVATE -Wall -Wextra $<$<BOOL:${TD_WERROR}>:-Werror>)
set(td_st_devices cpu autodiff)
if(TD_BACKEND_VULKAN)
  list(APPEND td_st_devices vulkan)
endif()
find_program(TD_SH sh REQUIRED DOC "A POSIX shell for the safetensors interop driver")
foreach(d IN LISTS td_st_devices)
  add_test(NAME safetensors_interop_${d}
           COMMAND ${TD_SH} ${CMAKE_CURRENT_LIST_DIR}/safetensors_interop.sh $<TARGET_FILE:test_safetensors_interop>
                   ${CMAKE_CURRENT_LIST_DIR}/safetensors_interop.py ${td_st_work}/interop_${d} ${d})
  set_tests_properties(safetensors_interop_${d} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
if(TD_BACKEND_VULKAN)
  set_tests_properties(safetensors_interop_vulkan PROPERTIES
    ENVIRONMENT "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation" LABELS vulkan
    FAIL_REGULAR_EXPRESSION "Validation Error;Validation Warning;Validation Performance Warning;OBJ ERROR")
endif()
