/* The tdispatch Python module: what the generated op functions (generated/td_python.c,
 * gen/tdgen/emit_python.lua) and the hand-written module (tdispatch_module.c) share. */
#ifndef TDPY_H
#define TDPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "td_ops.h"

/* A tensor-list argument: a tuple holding the Python objects while the op runs. */
typedef struct tdpy_tensors {
    PyObject *keep;
    const td_tensor **v;
    int n;
} tdpy_tensors;

/* An int64 array argument (dims, shape). */
typedef struct tdpy_i64s {
    int64_t *v;
    int n;
    int64_t small[16];
} tdpy_i64s;

/* Host data in or out: n elements of dtype at p (owned, PyMem). */
typedef struct tdpy_host {
    td_dtype dtype;
    void *p;
    int64_t n;
} tdpy_host;

/* PyArg "O&" converters; those with a _free clean up after the op (they also support
 * Py_CLEANUP_SUPPORTED, for a later argument's failure). */
int tdpy_conv_tensor(PyObject *o, void *out);  /* const td_tensor ** */
int tdpy_conv_tensors(PyObject *o, void *out); /* tdpy_tensors * */
void tdpy_tensors_free(tdpy_tensors *l);
int tdpy_conv_device(PyObject *o, void *out);  /* td_device ** */
int tdpy_conv_group(PyObject *o, void *out);   /* td_group ** */
int tdpy_conv_i64s(PyObject *o, void *out);    /* tdpy_i64s * */
void tdpy_i64s_free(tdpy_i64s *a);
int tdpy_conv_host(PyObject *o, void *out);    /* tdpy_host * (dtype preset) */
void tdpy_host_free(tdpy_host *h);
int tdpy_conv_u64(PyObject *o, void *out);     /* uint64_t * */
int tdpy_conv_distribution(PyObject *o, void *out); /* int *: "uniform" | "normal" | an int */
int tdpy_conv_reduce_op(PyObject *o, void *out);    /* int *: "sum" | "mean" | "max" | "min" | an int */

/* -1 with ValueError when h does not hold as many elements as shape. */
int tdpy_host_check(const tdpy_host *h, const int64_t *shape, int ndim, const char *name);
/* Room for every element of t. */
int tdpy_host_out_alloc(tdpy_host *h, const td_tensor *t);

/* Results: a status and what the op made, to a Python value (or an exception). They take
 * over the tensors / buffer either way. */
PyObject *tdpy_tensor_result(td_status st, td_tensor *t);
PyObject *tdpy_tuple_result(td_status st, td_tensor **ts, int n);
PyObject *tdpy_host_result(td_status st, tdpy_host *h);
PyObject *tdpy_none_result(td_status st);

/* Sets the td.Error subclass of st with td_last_error()'s message; returns NULL. */
PyObject *tdpy_raise(td_status st);

/* Generated: the op functions (NULL-terminated) and their count. */
extern PyMethodDef tdpy_op_methods[];
extern const int tdpy_op_count;

#endif
