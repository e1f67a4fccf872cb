/* The threading contract (README, "Threads"), exercised: several threads on one shared CPU
 * device, each its own device handles, separate autodiff graphs on one autodiff device,
 * shared read-only inputs, reference counts moved between threads, and thread-local error
 * messages, and one Vulkan device shared by several threads. The suite also runs this program built with ThreadSanitizer (.ci/test). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "tdt.h"

enum { THREADS = 4, ROUNDS = 200, N = 1000 };

static td_device *cpu, *ad_none, *ad_bal;
static td_tensor *shared; /* read by every thread: 0, 1, ..., N-1 */
static td_device *vk_shared; /* vulkan:0, or NULL where there is none (its tests are skipped) */

/* Each worker returns NULL on success or a static description of the first failure (cmocka's
 * asserts are not for other threads). */
#define WCHECK(cond, what)          \
    do {                            \
        if (!(cond))                \
            return (void *)(what);  \
    } while (0)

/* (shared + k) * 2 summed: 2 * (N(N-1)/2 + k N), exact in f32 for these sizes. */
static void *shared_device_worker(void *arg)
{
    const float k = (float)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        td_tensor *a = NULL, *b = NULL, *s = NULL;
        WCHECK(td_float_add_scalar(shared, k, &a) == TD_OK, "add_scalar");
        WCHECK(td_float_mul_scalar(a, 2.0f, &b) == TD_OK, "mul_scalar");
        WCHECK(td_float_sum(b, &s) == TD_OK, "sum");
        float v = 0.0f;
        WCHECK(td_float_into_data(s, &v, 1) == TD_OK, "into_data");
        td_tensor_release(a);
        td_tensor_release(b);
        td_tensor_release(s);
        const float want = 2.0f * ((float)N * (N - 1) / 2.0f + k * N);
        WCHECK(v == want, "shared device: wrong sum");
    }
    return NULL;
}

static void run_threads(void *(*fn)(void *))
{
    pthread_t th[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, fn, (void *)i), 0);
    for (int i = 0; i < THREADS; i++) {
        void *res = NULL;
        assert_int_equal(pthread_join(th[i], &res), 0);
        if (res != NULL)
            fail_msg("thread %d: %s", i, (const char *)res);
    }
}

static void test_shared_cpu_device(void **state)
{
    (void)state;
    run_threads(shared_device_worker);
}

/* Each thread opens its own handles (cpu:0 is shared underneath; opens and the last
 * release race here) and trains its own graph: L = sum((w * x)^2), dL/dw = 2 w x^2. */
static void *own_devices_worker(void *arg)
{
    const intptr_t id = (intptr_t)arg;
    for (int r = 0; r < ROUNDS / 5; r++) {
        td_device *d = NULL, *ad = NULL;
        WCHECK(td_device_open(TD_BACKEND_CPU, 0, &d) == TD_OK, "open");
        WCHECK(td_device_autodiff(d, (id & 1) ? TD_CHECKPOINT_BALANCED : TD_CHECKPOINT_NONE, &ad) == TD_OK,
               "autodiff");
        td_device_release(d);
        const float xs[] = { 1, 2, 3 }, ws[] = { 0.5f, (float)id, -1 };
        const int64_t s3[] = { 3 };
        td_tensor *x = NULL, *w = NULL, *y = NULL, *y2 = NULL, *l = NULL, *g = NULL;
        WCHECK(td_float_from_data(ad, xs, s3, 1, &x) == TD_OK, "x");
        WCHECK(td_float_from_data(ad, ws, s3, 1, &w) == TD_OK, "w");
        WCHECK(td_require_grad(w) == TD_OK, "require_grad");
        WCHECK(td_float_mul(w, x, &y) == TD_OK, "mul");
        WCHECK(td_float_mul(y, y, &y2) == TD_OK, "square");
        WCHECK(td_float_sum(y2, &l) == TD_OK, "sum");
        td_grads *grads = NULL;
        WCHECK(td_backward(l, &grads) == TD_OK, "backward");
        WCHECK(td_grads_get(grads, w, &g) == TD_OK && g != NULL, "grads_get");
        float got[3];
        WCHECK(td_float_into_data(g, got, 3) == TD_OK, "read grad");
        for (int i = 0; i < 3; i++)
            WCHECK(got[i] == 2.0f * ws[i] * xs[i] * xs[i], "own graph: wrong gradient");
        td_tensor_release(g);
        td_grads_release(grads);
        td_tensor_release(l);
        td_tensor_release(y2);
        td_tensor_release(y);
        td_tensor_release(w);
        td_tensor_release(x);
        td_device_release(ad);
    }
    return NULL;
}

static void test_own_devices_and_graphs(void **state)
{
    (void)state;
    run_threads(own_devices_worker);
}

