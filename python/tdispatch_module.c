/* The tdispatch Python module, the hand-written part: the Tensor, Device, Group and Grads
 * types, the td.Error hierarchy, the argument converters and result wrappers the generated
 * op functions (generated/td_python.c) call, zero-copy interop (buffer protocol,
 * __array_interface__, DLPack) and the module's own functions. Every op function is
 * generated; nothing here wraps an op by hand except the operators' choice of op.
 *
 * Rules kept throughout: a td call that may run a kernel or read a device runs with the
 * GIL released and touches no Python object meanwhile (it gets C values and tensors held
 * alive by Python objects the caller keeps); every td handle a Python object holds is one
 * reference it releases in its dealloc; every error is an exception, never a crash. */
#include "tdpy.h"

#include <string.h>

#include "td_devices.h"
#include "td_external.h"
#include "td_optim.h"

/* ---- errors ---- */

#define TDPY_NSTATUS (TD_E_INTERNAL + 1)
static PyObject *tdpy_error_base;
static PyObject *tdpy_errors[TDPY_NSTATUS];

PyObject *tdpy_raise(td_status st)
{
    PyObject *cls = (st > TD_OK && st < TDPY_NSTATUS) ? tdpy_errors[st] : tdpy_error_base;
    const char *msg = td_last_error();
    PyObject *exc = PyObject_CallFunction(cls, "s", msg != NULL && msg[0] ? msg : td_status_name(st));
    if (exc == NULL)
        return NULL;
    PyObject *name = PyUnicode_FromString(td_status_name(st));
    if (name == NULL || PyObject_SetAttrString(exc, "status", name) < 0) {
        Py_XDECREF(name);
        Py_DECREF(exc);
        return NULL;
    }
    Py_DECREF(name);
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

/* ---- types ---- */

typedef struct {
    PyObject_HEAD
    td_device *dev;
} DeviceObject;

typedef struct {
    PyObject_HEAD
    td_group *group;
} GroupObject;

typedef struct {
    PyObject_HEAD
    td_grads *grads;
} GradsObject;

typedef struct {
    PyObject_HEAD
    td_tensor *t;
    PyObject *grad;     /* the gradient of the last backward that reached it, or NULL */
    PyObject *weakrefs;
    int exports;        /* buffers exported and not released */
} TensorObject;

static PyTypeObject DeviceType, GroupType, GradsType, TensorType;

/* Leaves that asked for gradients (weak references), for Tensor.grad after backward. */
static PyObject *tdpy_leaves;

static PyObject *device_wrap(td_device *dev) /* takes the reference */
{
    DeviceObject *d = PyObject_New(DeviceObject, &DeviceType);
    if (d == NULL) {
        td_device_release(dev);
        return NULL;
    }
    d->dev = dev;
    return (PyObject *)d;
}

static PyObject *tensor_wrap(td_tensor *t) /* takes the reference */
{
    TensorObject *o = PyObject_New(TensorObject, &TensorType);
    if (o == NULL) {
        Py_BEGIN_ALLOW_THREADS
        td_tensor_release(t);
        Py_END_ALLOW_THREADS
        return NULL;
    }
    o->t = t;
    o->grad = NULL;
    o->weakrefs = NULL;
    o->exports = 0;
    return (PyObject *)o;
}

/* ---- results ---- */

PyObject *tdpy_tensor_result(td_status st, td_tensor *t)
{
    if (st != TD_OK)
        return tdpy_raise(st);
    return tensor_wrap(t);
}

PyObject *tdpy_tuple_result(td_status st, td_tensor **ts, int n)
{
    if (st != TD_OK)
        return tdpy_raise(st);
    PyObject *tup = PyTuple_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *o = tup != NULL ? tensor_wrap(ts[i]) : NULL;
        if (tup == NULL) {
            td_tensor_release(ts[i]);
            continue;
        }
        if (o == NULL) {
            for (int j = i + 1; j < n; j++)
                td_tensor_release(ts[j]);
            Py_DECREF(tup);
            return NULL;
        }
        PyTuple_SET_ITEM(tup, i, o);
    }
    return tup;
}

PyObject *tdpy_none_result(td_status st)
{
    if (st != TD_OK)
        return tdpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *host_item(td_dtype dtype, const void *p, int64_t i)
{
    switch (dtype) {
    case TD_F32:
        return PyFloat_FromDouble((double)((const float *)p)[i]);
    case TD_I32:
        return PyLong_FromLong((long)((const int32_t *)p)[i]);
    case TD_BOOL:
        return PyBool_FromLong(((const bool *)p)[i]);
    default: /* a dtype added to the library after this binding */
        break;
    }
    PyErr_SetString(PyExc_TypeError, "tdispatch: a dtype the binding does not know");
    return NULL;
}

PyObject *tdpy_host_result(td_status st, tdpy_host *h)
{
    PyObject *list = NULL;
    if (st != TD_OK) {
        tdpy_raise(st);
    } else {
        list = PyList_New((Py_ssize_t)h->n);
        for (int64_t i = 0; list != NULL && i < h->n; i++) {
            PyObject *x = host_item(h->dtype, h->p, i);
            if (x == NULL) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, (Py_ssize_t)i, x);
        }
    }
    tdpy_host_free(h);
    return list;
}

/* ---- converters ---- */

int tdpy_conv_tensor(PyObject *o, void *out)
{
    if (!PyObject_TypeCheck(o, &TensorType)) {
        PyErr_Format(PyExc_TypeError, "expected a tdispatch.Tensor, got %.100s", Py_TYPE(o)->tp_name);
        return 0;
    }
    *(const td_tensor **)out = ((TensorObject *)o)->t;
    return 1;
}

void tdpy_tensors_free(tdpy_tensors *l)
{
    PyMem_Free(l->v);
    l->v = NULL;
    Py_CLEAR(l->keep);
}

int tdpy_conv_tensors(PyObject *o, void *out)
{
    tdpy_tensors *l = out;
    if (o == NULL) {
        tdpy_tensors_free(l);
        return 1;
    }
    PyObject *tup = PySequence_Tuple(o);
    if (tup == NULL)
        return 0;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    if (n > INT32_MAX) {
        Py_DECREF(tup);
        PyErr_SetString(PyExc_ValueError, "too many tensors");
        return 0;
    }
    l->v = PyMem_Malloc(sizeof *l->v * (size_t)(n > 0 ? n : 1));
    if (l->v == NULL) {
        Py_DECREF(tup);
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!tdpy_conv_tensor(PyTuple_GET_ITEM(tup, i), &l->v[i])) {
            PyMem_Free(l->v);
            l->v = NULL;
            Py_DECREF(tup);
            return 0;
        }
    }
    l->keep = tup;
    l->n = (int)n;
    return Py_CLEANUP_SUPPORTED;
}

int tdpy_conv_device(PyObject *o, void *out)
{
    if (!PyObject_TypeCheck(o, &DeviceType)) {
        PyErr_Format(PyExc_TypeError, "expected a tdispatch.Device (td.device(\"cpu\")), got %.100s",
                     Py_TYPE(o)->tp_name);
        return 0;
    }
    *(td_device **)out = ((DeviceObject *)o)->dev;
    return 1;
}

int tdpy_conv_group(PyObject *o, void *out)
{
    if (!PyObject_TypeCheck(o, &GroupType)) {
        PyErr_Format(PyExc_TypeError, "expected a tdispatch.Group (td.group_world()), got %.100s", Py_TYPE(o)->tp_name);
        return 0;
    }
    *(td_group **)out = ((GroupObject *)o)->group;
    return 1;
}

void tdpy_i64s_free(tdpy_i64s *a)
{
    if (a->v != a->small)
        PyMem_Free(a->v);
    a->v = NULL;
}

int tdpy_conv_i64s(PyObject *o, void *out)
{
    tdpy_i64s *a = out;
    if (o == NULL) {
        tdpy_i64s_free(a);
        return 1;
    }
    if (PyLong_Check(o)) { /* one int: a 1-element array */
        a->small[0] = PyLong_AsLongLong(o);
        if (a->small[0] == -1 && PyErr_Occurred())
            return 0;
        a->v = a->small;
        a->n = 1;
        return Py_CLEANUP_SUPPORTED;
    }
    PyObject *seq = PySequence_Fast(o, "expected a sequence of ints");
    if (seq == NULL)
        return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > 4096) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "an int array of more than 4096 items");
        return 0;
    }
    a->v = n <= 16 ? a->small : PyMem_Malloc(sizeof(int64_t) * (size_t)n);
    if (a->v == NULL) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        long long v = PyLong_Check(x) || PyIndex_Check(x) ? PyLong_AsLongLong(x) : -1;
        if (!(PyLong_Check(x) || PyIndex_Check(x))) {
            PyErr_Format(PyExc_TypeError, "expected ints, got %.100s", Py_TYPE(x)->tp_name);
        }
        if (PyErr_Occurred()) {
            tdpy_i64s_free(a);
            Py_DECREF(seq);
            return 0;
        }
        a->v[i] = (int64_t)v;
    }
    Py_DECREF(seq);
    a->n = (int)n;
    return Py_CLEANUP_SUPPORTED;
}

int tdpy_conv_u64(PyObject *o, void *out)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return 0;
    *(uint64_t *)out = (uint64_t)v;
    return 1;
}

static int conv_enum(PyObject *o, int *out, const char *const *names, int n, const char *what)
{
    if (PyLong_Check(o)) {
        long v = PyLong_AsLong(o);
        if (v >= 0 && v < n) {
            *out = (int)v;
            return 1;
        }
    } else if (PyUnicode_Check(o)) {
        const char *s = PyUnicode_AsUTF8(o);
        if (s == NULL)
            return 0;
        for (int i = 0; i < n; i++)
            if (strcmp(s, names[i]) == 0) {
                *out = i;
                return 1;
            }
    }
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "expected a %s name or index, got %R", what, o);
    return 0;
}

int tdpy_conv_distribution(PyObject *o, void *out)
{
    static const char *const names[] = { "uniform", "normal" };
    return conv_enum(o, out, names, 2, "distribution (\"uniform\", \"normal\")");
}

