/* Device enumeration: the public entry points over each backend's device_count/device_info hooks. */
#include <string.h>

#include "td_internal.h"

/* The vtable of a backend that can have devices, or an error naming why not. */
static td_status enumerable(const char *op, td_backend backend, const td_backend_vtable **out)
{
    if (backend == TD_BACKEND_AUTODIFF)
        return td_error(TD_E_INVALID, "%s: autodiff devices wrap the devices of other backends: ask about those",
                        op);
    if ((unsigned)backend >= TD_BACKEND_COUNT)
        return td_error(TD_E_INVALID, "%s: unknown backend %d", op, (int)backend);
    td_backend_autoload();
    *out = td_backend_vtables[backend];
    if (*out == NULL)
        return td_error(TD_E_DEVICE, "%s: backend %s is not enabled in this build", op, td_backend_name(backend));
    return TD_OK;
}

td_status td_device_count(td_backend backend, int *count)
{
    if (count == NULL)
        return td_err_null("device_count", "count");
    *count = 0;
    const td_backend_vtable *vt = NULL;
    TD_TRY(enumerable("device_count", backend, &vt));
    int n = 0;
    TD_TRY(vt->device_count(&n));
    *count = n;
    return TD_OK;
}

td_status td_device_info_get(td_backend backend, int index, td_device_info *out)
{
    if (out == NULL)
        return td_err_null("device_info_get", "out");
    memset(out, 0, sizeof *out);
    const td_backend_vtable *vt = NULL;
    TD_TRY(enumerable("device_info_get", backend, &vt));
    int n = 0;
    TD_TRY(vt->device_count(&n));
    if (index < 0 || index >= n)
        return td_error(TD_E_DEVICE, "device_info_get: %s: no device %d (%d %s device%s found)", vt->name, index, n,
                        vt->name, n == 1 ? "" : "s");
    td_status st = vt->device_info(NULL, index, out);
    if (st != TD_OK) {
        memset(out, 0, sizeof *out);
        return st;
    }
    out->backend = backend;
    return TD_OK;
}

td_status td_device_info_of(const td_device *device, td_device_info *out)
{
    if (out == NULL)
        return td_err_null("device_info_of", "out");
    memset(out, 0, sizeof *out);
    if (device == NULL)
        return td_err_null("device_info_of", "device");
    if (device->backend == TD_BACKEND_AUTODIFF)
        device = device->inner;
    const td_backend_vtable *vt = td_backend_vtables[device->backend];
    td_status st = vt->device_info(device, device->index, out);
    if (st != TD_OK) {
        memset(out, 0, sizeof *out);
        return st;
    }
    out->backend = device->backend;
    return TD_OK;
}
