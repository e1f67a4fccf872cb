/* Every Vulkan matmul kernel (td_vulkan_set_matmul_kernel: the default choice by shape, the
 * tiled, the skinny-shape, the small-K (outer product) and the former naive kernel, each forced
 * on every shape) against the CPU: square, ragged (not multiples of the tiles or of 4), skinny
 * (M, N or K of 1), outer products and other small K (N a multiple of 4 or not, rows and columns
 * past one of mmouter's blocks, batched), batched with
 * broadcast batch dims on either side (and the case folded into one matrix: B shared, A not
 * broadcast), K longer than one dispatch's k range, and int_matmul's wrapping products; floats
 * both random (within rounding) and small integers (exact: bit for bit the CPU's). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "td_vulkan.h"
#include "tdt.h"

static td_device *vk;
static td_device *cpu;

static int setup(void **state)
{
    (void)state;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK)
        return -1;
    return td_device_open(TD_BACKEND_CPU, 0, &cpu) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(vk);
    td_device_release(cpu);
    return 0;
}

typedef struct mm_shape {
    int na, nb;
    int64_t a[4], b[4];
} mm_shape;

static const mm_shape shapes[] = {
    { 2, 2, { 64, 64 }, { 64, 64 } },            /* one 64x64 tile */
    { 2, 2, { 300, 260 }, { 260, 272 } },        /* several tiles (mmwide on lavapipe), N % 4 == 0 */
    { 2, 2, { 130, 67 }, { 67, 131 } },          /* ragged: K and N not multiples of 4 */
    { 2, 2, { 33, 5 }, { 5, 35 } },             /* small K */
    { 2, 2, { 1, 70 }, { 70, 90 } },             /* a row vector */
    { 2, 2, { 70, 90 }, { 90, 1 } },             /* a column vector */
    { 2, 2, { 1, 9 }, { 9, 1 } },                /* a dot product */
    { 2, 2, { 257, 1 }, { 1, 130 } },            /* an outer product */
    { 2, 2, { 300, 1 }, { 1, 520 } },            /* mmouter: N % 4 == 0, past a block of 256 rows */
    { 2, 2, { 70, 3 }, { 3, 37 } },              /* mmouter word by word (N % 4 != 0), K = 3 */
    { 2, 2, { 40, 8 }, { 8, 16 } },              /* mmouter's largest K (AUTO), fewest rows and columns */
    { 3, 3, { 3, 45, 2 }, { 3, 2, 36 } },        /* batched small K, B not shared */
    { 4, 3, { 5, 3, 1, 41 }, { 1, 41, 64 } },    /* row vectors times a shared matrix: folded */
    { 4, 3, { 2, 3, 40, 41 }, { 1, 41, 65 } },   /* shared B, folded, ragged */
    { 3, 4, { 1, 40, 41 }, { 2, 3, 41, 36 } },   /* A broadcast: not folded */
    { 4, 4, { 2, 1, 70, 33 }, { 1, 3, 33, 70 } }, /* both broadcast */
    { 3, 3, { 3, 1, 130 }, { 3, 130, 66 } },      /* batched row vectors, B not shared */
    { 2, 2, { 66, 2100 }, { 2100, 68 } },        /* K over two of mmtile's k ranges */
    { 2, 2, { 130, 1100 }, { 1100, 260 } },      /* mmwide on lavapipe over two k ranges */
    { 2, 2, { 5, 20001 }, { 20001, 40 } },       /* mmthin over two k ranges, word by word (lavapipe's */
    { 2, 2, { 5, 20000 }, { 20000, 40 } },       /* loop limit would cut a longer one), and in quads */
};

static const td_vulkan_matmul_kernel kernels[] = { TD_VULKAN_MATMUL_AUTO, TD_VULKAN_MATMUL_TILED,
                                                   TD_VULKAN_MATMUL_THIN, TD_VULKAN_MATMUL_NAIVE,
                                                   TD_VULKAN_MATMUL_OUTER };

/* Random floats in [-1, 1] compared within rounding (where K is short enough for 1e-4), or
 * small integers as floats, whose sums are exact in any order: every kernel must then give the
 * CPU's result bit for bit (a product left out or counted twice shows). */