int tdpy_conv_reduce_op(PyObject *o, void *out)
{
    static const char *const names[] = { "sum", "mean", "max", "min" };
    return conv_enum(o, out, names, 4, "reduce op (\"sum\", \"mean\", \"max\", \"min\")");
}

/* ---- host data ---- */

static size_t dtype_bytes(td_dtype d)
{
    return d == TD_BOOL ? sizeof(bool) : 4;
}

static const char *dtype_str(td_dtype d)
{
    return d == TD_F32 ? "float32" : d == TD_I32 ? "int32" : d == TD_BOOL ? "bool" : "?";
}

void tdpy_host_free(tdpy_host *h)
{
    PyMem_Free(h->p);
    h->p = NULL;
}

static int host_reserve(tdpy_host *h, int64_t n)
{
    if (n < 0 || (uint64_t)n > (uint64_t)PY_SSIZE_T_MAX / 8) {
        PyErr_SetString(PyExc_ValueError, "too many elements");
        return -1;
    }
    h->p = PyMem_Malloc((size_t)(n > 0 ? n : 1) * dtype_bytes(h->dtype));
    if (h->p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    h->n = n;
    return 0;
}

/* One Python number into element i. */
static int host_set(tdpy_host *h, int64_t i, PyObject *x)
{
    switch (h->dtype) {
    case TD_F32: {
        double v = PyFloat_AsDouble(x);
        if (v == -1.0 && PyErr_Occurred())
            return -1;
        ((float *)h->p)[i] = (float)v;
        return 0;
    }
    case TD_I32: {
        if (PyFloat_Check(x)) {
            PyErr_SetString(PyExc_TypeError, "a float where int32 data is expected (convert it first)");
            return -1;
        }
        long long v = PyLong_AsLongLong(x);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (v < INT32_MIN || v > INT32_MAX) {
            PyErr_Format(PyExc_OverflowError, "%lld does not fit an int32", v);
            return -1;
        }
        ((int32_t *)h->p)[i] = (int32_t)v;
        return 0;
    }
    case TD_BOOL: {
        int v = PyObject_IsTrue(x);
        if (v < 0)
            return -1;
        ((bool *)h->p)[i] = v != 0;
        return 0;
    }
    default:
        break;
    }
    PyErr_SetString(PyExc_TypeError, "a dtype the binding does not know");
    return -1;
}

/* Elements of a C-contiguous buffer, any common numeric format, into h's dtype. */
static int host_from_buffer(tdpy_host *h, const Py_buffer *b)
{
    const char *f = b->format != NULL ? b->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    char c = f[0];
    if (c == 0 || f[1] != 0) {
        PyErr_Format(PyExc_TypeError, "buffer format '%s' is not supported", b->format);
        return -1;
    }
    Py_ssize_t n = b->itemsize > 0 ? b->len / b->itemsize : 0;
    if (host_reserve(h, n) < 0)
        return -1;
    const char *p = b->buf;
    for (Py_ssize_t i = 0; i < n; i++, p += b->itemsize) {
        double d = 0;
        long long q = 0;
        bool is_int = true;
        switch (c) {
        case 'f': { float v; memcpy(&v, p, 4); d = v; is_int = false; break; }
        case 'd': { double v; memcpy(&v, p, 8); d = v; is_int = false; break; }
        case '?': { bool v; memcpy(&v, p, 1); q = v; break; }
        case 'b': { signed char v; memcpy(&v, p, 1); q = v; break; }
        case 'B': { unsigned char v; memcpy(&v, p, 1); q = v; break; }
        case 'h': { short v; memcpy(&v, p, 2); q = v; break; }
        case 'H': { unsigned short v; memcpy(&v, p, 2); q = v; break; }
        case 'i': { int v; memcpy(&v, p, 4); q = v; break; }
        case 'I': { unsigned v; memcpy(&v, p, 4); q = v; break; }
        case 'l': case 'q': { long long v; memcpy(&v, p, 8); q = v; break; }
        case 'L': case 'Q': { unsigned long long v; memcpy(&v, p, 8); q = (long long)v; break; }
        default:
            tdpy_host_free(h);
            PyErr_Format(PyExc_TypeError, "buffer format '%s' is not supported", b->format);
            return -1;
        }
        switch (h->dtype) {
        case TD_F32: ((float *)h->p)[i] = is_int ? (float)q : (float)d; break;
        case TD_BOOL: ((bool *)h->p)[i] = is_int ? q != 0 : d != 0; break;
        case TD_I32:
            if (!is_int) {
                tdpy_host_free(h);
                PyErr_SetString(PyExc_TypeError, "float data where int32 is expected (convert it first)");
                return -1;
            }
            if (q < INT32_MIN || q > INT32_MAX) {
                tdpy_host_free(h);
                PyErr_Format(PyExc_OverflowError, "%lld does not fit an int32", q);
                return -1;
            }
            ((int32_t *)h->p)[i] = (int32_t)q;
            break;
        default:
            tdpy_host_free(h);
            PyErr_SetString(PyExc_TypeError, "a dtype the binding does not know");
            return -1;
        }
    }
    return 0;
}

/* Nested sequences (lists, tuples) of numbers: the flat elements, and the shape found. */
static int flat_count(PyObject *o, int depth, int64_t *shape, int *ndim, int64_t *count)
{
    if (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o)) {
        if (depth >= TD_MAX_DIMS) {
            PyErr_SetString(PyExc_ValueError, "more than 8 nested levels");
            return -1;
        }
        Py_ssize_t n = PySequence_Size(o);
        if (n < 0)
            return -1;
        if (depth == *ndim) {
            shape[depth] = n;
            *ndim = depth + 1;
        } else if (depth > *ndim || shape[depth] != n) {
            PyErr_SetString(PyExc_ValueError, "ragged nested sequence: every level must have one length");
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *x = PySequence_GetItem(o, i);
            if (x == NULL)
                return -1;
            int r = flat_count(x, depth + 1, shape, ndim, count);
            Py_DECREF(x);
            if (r < 0)
                return -1;
        }
        if (n == 0 && depth + 1 < *ndim) {
            PyErr_SetString(PyExc_ValueError, "ragged nested sequence");
            return -1;
        }
        return 0;
    }
    if (depth != *ndim && !(depth == 0 && *ndim == 0)) {
        PyErr_SetString(PyExc_ValueError, "ragged nested sequence: a number where a sequence is expected");
        return -1;
    }
    (*count)++;
    return 0;
}

static int flat_fill(PyObject *o, tdpy_host *h, int64_t *i)
{
    if (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o)) {
        Py_ssize_t n = PySequence_Size(o);
        if (n < 0)
            return -1;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *x = PySequence_GetItem(o, k);
            if (x == NULL)
                return -1;
            int r = flat_fill(x, h, i);
            Py_DECREF(x);
            if (r < 0)
                return -1;
        }
        return 0;
    }
    if (*i >= h->n) {
        PyErr_SetString(PyExc_ValueError, "the sequence changed while it was read");
        return -1;
    }
    return host_set(h, (*i)++, o);
}

/* Any data: a buffer (NumPy arrays too) or nested sequences; shape (may be NULL) gets its
 * shape: the buffer's, or the nesting's. */
static int host_from_object(tdpy_host *h, PyObject *o, int64_t *shape, int *ndim)
{
    if (PyObject_CheckBuffer(o) && !PyBytes_Check(o)) {
        Py_buffer b;
        if (PyObject_GetBuffer(o, &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
            int r = 0;
            if (b.ndim > TD_MAX_DIMS) {
                PyErr_SetString(PyExc_ValueError, "more than 8 dims");
                r = -1;
            }
            if (r == 0 && shape != NULL) {
                for (int k = 0; k < b.ndim; k++)
                    shape[k] = b.shape != NULL ? b.shape[k] : b.len / (b.itemsize > 0 ? b.itemsize : 1);
                *ndim = b.ndim;
            }
            if (r == 0)
                r = host_from_buffer(h, &b);
            PyBuffer_Release(&b);
            return r;
        }
        PyErr_Clear(); /* not C-contiguous: read it as a sequence */
    }
    int64_t sh[TD_MAX_DIMS];
    int nd = 0;
    int64_t count = 0;
    if (flat_count(o, 0, sh, &nd, &count) < 0)
        return -1;
    if (host_reserve(h, count) < 0)
        return -1;
    int64_t i = 0;
    if (flat_fill(o, h, &i) < 0 || i != count) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "the sequence changed while it was read");
        tdpy_host_free(h);
        return -1;
    }
    if (shape != NULL) {
        memcpy(shape, sh, sizeof(int64_t) * (size_t)nd);
        *ndim = nd;
    }
    return 0;
}

int tdpy_conv_host(PyObject *o, void *out)
{
    tdpy_host *h = out;
    if (o == NULL) {
        tdpy_host_free(h);
        return 1;
    }
    if (host_from_object(h, o, NULL, NULL) < 0)
        return 0;
    return Py_CLEANUP_SUPPORTED;
}

int tdpy_host_check(const tdpy_host *h, const int64_t *shape, int ndim, const char *name)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return 0; /* the op reports a bad shape */
        if (shape[i] > 0 && n > INT64_MAX / shape[i]) {
            PyErr_SetString(PyExc_ValueError, "the shape holds too many elements");
            return -1;
        }
        n *= shape[i];
    }
    if (n != h->n) {
        PyErr_Format(PyExc_ValueError, "%s holds %lld elements, the shape %lld", name, (long long)h->n, (long long)n);
        return -1;
    }
    return 0;
}

int tdpy_host_out_alloc(tdpy_host *h, const td_tensor *t)
{
    int64_t n = 0;
    td_status st = td_tensor_numel(t, &n);
    if (st != TD_OK) {
        tdpy_raise(st);
        return -1;
    }
    return host_reserve(h, n);
}

/* ---- Device ---- */

static void device_dealloc(DeviceObject *d)
{
    td_device_release(d->dev);
    PyObject_Free(d);
}

