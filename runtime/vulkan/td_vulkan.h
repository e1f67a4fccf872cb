/* Vulkan backend extras beyond the generated API: batching counters for tests and benchmarks. */
#ifndef TD_VULKAN_H
#define TD_VULKAN_H

#include "td_core.h"

#ifdef __cplusplus
extern "C" {
#endif
TD_API_BEGIN

/* Command-buffer submissions and compute dispatches recorded on a Vulkan device so far
 * (either pointer may be NULL). TD_E_BACKEND_MISMATCH when d is not a Vulkan device. */
td_status td_vulkan_stats(const td_device *d, long *submits, long *dispatches);

TD_API_END
#ifdef __cplusplus
}
#endif
#endif