static void float_case(const mm_shape *s, uint64_t seed, bool exact)
{
    td_tensor *ac = NULL, *bc = NULL, *av = NULL, *bv = NULL, *oc = NULL;
    if (exact) {
        td_tensor *ai = NULL, *bi = NULL;
        tdt_check(td_int_random(cpu, s->a, s->na, -4, 5, seed, &ai), "random a");
        tdt_check(td_int_random(cpu, s->b, s->nb, -4, 5, seed + 1, &bi), "random b");
        tdt_check(td_int_into_float(ai, &ac), "a into float");
        tdt_check(td_int_into_float(bi, &bc), "b into float");
        td_tensor_release(ai);
        td_tensor_release(bi);
    } else {
        tdt_check(td_float_random(cpu, s->a, s->na, TD_UNIFORM, -1.0f, 1.0f, seed, &ac), "random a");
        tdt_check(td_float_random(cpu, s->b, s->nb, TD_UNIFORM, -1.0f, 1.0f, seed + 1, &bc), "random b");
    }
    tdt_check(td_float_to_device(ac, vk, &av), "a to vulkan");
    tdt_check(td_float_to_device(bc, vk, &bv), "b to vulkan");
    tdt_check(td_float_matmul(ac, bc, &oc), "matmul cpu");
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        tdt_check(td_vulkan_set_matmul_kernel(vk, kernels[k]), "set kernel");
        td_tensor *ov = NULL;
        tdt_check(td_float_matmul(av, bv, &ov), "matmul vulkan");
        tdt_expect_same(ov, oc, exact ? 0.0f : 1e-4f);
        td_tensor_release(ov);
    }
    tdt_check(td_vulkan_set_matmul_kernel(vk, TD_VULKAN_MATMUL_AUTO), "set kernel");
    td_tensor_release(ac);
    td_tensor_release(bc);
    td_tensor_release(av);
    td_tensor_release(bv);
    td_tensor_release(oc);
}

static void test_float_kernels(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const mm_shape *s = &shapes[i];
        if (s->a[s->na - 1] <= 4096)
            float_case(s, 10 + 2 * (uint64_t)i, false);
        float_case(s, 50 + 2 * (uint64_t)i, true);
    }
}

/* Wrapping products and sums: values near the int32 range. */
static void int_case(const mm_shape *s, uint64_t seed)
{
    td_tensor *ac = NULL, *bc = NULL, *av = NULL, *bv = NULL, *oc = NULL;
    tdt_check(td_int_random(cpu, s->a, s->na, -2000000000, 2000000000, seed, &ac), "random a");
    tdt_check(td_int_random(cpu, s->b, s->nb, -70000, 70000, seed + 1, &bc), "random b");
    tdt_check(td_int_to_device(ac, vk, &av), "a to vulkan");
    tdt_check(td_int_to_device(bc, vk, &bv), "b to vulkan");
    tdt_check(td_int_matmul(ac, bc, &oc), "int_matmul cpu");
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        tdt_check(td_vulkan_set_matmul_kernel(vk, kernels[k]), "set kernel");
        td_tensor *ov = NULL;
        tdt_check(td_int_matmul(av, bv, &ov), "int_matmul vulkan");
        tdt_expect_same(ov, oc, 0.0f);
        td_tensor_release(ov);
    }
    tdt_check(td_vulkan_set_matmul_kernel(vk, TD_VULKAN_MATMUL_AUTO), "set kernel");
    td_tensor_release(ac);
    td_tensor_release(bc);
    td_tensor_release(av);
    td_tensor_release(bv);
    td_tensor_release(oc);
}

static void test_int_kernels(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        int_case(&shapes[i], 100 + 2 * (uint64_t)i);
}

static void test_set_kernel_errors(void **state)
{
    (void)state;
    assert_int_equal(td_vulkan_set_matmul_kernel(cpu, TD_VULKAN_MATMUL_NAIVE), TD_E_BACKEND_MISMATCH);
    assert_int_equal(td_vulkan_set_matmul_kernel(vk, (td_vulkan_matmul_kernel)99), TD_E_INVALID);
    assert_int_equal(td_vulkan_set_matmul_kernel(vk, (td_vulkan_matmul_kernel)(TD_VULKAN_MATMUL_OUTER + 1)),
                     TD_E_INVALID);
    assert_int_equal(td_vulkan_set_matmul_kernel(vk, (td_vulkan_matmul_kernel)-1), TD_E_INVALID);
    assert_int_equal(td_vulkan_set_matmul_kernel(NULL, TD_VULKAN_MATMUL_AUTO), TD_E_NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_kernels),
        cmocka_unit_test(test_int_kernels),
        cmocka_unit_test(test_set_kernel_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