/* Separate graphs on the two shared autodiff devices of the group. */
static void *shared_autodiff_worker(void *arg)
{
    const intptr_t id = (intptr_t)arg;
    td_device *ad = (id & 1) ? ad_bal : ad_none;
    for (int r = 0; r < ROUNDS / 5; r++) {
        const float xs[] = { (float)id, 2 };
        const int64_t s2[] = { 2 };
        td_tensor *x = NULL, *e = NULL, *l = NULL, *g = NULL;
        WCHECK(td_float_from_data(ad, xs, s2, 1, &x) == TD_OK, "x");
        WCHECK(td_require_grad(x) == TD_OK, "require_grad");
        WCHECK(td_float_mul_scalar(x, 3.0f, &e) == TD_OK, "mul_scalar");
        WCHECK(td_float_sum(e, &l) == TD_OK, "sum");
        td_grads *grads = NULL;
        WCHECK(td_backward(l, &grads) == TD_OK, "backward");
        WCHECK(td_grads_get(grads, x, &g) == TD_OK && g != NULL, "grads_get");
        float got[2];
        WCHECK(td_float_into_data(g, got, 2) == TD_OK, "read grad");
        WCHECK(got[0] == 3.0f && got[1] == 3.0f, "shared autodiff device: wrong gradient");
        td_tensor_release(g);
        td_grads_release(grads);
        td_tensor_release(l);
        td_tensor_release(e);
        td_tensor_release(x);
    }
    return NULL;
}

static void test_separate_graphs_on_shared_autodiff_devices(void **state)
{
    (void)state;
    run_threads(shared_autodiff_worker);
}

/* References to one tensor taken and dropped from every thread. */
static void *refcount_worker(void *arg)
{
    (void)arg;
    for (int r = 0; r < 1000; r++) {
        WCHECK(td_tensor_retain(shared) == TD_OK, "retain");
        td_tensor_release(shared);
    }
    return NULL;
}

static void test_refcounts_across_threads(void **state)
{
    (void)state;
    run_threads(refcount_worker);
    int64_t n = 0;
    tdt_check(td_tensor_numel(shared, &n), "still alive");
    assert_int_equal(n, N);
}

/* A graph recorded on one thread and released on another: the tape nodes are pooled per
 * thread (runtime/autodiff), so they move to the releasing thread's pool, which is freed
 * when that thread exits (ASan's leak check and TSan both watch this). */
typedef struct handed_graph {
    td_tensor *x, *e, *l;
} handed_graph;

static const char *record_graph(td_device *ad, float v, handed_graph *h)
{
    const float xs[] = { v, 2 };
    const int64_t s2[] = { 2 };
    *h = (handed_graph){ NULL, NULL, NULL };
    if (td_float_from_data(ad, xs, s2, 1, &h->x) != TD_OK || td_require_grad(h->x) != TD_OK)
        return "x";
    if (td_float_mul_scalar(h->x, 3.0f, &h->e) != TD_OK || td_float_sum(h->e, &h->l) != TD_OK)
        return "record";
    return NULL;
}

static const char *finish_graph(handed_graph *h)
{
    td_grads *grads = NULL;
    td_tensor *g = NULL;
    float got[2] = { 0, 0 };
    const char *err = NULL;
    if (td_backward(h->l, &grads) != TD_OK)
        err = "backward";
    else if (td_grads_get(grads, h->x, &g) != TD_OK || g == NULL || td_float_into_data(g, got, 2) != TD_OK)
        err = "grads_get";
    else if (got[0] != 3.0f || got[1] != 3.0f)
        err = "handed graph: wrong gradient";
    td_tensor_release(g);
    td_grads_release(grads);
    td_tensor_release(h->l);
    td_tensor_release(h->e);
    td_tensor_release(h->x);
    return err;
}

static void *finish_worker(void *arg)
{
    handed_graph *hs = arg;
    for (int r = 0; r < ROUNDS / 5; r++) {
        const char *err = finish_graph(&hs[r]);
        WCHECK(err == NULL, err);
    }
    return NULL;
}

static void *record_worker(void *arg)
{
    handed_graph *hs = arg;
    for (int r = 0; r < ROUNDS / 5; r++) {
        const char *err = record_graph((r & 1) ? ad_bal : ad_none, (float)r, &hs[r]);
        WCHECK(err == NULL, err);
    }
    return NULL;
}

