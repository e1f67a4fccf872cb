/* Test helpers shared by the generated and hand-written cmocka tests. */
#ifndef TDT_H
#define TDT_H

#include <stdbool.h>
#include <stdint.h>

#include "td_ops.h"

/* Opens device `index 0` of backend and autodiff(that device); 0 on success. */
int tdt_open(td_backend backend, td_device **dev, td_device **ad_dev);

/* cmocka group fixtures of the hand-written tests: device 0 of backend, autodiff(NONE) over
 * it and, when ad_bal is not NULL, autodiff(BALANCED). Opening fails when anything is
 * alive before it; closing releases them (NULLs ignored), turns allocation-failure
 * injection off, and fails when anything is left alive. Both return 0 on success. */
int tdt_open_devices(td_backend backend, td_device **dev, td_device **ad, td_device **ad_bal);
int tdt_close_devices(td_device *dev, td_device *ad, td_device *ad_bal);
/* A test with the per-test leak check. */
#define TDT_TEST(f) cmocka_unit_test_setup_teardown(f, tdt_remember_live, tdt_check_no_leak)

/* cmocka per-test setup/teardown: the teardown fails when the test left more tensors or
 * devices alive than there were before it. */
int tdt_remember_live(void **state);
int tdt_check_no_leak(void **state);
/* Live objects when the running test started (as tdt_remember_live saw them). */
long tdt_live_baseline(void);

/* The running test's cleanup list (the generated tests use it). A test hands each tensor
 * it makes to tdt_own (NULL is ignored; returns t) and lets go of it with tdt_release.
 * When a failed check ends the test early, tdt_check_no_leak releases what is still on
 * the list before it counts live objects: the failure is reported, not a leak, and the
 * group teardown finds nothing left. An object the test never owned still counts. */
td_tensor *tdt_own(td_tensor *t);
void tdt_release(td_tensor *t);

/* A tensor from host data on d (staged through the CPU when d's backend cannot create it);
 * NULL (with a printed reason) on failure. */
td_tensor *tdt_make(td_device *d, td_dtype dtype, const void *data, const int64_t *shape, int ndim);
/* A tensor of ones (true) of the given dtype and shape on d. */
td_tensor *tdt_filled(td_device *d, td_dtype dtype, const int64_t *shape, int ndim);

/* Reads a tensor back as host data of its dtype; returns a malloc'ed buffer (or NULL). */
void *tdt_read(const td_tensor *t, int64_t *numel);

/* Fails the test unless st is TD_OK. */
void tdt_check_impl(td_status st, const char *what, const char *file, int line);
#define tdt_check(st, what) tdt_check_impl((st), (what), __FILE__, __LINE__)

/* Fails unless st == want and the message names `op`. */
void tdt_expect_error_impl(td_status st, td_status want, const char *op, const char *file, int line);
#define tdt_expect_error(st, want, op) tdt_expect_error_impl((st), (want), (op), __FILE__, __LINE__)

/* Fails unless t has dtype, shape and values (floats: |got - want| <= tol * (1 + |want|),
 * NaN matches NaN; others exact). */
void tdt_expect_impl(const td_tensor *t, td_dtype dtype, const int64_t *shape, int ndim, const void *want,
                     int64_t n, float tol, const char *file, int line);
#define tdt_expect(t, dtype, shape, ndim, want, n, tol) \
    tdt_expect_impl((t), (dtype), (shape), (ndim), (want), (n), (tol), __FILE__, __LINE__)
void tdt_expect_host_impl(td_dtype dtype, const void *got, const void *want, int64_t n, float tol, const char *file,
                          int line);
#define tdt_expect_host(dtype, got, want, n, tol) \
    tdt_expect_host_impl((dtype), (got), (want), (n), (tol), __FILE__, __LINE__)

bool tdt_close(float got, float want, float tol);

/* n floats in [-1, 1) from a linear congruential state, on the host, for reference loops
 * written in the test (free() them). */
float *tdt_host_randoms(int64_t n, unsigned *state);

/* A float tensor holding v on d; fails the test if it cannot be made. */
td_tensor *tdt_make_f32(td_device *d, const float *v, const int64_t *shape, int ndim);

/* The output size of one conv or pool dim: floor((in + 2p - d (k - 1) - 1) / s) + 1. */
int64_t tdt_conv_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d);

/* A tensor of pseudo-random values from seed on d: floats in [-2, 2), ints in
 * [-9, 9] without 0, bools both ways. The same seed gives the same values everywhere. */
