/* tests/runtime/test_semantics.c on the Vulkan backend (values) and autodiff over it. */
#define SEM_BACKEND TD_BACKEND_VULKAN
#include "../../runtime/test_semantics.c"