static int device_text(td_device *dev, char *buf, size_t cap)
{
    td_backend be = TD_BACKEND_CPU;
    if (td_device_backend(dev, &be) != TD_OK)
        return snprintf(buf, cap, "?");
    if (be == TD_BACKEND_AUTODIFF) {
        td_device_info info;
        if (td_device_info_of(dev, &info) != TD_OK)
            return snprintf(buf, cap, "autodiff(?)");
        return snprintf(buf, cap, "autodiff(%s:%d)", td_backend_name(info.backend), info.index);
    }
    td_device_info info;
    if (td_device_info_of(dev, &info) != TD_OK)
        return snprintf(buf, cap, "%s", td_backend_name(be));
    return snprintf(buf, cap, "%s:%d", td_backend_name(be), info.index);
}

static PyObject *device_repr(DeviceObject *d)
{
    char buf[128];
    device_text(d->dev, buf, sizeof buf);
    return PyUnicode_FromFormat("device('%s')", buf);
}

static PyObject *device_get_backend(DeviceObject *d, void *closure)
{
    (void)closure;
    td_backend be;
    td_status st = td_device_backend(d->dev, &be);
    if (st != TD_OK)
        return tdpy_raise(st);
    return PyUnicode_FromString(td_backend_name(be));
}

static PyObject *device_get_index(DeviceObject *d, void *closure)
{
    (void)closure;
    td_device_info info;
    td_status st = td_device_info_of(d->dev, &info);
    if (st != TD_OK)
        return tdpy_raise(st);
    return PyLong_FromLong(info.index);
}

static PyObject *device_richcompare(PyObject *a, PyObject *b, int op)
{
    if (!PyObject_TypeCheck(b, &DeviceType) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    bool eq = ((DeviceObject *)a)->dev == ((DeviceObject *)b)->dev;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t device_hash(DeviceObject *d)
{
    return _Py_HashPointer(d->dev);
}

static PyGetSetDef device_getset[] = {
    { "backend", (getter)device_get_backend, NULL, "the backend's name (\"cpu\", \"vulkan\", \"autodiff\")", NULL },
    { "index", (getter)device_get_index, NULL, "the device index (of the wrapped device for autodiff)", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject DeviceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tdispatch.Device",
    .tp_basicsize = sizeof(DeviceObject),
    .tp_dealloc = (destructor)device_dealloc,
    .tp_repr = (reprfunc)device_repr,
    .tp_hash = (hashfunc)device_hash,
    .tp_richcompare = device_richcompare,
    .tp_getset = device_getset,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tdispatch device (td.device(\"cpu\"), td.device(\"vulkan:0\"), td.autodiff(dev)). Tensors keep "
              "their device alive.",
};

/* ---- Group ---- */

static void group_dealloc(GroupObject *g)
{
    td_group_release(g->group);
    PyObject_Free(g);
}

static PyTypeObject GroupType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tdispatch.Group",
    .tp_basicsize = sizeof(GroupObject),
    .tp_dealloc = (destructor)group_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A process group for the collectives (td.group_world()).",
};

/* ---- Grads ---- */

static void grads_dealloc(GradsObject *g)
{
    td_grads_release(g->grads);
    PyObject_Free(g);
}

static PyObject *grads_getitem(GradsObject *g, PyObject *key)
{
    const td_tensor *t;
    if (!tdpy_conv_tensor(key, &t))
        return NULL;
    td_tensor *out = NULL;
    td_status st = td_grads_get(g->grads, t, &out);
    return tdpy_tensor_result(st, out);
}

static PyMappingMethods grads_mapping = { .mp_subscript = (binaryfunc)grads_getitem };

static PyTypeObject GradsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tdispatch.Grads",
    .tp_basicsize = sizeof(GradsObject),
    .tp_dealloc = (destructor)grads_dealloc,
    .tp_as_mapping = &grads_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The gradients of one backward: grads[leaf] is the gradient of that leaf (a tensor of the inner "
              "device).",
};

/* ---- Tensor ---- */

static void tensor_dealloc(TensorObject *o)
{
    if (o->weakrefs != NULL)
        PyObject_ClearWeakRefs((PyObject *)o);
    Py_CLEAR(o->grad);
    td_tensor *t = o->t;
    o->t = NULL;
    /* The last release of an external tensor may call back into Python (a DLPack
     * deleter takes the GIL itself), so the release runs with the GIL released. */
    Py_BEGIN_ALLOW_THREADS
    td_tensor_release(t);
    Py_END_ALLOW_THREADS
    PyObject_Free(o);
}

static td_dtype tensor_dtype(const TensorObject *o)
{
    td_dtype d = TD_F32;
    (void)td_tensor_dtype(o->t, &d);
    return d;
}

static PyObject *tensor_get_shape(TensorObject *o, void *closure)
{
    (void)closure;
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    td_status st = td_tensor_shape(o->t, dims, &nd);
    if (st != TD_OK)
        return tdpy_raise(st);
    PyObject *tup = PyTuple_New(nd);
    for (int i = 0; tup != NULL && i < nd; i++) {
        PyObject *x = PyLong_FromLongLong(dims[i]);
        if (x == NULL) {
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, i, x);
    }
    return tup;
}

static PyObject *tensor_get_ndim(TensorObject *o, void *closure)
{
    (void)closure;
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    td_status st = td_tensor_shape(o->t, dims, &nd);
    if (st != TD_OK)
        return tdpy_raise(st);
    return PyLong_FromLong(nd);
}

static PyObject *tensor_get_dtype(TensorObject *o, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(dtype_str(tensor_dtype(o)));
}

static PyObject *tensor_get_device(TensorObject *o, void *closure)
{
    (void)closure;
    td_device *d = NULL;
    td_status st = td_tensor_device(o->t, &d); /* borrowed */
    if (st == TD_OK)
        st = td_device_retain(d);
    if (st != TD_OK)
        return tdpy_raise(st);
    return device_wrap(d);
}

static PyObject *tensor_get_grad(TensorObject *o, void *closure)
{
    (void)closure;
    if (o->grad == NULL)
        Py_RETURN_NONE;
    Py_INCREF(o->grad);
    return o->grad;
}

static PyObject *tensor_numel(TensorObject *o, PyObject *unused)
{
    (void)unused;
    int64_t n = 0;
    td_status st = td_tensor_numel(o->t, &n);
    if (st != TD_OK)
        return tdpy_raise(st);
    return PyLong_FromLongLong(n);
}

/* Every element, row-major, read from the tensor's device (the GIL released meanwhile). */
static int tensor_read(TensorObject *o, tdpy_host *h)
{
    h->dtype = tensor_dtype(o);
    if (tdpy_host_out_alloc(h, o->t) < 0)
        return -1;
    td_status st;
    const td_tensor *t = o->t;
    void *p = h->p;
    int64_t n = h->n;
    Py_BEGIN_ALLOW_THREADS
    switch (h->dtype) {
    case TD_F32: st = td_float_into_data(t, p, n); break;
    case TD_I32: st = td_int_into_data(t, p, n); break;
    case TD_BOOL: st = td_bool_into_data(t, p, n); break;
    default: st = TD_E_DTYPE; break;
    }
    Py_END_ALLOW_THREADS
    if (st != TD_OK) {
        tdpy_host_free(h);
        tdpy_raise(st);
        return -1;
    }
    return 0;
}

static PyObject *tensor_item(TensorObject *o, PyObject *unused)
{
    (void)unused;
    tdpy_host h = { 0 };
    if (tensor_read(o, &h) < 0)
        return NULL;
    PyObject *r = NULL;
    if (h.n != 1)
        PyErr_Format(PyExc_ValueError, "item() of a tensor of %lld elements (one expected)", (long long)h.n);
    else
        r = host_item(h.dtype, h.p, 0);
    tdpy_host_free(&h);
    return r;
}

static PyObject *nest(const tdpy_host *h, const int64_t *dims, int nd, int depth, int64_t *i)
{
    if (depth == nd)
        return host_item(h->dtype, h->p, (*i)++);
    PyObject *l = PyList_New((Py_ssize_t)dims[depth]);
    for (int64_t k = 0; l != NULL && k < dims[depth]; k++) {
        PyObject *x = nest(h, dims, nd, depth + 1, i);
        if (x == NULL) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)k, x);
    }
    return l;
}

static PyObject *tensor_tolist(TensorObject *o, PyObject *unused)
{
    (void)unused;
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    td_status st = td_tensor_shape(o->t, dims, &nd);
    if (st != TD_OK)
        return tdpy_raise(st);
    tdpy_host h = { 0 };
    if (tensor_read(o, &h) < 0)
        return NULL;
    int64_t i = 0;
    PyObject *r = nest(&h, dims, nd, 0, &i);
    tdpy_host_free(&h);
    return r;
}

static PyObject *tensor_repr(TensorObject *o)
{
    size_t len = 0;
    td_status st;
    const td_tensor *t = o->t;
    Py_BEGIN_ALLOW_THREADS
    st = td_tensor_format(t, NULL, 0, &len);
    Py_END_ALLOW_THREADS
    if (st != TD_OK)
        return tdpy_raise(st);
    char *buf = PyMem_Malloc(len + 1);
    if (buf == NULL)
        return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    st = td_tensor_format(t, buf, len + 1, NULL);
    Py_END_ALLOW_THREADS
    PyObject *r = st == TD_OK ? PyUnicode_FromString(buf) : tdpy_raise(st);
    PyMem_Free(buf);
    return r;
}

static PyObject *tensor_to(TensorObject *o, PyObject *arg)
{
    td_device *dev;
    if (!tdpy_conv_device(arg, &dev))
        return NULL;
    td_tensor *out = NULL;
    td_status st;
    const td_tensor *t = o->t;
    td_dtype d = tensor_dtype(o);
    Py_BEGIN_ALLOW_THREADS
    st = d == TD_F32 ? td_float_to_device(t, dev, &out)
       : d == TD_I32 ? td_int_to_device(t, dev, &out) : td_bool_to_device(t, dev, &out);
    Py_END_ALLOW_THREADS
    return tdpy_tensor_result(st, out);
}

static PyObject *tensor_numpy(TensorObject *o, PyObject *unused)
{
    (void)unused;
    PyObject *np = PyImport_ImportModule("numpy");
    if (np == NULL)
        return NULL;
    void *data = NULL;
    PyObject *r;
    if (td_tensor_host_data(o->t, &data) == TD_OK) {
        r = PyObject_CallMethod(np, "asarray", "O", (PyObject *)o); /* shares the memory */
    } else { /* another device: a copy */
        PyObject *list = tensor_tolist(o, NULL);
        r = list == NULL ? NULL : PyObject_CallMethod(np, "array", "Os", list, dtype_str(tensor_dtype(o)));
        Py_XDECREF(list);
    }
    Py_DECREF(np);
    return r;
}

static PyObject *tensor_require_grad(TensorObject *o, PyObject *unused)
{
    (void)unused;
    td_status st = td_require_grad(o->t);
    if (st != TD_OK)
        return tdpy_raise(st);
    PyObject *ref = PyWeakref_NewRef((PyObject *)o, NULL);
    if (ref == NULL || PyList_Append(tdpy_leaves, ref) < 0) {
        Py_XDECREF(ref);
        return NULL;
    }
    Py_DECREF(ref);
    Py_INCREF(o);
    return (PyObject *)o;
}

static PyObject *tensor_backward(TensorObject *o, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "retain_graph", NULL };
    int retain = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:backward", kwlist, &retain))
        return NULL;
    td_grads *grads = NULL;
    td_status st;
    const td_tensor *t = o->t;
    td_backward_options opts = { .retain_graph = retain != 0 };
    Py_BEGIN_ALLOW_THREADS
    st = td_backward_ex(t, &opts, &grads);
    Py_END_ALLOW_THREADS
    if (st != TD_OK)
        return tdpy_raise(st);
    GradsObject *g = PyObject_New(GradsObject, &GradsType);
    if (g == NULL) {
        td_grads_release(grads);
        return NULL;
    }
    g->grads = grads;
    /* Each live leaf that asked for gradients gets .grad (replaced, not accumulated);
     * dead references are dropped. */
    PyObject *live = PyList_New(0);
    if (live == NULL) {
        Py_DECREF(g);
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(tdpy_leaves);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *ref = PyList_GET_ITEM(tdpy_leaves, i);
        PyObject *leaf = PyWeakref_GetObject(ref);
        if (leaf == Py_None)
            continue;
        Py_INCREF(leaf); /* borrowed: held while allocations below may run a collection */
        if (PyList_Append(live, ref) < 0) {
            Py_DECREF(leaf);
            Py_DECREF(live);
            Py_DECREF(g);
            return NULL;
        }
        td_tensor *gt = NULL;
        if (td_grads_get(grads, ((TensorObject *)leaf)->t, &gt) == TD_OK) {
            PyObject *w = tensor_wrap(gt);
            if (w == NULL) {
                Py_DECREF(leaf);
                Py_DECREF(live);
                Py_DECREF(g);
                return NULL;
            }
            Py_XSETREF(((TensorObject *)leaf)->grad, w);
        }
        Py_DECREF(leaf);
    }
    if (PyList_SetSlice(tdpy_leaves, 0, n, live) < 0) {
        Py_DECREF(live);
        Py_DECREF(g);
        return NULL;
    }
    Py_DECREF(live);
    return (PyObject *)g;
}

static PyObject *tensor_assign(TensorObject *o, PyObject *arg)
{
    const td_tensor *v;
    if (!tdpy_conv_tensor(arg, &v))
        return NULL;
    td_status st = td_tensor_assign(o->t, v);
    if (st != TD_OK)
        return tdpy_raise(st);
    Py_INCREF(o);
    return (PyObject *)o;
}

static PyObject *tensor_value(TensorObject *o, PyObject *unused)
{
    (void)unused;
    td_tensor *out = NULL;
    td_status st = td_tensor_value(o->t, &out);
    return tdpy_tensor_result(st, out);
}

static PyObject *tensor_detach(TensorObject *o, PyObject *unused)
{
    (void)unused;
    td_tensor *out = NULL;
    td_status st = td_detach(o->t, &out);
    return tdpy_tensor_result(st, out);
}

/* ---- operators ---- */

/* b as a tensor like a: a Tensor as is (a new reference), a Python number as a 0-d tensor of
 * a's class on a's device. NULL with NotImplemented semantics (*ni set) for other types. */
static PyObject *operand(TensorObject *a, PyObject *b, bool *ni)
{
    *ni = false;
    if (PyObject_TypeCheck(b, &TensorType)) {
        Py_INCREF(b);
        return b;
    }
    if (!PyFloat_Check(b) && !PyLong_Check(b)) {
        *ni = true;
        return NULL;
    }
    td_dtype d = tensor_dtype(a);
    td_device *dev = NULL;
    td_status st = td_tensor_device(a->t, &dev); /* borrowed: a holds it */
    if (st != TD_OK)
        return tdpy_raise(st);
    td_tensor *out = NULL;
    if (d == TD_F32) {
        float v = (float)PyFloat_AsDouble(b);
        st = PyErr_Occurred() ? TD_OK : td_float_from_data(dev, &v, NULL, 0, &out);
    } else if (d == TD_I32 && PyLong_Check(b)) {
        long v = PyLong_AsLong(b);
        int32_t w = (int32_t)v;
        if (!PyErr_Occurred() && (v < INT32_MIN || v > INT32_MAX))
            PyErr_SetString(PyExc_OverflowError, "the number does not fit an int32");
        st = PyErr_Occurred() ? TD_OK : td_int_from_data(dev, &w, NULL, 0, &out);
    } else if (d == TD_BOOL && PyBool_Check(b)) {
        bool w = b == Py_True;
        st = td_bool_from_data(dev, &w, NULL, 0, &out);
    } else {
        *ni = true;
        return NULL;
    }
    if (PyErr_Occurred())
        return NULL;
    return tdpy_tensor_result(st, out);
}

typedef td_status (*binop_fn)(const td_tensor *, const td_tensor *, td_tensor **);

/* The op for each operator and dtype (f32, i32, bool); NULL: not defined. */
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MATMUL, OP_POW, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_COUNT };
static const binop_fn binops[OP_COUNT][3] = {
    [OP_ADD] = { td_float_add, td_int_add, NULL },
    [OP_SUB] = { td_float_sub, td_int_sub, NULL },
    [OP_MUL] = { td_float_mul, td_int_mul, NULL },
    [OP_DIV] = { td_float_div, td_int_div, NULL },
    [OP_MATMUL] = { td_float_matmul, td_int_matmul, NULL },
    [OP_POW] = { td_float_powf, td_int_powi, NULL },
    [OP_EQ] = { td_float_equal, td_int_equal, td_bool_equal },
    [OP_NE] = { td_float_not_equal, td_int_not_equal, td_bool_not_equal },
    [OP_LT] = { td_float_lower, td_int_lower, NULL },
    [OP_LE] = { td_float_lower_equal, td_int_lower_equal, NULL },
    [OP_GT] = { td_float_greater, td_int_greater, NULL },
    [OP_GE] = { td_float_greater_equal, td_int_greater_equal, NULL },
};