static void test_graphs_released_on_other_threads(void **state)
{
    (void)state;
    static handed_graph hs[THREADS][ROUNDS / 5];
    pthread_t th[THREADS];
    /* recorded here, backpropagated and released on the workers */
    for (int i = 0; i < THREADS; i++)
        for (int r = 0; r < ROUNDS / 5; r++)
            assert_null(record_graph((r & 1) ? ad_bal : ad_none, (float)r, &hs[i][r]));
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, finish_worker, hs[i]), 0);
    for (int i = 0; i < THREADS; i++) {
        void *res = NULL;
        assert_int_equal(pthread_join(th[i], &res), 0);
        if (res != NULL)
            fail_msg("thread %d: %s", i, (const char *)res);
    }
    /* recorded on the workers (which exit), backpropagated and released here */
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, record_worker, hs[i]), 0);
    for (int i = 0; i < THREADS; i++) {
        void *res = NULL;
        assert_int_equal(pthread_join(th[i], &res), 0);
        if (res != NULL)
            fail_msg("thread %d: %s", i, (const char *)res);
    }
    for (int i = 0; i < THREADS; i++)
        for (int r = 0; r < ROUNDS / 5; r++)
            assert_null(finish_graph(&hs[i][r]));
}

/* td_last_error() is per thread: each thread sees its own failure's message. */
static void *error_worker(void *arg)
{
    const intptr_t id = (intptr_t)arg;
    char want[32];
    snprintf(want, sizeof want, "got %d", (int)(100 + id));
    for (int r = 0; r < ROUNDS; r++) {
        td_device *d = NULL;
        WCHECK(td_device_open(TD_BACKEND_CPU, (int)(100 + id), &d) == TD_E_DEVICE, "open must fail");
        WCHECK(strstr(td_last_error(), want) != NULL, "another thread's message");
    }
    return NULL;
}

static void test_errors_are_thread_local(void **state)
{
    (void)state;
    run_threads(error_worker);
}

static int setup(void **state)
{
    (void)state;
    if (tdt_open_devices(TD_BACKEND_CPU, &cpu, &ad_none, &ad_bal) != 0)
        return -1;
    float data[N];
    for (int i = 0; i < N; i++)
        data[i] = (float)i;
    const int64_t s[] = { N };
    if (td_backend_enabled(TD_BACKEND_VULKAN) && td_device_open(TD_BACKEND_VULKAN, 0, &vk_shared) != TD_OK) {
        fprintf(stderr, "no vulkan device (its tests are skipped): %s\n", td_last_error());
        vk_shared = NULL;
    }
    return td_float_from_data(cpu, data, s, 1, &shared) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_tensor_release(shared);
    td_device_release(vk_shared);
    return tdt_close_devices(cpu, ad_none, ad_bal);
}

/* Views across threads: every thread makes a view of the same fresh tensors at once (the
 * first view of a tensor makes its storage count, so they race to make it), drops its own
 * reference to the base, and reads and releases its view: the storage goes with whichever
 * thread lets go last. */
enum { VIEW_BASES = 50 };
static td_tensor *view_bases[VIEW_BASES];

static void *view_worker(void *arg)
{
    (void)arg;
    const int64_t s[] = { N / 10, 10 };
    float got[N];
    for (int r = 0; r < VIEW_BASES; r++) {
        td_tensor *v = NULL;
        WCHECK(td_float_reshape(view_bases[r], s, 2, &v) == TD_OK, "reshape");
        td_tensor_release(view_bases[r]); /* this thread's reference */
        WCHECK(td_float_into_data(v, got, N) == TD_OK, "into_data");
        td_tensor_release(v);
        WCHECK(got[0] == (float)r && got[N - 1] == (float)(N - 1 + r), "view: wrong elements");
    }
    return NULL;
}

static void test_views_across_threads(void **state)
{
    (void)state;
    static float data[N];
    const int64_t n = N;
    for (int r = 0; r < VIEW_BASES; r++) {
        for (int i = 0; i < N; i++)
            data[i] = (float)(i + r);
        tdt_check(td_float_from_data(cpu, data, &n, 1, &view_bases[r]), "from_data");
        for (int t = 0; t < THREADS - 1; t++) /* one reference per thread, the first one is ours */
            tdt_check(td_tensor_retain(view_bases[r]), "retain");
    }
    run_threads(view_worker);
}

/* A Vulkan device shared by several threads (README, "Threads"): each worker opens vulkan:0
 * itself (the same handle underneath) or uses the one from the group, records ops into the
 * device's one batched command buffer, frees buffers back into its pools (some while another
 * thread's batch is open), and reads its results back, which submits whatever is recorded. */
enum { VK_ROUNDS = 40, VK_N = 300 };


