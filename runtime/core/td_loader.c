/* Backend modules loaded at run time (td_backend_load, TD_BACKEND_PATH): a shared object
 * exporting TD_BACKEND_MODULE_SYMBOL hands over its td_backend_module; its hooks and
 * kernels become the vtable of its out-of-tree id (32-62), and the generated dispatch's
 * loaded arms route that kind's ops to it (docs/adding-a-backend.md, "Loadable modules"). */
#define _XOPEN_SOURCE 700 /* realpath, strdup, strtok_r */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "td_internal.h"
#include "td_ops.h"

#define FIRST_SLOT 32
#define LAST_SLOT 62

typedef struct loaded_module {
    char path[PATH_MAX];
    void *handle;
    const td_backend_module *module;
    td_backend_vtable vt;
    void (**kernels)(void);
} loaded_module;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static loaded_module *slots[TD_BACKEND_COUNT];
static int loaded_order[TD_BACKEND_COUNT]; /* ids in the order they were loaded */
static int loaded_count;

bool td_backend_is_loaded(td_backend backend)
{
    td_backend_autoload(); /* names and enumeration see TD_BACKEND_PATH's modules */
    return backend >= FIRST_SLOT && backend <= LAST_SLOT && slots[backend] != NULL;
}

/* The op named name, or -1. */
static int op_by_name(const char *name)
{
    for (int op = 0; op < TD_OP_COUNT; op++)
        if (td_op_exists((td_op)op) && strcmp(td_op_name((td_op)op), name) == 0)
            return op;
    return -1;
}

/* The hooks a module must have: their names and whether each is there. */
static const char *missing_hook(const td_backend_module *m)
{
    if (m->device_open == NULL)
        return "device_open";
    if (m->device_close == NULL)
        return "device_close";
    if (m->device_count == NULL)
        return "device_count";
    if (m->device_info == NULL)
        return "device_info";
    if (m->alloc == NULL)
        return "alloc";
    if (m->free == NULL)
        return "free";
    if (m->read == NULL)
        return "read";
    if (m->write == NULL)
        return "write";
    return NULL;
}

/* Checks m (loaded from path) and builds its vtable into lm; nothing is registered. */
static td_status adopt(const char *path, const td_backend_module *m, loaded_module *lm)
{
    if (m->abi_version != TD_BACKEND_ABI_VERSION)
        return td_error(TD_E_INVALID,
                        "backend_load: %s: built for backend ABI version %u, this library has version %d: "
                        "rebuild the module against this tdispatch",
                        path, m->abi_version, TD_BACKEND_ABI_VERSION);
    if (m->name == NULL || m->name[0] == '\0' || strlen(m->name) > 31)
        return td_error(TD_E_INVALID, "backend_load: %s: the module has no name (or one over 31 characters)", path);
    if (m->id < FIRST_SLOT || m->id > LAST_SLOT)
        return td_error(TD_E_INVALID, "backend_load: %s: backend '%s' has id %d; a loaded backend takes an id from %d to %d",
                        path, m->name, m->id, FIRST_SLOT, LAST_SLOT);
    const char *hook = missing_hook(m);
    if (hook != NULL)
        return td_error(TD_E_INVALID, "backend_load: %s: backend '%s' has no %s hook", path, m->name, hook);
    if (td_backend_vtables[m->id] != NULL) {
        if (slots[m->id] != NULL)
            return td_error(TD_E_INVALID, "backend_load: %s: id %d of backend '%s' is taken by backend '%s' loaded from %s",
                            path, m->id, m->name, slots[m->id]->vt.name, slots[m->id]->path);
        return td_error(TD_E_INVALID, "backend_load: %s: id %d of backend '%s' is taken by backend '%s', built in", path,
                        m->id, m->name, td_backend_name((td_backend)m->id));
    }
    for (int b = 0; b < TD_BACKEND_COUNT; b++)
        if (td_backend_vtables[b] != NULL && strcmp(td_backend_vtables[b]->name, m->name) == 0)
            return td_error(TD_E_INVALID, "backend_load: %s: a backend named '%s' is already there (id %d)", path,
                            m->name, b);
    if (m->kernel_count < 0 || (m->kernel_count > 0 && m->kernels == NULL))
        return td_error(TD_E_INVALID, "backend_load: %s: backend '%s' has a bad kernel list", path, m->name);
    lm->kernels = td_calloc(TD_OP_COUNT, sizeof *lm->kernels);
    if (lm->kernels == NULL)
        return td_error(TD_E_NOMEM, "backend_load: %s: out of memory", path);
    for (int i = 0; i < m->kernel_count; i++) {
        const td_backend_kernel *k = &m->kernels[i];
        const int op = k->op == NULL ? -1 : op_by_name(k->op);
        if (op < 0)
            return td_error(TD_E_INVALID, "backend_load: %s: backend '%s' has a kernel for op '%s', which this library lacks",
                            path, m->name, k->op == NULL ? "(null)" : k->op);
        if (k->fn == NULL && !td_op_is_view((td_op)op))
            return td_error(TD_E_INVALID, "backend_load: %s: backend '%s': the kernel of %s is NULL", path, m->name, k->op);
        /* A view runs in the core; its slot only says the backend takes it. */
        lm->kernels[op] = k->fn != NULL ? k->fn : (void (*)(void))td_tensor_share;
    }
    lm->vt.name = m->name;
    lm->vt.dtypes = m->dtypes;
    lm->vt.device_open = m->device_open;
    lm->vt.device_close = m->device_close;
    lm->vt.device_count = m->device_count;
    lm->vt.device_info = m->device_info;
    lm->vt.alloc = m->alloc;
    lm->vt.free = m->free;
    lm->vt.read = m->read;
    lm->vt.write = m->write;
    lm->vt.kernels = (void (*const *)(void))lm->kernels;
    lm->module = m;
    return TD_OK;
}