static PyObject *binary(PyObject *x, PyObject *y, int op)
{
    bool swapped = !PyObject_TypeCheck(x, &TensorType);
    TensorObject *a = (TensorObject *)(swapped ? y : x);
    bool ni;
    PyObject *bo = operand(a, swapped ? x : y, &ni);
    if (bo == NULL) {
        if (ni)
            Py_RETURN_NOTIMPLEMENTED;
        return NULL;
    }
    td_dtype d = tensor_dtype(a);
    binop_fn fn = (unsigned)d < 3 ? binops[op][d] : NULL;
    if (fn == NULL) {
        Py_DECREF(bo);
        Py_RETURN_NOTIMPLEMENTED;
    }
    const td_tensor *l = swapped ? ((TensorObject *)bo)->t : a->t;
    const td_tensor *r = swapped ? a->t : ((TensorObject *)bo)->t;
    td_tensor *out = NULL;
    td_status st;
    Py_BEGIN_ALLOW_THREADS
    st = fn(l, r, &out);
    Py_END_ALLOW_THREADS
    Py_DECREF(bo);
    return tdpy_tensor_result(st, out);
}

static PyObject *nb_add(PyObject *x, PyObject *y) { return binary(x, y, OP_ADD); }
static PyObject *nb_sub(PyObject *x, PyObject *y) { return binary(x, y, OP_SUB); }
static PyObject *nb_mul(PyObject *x, PyObject *y) { return binary(x, y, OP_MUL); }
static PyObject *nb_div(PyObject *x, PyObject *y) { return binary(x, y, OP_DIV); }
static PyObject *nb_matmul(PyObject *x, PyObject *y) { return binary(x, y, OP_MATMUL); }

static PyObject *nb_pow(PyObject *x, PyObject *y, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return binary(x, y, OP_POW);
}