td_tensor *tdt_random(td_device *d, td_dtype dtype, const int64_t *shape, int ndim, unsigned seed);

/* Fails unless a and b have the same dtype, shape and values (floats within tol, as
 * tdt_expect); used to compare a backend with the CPU. */
void tdt_expect_same_impl(const td_tensor *a, const td_tensor *b, float tol, const char *file, int line);
#define tdt_expect_same(a, b, tol) tdt_expect_same_impl((a), (b), (tol), __FILE__, __LINE__)

/* ---- many-shape comparisons with the CPU (the generated test_<op>_vs_cpu) ---- */

/* How a case's inputs are filled (from a seed, the same values on both backends):
 * CLEAN: floats of magnitude [1/8, 2) (domain POSITIVE: [1/8, 4)), random signs; ints in
 *        [-9, 9]; bools either way.
 * EDGES: CLEAN with one element in 16 replaced by an edge value: NaN, +inf, -inf, -0, +0
 *        (POSITIVE: and -1); INT32_MIN, INT32_MAX, -1, 0, 1.
 * TIES:  a handful of repeated values: floats in {-1, 0, 0.5, 1, 2}, each 0 a -0 or a +0
 *        (POSITIVE: {0.5, 1, 2, 4}), ints in {-1, 0, 1}, bools mostly true.
 * ZEROS: floats -0 and +0 only (POSITIVE and NONZERO: CLEAN's); the ops with zero_sign get
 *        it, so their results are zeros tied with zeros and a zero's sign is compared.
 * Domain NONZERO keeps 0 (and -0) out of int inputs (divisors) and of float ones.
 * Domain INDEX makes ints in [0, 7) whatever the fill (class indices, e.g. cross-entropy targets). */
enum { TDT_FILL_CLEAN, TDT_FILL_EDGES, TDT_FILL_TIES, TDT_FILL_ZEROS /* -0 and +0 only (zero_sign ops) */ };
enum { TDT_DOMAIN_ANY, TDT_DOMAIN_POSITIVE, TDT_DOMAIN_NONZERO, TDT_DOMAIN_INDEX };
/* to_device: inputs on the device under test and the result there too, or on the CPU;
 * or inputs on the CPU and the result on the device under test. */
enum { TDT_ROUTE_SAME, TDT_ROUTE_TO_CPU, TDT_ROUTE_FROM_CPU };

#define TDT_CASE_TENSORS 5
#define TDT_CASE_ARRAYS 4
#define TDT_CASE_INTS 4
#define TDT_CASE_FLOATS 4

/* One case: the shapes of the tensor inputs (list items in order) and the other arguments
 * by kind, in argument order. */
typedef struct tdt_case {
    int fill;
    int route;
    int nt;
    struct {
        int ndim;
        int64_t dims[TD_MAX_DIMS];
    } t[TDT_CASE_TENSORS];
    int alen[TDT_CASE_ARRAYS];                  /* dims and shape arguments */
    int64_t a[TDT_CASE_ARRAYS][TD_MAX_DIMS];
    int64_t i[TDT_CASE_INTS];                   /* dim, i32, i64, u64 and distribution arguments */
    float f[TDT_CASE_FLOATS];                   /* f32 arguments */
    int64_t hn;                                 /* elements of the host input (from_data) */
    /* What the case must give (zero-size cases): the error both sides fail with (TD_OK:
     * none); or, with as_reference, whatever the reference gives (its error, or a result
     * to compare); and, when want_shape, the result's shape. */
    td_status want_status;
    bool as_reference;
    bool want_shape;
    int want_ndim;
    int64_t want_dims[TD_MAX_DIMS];
} tdt_case;

/* What the generated call of the op receives. */
typedef struct tdt_call {
    const tdt_case *cs;
    td_device *dev;                /* where a creation op makes its result; to_device's target */
    const td_tensor *const *ins;   /* the tensor inputs */
    int nins;
    const void *host_in;           /* host input data (hn elements) */
    void *host_out;                /* host output, host_out_len elements */
    int64_t host_out_len;
    td_tensor **out;
} tdt_call;

