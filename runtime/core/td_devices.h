/* tdispatch public device enumeration: how many devices each backend has, and what they are. */
#ifndef TD_DEVICES_H
#define TD_DEVICES_H

#include "td_core.h"

#ifdef __cplusplus
extern "C" {
#endif
TD_API_BEGIN

/* One device of a backend, as td_device_info_get / td_device_info_of describe it. */
typedef struct td_device_info {
    td_backend backend;
    int index;             /* what td_device_open takes */
    char name[256];        /* "llvmpipe (LLVM 15.0.6, 256 bits)", "NVIDIA GeForce RTX 4090", a CPU model */
    char driver[256];      /* "llvmpipe: Mesa 22.3.6 (LLVM 15.0.6), Vulkan 1.3.230", "tdispatch cpu: ..." */
    char type[32];         /* "cpu", "discrete GPU", "integrated GPU", "virtual GPU", "software", ... */
    uint64_t memory_bytes; /* the device's memory (its largest device-local heap; RAM for the cpu) */
    bool software;         /* a software implementation of the API (lavapipe, SwiftShader): slow */
} td_device_info;

/* How many devices backend has on this machine (0 when, e.g., there is no Vulkan driver).
 * TD_E_DEVICE when the backend is not in this build; TD_E_INVALID for autodiff. */
td_status td_device_count(td_backend backend, int *count);
/* Describes device index of backend without opening it; TD_E_DEVICE when there is no such
 * device (the message names the index and how many there are). */
td_status td_device_info_get(td_backend backend, int index, td_device_info *out);
/* Describes an open device (an autodiff device: the device it wraps), e.g. to say which
 * device a program runs on after TD_<BACKEND>_DEVICE chose it. */
td_status td_device_info_of(const td_device *device, td_device_info *out);

TD_API_END
#ifdef __cplusplus
}
#endif
#endif
