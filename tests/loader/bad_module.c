/* Small backend modules that td_backend_load must refuse, one per -D (tests/loader):
 * BAD_ABI records another ABI version, BAD_INIT fails its init, SAME_ID takes the toy
 * module's id 32 under another name, NO_SYMBOL exports no table at all. */
#include "td_backend_api.h"

#ifdef NO_SYMBOL
int not_a_backend(void);
int not_a_backend(void)
{
    return 1;
}
#else
static td_status open_(td_device *device)
{
    (void)device;
    return TD_OK;
}
static void close_(td_device *device)
{
    (void)device;
}
static td_status count_(int *count)
{
    *count = 1;
    return TD_OK;
}
static td_status info_(const td_device *device, int index, td_device_info *out)
{
    (void)device;
    out->index = index;
    return TD_OK;
}
static td_status alloc_(td_tensor *t)
{
    td_be_set_data(t, td_malloc(sizeof(float) * (size_t)(td_be_numel(t) + 1)));
    return td_be_data(t) == NULL ? TD_E_NOMEM : TD_OK;
}
static void free_(td_tensor *t)
{
    td_free(td_be_data(t));
}
static td_status read_(const td_tensor *t, void *host)
{
    (void)t, (void)host;
    return TD_OK;
}
static td_status write_(td_tensor *t, const void *host)
{
    (void)t, (void)host;
    return TD_OK;
}
#ifdef BAD_INIT
static td_status init_(void)
{
    return td_error(TD_E_DEVICE, "bad_init: no accelerator found");
}
#endif

static const td_backend_module module = {
#ifdef BAD_ABI
    .abi_version = 999,
#else
    .abi_version = TD_BACKEND_ABI_VERSION,
#endif
#ifdef SAME_ID
    .name = "toy_twin",
#else
    .name = "bad",
#endif
#ifdef SAME_ID
    .id = 32,
#else
    .id = 40,
#endif
    .dtypes = 1u << TD_F32,
#ifdef BAD_INIT
    .init = init_,
#endif
    .device_open = open_,
    .device_close = close_,
    .device_count = count_,
    .device_info = info_,
    .alloc = alloc_,
    .free = free_,
    .read = read_,
    .write = write_,
};

__attribute__((visibility("default"))) const td_backend_module *td_backend_module_entry(void);
const td_backend_module *td_backend_module_entry(void)
{
    return &module;
}
#endif