static void *vulkan_worker(void *arg)
{
    const intptr_t id = (intptr_t)arg;
    td_device *d = NULL;
    if (id & 1)
        WCHECK(td_device_open(TD_BACKEND_VULKAN, 0, &d) == TD_OK, "vulkan open");
    else
        WCHECK(td_device_retain(vk_shared) == TD_OK && (d = vk_shared) != NULL, "vulkan retain");
    float x[VK_N], y[VK_N];
    const int64_t s[] = { VK_N }, m[] = { VK_N / 3, 3 };
    for (int r = 0; r < VK_ROUNDS; r++) {
        const float k = (float)(id * 1000 + r);
        for (int i = 0; i < VK_N; i++)
            x[i] = (float)i;
        td_tensor *a = NULL, *b = NULL, *c = NULL, *sum = NULL, *mx = NULL, *v = NULL, *rows = NULL;
        WCHECK(td_float_from_data(d, x, s, 1, &a) == TD_OK, "vulkan from_data");
        WCHECK(td_float_add_scalar(a, k, &b) == TD_OK, "vulkan add_scalar");
        WCHECK(td_float_mul_scalar(b, 2.0f, &c) == TD_OK, "vulkan mul_scalar");
        WCHECK(td_float_sum(c, &sum) == TD_OK, "vulkan sum");
        WCHECK(td_float_max(c, &mx) == TD_OK, "vulkan max");
        WCHECK(td_float_reshape(c, m, 2, &v) == TD_OK, "vulkan reshape");
        WCHECK(td_float_sum_dim(v, 1, &rows) == TD_OK, "vulkan sum_dim");
        td_tensor_release(a);
        td_tensor_release(b); /* freed while this (or another thread's) batch may use them */
        float got_sum = 0.0f, got_max = 0.0f;
        WCHECK(td_float_into_data(sum, &got_sum, 1) == TD_OK, "vulkan read sum");
        WCHECK(td_float_into_data(mx, &got_max, 1) == TD_OK, "vulkan read max");
        WCHECK(td_float_into_data(c, y, VK_N) == TD_OK, "vulkan read");
        float got_rows[VK_N / 3];
        WCHECK(td_float_into_data(rows, got_rows, VK_N / 3) == TD_OK, "vulkan read rows");
        for (int i = 0; i < VK_N; i++)
            WCHECK(y[i] == 2.0f * ((float)i + k), "shared vulkan device: wrong element");
        for (int i = 0; i < VK_N / 3; i++)
            WCHECK(got_rows[i] == 2.0f * (float)(9 * i + 3) + 6.0f * k, "shared vulkan device: wrong row sum");
        WCHECK(got_max == 2.0f * ((float)(VK_N - 1) + k), "shared vulkan device: wrong max");
        /* 2 * (N(N-1)/2 + k N): exact in f32 below 2^24 */
        WCHECK(got_sum == 2.0f * ((float)VK_N * (VK_N - 1) / 2.0f + k * VK_N), "shared vulkan device: wrong sum");
        td_tensor_release(c);
        td_tensor_release(v);
        td_tensor_release(rows);
        td_tensor_release(sum);
        td_tensor_release(mx);
    }
    td_device_release(d);
    return NULL;
}

static void test_shared_vulkan_device(void **state)
{
    (void)state;
    if (vk_shared == NULL)
        skip();
    run_threads(vulkan_worker);
}

/* Tensors made on the shared Vulkan device on one thread, read and released on others. */
static td_tensor *vk_handed[THREADS];

static void *vulkan_reader(void *arg)
{
    const intptr_t id = (intptr_t)arg;
    float got[VK_N];
    td_tensor *t = NULL;
    WCHECK(td_float_mul_scalar(vk_handed[id], 3.0f, &t) == TD_OK, "vulkan mul_scalar");
    td_tensor_release(vk_handed[id]);
    WCHECK(td_float_into_data(t, got, VK_N) == TD_OK, "vulkan read");
    td_tensor_release(t);
    for (int i = 0; i < VK_N; i++)
        WCHECK(got[i] == 3.0f * (float)(i + id), "handed vulkan tensor: wrong element");
    return NULL;
}

static void test_vulkan_tensors_across_threads(void **state)
{
    (void)state;
    if (vk_shared == NULL)
        skip();
    float x[VK_N];
    const int64_t s[] = { VK_N };
    for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < VK_N; i++)
            x[i] = (float)i;
        td_tensor *a = NULL;
        tdt_check(td_float_from_data(vk_shared, x, s, 1, &a), "from_data");
        tdt_check(td_float_add_scalar(a, (float)t, &vk_handed[t]), "add_scalar"); /* recorded, not yet run */
        td_tensor_release(a);
    }
    run_threads(vulkan_reader);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_shared_cpu_device),
        TDT_TEST(test_own_devices_and_graphs),
        TDT_TEST(test_separate_graphs_on_shared_autodiff_devices),
        TDT_TEST(test_refcounts_across_threads),
        TDT_TEST(test_graphs_released_on_other_threads),
        TDT_TEST(test_errors_are_thread_local),
        TDT_TEST(test_views_across_threads),
        TDT_TEST(test_shared_vulkan_device),
        TDT_TEST(test_vulkan_tensors_across_threads),
    };
    return cmocka_run_group_tests_name("threads", tests, setup, teardown);
}