static PyObject *nb_neg(PyObject *x)
{
    TensorObject *a = (TensorObject *)x;
    td_dtype d = tensor_dtype(a);
    td_tensor *out = NULL;
    td_status st;
    const td_tensor *t = a->t;
    if (d == TD_BOOL) {
        PyErr_SetString(PyExc_TypeError, "negation of a bool tensor (use td.bool_not)");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    st = d == TD_F32 ? td_float_neg(t, &out) : td_int_neg(t, &out);
    Py_END_ALLOW_THREADS
    return tdpy_tensor_result(st, out);
}

static PyObject *tensor_richcompare(PyObject *x, PyObject *y, int op)
{
    static const int map[] = { [Py_LT] = OP_LT, [Py_LE] = OP_LE, [Py_EQ] = OP_EQ,
                               [Py_NE] = OP_NE, [Py_GT] = OP_GT, [Py_GE] = OP_GE };
    return binary(x, y, map[op]);
}

static int tensor_bool(PyObject *x)
{
    PyObject *v = tensor_item((TensorObject *)x, NULL);
    if (v == NULL)
        return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

static PyObject *tensor_float(PyObject *x)
{
    PyObject *v = tensor_item((TensorObject *)x, NULL);
    if (v == NULL)
        return NULL;
    PyObject *r = PyNumber_Float(v);
    Py_DECREF(v);
    return r;
}

/* By identity, as torch.Tensor: == makes a tensor of comparisons, so a dict or set that
 * holds tensors tells them apart by object. */
static Py_hash_t tensor_hash(PyObject *x)
{
    return _Py_HashPointer(x);
}

static PyNumberMethods tensor_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub,
    .nb_multiply = nb_mul,
    .nb_true_divide = nb_div,
    .nb_matrix_multiply = nb_matmul,
    .nb_power = nb_pow,
    .nb_negative = nb_neg,
    .nb_bool = tensor_bool,
    .nb_float = tensor_float,
};

static Py_ssize_t tensor_len(PyObject *x)
{
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    td_status st = td_tensor_shape(((TensorObject *)x)->t, dims, &nd);
    if (st != TD_OK) {
        tdpy_raise(st);
        return -1;
    }
    if (nd == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)dims[0];
}

static PyObject *tensor_item_at(PyObject *x, Py_ssize_t i);
static PySequenceMethods tensor_sequence = { .sq_length = tensor_len, .sq_item = tensor_item_at };

/* t[key]: a bool tensor selects where it is true (mask_select), an int tensor picks
 * entries of dim 0 (select), ints and slices of step 1 (a tuple of them over the leading
 * dims) take a sub-tensor (slice, then reshape to drop the dims an int indexed). */
typedef td_status (*slice_fn)(const td_tensor *, const int64_t *, int, const int64_t *, int, td_tensor **);
typedef td_status (*reshape_fn)(const td_tensor *, const int64_t *, int, td_tensor **);
typedef td_status (*select_fn)(const td_tensor *, int64_t, const td_tensor *, td_tensor **);
typedef td_status (*mask_fn)(const td_tensor *, const td_tensor *, td_tensor **);

static PyObject *tensor_getitem(PyObject *x, PyObject *key)
{
    TensorObject *o = (TensorObject *)x;
    td_dtype d = tensor_dtype(o);
    if ((unsigned)d > TD_BOOL) {
        PyErr_SetString(PyExc_TypeError, "indexing a tensor of a dtype the binding does not know");
        return NULL;
    }
    static const slice_fn slices[] = { td_float_slice, td_int_slice, td_bool_slice };
    static const reshape_fn reshapes[] = { td_float_reshape, td_int_reshape, td_bool_reshape };
    static const select_fn selects[] = { td_float_select, td_int_select, td_bool_select };
    static const mask_fn masks[] = { td_float_mask_select, td_int_mask_select, td_bool_mask_select };
    td_tensor *out = NULL;
    td_status st;
    const td_tensor *t = o->t;
    if (PyObject_TypeCheck(key, &TensorType)) {
        const td_tensor *k = ((TensorObject *)key)->t;
        td_dtype kd = tensor_dtype((TensorObject *)key);
        if (kd != TD_BOOL && kd != TD_I32) {
            PyErr_SetString(PyExc_IndexError, "a tensor index is a bool mask or an int32 tensor of indices");
            return NULL;
        }
        Py_BEGIN_ALLOW_THREADS
        st = kd == TD_BOOL ? masks[d](t, k, &out) : selects[d](t, 0, k, &out);
        Py_END_ALLOW_THREADS
        return tdpy_tensor_result(st, out);
    }
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    st = td_tensor_shape(t, dims, &nd);
    if (st != TD_OK)
        return tdpy_raise(st);
    PyObject *items = PyTuple_Check(key) ? key : NULL;
    Py_ssize_t n = items != NULL ? PyTuple_GET_SIZE(items) : 1;
    if (n > nd) {
        PyErr_Format(PyExc_IndexError, "%zd indices for a tensor of %d dims", n, nd);
        return NULL;
    }
    int64_t starts[TD_MAX_DIMS], ends[TD_MAX_DIMS], shape[TD_MAX_DIMS];
    int kept = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = items != NULL ? PyTuple_GET_ITEM(items, i) : key;
        if (PySlice_Check(k)) {
            Py_ssize_t a, b, step;
            if (PySlice_Unpack(k, &a, &b, &step) < 0)
                return NULL;
            if (step != 1) {
                PyErr_SetString(PyExc_IndexError, "slices of step 1 only (td.float_flip reverses)");
                return NULL;
            }
            Py_ssize_t len = PySlice_AdjustIndices((Py_ssize_t)dims[i], &a, &b, step);
            starts[i] = a;
            ends[i] = a + len;
            shape[kept++] = len;
        } else if (PyIndex_Check(k) && !PyBool_Check(k)) {
            Py_ssize_t v = PyNumber_AsSsize_t(k, PyExc_IndexError);
            if (v == -1 && PyErr_Occurred())
                return NULL;
            if (v < 0)
                v += (Py_ssize_t)dims[i];
            if (v < 0 || v >= dims[i]) {
                PyErr_Format(PyExc_IndexError, "index %zd is out of range for dim %zd of size %lld",
                             PyNumber_AsSsize_t(k, NULL), i, (long long)dims[i]);
                return NULL;
            }
            starts[i] = v;
            ends[i] = v + 1;
        } else {
            PyErr_Format(PyExc_IndexError, "tensor indices are ints, slices, a tuple of them, or a bool or int "
                                           "tensor, not %.100s", Py_TYPE(k)->tp_name);
            return NULL;
        }
    }
    for (int i = (int)n; i < nd; i++)
        shape[kept++] = dims[i];
    td_tensor *part = NULL;
    Py_BEGIN_ALLOW_THREADS
    st = slices[d](t, starts, (int)n, ends, (int)n, &part);
    if (st == TD_OK && kept != nd) {
        st = reshapes[d](part, shape, kept, &out);
        td_tensor_release(part);
    } else {
        out = part;
    }
    Py_END_ALLOW_THREADS
    return tdpy_tensor_result(st, out);
}

static PyMappingMethods tensor_mapping = { .mp_length = tensor_len, .mp_subscript = tensor_getitem };

/* Iteration (for row in t): the sub-tensors of dim 0. */
static PyObject *tensor_item_at(PyObject *x, Py_ssize_t i)
{
    PyObject *k = PyLong_FromSsize_t(i);
    if (k == NULL)
        return NULL;
    PyObject *r = tensor_getitem(x, k);
    Py_DECREF(k);
    return r;
}

/* ---- buffer protocol and __array_interface__ (CPU tensors: their own memory) ---- */

static const char *buffer_format(td_dtype d)
{
    return d == TD_F32 ? "f" : d == TD_I32 ? "i" : "?";
}

static int tensor_getbuffer(PyObject *x, Py_buffer *view, int flags)
{
    TensorObject *o = (TensorObject *)x;
    void *data = NULL;
    td_status st = td_tensor_host_data(o->t, &data);
    if (st != TD_OK) {
        PyErr_Format(PyExc_BufferError, "only cpu tensors expose their memory: %s", td_last_error());
        return -1;
    }
    /* An autodiff tensor's value can be replaced (assign, an optimizer step), freeing the
     * memory: the buffer then belongs to the value itself, a tensor of its own. */
    td_tensor *v = NULL;
    if (td_tensor_value(o->t, &v) != TD_OK) {
        tdpy_raise(TD_E_INTERNAL);
        return -1;
    }
    if (v != o->t) {
        PyObject *w = tensor_wrap(v);
        if (w == NULL)
            return -1;
        int r = PyObject_GetBuffer(w, view, flags);
        Py_DECREF(w);
        return r;
    }
    td_tensor_release(v);
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    int64_t numel = 0;
    (void)td_tensor_shape(o->t, dims, &nd);
    (void)td_tensor_numel(o->t, &numel);
    td_dtype d = tensor_dtype(o);
    if (d != TD_F32 && d != TD_I32 && d != TD_BOOL) {
        PyErr_SetString(PyExc_BufferError, "a dtype the binding does not export");
        return -1;
    }
    Py_ssize_t *sh = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(nd > 0 ? nd : 1));
    if (sh == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t item = (Py_ssize_t)dtype_bytes(d);
    for (int i = nd - 1, s = (int)item; i >= 0; i--) {
        sh[i] = (Py_ssize_t)dims[i];
        sh[nd + i] = s;
        s *= (int)(dims[i] > 0 ? dims[i] : 1);
    }
    static char empty;
    view->buf = data != NULL ? data : &empty;
    view->obj = x;
    Py_INCREF(x);
    view->len = (Py_ssize_t)numel * item;
    view->itemsize = item;
    view->readonly = 0;
    view->ndim = nd;
    view->format = (flags & PyBUF_FORMAT) ? (char *)buffer_format(d) : NULL;
    view->shape = (flags & PyBUF_ND) ? sh : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? sh + nd : NULL;
    view->suboffsets = NULL;
    view->internal = sh;
    o->exports++;
    return 0;
}

static void tensor_releasebuffer(PyObject *x, Py_buffer *view)
{
    PyMem_Free(view->internal);
    ((TensorObject *)x)->exports--;
}

static PyBufferProcs tensor_buffer = { .bf_getbuffer = tensor_getbuffer, .bf_releasebuffer = tensor_releasebuffer };

static PyObject *tensor_array_interface(TensorObject *o, void *closure)
{
    (void)closure;
    void *data = NULL;
    td_status st = td_tensor_host_data(o->t, &data);
    if (st != TD_OK) {
        PyErr_Format(PyExc_AttributeError, "__array_interface__: only cpu tensors expose their memory: %s",
                     td_last_error());
        return NULL;
    }
    td_backend be = TD_BACKEND_CPU;
    if (td_tensor_backend(o->t, &be) == TD_OK && be == TD_BACKEND_AUTODIFF) {
        /* The consumer would hold this object, whose value assign() may replace and free. */
        PyErr_SetString(PyExc_AttributeError, "__array_interface__: an autodiff tensor's value can be replaced; "
                                              "use .value() (the buffer protocol and DLPack do so themselves)");
        return NULL;
    }
    PyObject *shape = tensor_get_shape(o, NULL);
    if (shape == NULL)
        return NULL;
    td_dtype d = tensor_dtype(o);
    if (d != TD_F32 && d != TD_I32 && d != TD_BOOL) {
        Py_DECREF(shape);
        PyErr_SetString(PyExc_AttributeError, "__array_interface__: a dtype the binding does not export");
        return NULL;
    }
    static char empty;
    const char *typestr = d == TD_F32 ? "<f4" : d == TD_I32 ? "<i4" : "|b1";
    return Py_BuildValue("{s:N,s:s,s:(N,O),s:i,s:O}", "shape", shape, "typestr", typestr, "data",
                         PyLong_FromVoidPtr(data != NULL ? data : &empty), Py_False, "version", 3, "strides",
                         Py_None);
}

