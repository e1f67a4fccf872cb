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

/* Device choice (docs/api-runtime.md, "Choosing a device"). A device is named "backend" or
 * "backend:index" ("cpu", "vulkan:1", "toy:0"; no index means 0), for any backend of this
 * build or loaded module. */
typedef struct td_device_choice {
    td_backend backend;
    int index;
    char reason[512]; /* why this device: "TD_DEVICE=vulkan:1", or the default order's pick */
} td_device_choice;
/* Parses and checks a device name: TD_E_INVALID for text that is no "name[:index]", and
 * TD_E_DEVICE for a backend this build does not have or an index it has no device for;
 * each message names what exists ("backends: cpu (1 device), vulkan (2 devices)"); TD_E_NULL
 * for a NULL argument. */
td_status td_device_parse(const char *text, td_device_choice *out);
/* The device a program uses when told none: the environment variable TD_DEVICE when set
 * (parsed as td_device_parse does; an error when it names nothing that exists), else the
 * best device by type: discrete GPU, integrated GPU, virtual GPU, other hardware, the cpu
 * backend, then software implementations (lavapipe, SwiftShader, the toy fixture); ties go
 * to the lower backend id, then the lower index. TD_E_DEVICE when no backend has a device.
 * Opens nothing. As for any open, TD_<BACKEND>_DEVICE=n still makes index 0 mean n. */
td_status td_default_device_choice(td_device_choice *out);
/* Opens the device td_default_device_choice names; *out is the caller's. */
td_status td_default_device(td_device **out);

/* Backend modules (docs/adding-a-backend.md, "Loadable modules"). td_backend_load loads
 * the shared object at path, checks its table (TD_BACKEND_ABI_VERSION, hooks, an unused
 * id from 32 to 62, an unused name), runs its init and makes its id a backend like the
 * built-in ones; *out (NULL allowed) receives the id. Every failure (the file is missing or
 * already loaded, no TD_BACKEND_MODULE_SYMBOL, another ABI version, the id or name taken,
 * init failed) is TD_E_INVALID (or init's status) with a message naming the file, and
 * leaves nothing loaded. The modules named by TD_BACKEND_PATH (':'-separated files, or
 * folders whose *.so files are loaded in name order) are loaded by the first device open or
 * enumeration, each failure printed to stderr. Load modules before other threads use
 * the library; a module stays loaded until the process ends. */
td_status td_backend_load(const char *path, td_backend *out);
/* A loaded module: its backend id, name, file (resolved) and the ABI version it records. */
typedef struct td_backend_module_info {
    td_backend backend;
    unsigned abi_version;
    char name[32];
    char path[4096];
} td_backend_module_info;
/* How many modules are loaded, and module index (0 = the first loaded) of them. */
int td_backend_module_count(void);
td_status td_backend_module_info_get(int index, td_backend_module_info *out);

TD_API_END
#ifdef __cplusplus
}
#endif
#endif
