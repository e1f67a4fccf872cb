/* Status codes, the thread-local error message, and the allocation funnel. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_internal.h"

static _Thread_local char last_error[512];

const char *td_last_error(void)
{
    return last_error;
}

void td_clear_error(void)
{
    last_error[0] = '\0';
}

td_status td_error(td_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

td_status td_error_within(td_status status, const char *op)
{
    char inner[sizeof last_error];
    memcpy(inner, last_error, sizeof inner);
    return td_error(status, "%s: %s", op, inner);
}

td_status td_err_null(const char *op, const char *arg)
{
    return td_error(TD_E_NULL, "%s: %s is NULL", op, arg);
}

td_status td_err_unsupported(const char *op, td_backend backend, const char *implementers)
{
    if (implementers == NULL || implementers[0] == '\0')
        return td_error(TD_E_UNSUPPORTED, "%s: not implemented by backend '%s' (no backend implements it)", op,
                        td_backend_name(backend));
    /* "cpu, vulkan" -> "cpu, vulkan (not in this build)" where a backend is not compiled in */
    char list[256] = "";
    size_t used = 0;
    for (const char *p = implementers; *p != '\0' && used < sizeof list;) {
        const size_t len = strcspn(p, ",");
        bool built = false;
        for (int b = 0; b < TD_BACKEND_AUTODIFF; b++) {
            const char *name = td_backend_name((td_backend)b);
            if (strlen(name) == len && strncmp(name, p, len) == 0)
                built = td_backend_enabled((td_backend)b);
        }
        const int n = snprintf(list + used, sizeof list - used, "%s%.*s%s", used ? ", " : "", (int)len, p,
                               built ? "" : " (not in this build)");
        used += n > 0 ? (size_t)n : 0;
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return td_error(TD_E_UNSUPPORTED, "%s: not implemented by backend '%s' (implemented by: %s)", op,
                    td_backend_name(backend), list);
}

const char *td_status_name(td_status status)
{
    switch (status) {
    case TD_OK: return "TD_OK";
    case TD_E_NULL: return "TD_E_NULL";
    case TD_E_INVALID: return "TD_E_INVALID";
    case TD_E_KIND: return "TD_E_KIND";
    case TD_E_DTYPE: return "TD_E_DTYPE";
    case TD_E_SHAPE: return "TD_E_SHAPE";
    case TD_E_RANGE: return "TD_E_RANGE";
    case TD_E_BACKEND_MISMATCH: return "TD_E_BACKEND_MISMATCH";
    case TD_E_UNSUPPORTED: return "TD_E_UNSUPPORTED";
    case TD_E_NOMEM: return "TD_E_NOMEM";
    case TD_E_AUTODIFF_CONTEXT: return "TD_E_AUTODIFF_CONTEXT";
    case TD_E_AUTODIFF: return "TD_E_AUTODIFF";
    case TD_E_DEVICE: return "TD_E_DEVICE";
    case TD_E_DISTRIBUTED: return "TD_E_DISTRIBUTED";
    case TD_E_INTERNAL: return "TD_E_INTERNAL";
    }
    return "unknown status";
}

/* Failure injection for tests: < 0 means off (read inline by td_alloc_should_fail). */
long td_alloc_fail_after = -1;

void td_testing_fail_allocations_after(long n)
{
    td_alloc_fail_after = n;
}

static bool should_fail(void)
{
    if (td_alloc_fail_after < 0)
        return false;
    if (td_alloc_fail_after == 0)
        return true;
    td_alloc_fail_after--;
    return false;
}

bool td_alloc_should_fail_slow(void)
{
    return should_fail();
}

void *td_malloc(size_t size)
{
    if (should_fail())
        return NULL;
    if (size <= TD_SMALL_BYTES) {
        void *p = td_small_take();
        if (p != NULL)
            return p;
    }
    return malloc(size ? size : 1);
}

void *td_malloc_aligned(size_t align, size_t size)
{
    if (should_fail())
        return NULL;
    /* aligned_alloc wants a size that is a multiple of the alignment */
    const size_t rounded = (size + align - 1) / align * align;
    if (rounded < size)
        return NULL;
    return aligned_alloc(align, rounded ? rounded : align);
}

void *td_calloc(size_t n, size_t size)
{
    if (should_fail())
        return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

void td_free(void *p)
{
    if (p != NULL && !td_small_give(p))
        free(p);
}

size_t td_dtype_size(td_dtype dtype)
{
    return td_dtype_valid(dtype) ? (size_t)td_dtype_rows[dtype].size : 0;
}

const char *td_dtype_name(td_dtype dtype)
{
    return td_dtype_valid(dtype) ? td_dtype_rows[dtype].name : "unknown dtype";
}

td_class td_dtype_class(td_dtype dtype)
{
    return td_dtype_valid(dtype) ? td_dtype_rows[dtype].cls : TD_CLASS_COUNT;
}

td_status td_dtype_from_name(const char *name, td_dtype *out)
{
    if (out == NULL)
        return td_err_null("td_dtype_from_name", "out");
    if (name == NULL)
        return td_err_null("td_dtype_from_name", "name");
    for (int d = 0; d < TD_DTYPE_COUNT; d++)
        if (td_dtype_valid((td_dtype)d) && strcmp(td_dtype_rows[d].name, name) == 0) {
            *out = (td_dtype)d;
            return TD_OK;
        }
    return td_error(TD_E_INVALID, "td_dtype_from_name: no dtype is named '%.32s'", name);
}