/* ---- DLPack (the header's structs, DLPack 0.x ABI: "dltensor" capsules) ---- */

typedef struct {
    int32_t device_type; /* kDLCPU = 1 */
    int32_t device_id;
} tdpy_DLDevice;

typedef struct {
    uint8_t code; /* kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBool 6 */
    uint8_t bits;
    uint16_t lanes;
} tdpy_DLDataType;

typedef struct {
    void *data;
    tdpy_DLDevice device;
    int32_t ndim;
    tdpy_DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* NULL: compact row-major */
    uint64_t byte_offset;
} tdpy_DLTensor;

typedef struct tdpy_DLManagedTensor {
    tdpy_DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct tdpy_DLManagedTensor *self);
} tdpy_DLManagedTensor;

enum { DL_CPU = 1, DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BOOL = 6 };

/* What an exported tensor's capsule owns: the managed tensor, its shape, and a reference
 * to the td tensor (not to the Python object: the consumer may outlive it). */
typedef struct {
    tdpy_DLManagedTensor m;
    int64_t shape[TD_MAX_DIMS];
    td_tensor *t;
} dl_export;

static void dl_export_deleter(tdpy_DLManagedTensor *self)
{
    dl_export *e = (dl_export *)self;
    td_tensor_release(e->t); /* no Python object involved: any thread, GIL or not */
    free(e);
}

static void dl_capsule_destructor(PyObject *cap)
{
    /* Consumed capsules are renamed "used_dltensor": their consumer calls the deleter. */
    if (PyCapsule_IsValid(cap, "dltensor")) {
        tdpy_DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
        if (m != NULL && m->deleter != NULL)
            m->deleter(m);
    } else {
        PyErr_Clear();
    }
}

static PyObject *tensor_dlpack(TensorObject *o, PyObject *args, PyObject *kwargs)
{
    /* stream (None or -1 for the CPU), max_version, dl_device, copy: accepted; the legacy
     * capsule is what every consumer takes. */
    static char *kwlist[] = { "stream", "max_version", "dl_device", "copy", NULL };
    PyObject *stream = Py_None, *maxv = Py_None, *dld = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO:__dlpack__", kwlist, &stream, &maxv, &dld, &copy))
        return NULL;
    if (copy == Py_True) {
        PyErr_SetString(PyExc_BufferError, "__dlpack__(copy=True) is not supported: the export shares memory");
        return NULL;
    }
    void *data = NULL;
    td_status st = td_tensor_host_data(o->t, &data);
    if (st != TD_OK) {
        PyErr_Format(PyExc_BufferError, "__dlpack__: only cpu tensors are exported: %s", td_last_error());
        return NULL;
    }
    td_dtype d0 = tensor_dtype(o);
    if (d0 != TD_F32 && d0 != TD_I32 && d0 != TD_BOOL) {
        PyErr_SetString(PyExc_BufferError, "__dlpack__: a dtype the binding does not export");
        return NULL;
    }
    dl_export *e = calloc(1, sizeof *e);
    if (e == NULL)
        return PyErr_NoMemory();
    int nd = 0;
    (void)td_tensor_shape(o->t, e->shape, &nd);
    td_dtype d = tensor_dtype(o);
    static char empty[4];
    e->m.dl_tensor.data = data != NULL ? data : empty;
    e->m.dl_tensor.device = (tdpy_DLDevice){ DL_CPU, 0 };
    e->m.dl_tensor.ndim = nd;
    e->m.dl_tensor.dtype = d == TD_F32 ? (tdpy_DLDataType){ DL_FLOAT, 32, 1 }
                         : d == TD_I32 ? (tdpy_DLDataType){ DL_INT, 32, 1 } : (tdpy_DLDataType){ DL_BOOL, 8, 1 };
    e->m.dl_tensor.shape = e->shape;
    e->m.dl_tensor.strides = NULL; /* tdispatch tensors are contiguous, row-major */
    e->m.dl_tensor.byte_offset = 0;
    e->m.manager_ctx = e;
    e->m.deleter = dl_export_deleter;
    /* The value (an autodiff tensor's inner one), which assign() cannot free under the consumer. */
    if (td_tensor_value(o->t, &e->t) != TD_OK) {
        free(e);
        return tdpy_raise(TD_E_INTERNAL);
    }
    PyObject *cap = PyCapsule_New(&e->m, "dltensor", dl_capsule_destructor);
    if (cap == NULL)
        dl_export_deleter(&e->m);
    return cap;
}

static PyObject *tensor_dlpack_device(TensorObject *o, PyObject *unused)
{
    (void)unused;
    void *data = NULL;
    if (td_tensor_host_data(o->t, &data) != TD_OK) {
        PyErr_Format(PyExc_BufferError, "__dlpack_device__: only cpu tensors are exported: %s", td_last_error());
        return NULL;
    }
    return Py_BuildValue("(ii)", DL_CPU, 0);
}

/* ---- the Tensor type ---- */

static PyGetSetDef tensor_getset[] = {
    { "shape", (getter)tensor_get_shape, NULL, "the shape, a tuple of ints", NULL },
    { "ndim", (getter)tensor_get_ndim, NULL, "the number of dims", NULL },
    { "dtype", (getter)tensor_get_dtype, NULL, "\"float32\", \"int32\" or \"bool\"", NULL },
    { "device", (getter)tensor_get_device, NULL, "the device the tensor is on", NULL },
    { "grad", (getter)tensor_get_grad, NULL,
      "the gradient the last backward gave this leaf (replaced by each backward), or None", NULL },
    { "__array_interface__", (getter)tensor_array_interface, NULL,
      "NumPy's array interface (version 3) over the tensor's memory: cpu tensors only", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef tensor_methods[] = {
    { "numel", (PyCFunction)tensor_numel, METH_NOARGS, "numel()\n--\n\nThe number of elements." },
    { "item", (PyCFunction)tensor_item, METH_NOARGS, "item()\n--\n\nThe one element as a Python number." },
    { "tolist", (PyCFunction)tensor_tolist, METH_NOARGS, "tolist()\n--\n\nThe values as nested lists." },
    { "numpy", (PyCFunction)tensor_numpy, METH_NOARGS,
      "numpy()\n--\n\nA NumPy array: sharing the memory of a cpu tensor, a copy otherwise." },
    { "to", (PyCFunction)tensor_to, METH_O, "to(device)\n--\n\nA copy on device." },
    { "require_grad", (PyCFunction)tensor_require_grad, METH_NOARGS,
      "require_grad()\n--\n\nMakes this leaf of an autodiff device tracked; returns it. Its .grad is set by "
      "backward." },
    { "backward", (PyCFunction)(void (*)(void))tensor_backward, METH_VARARGS | METH_KEYWORDS,
      "backward(retain_graph=False)\n--\n\nBackward from this scalar; returns the Grads and sets .grad of the "
      "leaves that asked for it." },
    { "assign", (PyCFunction)tensor_assign, METH_O,
      "assign(value)\n--\n\nReplaces this leaf's value without recording (td_tensor_assign); returns it." },
    { "detach", (PyCFunction)tensor_detach, METH_NOARGS, "detach()\n--\n\nThe value, out of the graph." },
    { "value", (PyCFunction)tensor_value, METH_NOARGS,
      "value()\n--\n\nAn autodiff tensor's value on the inner device (the tensor itself otherwise)." },
    { "__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
      "__dlpack__(stream=None)\n--\n\nA DLPack capsule sharing this cpu tensor's memory." },
    { "__dlpack_device__", (PyCFunction)tensor_dlpack_device, METH_NOARGS,
      "__dlpack_device__()\n--\n\n(1, 0): the CPU." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tdispatch.Tensor",
    .tp_basicsize = sizeof(TensorObject),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_repr = (reprfunc)tensor_repr,
    .tp_as_number = &tensor_number,
    .tp_as_sequence = &tensor_sequence,
    .tp_as_mapping = &tensor_mapping,
    .tp_as_buffer = &tensor_buffer,
    .tp_richcompare = tensor_richcompare,
    .tp_hash = tensor_hash,
    .tp_weaklistoffset = offsetof(TensorObject, weakrefs),
    .tp_getset = tensor_getset,
    .tp_methods = tensor_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tdispatch tensor (td.tensor(data, device=, dtype=)); ops are the module's functions.",
};

/* ---- optimizers (td_optim.h) ---- */

typedef struct {
    PyObject_HEAD
    td_optim *opt;
    PyObject *params; /* the parameters' tuple: they stay alive with the optimizer */
} OptimObject;

static void optim_dealloc(OptimObject *o)
{
    td_optim_release(o->opt);
    Py_XDECREF(o->params);
    PyObject_Free(o);
}

static PyObject *optim_step(OptimObject *o, PyObject *arg)
{
    if (!PyObject_TypeCheck(arg, &GradsType)) {
        PyErr_Format(PyExc_TypeError, "step(grads): expected the Grads backward returned, got %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    td_status st;
    td_optim *opt = o->opt;
    const td_grads *g = ((GradsObject *)arg)->grads;
    Py_BEGIN_ALLOW_THREADS
    st = td_optim_step(opt, g);
    Py_END_ALLOW_THREADS
    return tdpy_none_result(st);
}

static PyObject *optim_set_lr(OptimObject *o, PyObject *arg)
{
    double lr = PyFloat_AsDouble(arg);
    if (lr == -1.0 && PyErr_Occurred())
        return NULL;
    return tdpy_none_result(td_optim_set_lr(o->opt, (float)lr));
}

static PyMethodDef optim_methods[] = {
    { "step", (PyCFunction)optim_step, METH_O,
      "step(grads)\n--\n\nUpdates every parameter that has a gradient in grads, in place." },
    { "set_lr", (PyCFunction)optim_set_lr, METH_O, "set_lr(lr)\n--\n\nA new learning rate." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject OptimType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tdispatch.Optimizer",
    .tp_basicsize = sizeof(OptimObject),
    .tp_dealloc = (destructor)optim_dealloc,
    .tp_methods = optim_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An optimizer over leaves of an autodiff device (td.sgd, td.adam), semantics of torch.optim.",
};

static PyObject *make_optim(PyObject *params, bool adam, const td_sgd_options *so, const td_adam_options *ao)
{
    tdpy_tensors l = { 0 };
    if (!tdpy_conv_tensors(params, &l))
        return NULL;
    td_optim *opt = NULL;
    td_status st = adam ? td_optim_adam((td_tensor *const *)l.v, l.n, ao, &opt)
                        : td_optim_sgd((td_tensor *const *)l.v, l.n, so, &opt);
    if (st != TD_OK) {
        tdpy_tensors_free(&l);
        return tdpy_raise(st);
    }
    OptimObject *o = PyObject_New(OptimObject, &OptimType);
    if (o == NULL) {
        td_optim_release(opt);
        tdpy_tensors_free(&l);
        return NULL;
    }
    o->opt = opt;
    o->params = l.keep;
    l.keep = NULL;
    tdpy_tensors_free(&l);
    return (PyObject *)o;
}

static PyObject *mod_sgd(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = { "params", "lr", "momentum", "dampening", "weight_decay", "nesterov", NULL };
    PyObject *params;
    float lr;
    td_sgd_options o = td_sgd_defaults(0.1f);
    int nesterov = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Of|fffp:sgd", kwlist, &params, &lr, &o.momentum, &o.dampening,
                                     &o.weight_decay, &nesterov))
        return NULL;
    o.lr = lr;
    o.nesterov = nesterov != 0;
    return make_optim(params, false, &o, NULL);
}

static PyObject *mod_adam(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = { "params", "lr", "betas", "eps", "weight_decay", "decoupled", NULL };
    PyObject *params;
    float lr;
    td_adam_options o = td_adam_defaults(1e-3f);
    int decoupled = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Of|(ff)ffp:adam", kwlist, &params, &lr, &o.beta1, &o.beta2, &o.eps,
                                     &o.weight_decay, &decoupled))
        return NULL;
    o.lr = lr;
    o.decoupled = decoupled != 0;
    return make_optim(params, true, NULL, &o);
}

/* ---- module functions ---- */

static PyObject *mod_device(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (s == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "device(name): name is a string such as \"cpu\" or \"vulkan:0\"");
        return NULL;
    }
    const char *colon = strchr(s, ':');
    size_t blen = colon != NULL ? (size_t)(colon - s) : strlen(s);
    long index = 0;
    if (colon != NULL) {
        char *end = NULL;
        index = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end != 0 || index < 0 || index > 1 << 20) {
            PyErr_Format(PyExc_ValueError, "device('%s'): the index after ':' must be a number", s);
            return NULL;
        }
    }
    for (int b = 0; b < TD_BACKEND_COUNT; b++) {
        if (b == TD_BACKEND_AUTODIFF || !td_backend_exists((td_backend)b))
            continue;
        const char *name = td_backend_name((td_backend)b);
        if (name != NULL && strlen(name) == blen && strncmp(name, s, blen) == 0) {
            td_device *dev = NULL;
            td_status st;
            Py_BEGIN_ALLOW_THREADS
            st = td_device_open((td_backend)b, (int)index, &dev);
            Py_END_ALLOW_THREADS
            if (st != TD_OK)
                return tdpy_raise(st);
            return device_wrap(dev);
        }
    }
    PyErr_Format(PyExc_ValueError, "device('%s'): no such backend (td.devices() lists them)", s);
    return NULL;
}

