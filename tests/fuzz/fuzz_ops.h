/* The types of the API fuzzer's generated op table (<build>/generated/fuzz_ops.c, made by
 * gen/tdgen/emit_fuzz.lua from the specs; the kinds enum is the generated fuzz_kinds.h).
 * fuzz_surface.c decodes an input into fz_arg vectors and calls the entries' thunks. */
#ifndef FUZZ_OPS_H
#define FUZZ_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "fuzz_kinds.h"
#include "td_ops.h"

/* Ids of table entries: an op's is its td_op value (stable, from the specs); tuples, which
 * have no td_op, count from here in the order the specs declare them. */
#define FZ_TUPLE_ID0 8192

/* One decoded argument; which fields a thunk reads depends on the kind. */
typedef struct fz_arg {
    const td_tensor *t;              /* float, int, bool */
    const td_tensor *const *list;    /* floats, ints, bools (with len) */
    const int64_t *arr;              /* dims, shape (with len) */
    int len;
    int64_t i;                       /* dim, i64, i32 */
    double f;                        /* f32 */
    uint64_t u;                      /* u64 */
    int e;                           /* distribution, reduce_op */
    void *ptr;                       /* host data in (*_data) and out (*_out, with cap) */
    int64_t cap;
    td_device *dev;
    td_group *group;
} fz_arg;

/* The class of a result: what the op's spec returns. */
enum { FZ_R_FLOAT, FZ_R_INT, FZ_R_BOOL, FZ_R_HOST, FZ_R_NONE };

typedef td_status (*fz_thunk)(const fz_arg *args, td_tensor **outs);

typedef struct fz_op {
    const char *name;   /* the public function is td_<name> */
    int id;             /* td_op, or FZ_TUPLE_ID0 + n */
    const char *family; /* the spec's family, "tuple" for tuples */
    const char *rule;   /* the shape rule ("" when none) */
    int ret;            /* FZ_R_*: the (first) result */
    int nargs;
    const unsigned char *kinds; /* fz_kind of each argument */
    int nouts;          /* tensors returned through outs (0, 1, or a tuple's parts) */
    const char *rets;   /* the class of each out: 'f', 'i', 'b' */
    fz_thunk call;
} fz_op;

#define FZ_MAX_OUTS 4

extern const fz_op fz_ops[];
extern const int fz_nops;
extern const int fz_spec_ops;    /* ops in the specs */
extern const int fz_spec_tuples; /* tuples in the specs */
extern const char *const fz_kind_names[FZ_K_COUNT];
extern const int fz_kind_enum_count[FZ_K_COUNT];

#endif
