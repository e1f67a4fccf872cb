/* tests/runtime/test_autodiff_engine.c's gradient semantics (max/min ties, NaN in
 * maximum/minimum, the rounding ops) on autodiff over Vulkan; the long chains stay CPU-only. */
#define AD_BACKEND TD_BACKEND_VULKAN
#define AD_NO_LONG_CHAINS
#include "../../runtime/test_autodiff_engine.c"