static PyObject *mod_autodiff(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = { "inner", "checkpoint", NULL };
    td_device *inner = NULL;
    const char *cp = "none";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|s:autodiff", kwlist, tdpy_conv_device, &inner, &cp))
        return NULL;
    td_checkpoint c;
    if (strcmp(cp, "none") == 0)
        c = TD_CHECKPOINT_NONE;
    else if (strcmp(cp, "balanced") == 0)
        c = TD_CHECKPOINT_BALANCED;
    else if (strcmp(cp, "default") == 0)
        c = TD_CHECKPOINT_DEFAULT;
    else {
        PyErr_Format(PyExc_ValueError, "autodiff: checkpoint is \"none\", \"balanced\" or \"default\", not '%s'", cp);
        return NULL;
    }
    td_device *dev = NULL;
    td_status st = td_device_autodiff(inner, c, &dev);
    if (st != TD_OK)
        return tdpy_raise(st);
    return device_wrap(dev);
}

static PyObject *mod_devices(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *list = PyList_New(0);
    if (list == NULL)
        return NULL;
    for (int b = 0; b < TD_BACKEND_COUNT; b++) {
        if (b == TD_BACKEND_AUTODIFF || !td_backend_enabled((td_backend)b))
            continue;
        int n = 0;
        if (td_device_count((td_backend)b, &n) != TD_OK)
            continue;
        for (int i = 0; i < n; i++) {
            td_device_info info;
            if (td_device_info_get((td_backend)b, i, &info) != TD_OK)
                continue;
            PyObject *d = Py_BuildValue("{s:s,s:i,s:s,s:s,s:s,s:K,s:O}", "backend", td_backend_name((td_backend)b),
                                        "index", info.index, "name", info.name, "driver", info.driver, "type",
                                        info.type, "memory_bytes", (unsigned long long)info.memory_bytes,
                                        "software", info.software ? Py_True : Py_False);
            if (d == NULL || PyList_Append(list, d) < 0) {
                Py_XDECREF(d);
                Py_DECREF(list);
                return NULL;
            }
            Py_DECREF(d);
        }
    }
    return list;
}

static int parse_dtype(const char *s, td_dtype *d)
{
    if (strcmp(s, "float32") == 0 || strcmp(s, "f32") == 0 || strcmp(s, "float") == 0)
        *d = TD_F32;
    else if (strcmp(s, "int32") == 0 || strcmp(s, "i32") == 0 || strcmp(s, "int") == 0)
        *d = TD_I32;
    else if (strcmp(s, "bool") == 0)
        *d = TD_BOOL;
    else {
        PyErr_Format(PyExc_ValueError, "dtype is \"float32\", \"int32\" or \"bool\", not '%s'", s);
        return -1;
    }
    return 0;
}

/* The dtype data suggests: a buffer's format, else the first number of the nesting. */
static td_dtype guess_dtype(PyObject *o)
{
    if (PyObject_CheckBuffer(o)) {
        Py_buffer b;
        if (PyObject_GetBuffer(o, &b, PyBUF_FORMAT | PyBUF_ND) == 0) {
            const char *f = b.format != NULL ? b.format : "B";
            if (*f == '<' || *f == '=' || *f == '@')
                f++;
            td_dtype d = *f == 'f' || *f == 'd' || *f == 'e' ? TD_F32 : *f == '?' ? TD_BOOL : TD_I32;
            PyBuffer_Release(&b);
            return d;
        }
        PyErr_Clear();
    }
    PyObject *x = o;
    Py_INCREF(x);
    while (PySequence_Check(x) && !PyUnicode_Check(x) && PySequence_Size(x) > 0) {
        PyObject *y = PySequence_GetItem(x, 0);
        Py_DECREF(x);
        if (y == NULL) {
            PyErr_Clear();
            return TD_F32;
        }
        x = y;
    }
    PyErr_Clear();
    td_dtype d = PyBool_Check(x) ? TD_BOOL : PyLong_Check(x) ? TD_I32 : TD_F32;
    Py_DECREF(x);
    return d;
}

static PyObject *mod_tensor(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = { "data", "device", "dtype", NULL };
    PyObject *data, *devo = Py_None;
    const char *ds = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|Oz:tensor", kwlist, &data, &devo, &ds))
        return NULL;
    td_device *dev = NULL;
    bool own_dev = false;
    if (devo == Py_None) {
        td_status st = td_device_open(TD_BACKEND_CPU, 0, &dev);
        if (st != TD_OK)
            return tdpy_raise(st);
        own_dev = true;
    } else if (!tdpy_conv_device(devo, &dev)) {
        return NULL;
    }
    tdpy_host h = { 0 };
    if (ds != NULL) {
        if (parse_dtype(ds, &h.dtype) < 0)
            goto fail;
    } else {
        h.dtype = guess_dtype(data);
    }
    int64_t shape[TD_MAX_DIMS];
    int nd = 0;
    if (host_from_object(&h, data, shape, &nd) < 0)
        goto fail;
    td_tensor *out = NULL;
    td_status st;
    Py_BEGIN_ALLOW_THREADS
    switch (h.dtype) {
    case TD_F32: st = td_float_from_data(dev, h.p, shape, nd, &out); break;
    case TD_I32: st = td_int_from_data(dev, h.p, shape, nd, &out); break;
    default: st = td_bool_from_data(dev, h.p, shape, nd, &out); break;
    }
    Py_END_ALLOW_THREADS
    tdpy_host_free(&h);
    if (own_dev)
        td_device_release(dev);
    return tdpy_tensor_result(st, out);
fail:
    if (own_dev)
        td_device_release(dev);
    return NULL;
}

/* DLPack import: the producer's managed tensor stays alive until the last td tensor over
 * its memory goes; then its deleter runs, with the GIL (a Python producer's deleter may
 * touch Python objects). */
static void dl_import_release(void *ctx)
{
    tdpy_DLManagedTensor *m = ctx;
    if (m->deleter == NULL)
        return;
    if (!Py_IsInitialized())
        return; /* at exit: the producer's memory goes with the process */
    PyGILState_STATE g = PyGILState_Ensure();
    m->deleter(m);
    PyGILState_Release(g);
}

