/* CPU backend: device and storage hooks, creation ops, host transfers, same-device copies. */
#define _DEFAULT_SOURCE 1 /* madvise and MADV_HUGEPAGE (sys/mman.h) under -std=c11 */
#include <math.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "cpu_internal.h"

td_status td_cpu_device_open(td_device *device)
{
    if (td_be_device_index(device) != 0)
        return td_error(TD_E_DEVICE, "device_open: backend 'cpu' has only device 0, got %d", td_be_device_index(device));
    td_be_device_set_state(device, NULL);
    return TD_OK;
}

void td_cpu_device_close(td_device *device)
{
    (void)device;
}

/* Large blocks are kept for reuse, by power-of-two size class: the allocator would hand
 * them back to the system on free, and every new one would cost a page fault per 4 KiB on
 * first touch, which for a large elementwise op or collective costs as much as the work. */
#define POOL_MIN_SHIFT 16 /* 64 KiB */
#define POOL_CLASSES 24   /* up to 2^39 bytes */
#define POOL_CAP ((size_t)512 << 20)

typedef struct pool_block {
    struct pool_block *next;
} pool_block;

static pool_block *pool[POOL_CLASSES];
static size_t pool_bytes;
static atomic_flag pool_busy = ATOMIC_FLAG_INIT; /* held for a few instructions only */

static void pool_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&pool_busy, memory_order_acquire))
        ;
}

static void pool_unlock(void)
{
    atomic_flag_clear_explicit(&pool_busy, memory_order_release);
}

static int size_class(size_t bytes)
{
    int c = 0;
    while (c < POOL_CLASSES && ((size_t)1 << (c + POOL_MIN_SHIFT)) < bytes)
        c++;
    return c;
}

/* A new pooled block (a power of two of at least 64 KiB): 64-byte aligned; from 2 MiB up,
 * aligned to 2 MiB and marked for transparent huge pages, where the system has them
 * ("madvise" mode, Debian's default). A large kernel's reads and writes then miss the TLB
 * 512 times less often: on the 2-core development VM, where a TLB miss walks two page tables,
 * memcpy and plain reads of 64 MiB ran 1.3-1.5x as fast (bench_kernels prints both kinds of
 * pages). The blocks are reused, so their first-touch cost is paid once. TD_CPU_HUGE_PAGES=0
 * leaves every block on the system's default pages. */
#define HUGE_PAGE ((size_t)2 << 20)

static bool want_huge_pages(void)
{
    static atomic_int want = -1; /* every thread that races here computes the same value */
    int w = atomic_load_explicit(&want, memory_order_relaxed);
    if (w < 0) {
        const char *env = getenv("TD_CPU_HUGE_PAGES");
        w = env == NULL || strcmp(env, "0") != 0;
        atomic_store_explicit(&want, w, memory_order_relaxed);
    }
    return w != 0;
}

static void *new_block(size_t bytes)
{
    if (bytes < HUGE_PAGE || !want_huge_pages())
        return td_malloc_aligned(TD_ALIGN, bytes);
    void *p = td_malloc_aligned(HUGE_PAGE, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p != NULL)
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without it the block is still good */
#endif
    return p;
}

/* `bytes` of storage: from the pool when large; an empty tensor gets one byte, so that its
 * data pointer is never NULL (malloc(0) may return NULL). *out stays NULL on failure. */
static inline td_status block_take(size_t bytes, void **out)
{
    void *p;
    if (bytes < ((size_t)1 << POOL_MIN_SHIFT)) {
        p = td_malloc(bytes > 0 ? bytes : 1);
    } else {
        int c = size_class(bytes);
        if (c == POOL_CLASSES)
            return td_error(TD_E_NOMEM, "cpu: %zu bytes is more than one tensor may hold", bytes);
        pool_lock();
        pool_block *b = pool[c];
        if (b != NULL) {
            pool[c] = b->next;
            pool_bytes -= (size_t)1 << (c + POOL_MIN_SHIFT);
        }
        pool_unlock();
        p = b != NULL ? (void *)b : new_block((size_t)1 << (c + POOL_MIN_SHIFT));
    }
    if (p == NULL)
        return td_error(TD_E_NOMEM, "cpu: out of memory allocating %zu bytes", bytes);
    *out = p;
    return TD_OK;
}

/* Gives back p (not NULL), taken with block_take(bytes): to the pool when large and it has room. */
static inline void block_give(void *p, size_t bytes)
{
    if (bytes >= ((size_t)1 << POOL_MIN_SHIFT)) {
        int c = size_class(bytes);
        size_t cls = (size_t)1 << (c + POOL_MIN_SHIFT);
        pool_lock();
        if (pool_bytes + cls <= POOL_CAP) {
            pool_block *b = p;
            b->next = pool[c];
            pool[c] = b;
            pool_bytes += cls;
            p = NULL;
        }
        pool_unlock();
    }
    td_free(p);
}

td_status td_cpu_alloc(td_tensor *t)
{
    void *p = NULL;
    const td_status st = block_take(td_cpu_nbytes(t), &p);
    td_be_set_data(t, p);
    return st;
}

void td_cpu_free(td_tensor *t)
{
    block_give(td_be_data(t), td_cpu_nbytes(t));
    td_be_set_data(t, NULL);
}

td_status td_cpu_block_take(size_t bytes, void **out)
{
    return block_take(bytes, out);
}

void td_cpu_block_give(void *p, size_t bytes)
{
    block_give(p, bytes);
}