typedef struct tdt_op_desc {
    const char *name;
    td_status (*run)(const tdt_call *c);
    td_status (*run_test)(const tdt_call *c); /* on the device under test, when not NULL (else run) */
    td_dtype dtype[TDT_CASE_TENSORS];  /* of the tensor inputs */
    int domain[TDT_CASE_TENSORS];
    bool host_in;                      /* takes host data of host_dtype */
    td_dtype host_dtype;
    td_dtype out_dtype;                /* of the result tensor, or of the host output */
    bool out_host;                     /* the result is host data (into_data) */
    /* Argument names, for messages (NULL past the last): the tensor inputs (a list's items
     * are all named after the list), then those of tdt_case's a, i and f. */
    const char *input_names[TDT_CASE_TENSORS];
    const char *array_names[TDT_CASE_ARRAYS];
    const char *int_names[TDT_CASE_INTS];
    const char *float_names[TDT_CASE_FLOATS];
    double nmse;                       /* float results: the largest NMSE accepted */
    bool zero_sign;                    /* float results: a zero's sign must match too (spec zero_sign) */
    unsigned seed;
} tdt_op_desc;

/* Runs every case on dev and on cpu with the same inputs and compares the results: the
 * status (TD_OK on both, or the case's want_status on both, or with as_reference the
 * reference's on both), the shape the case wants (want_shape), dtype and shape; ints and bools exactly; floats by NaN and
 * infinity positions exactly, the rest by NMSE = sum((got - want)^2) / sum(want^2)
 * <= op->nmse. Prints each differing case (shapes, attributes, fill, where it differs),
 * then a summary line; fails when a case differs. A backend that cannot make the inputs
 * (TD_E_UNSUPPORTED, or TD_E_DTYPE: it cannot hold their dtype) or read the result back
 * (TD_E_UNSUPPORTED) makes the test skipped, with the reason printed. */
void tdt_compare_impl(td_device *dev, td_device *cpu, const tdt_op_desc *op, const tdt_case *cases, int n,
                      const char *file, int line);
#define tdt_compare(dev, cpu, op, cases, n) tdt_compare_impl((dev), (cpu), (op), (cases), (n), __FILE__, __LINE__)

/* Prints why the comparison of op cannot run, and marks the test skipped (cmocka's skip()). */
void tdt_compare_skip(const char *op, const char *why);

/* NMSE of got against want (n floats) over the elements where both are finite; 0 when
 * they agree there (all zeros included), infinite when want is all zeros there and got not. */
double tdt_nmse(const float *got, const float *want, int64_t n);

/* ---- views (ops whose spec says view = true) ---- */

/* Makes the view under test of ins[0] (its other arguments fixed by the generated test). */
typedef td_status (*tdt_view_fn)(const td_tensor *const *ins, td_tensor **out);
/* The class's reshape and slice_assign entries (td_float_reshape, ...), passed in by the
 * generated tests so that these helpers link in a selective build without them. */
typedef td_status (*tdt_reshape_fn)(const td_tensor *a, const int64_t *shape, int shape_len, td_tensor **out);
typedef td_status (*tdt_assign_fn)(const td_tensor *a, const td_tensor *value, const int64_t *starts, int starts_len,
                                   const int64_t *ends, int ends_len, td_tensor **out);
/* On d, for a random tensor of dtype dt and shape: the view shares the base's storage and
 * reads its elements; a reshape of the view does too; releasing the base first, then the
 * view, leaves the last holder reading the same elements (the per-test leak check sees
 * the storage go with it). */
void tdt_view_checks(td_device *d, td_dtype dt, const int64_t *shape, int nd, tdt_view_fn fn, tdt_reshape_fn reshape,
                     unsigned seed);
/* Writing through a view (slice_assign of ones into its first row) makes a new tensor with
 * those elements and leaves the view and its base as they were; writing into the base
 * leaves the view as it was. */
void tdt_view_write_checks(td_device *d, td_dtype dt, const int64_t *shape, int nd, tdt_view_fn fn,
                           tdt_assign_fn assign, unsigned seed);
/* A view whose base was released moves to `other` and back with its elements. */
void tdt_view_move_checks(td_device *d, td_device *other, td_dtype dt, const int64_t *shape, int nd, tdt_view_fn fn,
                          unsigned seed);

/* ---- gradient checks ---- */

/* Runs the op under test on device d with the float inputs ins (other arguments fixed). */
typedef td_status (*tdt_fwd_fn)(td_device *d, td_tensor *const *ins, td_tensor **out);

/* tdt_input.positive for inputs that must exceed 1 (acosh): gradcheck = { x = "above_one" }. */
#define TDT_ABOVE_ONE 2