static void discard(loaded_module *lm)
{
    if (lm == NULL)
        return;
    if (lm->handle != NULL)
        dlclose(lm->handle);
    td_free(lm->kernels);
    td_free(lm);
}

static td_status load_one(const char *path, td_backend *out)
{
    if (path == NULL)
        return td_err_null("backend_load", "path");
    char real[PATH_MAX];
    if (realpath(path, real) == NULL)
        return td_error(TD_E_INVALID, "backend_load: %s: no such file", path);
    loaded_module *lm = td_calloc(1, sizeof *lm);
    if (lm == NULL)
        return td_error(TD_E_NOMEM, "backend_load: %s: out of memory", path);
    snprintf(lm->path, sizeof lm->path, "%s", real);
    pthread_mutex_lock(&load_lock);
    td_status st = TD_OK;
    for (int i = 0; i < loaded_count && st == TD_OK; i++)
        if (strcmp(slots[loaded_order[i]]->path, real) == 0)
            st = td_error(TD_E_INVALID, "backend_load: %s: already loaded (backend '%s', id %d)", path,
                          slots[loaded_order[i]]->vt.name, loaded_order[i]);
    if (st == TD_OK) {
        dlerror();
        lm->handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
        if (lm->handle == NULL) {
            const char *why = dlerror();
            st = td_error(TD_E_INVALID, "backend_load: %s: cannot load it: %s", path, why != NULL ? why : "dlopen failed");
        }
    }
    td_backend_module_fn entry = NULL;
    if (st == TD_OK) {
        void *sym = dlsym(lm->handle, TD_BACKEND_MODULE_SYMBOL);
        memcpy(&entry, &sym, sizeof entry); /* object to function pointer, as POSIX allows */
        if (entry == NULL)
            st = td_error(TD_E_INVALID, "backend_load: %s: no symbol %s: not a tdispatch backend module", path,
                          TD_BACKEND_MODULE_SYMBOL);
    }
    const td_backend_module *m = NULL;
    if (st == TD_OK) {
        m = entry();
        if (m == NULL)
            st = td_error(TD_E_INVALID, "backend_load: %s: %s returned no table", path, TD_BACKEND_MODULE_SYMBOL);
    }
    if (st == TD_OK)
        st = adopt(path, m, lm);
    if (st == TD_OK && m->init != NULL) {
        const td_status ist = m->init();
        if (ist != TD_OK) {
            char why[512]; /* its message, copied: td_error writes where td_last_error points */
            snprintf(why, sizeof why, "%s", td_last_error());
            st = td_error(ist, "backend_load: %s: backend '%s' failed its init: %s", path, m->name, why);
        }
    }
    if (st == TD_OK) {
        slots[m->id] = lm;
        loaded_order[loaded_count++] = m->id;
        td_backend_vtables[m->id] = &lm->vt;
        if (out != NULL)
            *out = (td_backend)m->id;
    }
    pthread_mutex_unlock(&load_lock);
    if (st != TD_OK)
        discard(lm);
    return st;
}

td_status td_backend_load(const char *path, td_backend *out)
{
    td_backend_autoload(); /* TD_BACKEND_PATH's modules first, whatever the order of calls */
    return load_one(path, out);
}

int td_backend_module_count(void)
{
    td_backend_autoload();
    pthread_mutex_lock(&load_lock);
    const int n = loaded_count;
    pthread_mutex_unlock(&load_lock);
    return n;
}

