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

/* A tensor of pseudo-random values from seed on d: floats in [-2, 2), ints in
 * [-9, 9] without 0, bools both ways. The same seed gives the same values everywhere. */
td_tensor *tdt_random(td_device *d, td_dtype dtype, const int64_t *shape, int ndim, unsigned seed);

/* Fails unless a and b have the same dtype, shape and values (floats within tol, as
 * tdt_expect); used to compare a backend with the CPU. */
void tdt_expect_same_impl(const td_tensor *a, const td_tensor *b, float tol, const char *file, int line);
#define tdt_expect_same(a, b, tol) tdt_expect_same_impl((a), (b), (tol), __FILE__, __LINE__)

/* ---- gradient checks ---- */

/* Runs the op under test on device d with the float inputs ins (other arguments fixed). */
typedef td_status (*tdt_fwd_fn)(td_device *d, td_tensor *const *ins, td_tensor **out);

typedef struct tdt_input {
    const int64_t *shape;
    int ndim;
    bool positive; /* values in [0.5, 1.5] instead of +-[0.2, 1] */
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

#endif