typedef struct tdt_input {
    const int64_t *shape;
    int ndim;
    int positive; /* 1 (true): values in [0.5, 1.5] instead of +-[0.2, 1]; TDT_ABOVE_ONE: [1.5, 2.5] */
    bool grad;    /* a gradient must reach it (zero-size checks); any gradient must have its shape */
} tdt_input;

/* Checks the gradients of L = sum(fwd(ins) * w), w fixed random weights, at random inputs:
 * the analytic gradients from autodiff devices with NONE (ad_none) and BALANCED (ad_bal)
 * checkpointing over `inner` against central differences computed on `inner`.
 * f32 tolerances: step h = 1e-2, |numeric - analytic| <= 1e-2 + 1e-2 * |analytic|;
 * NONE and BALANCED agree within 1e-6 relative (+1e-7 absolute). */
void tdt_gradcheck_impl(td_device *inner, td_device *ad_none, td_device *ad_bal, tdt_fwd_fn fwd,
                        const tdt_input *ins, int n, unsigned seed, const char *file, int line);
#define tdt_gradcheck(inner, ad_none, ad_bal, fwd, ins, n, seed) \
    tdt_gradcheck_impl((inner), (ad_none), (ad_bal), (fwd), (ins), (n), (seed), __FILE__, __LINE__)

/* The exact message of the autodiff context guard. */
#define TDT_GUARD_MESSAGE "an autodiff float primitive must have an enabled autodiff context"

/* ---- per-dtype comparisons (the generated test_dtypes_<backend>.c, docs/comparisons.md) ---- */

/* The dtype a comparison runs an op in. The inputs of the dtype's class are filled as in
 * tdt_compare (f32 / i32 values), then brought into the dtype by the test's own converters
 * (f16 and bf16 rounded to nearest even, i8 and u8 wrapped, the edge values INT32_MIN and
 * INT32_MAX made the dtype's extremes; f64 as they are): the reference
 * runs on those same values in `ref` (the class default, or f64 for a tight f64 bound) and
 * the side under test on them in `dtype`; an f32 reference result of an f16 / bf16 cell is
 * rounded to that dtype by the same converters (what a correct kernel stores: ±inf past
 * the dtype's range, its subnormals below). i64 inputs are the i32 values times 2^shift, so
 * that a result is the reference's times 2^32 (shift 32 for ops linear in their ints and
 * for comparisons, 16 for products of two) and the high words are compared too; with shift
 * 0, an int result's low 32 bits (8 for i8 / u8 results) are compared with the reference's. */
typedef struct tdt_dtype_desc {
    td_dtype dtype;   /* under test */
    td_dtype ref;     /* the reference's dtype for those inputs */
    td_dtype out;     /* the result's dtype the side under test must give */
    td_dtype ref_out; /* the reference result's dtype */
    int shift;        /* i64: inputs scaled by 2^shift (0, 16 or 32) */
    double nmse;      /* float results: the bound of this dtype (specs/dtypes.lua, or the op's dtype_nmse) */
    unsigned wrap_ints; /* i8 / u8: bit k set: the case's int k is an int value the op converts to
                         * the dtype modulo 2^n; the test wraps it for both sides (as the tensors) */
} tdt_dtype_desc;

/* Runs every case of op on dev in dd->dtype and on cpu in dd->ref, compares as described
 * above (float results by NaN and infinity positions, zero signs where op->zero_sign, then
 * the NMSE, in double: of all the cases pooled <= dd->nmse, and of each case <= 64 times
 * that, since one element of a tiny result 1 ulp off can reach 9.5e-7 in f16; ints and
 * bools exactly) and checks the inputs are unchanged. Skipped (with the reason) when dev
 * cannot make the inputs in the dtype. */
void tdt_compare_dtype_impl(td_device *dev, td_device *cpu, const tdt_op_desc *op, const tdt_dtype_desc *dd,
                            const tdt_case *cases, int n, const char *file, int line);
#define tdt_compare_dtype(dev, cpu, op, dd, cases, n) \
    tdt_compare_dtype_impl((dev), (cpu), (op), (dd), (cases), (n), __FILE__, __LINE__)

/* The test's own conversions (independent of the library's td_half.h / td_convert.c):
 * f32 to IEEE binary16 and to bfloat16 bits, rounding to nearest even (overflow to inf,
 * subnormals kept, NaN quiet), and back (exact). */
uint16_t tdt_f16_bits(float x);
double tdt_f16_value(uint16_t h);
uint16_t tdt_bf16_bits(float x);
double tdt_bf16_value(uint16_t h);

#endif