td_status td_backend_module_info_get(int index, td_backend_module_info *out)
{
    if (out == NULL)
        return td_err_null("backend_module_info_get", "out");
    memset(out, 0, sizeof *out);
    td_backend_autoload();
    pthread_mutex_lock(&load_lock);
    td_status st = TD_OK;
    if (index < 0 || index >= loaded_count) {
        st = td_error(TD_E_RANGE, "backend_module_info_get: no module %d (%d loaded)", index, loaded_count);
    } else {
        const loaded_module *lm = slots[loaded_order[index]];
        out->backend = (td_backend)loaded_order[index];
        out->abi_version = lm->module->abi_version;
        snprintf(out->name, sizeof out->name, "%s", lm->vt.name);
        snprintf(out->path, sizeof out->path, "%s", lm->path);
    }
    pthread_mutex_unlock(&load_lock);
    return st;
}

/* ---- The accessors and helpers of td_backend_api.h ----
 * Here, in the file of td_backend_load, so that a static libtdispatch linked into a program
 * that loads modules brings them along. */

/* The tensor and device accessors are inline (td_backend_api.h): they read the public heads,
 * which td_internal.h puts first in td_tensor and td_device. */
_Static_assert(offsetof(td_tensor, head) == 0 && offsetof(td_device, head) == 0, "the public heads come first");

td_backend td_be_device_backend(const td_device *device)
{
    return device->backend;
}

td_device *td_be_device_inner(const td_device *device)
{
    return device->backend == TD_BACKEND_AUTODIFF ? device->inner : NULL;
}

void td_be_strides(const td_tensor *t, int64_t strides[TD_MAX_DIMS])
{
    td_shape_strides(&t->shape, strides);
}

void td_be_broadcast_strides(const td_tensor *in, const td_tensor *out, int64_t strides[TD_MAX_DIMS])
{
    td_broadcast_strides(&in->shape, &out->shape, strides);
}

void td_be_reduce_geometry(const td_tensor *t, int64_t dim, int64_t *outer, int64_t *size, int64_t *inner)
{
    td_reduce_geometry(&t->shape, dim, outer, size, inner);
}

void td_be_matmul_geometry(const td_tensor *a, const td_tensor *b, const td_tensor *out, td_be_matmul *g)
{
    td_matmul_geometry mg;
    td_matmul_geometry_of(&a->shape, &b->shape, &out->shape, &mg);
    memset(g, 0, sizeof *g);
    g->m = mg.m;
    g->n = mg.n;
    g->k = mg.k;
    g->batch_ndim = mg.batch.ndim;
    g->batch_numel = mg.batch.numel;
    for (int d = 0; d < mg.batch.ndim; d++) {
        g->batch_dims[d] = mg.batch.dims[d];
        g->a_stride[d] = mg.a_stride[d];
        g->b_stride[d] = mg.b_stride[d];
    }
}

/* ---- TD_BACKEND_PATH ---- */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void report(const char *entry)
{
    fprintf(stderr, "tdispatch: TD_BACKEND_PATH entry %s: %s\n", entry, td_last_error());
}

/* Every *.so file of dir, in name order. */
static void load_folder(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "tdispatch: TD_BACKEND_PATH entry %s: cannot read the folder\n", dir);
        return;
    }
    char *names[256];
    int n = 0;
    for (struct dirent *e = readdir(d); e != NULL && n < 256; e = readdir(d)) {
        const size_t len = strlen(e->d_name);
        if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0) {
            const size_t cap = strlen(dir) + len + 2;
            names[n] = malloc(cap);
            if (names[n] != NULL)
                snprintf(names[n++], cap, "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n; i++) {
        if (load_one(names[i], NULL) != TD_OK)
            report(names[i]);
        free(names[i]);
    }
}

static void autoload_once(void)
{
    const char *env = getenv("TD_BACKEND_PATH");
    if (env == NULL || env[0] == '\0')
        return;
    char *copy = strdup(env);
    if (copy == NULL)
        return;
    char *save = NULL;
    for (char *e = strtok_r(copy, ":", &save); e != NULL; e = strtok_r(NULL, ":", &save)) {
        struct stat sb;
        if (stat(e, &sb) == 0 && S_ISDIR(sb.st_mode))
            load_folder(e);
        else if (load_one(e, NULL) != TD_OK)
            report(e);
    }
    free(copy);
    td_clear_error();
}

static pthread_once_t autoload_flag = PTHREAD_ONCE_INIT;

void td_backend_autoload(void)
{
    pthread_once(&autoload_flag, autoload_once);
}