td_status td_cpu_read(const td_tensor *t, void *host)
{
    if (td_be_numel(t) > 0) /* host may be NULL for an empty tensor */
        memcpy(host, td_be_data(t), td_cpu_nbytes(t));
    return TD_OK;
}

td_status td_cpu_write(td_tensor *t, const void *host)
{
    if (td_be_numel(t) > 0)
        memcpy(td_be_data(t), host, td_cpu_nbytes(t));
    return TD_OK;
}

td_status td_cpu_sync(td_device *device)
{
    (void)device; /* kernels run synchronously */
    return TD_OK;
}

/* ---- host data in and out ---- */

td_status td_cpu_float_from_data(const float *data, const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return td_cpu_write(out, data);
}

td_status td_cpu_int_from_data(const int32_t *data, const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return td_cpu_write(out, data);
}

td_status td_cpu_bool_from_data(const bool *data, const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return td_cpu_write(out, data);
}

td_status td_cpu_float_into_data(const td_tensor *a, float *dst)
{
    return td_cpu_read(a, dst);
}

td_status td_cpu_int_into_data(const td_tensor *a, int32_t *dst)
{
    return td_cpu_read(a, dst);
}

td_status td_cpu_bool_into_data(const td_tensor *a, bool *dst)
{
    return td_cpu_read(a, dst);
}

td_status td_cpu_float_to_device(const td_tensor *a, td_tensor *out)
{
    return td_cpu_write(out, td_be_data(a));
}

td_status td_cpu_int_to_device(const td_tensor *a, td_tensor *out)
{
    return td_cpu_write(out, td_be_data(a));
}

td_status td_cpu_bool_to_device(const td_tensor *a, td_tensor *out)
{
    return td_cpu_write(out, td_be_data(a));
}

/* ---- fills ---- */

#define TD_CPU_FILL(T, OUT, VALUE)                          \
    do {                                                    \
        T *td_p_ = (T *)td_be_data(OUT);                        \
        const T td_v_ = (VALUE);                            \
        TD_CPU_FOR(i, td_be_numel(OUT), td_p_[i] = td_v_;); \
    } while (0)

td_status td_cpu_float_zeros(const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    memset(td_be_data(out), 0, td_cpu_nbytes(out)); /* all-zero bits are 0.0f */
    return TD_OK;
}

td_status td_cpu_int_zeros(const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    memset(td_be_data(out), 0, td_cpu_nbytes(out));
    return TD_OK;
}

td_status td_cpu_float_ones(const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    TD_CPU_FILL(float, out, 1.0f);
    return TD_OK;
}

td_status td_cpu_int_ones(const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    TD_CPU_FILL(int32_t, out, 1);
    return TD_OK;
}

td_status td_cpu_float_full(const int64_t *shape, int shape_len, float value, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    TD_CPU_FILL(float, out, value);
    return TD_OK;
}

td_status td_cpu_int_full(const int64_t *shape, int shape_len, int32_t value, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    TD_CPU_FILL(int32_t, out, value);
    return TD_OK;
}

td_status td_cpu_int_arange(int64_t start, int64_t end, int64_t step, td_tensor *out)
{
    (void)end; /* the shape rule already sized out */
    int32_t *p = (int32_t *)td_be_data(out);
    TD_CPU_FOR(i, td_be_numel(out), p[i] = (int32_t)(start + i * step););
    return TD_OK;
}

/* ---- random ----
 * The generator every backend reproduces (results depend only on seed and element index):
 *   mix(x):  x += 0x9E3779B97F4A7C15; x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9;
 *            x = (x ^ (x >> 27)) * 0x94D049BB133111EB; return x ^ (x >> 31)   (splitmix64, uint64)
 *   element i:  h0 = mix(seed ^ mix(2*i)),  h1 = mix(seed ^ mix(2*i + 1))
 *   uniform:  u = (h0 >> 40) * 2^-24 in [0, 1);  value = p0 + (p1 - p0) * u, in f32,
 *             and when that rounds up to p1 (with p1 > p0), the largest f32 below p1
 *   normal:   u1 = ((h0 >> 40) + 1) * 2^-24 in (0, 1],  u2 = (h1 >> 40) * 2^-24,
 *             z = sqrt(-2 ln u1) * cos(2 pi u2), in f32;  value = p0 + p1 * z
 * The 24-bit u values are exact in f32. */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline float unit24(uint64_t h)
{
    return (float)(h >> 40) * 0x1p-24f;
}

td_status td_cpu_float_random(const int64_t *shape, int shape_len, td_distribution dist, float p0, float p1,
                              uint64_t seed, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    float *p = (float *)td_be_data(out);
    if (dist == TD_NORMAL) {
        TD_CPU_FOR(i, td_be_numel(out), {
            const uint64_t k = 2u * (uint64_t)i;
            const uint64_t h0 = mix(seed ^ mix(k));
            const uint64_t h1 = mix(seed ^ mix(k + 1u));
            const float u1 = (float)((h0 >> 40) + 1u) * 0x1p-24f;
            const float u2 = unit24(h1);
            const float z = sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
            p[i] = p0 + p1 * z;
        });
    } else {
        const float below = p1 > p0 ? nextafterf(p1, p0) : p0;
        TD_CPU_FOR(i, td_be_numel(out), {
            const float u = unit24(mix(seed ^ mix(2u * (uint64_t)i)));
            const float v = p0 + (p1 - p0) * u;
            p[i] = (p1 > p0 && v >= p1) ? below : v;
        });
    }
    return TD_OK;
}
