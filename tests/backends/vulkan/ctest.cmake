# Vulkan tests run under the Khronos validation layer; any message it prints fails the test.
# Included by tests/CMakeLists.txt after the tests are registered (only matters when the
# vulkan backend is enabled). Under ASan no LeakSanitizer suppression is used: lavapipe
# keeps one block in its globals (on AMD Zen hosts), which LeakSanitizer would report once
# the loader has unloaded the driver, so every Vulkan test program links the test-only
# tests/common/tdt_vulkan_pin.c, which keeps the driver loaded until exit.
if(TD_BACKEND_VULKAN) # (included only for enabled backends; kept as a guard)
  # (test_dtype_usage queries the device's features through the backend's dtype_accelerated)
  set(td_vk_tests test_ops_vulkan test_autodiff_vulkan test_zero_size test_dtypes_vulkan test_dtype_usage)
  file(GLOB td_vk_hand CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_vulkan_*.c)
  foreach(src IN LISTS td_vk_hand)
    get_filename_component(name ${src} NAME_WE)
    list(APPEND td_vk_tests ${name})
  endforeach()
  set(td_vk_env "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation")
  foreach(t IN LISTS td_vk_tests)
    if(TEST ${t})
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT ${td_vk_env})
      set_property(TEST ${t} APPEND PROPERTY FAIL_REGULAR_EXPRESSION
                   "Validation Error" "Validation Warning" "Validation Performance Warning" "OBJ ERROR")
      set_property(TEST ${t} APPEND PROPERTY LABELS vulkan)
    endif()
  endforeach()
endif()
