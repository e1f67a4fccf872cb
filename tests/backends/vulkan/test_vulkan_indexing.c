/* tests/runtime/test_indexing.c on the Vulkan backend: index values out of range are
 * TD_E_RANGE with no result and nothing leaked (the indices are read back and checked
 * before any dispatch), rule errors, large tensors against naive loops, gradients. */
#define IDX_BACKEND TD_BACKEND_VULKAN
#define IDX_GROUP "vulkan_indexing"
#include "../../runtime/test_indexing.c"
