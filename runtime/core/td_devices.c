/* Device enumeration: the public entry points over each backend's device_count/device_info hooks. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- Device choice: TD_DEVICE and the default order ---- */

/* Whether backend is one a device can be opened on: built in or loaded, not autodiff. */
static bool choosable(td_backend backend)
{
    return backend != TD_BACKEND_AUTODIFF && (unsigned)backend < TD_BACKEND_COUNT && td_backend_vtables[backend] != NULL;
}

/* The device count of a choosable backend; 0 when it cannot count (the error is dropped). */
static int devices_of(td_backend backend)
{
    int n = 0;
    if (td_backend_vtables[backend]->device_count(&n) != TD_OK || n < 0)
        n = 0;
    return n;
}

/* "cpu (1 device), vulkan (2 devices), toy (1 device)" into buf. */
static void list_backends(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int b = 0; b < (int)TD_BACKEND_COUNT && used < size; b++) {
        if (!choosable((td_backend)b))
            continue;
        const int n = devices_of((td_backend)b);
        const int w = snprintf(buf + used, size - used, "%s%s (%d device%s)", used ? ", " : "",
                               td_backend_name((td_backend)b), n, n == 1 ? "" : "s");
        used += w > 0 ? (size_t)w : 0;
    }
    if (buf[0] == '\0')
        snprintf(buf, size, "none");
}

/* Parses text as "name" or "name:index"; what names the text in messages ("TD_DEVICE",
 * "device_parse"). */
static td_status parse_choice(const char *what, const char *text, td_device_choice *out)
{
    const char *colon = strchr(text, ':');
    const size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len == 0)
        return td_error(TD_E_INVALID, "%s '%s': no backend name (give name or name:index, e.g. cpu, vulkan:1)", what,
                        text);
    char backends[512];
    td_backend found = TD_BACKEND_COUNT;
    for (int b = 0; b < (int)TD_BACKEND_COUNT; b++) {
        const char *name = td_backend_name((td_backend)b);
        if (choosable((td_backend)b) && strlen(name) == len && strncmp(name, text, len) == 0)
            found = (td_backend)b;
    }
    if (found == TD_BACKEND_COUNT) {
        list_backends(backends, sizeof backends);
        return td_error(TD_E_DEVICE, "%s '%s': no backend '%.*s' in this build or loaded (backends: %s)", what, text,
                        (int)len, text, backends);
    }
    int index = 0;
    if (colon != NULL) {
        const char *v = colon + 1;
        char *end = NULL;
        errno = 0;
        const long n = (*v >= '0' && *v <= '9') ? strtol(v, &end, 10) : -1;
        if (n < 0 || end == NULL || *end != '\0' || errno != 0 || n > INT_MAX)
            return td_error(TD_E_INVALID, "%s '%s': '%s' is not a device index (a whole number from 0)", what, text, v);
        index = (int)n;
    }
    const int count = devices_of(found);
    if (index >= count) {
        if (count == 0)
            return td_error(TD_E_DEVICE, "%s '%s': backend %s has no devices here", what, text, td_backend_name(found));
        const char *name = td_backend_name(found);
        if (count == 1)
            return td_error(TD_E_DEVICE, "%s '%s': %s has no device %d (1 device: %s:0)", what, text, name, index, name);
        return td_error(TD_E_DEVICE, "%s '%s': %s has no device %d (%d devices: %s:0 to %s:%d)", what, text, name,
                        index, count, name, name, count - 1);
    }
    out->backend = found;
    out->index = index;
    snprintf(out->reason, sizeof out->reason, "%s=%s", what, text);
    return TD_OK;
}

td_status td_device_parse(const char *text, td_device_choice *out)
{
    if (out == NULL)
        return td_err_null("device_parse", "out");
    memset(out, 0, sizeof *out);
    if (text == NULL)
        return td_err_null("device_parse", "text");
    td_backend_autoload();
    td_status st = parse_choice("device_parse", text, out);
    if (st == TD_OK)
        snprintf(out->reason, sizeof out->reason, "named: %s", text);
    return st;
}

/* The default order's rank of a device: higher is preferred. */
static int device_rank(const td_device_info *d)
{
    if (d->software)
        return 0;
    if (d->backend == TD_BACKEND_CPU)
        return 1;
    if (strcmp(d->type, "discrete GPU") == 0)
        return 5;
    if (strcmp(d->type, "integrated GPU") == 0)
        return 4;
    if (strcmp(d->type, "virtual GPU") == 0)
        return 3;
    return 2;
}

td_status td_default_device_choice(td_device_choice *out)
{
    if (out == NULL)
        return td_err_null("default_device_choice", "out");
    memset(out, 0, sizeof *out);
    td_backend_autoload();
    const char *env = getenv("TD_DEVICE");
    if (env != NULL && env[0] != '\0') {
        td_status st = parse_choice("TD_DEVICE", env, out);
        if (st != TD_OK)
            memset(out, 0, sizeof *out);
        return st;
    }
    int best_rank = -1, considered = 0;
    td_device_info best;
    memset(&best, 0, sizeof best);
    for (int b = 0; b < (int)TD_BACKEND_COUNT; b++) {
        if (!choosable((td_backend)b))
            continue;
        const int n = devices_of((td_backend)b);
        for (int i = 0; i < n; i++) {
            td_device_info info;
            if (td_device_info_get((td_backend)b, i, &info) != TD_OK)
                continue;
            considered++;
            const int r = device_rank(&info);
            if (r > best_rank) { /* strictly better: ties keep the lower id, then index */
                best_rank = r;
                best = info;
            }
        }
    }
    if (best_rank < 0) {
        char backends[512];
        list_backends(backends, sizeof backends);
        return td_error(TD_E_DEVICE, "default_device: no backend has a device here (backends: %s)", backends);
    }
    static const char *const rank_names[] = { "a software implementation", "the cpu backend", "other hardware",
                                              "a virtual GPU", "an integrated GPU", "a discrete GPU" };
    out->backend = best.backend;
    out->index = best.index;
    snprintf(out->reason, sizeof out->reason,
             "no TD_DEVICE: the default order (discrete GPU, integrated GPU, virtual GPU, other hardware, cpu, "
             "software) puts %s:%d first of %d device%s, %s",
             td_backend_name(best.backend), best.index, considered, considered == 1 ? "" : "s", rank_names[best_rank]);
    return TD_OK;
}

td_status td_default_device(td_device **out)
{
    if (out == NULL)
        return td_err_null("default_device", "out");
    *out = NULL;
    td_device_choice c;
    TD_TRY(td_default_device_choice(&c));
    return td_device_open(c.backend, c.index, out);
}