static PyObject *mod_from_dlpack(PyObject *self, PyObject *obj)
{
    (void)self;
    PyObject *cap;
    if (PyCapsule_CheckExact(obj)) {
        cap = obj;
        Py_INCREF(cap);
    } else {
        if (!PyObject_HasAttrString(obj, "__dlpack__") || !PyObject_HasAttrString(obj, "__dlpack_device__")) {
            PyErr_Format(PyExc_TypeError, "from_dlpack: %.100s has no __dlpack__ / __dlpack_device__",
                         Py_TYPE(obj)->tp_name);
            return NULL;
        }
        PyObject *dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
        if (dev == NULL)
            return NULL;
        int type = 0, id = 0;
        if (!PyArg_ParseTuple(dev, "ii", &type, &id)) {
            Py_DECREF(dev);
            return NULL;
        }
        Py_DECREF(dev);
        if (type != DL_CPU) {
            PyErr_Format(PyExc_BufferError, "from_dlpack: only CPU memory (device type 1) is imported, not type %d",
                         type);
            return NULL;
        }
        cap = PyObject_CallMethod(obj, "__dlpack__", NULL);
        if (cap == NULL)
            return NULL;
    }
    tdpy_DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m == NULL) {
        Py_DECREF(cap);
        return NULL;
    }
    const tdpy_DLTensor *dl = &m->dl_tensor;
    td_dtype d = TD_F32;
    const char *bad = NULL;
    if (dl->device.device_type != DL_CPU)
        bad = "not CPU memory";
    else if (dl->ndim < 0 || dl->ndim > TD_MAX_DIMS)
        bad = "more than 8 dims";
    else if (dl->dtype.lanes != 1)
        bad = "vector lanes";
    else if (dl->dtype.code == DL_FLOAT && dl->dtype.bits == 32)
        d = TD_F32;
    else if (dl->dtype.code == DL_INT && dl->dtype.bits == 32)
        d = TD_I32;
    else if (dl->dtype.code == DL_BOOL && dl->dtype.bits == 8)
        d = TD_BOOL;
    else
        bad = "a dtype other than float32, int32 and bool";
    if (bad == NULL && dl->strides != NULL) { /* compact row-major strides only */
        int64_t s = 1;
        for (int i = dl->ndim - 1; i >= 0; i--) {
            if (dl->shape[i] != 1 && dl->strides[i] != s)
                bad = "strides that are not compact row-major (make it contiguous first)";
            s *= dl->shape[i];
        }
    }
    if (bad != NULL) {
        PyErr_Format(PyExc_BufferError, "from_dlpack: %s", bad);
        Py_DECREF(cap); /* not consumed: its destructor gives it back */
        return NULL;
    }
    /* Consumed: the capsule no longer owns it. */
    if (PyCapsule_SetName(cap, "used_dltensor") < 0) {
        Py_DECREF(cap);
        return NULL;
    }
    Py_DECREF(cap);
    td_device *cpu = NULL;
    td_status st = td_device_open(TD_BACKEND_CPU, 0, &cpu);
    if (st != TD_OK) {
        if (m->deleter != NULL)
            m->deleter(m);
        return tdpy_raise(st);
    }
    td_tensor *out = NULL;
    st = td_tensor_from_external(cpu, d, dl->shape, dl->ndim, (char *)dl->data + dl->byte_offset,
                                 dl_import_release, m, &out); /* calls the release itself on error */
    td_device_release(cpu);
    return tdpy_tensor_result(st, out);
}

static PyObject *mod_group_world(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    td_group *g = NULL;
    td_status st = td_group_world(&g);
    if (st != TD_OK)
        return tdpy_raise(st);
    GroupObject *o = PyObject_New(GroupObject, &GroupType);
    if (o == NULL) {
        td_group_release(g);
        return NULL;
    }
    o->group = g;
    return (PyObject *)o;
}

static PyObject *mod_live_objects(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromLong(td_testing_live_objects());
}

static PyMethodDef module_methods[] = {
    { "device", mod_device, METH_O,
      "device(name)\n--\n\nOpens a device: \"cpu\", \"vulkan\", \"vulkan:1\" (backend[:index])." },
    { "autodiff", (PyCFunction)(void (*)(void))mod_autodiff, METH_VARARGS | METH_KEYWORDS,
      "autodiff(inner, checkpoint=\"none\")\n--\n\nAn autodiff device over inner; checkpoint \"none\" or "
      "\"balanced\"." },
    { "devices", mod_devices, METH_NOARGS,
      "devices()\n--\n\nEvery device of the backends built in, as tdinfo lists them (dicts)." },
    { "tensor", (PyCFunction)(void (*)(void))mod_tensor, METH_VARARGS | METH_KEYWORDS,
      "tensor(data, device=None, dtype=None)\n--\n\nA new tensor copied from nested sequences or any buffer "
      "(NumPy arrays); device defaults to the CPU, dtype to the data's (float32, int32 or bool)." },
    { "from_dlpack", mod_from_dlpack, METH_O,
      "from_dlpack(obj)\n--\n\nA cpu tensor sharing obj's memory (an object with __dlpack__, or a DLPack "
      "capsule): float32, int32 or bool, contiguous." },
    { "sgd", (PyCFunction)(void (*)(void))mod_sgd, METH_VARARGS | METH_KEYWORDS,
      "sgd(params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False)\n--\n\nSGD as torch.optim.SGD "
      "over leaves of an autodiff device." },
    { "adam", (PyCFunction)(void (*)(void))mod_adam, METH_VARARGS | METH_KEYWORDS,
      "adam(params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled=False)\n--\n\nAdam (AdamW with "
      "decoupled=True) as torch.optim over leaves of an autodiff device." },
    { "group_world", mod_group_world, METH_NOARGS, "group_world()\n--\n\nThe group of every MPI rank." },
    { "_live_objects", mod_live_objects, METH_NOARGS,
      "_live_objects()\n--\n\nHow many tdispatch tensors and devices are alive (for leak tests)." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tdispatch",
    .m_doc = "tdispatch: a tensor library whose dispatch layer, and these op functions, are generated from specs.",
    .m_size = -1,
    .m_methods = module_methods,
};

static int add_errors(PyObject *m)
{
    static const struct {
        td_status st;
        const char *name;
    } names[] = {
        { TD_E_NULL, "NullError" },
        { TD_E_INVALID, "InvalidError" },
        { TD_E_KIND, "KindError" },
        { TD_E_DTYPE, "DtypeError" },
        { TD_E_SHAPE, "ShapeError" },
        { TD_E_RANGE, "RangeError" },
        { TD_E_BACKEND_MISMATCH, "BackendMismatchError" },
        { TD_E_UNSUPPORTED, "UnsupportedError" },
        { TD_E_NOMEM, "OutOfMemoryError" },
        { TD_E_AUTODIFF_CONTEXT, "AutodiffContextError" },
        { TD_E_AUTODIFF, "AutodiffError" },
        { TD_E_DEVICE, "DeviceError" },
        { TD_E_DISTRIBUTED, "DistributedError" },
        { TD_E_INTERNAL, "InternalError" },
    };
    PyObject *builtin[TDPY_NSTATUS] = {
        [TD_E_NULL] = PyExc_TypeError,          [TD_E_INVALID] = PyExc_ValueError,
        [TD_E_KIND] = PyExc_TypeError,          [TD_E_DTYPE] = PyExc_TypeError,
        [TD_E_SHAPE] = PyExc_ValueError,        [TD_E_RANGE] = PyExc_IndexError,
        [TD_E_BACKEND_MISMATCH] = PyExc_ValueError, [TD_E_UNSUPPORTED] = PyExc_NotImplementedError,
        [TD_E_NOMEM] = PyExc_MemoryError,       [TD_E_AUTODIFF_CONTEXT] = PyExc_RuntimeError,
        [TD_E_AUTODIFF] = PyExc_RuntimeError,   [TD_E_DEVICE] = PyExc_RuntimeError,
        [TD_E_DISTRIBUTED] = PyExc_RuntimeError, [TD_E_INTERNAL] = PyExc_RuntimeError,
    };
    tdpy_error_base = PyErr_NewExceptionWithDoc("tdispatch.Error",
                                                "A tdispatch call failed; .status names the td_status, the message is "
                                                "td_last_error()'s.",
                                                NULL, NULL);
    if (tdpy_error_base == NULL || PyModule_AddObjectRef(m, "Error", tdpy_error_base) < 0)
        return -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char full[96];
        snprintf(full, sizeof full, "tdispatch.%s", names[i].name);
        PyObject *bases = PyTuple_Pack(2, tdpy_error_base, builtin[names[i].st]);
        if (bases == NULL)
            return -1;
        PyObject *cls = PyErr_NewException(full, bases, NULL);
        Py_DECREF(bases);
        if (cls == NULL || PyModule_AddObjectRef(m, names[i].name, cls) < 0) {
            Py_XDECREF(cls);
            return -1;
        }
        tdpy_errors[names[i].st] = cls;
    }
    return 0;
}

PyMODINIT_FUNC PyInit_tdispatch(void);

PyMODINIT_FUNC PyInit_tdispatch(void)
{
    PyTypeObject *types[] = { &DeviceType, &GroupType, &GradsType, &TensorType, &OptimType };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (PyType_Ready(types[i]) < 0)
            return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    tdpy_leaves = PyList_New(0);
    if (tdpy_leaves == NULL || add_errors(m) < 0 || PyModule_AddFunctions(m, tdpy_op_methods) < 0 ||
        PyModule_AddObjectRef(m, "Tensor", (PyObject *)&TensorType) < 0 ||
        PyModule_AddObjectRef(m, "Device", (PyObject *)&DeviceType) < 0 ||
        PyModule_AddObjectRef(m, "Group", (PyObject *)&GroupType) < 0 ||
        PyModule_AddObjectRef(m, "Grads", (PyObject *)&GradsType) < 0 ||
        PyModule_AddObjectRef(m, "Optimizer", (PyObject *)&OptimType) < 0 ||
        PyModule_AddIntConstant(m, "op_count", tdpy_op_count) < 0 ||
        PyModule_AddStringConstant(m, "__version__", TD_VERSION_STRING) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
