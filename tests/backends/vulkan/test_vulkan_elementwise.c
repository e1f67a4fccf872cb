/* The vectorized elementwise shader (ewv.comp, td_vulkan_set_elementwise_kernel AUTO) against
 * the generic one (GENERIC), bit for bit, for every op they share: float and int arithmetic,
 * comparisons, bool and/or, mask_where and mask_fill; on sizes around its vectors of 4 and its
 * 16 elements per invocation (1, 3, 4, 5, 17, 4099), on 2-D shapes, with either input (or the
 * mask_where value) a single broadcast element, and with broadcasts that are not one element
 * (ew.comp, specialized to the op, against its runtime switch); the unary ops' specialized
 * pipelines against the runtime switch; likewise fmath.comp's float math (inverse trigonometry,
 * tan, rounding, erf, log1p, is_nan, is_inf, remainders) and iops.comp's int ops (bitwise,
 * shifts, powi, tensor and scalar forms, broadcast) and triangular masks, on inputs with special
 * values (NaN, infinities, zeros of both signs, subnormals, huge values; shifts and exponents
 * out of range); plus the switch's errors. test_ops_vulkan checks the
 * default against the CPU over the generated shapes. */
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

static int setup(void **state)
{
    (void)state;
    return td_device_open(TD_BACKEND_VULKAN, 0, &vk) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(vk);
    return 0;
}

enum kind { KF, KI, KPOS, KB }; /* float, int, positive int (a divisor), bool */

typedef td_status (*bin_fn)(const td_tensor *, const td_tensor *, td_tensor **);
typedef td_status (*tern_fn)(const td_tensor *, const td_tensor *, const td_tensor *, td_tensor **);

static td_tensor *make(enum kind k, const int64_t *shape, int ndim, uint64_t seed)
{
    td_tensor *t = NULL;
    if (k == KF) {
        tdt_check(td_float_random(vk, shape, ndim, TD_UNIFORM, -2.0f, 2.0f, seed, &t), "float random");
    } else if (k == KI) {
        tdt_check(td_int_random(vk, shape, ndim, -1000, 1001, seed, &t), "int random");
    } else if (k == KPOS) {
        tdt_check(td_int_random(vk, shape, ndim, 1, 40, seed, &t), "int random");
    } else {
        td_tensor *x = NULL, *y = NULL;
        tdt_check(td_float_random(vk, shape, ndim, TD_UNIFORM, -1.0f, 1.0f, seed, &x), "float random");
        tdt_check(td_float_random(vk, shape, ndim, TD_UNIFORM, -1.0f, 1.0f, seed + 99, &y), "float random");
        tdt_check(td_float_greater(x, y, &t), "greater");
        td_tensor_release(x);
        td_tensor_release(y);
    }
    return t;
}

/* The result's elements as bytes (4 per element, bools as 0/1 words). */
static void *read_words(const td_tensor *t, enum kind k, int64_t n)
{
    uint32_t *w = calloc((size_t)n + 1, 4);
    assert_non_null(w);
    if (k == KF) {
        tdt_check(td_float_into_data(t, (float *)(void *)w, n), "read");
    } else if (k == KB) {
        bool *b = calloc((size_t)n + 1, sizeof *b);
        assert_non_null(b);
        tdt_check(td_bool_into_data(t, b, n), "read");
        for (int64_t i = 0; i < n; i++)
            w[i] = b[i] ? 1u : 0u;
        free(b);
    } else {
        tdt_check(td_int_into_data(t, (int32_t *)(void *)w, n), "read");
    }
    return w;
}

typedef struct bin_op {
    const char *name;
    bin_fn f;
    enum kind a, b, out;
} bin_op;

static const bin_op bin_ops[] = {
    { "float_add", td_float_add, KF, KF, KF },
    { "float_sub", td_float_sub, KF, KF, KF },
    { "float_mul", td_float_mul, KF, KF, KF },
    { "float_div", td_float_div, KF, KF, KF },
    { "float_powf", td_float_powf, KF, KF, KF },
    { "float_maximum", td_float_maximum, KF, KF, KF },
    { "float_minimum", td_float_minimum, KF, KF, KF },
    { "float_equal", td_float_equal, KF, KF, KB },
    { "float_greater", td_float_greater, KF, KF, KB },
    { "float_greater_equal", td_float_greater_equal, KF, KF, KB },
    { "float_lower", td_float_lower, KF, KF, KB },
    { "float_lower_equal", td_float_lower_equal, KF, KF, KB },
    { "int_add", td_int_add, KI, KI, KI },
    { "int_sub", td_int_sub, KI, KI, KI },
    { "int_mul", td_int_mul, KI, KI, KI },
    { "int_div", td_int_div, KI, KPOS, KI },
    { "int_remainder", td_int_remainder, KI, KPOS, KI },
    { "int_equal", td_int_equal, KPOS, KPOS, KB },
    { "int_greater", td_int_greater, KI, KI, KB },
    { "int_lower", td_int_lower, KI, KI, KB },
    { "bool_and", td_bool_and, KB, KB, KB },
    { "bool_or", td_bool_or, KB, KB, KB },
};

typedef struct shape_case {
    int na, nb;
    int64_t a[2], b[2];
} shape_case;

static const shape_case shapes[] = {
    { 1, 1, { 1 }, { 1 } },       { 1, 1, { 3 }, { 3 } },         { 1, 1, { 4 }, { 4 } },
    { 1, 1, { 5 }, { 5 } },       { 1, 1, { 17 }, { 17 } },       { 1, 1, { 4099 }, { 4099 } },
    { 2, 2, { 3, 7 }, { 3, 7 } }, { 1, 2, { 7 }, { 3, 7 } },      /* broadcasts over rows, columns, */
    { 2, 2, { 3, 1 }, { 3, 5 } }, { 2, 2, { 3, 1 }, { 1, 5 } },  /* both: ew.comp specialized */
    { 1, 1, { 4099 }, { 1 } },    { 1, 1, { 1 }, { 4099 } },      /* one broadcast element */
    { 2, 2, { 5, 3 }, { 1, 1 } }, { 2, 1, { 1, 1 }, { 17 } },
    { 1, 1, { 0 }, { 0 } },       { 1, 1, { 0 }, { 1 } },         /* empty */
};

static int64_t numel_of(const td_tensor *t)
{
    int64_t n = 0;
    tdt_check(td_tensor_numel(t, &n), "numel");
    return n;
}

static void compare(const char *what, const td_tensor *g, const td_tensor *v, enum kind k)
{
    const int64_t n = numel_of(g);
    assert_int_equal(n, numel_of(v));
    void *wg = read_words(g, k, n), *wv = read_words(v, k, n);
    if (memcmp(wg, wv, (size_t)n * 4u) != 0)
        fail_msg("%s: the vectorized shader differs from the generic one", what);
    free(wg);
    free(wv);
}

static void test_binary(void **state)
{
    (void)state;
    for (size_t o = 0; o < sizeof bin_ops / sizeof bin_ops[0]; o++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const bin_op *op = &bin_ops[o];
            const shape_case *sc = &shapes[s];
            td_tensor *a = make(op->a, sc->a, sc->na, 1 + s), *b = make(op->b, sc->b, sc->nb, 50 + s);
            td_tensor *g = NULL, *v = NULL;
            tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_GENERIC), "generic");
            tdt_check(op->f(a, b, &g), op->name);
            tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_AUTO), "auto");
            tdt_check(op->f(a, b, &v), op->name);
            compare(op->name, g, v, op->out);
            td_tensor_release(a);
            td_tensor_release(b);
            td_tensor_release(g);
            td_tensor_release(v);
        }
}

/* mask_where and mask_fill, float and int, with a, mask and value each full or one element. */
static void test_masks(void **state)
{
    (void)state;
    static const int64_t sizes[] = { 1, 3, 4, 5, 17, 4099 };
    const int64_t one[1] = { 1 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (unsigned bc = 0; bc < 8; bc++) {
            const int64_t *sh[3];
            for (int k = 0; k < 3; k++)
                sh[k] = (bc >> k) & 1u ? one : &sizes[s];
            for (int isint = 0; isint < 2; isint++) {
                const enum kind k = isint ? KI : KF;
                td_tensor *a = make(k, sh[0], 1, 3 + s), *m = make(KB, sh[1], 1, 7 + s), *c = make(k, sh[2], 1, 9 + s);
                td_tensor *g = NULL, *v = NULL, *gf = NULL, *vf = NULL;
                const tern_fn where = isint ? td_int_mask_where : td_float_mask_where;
                tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_GENERIC), "generic");
                /* mask_fill's mask must broadcast to a's shape */
                const bool fill = !((bc & 1u) && !(bc & 2u));
                tdt_check(where(a, m, c, &g), "mask_where");
                if (fill)
                    tdt_check(isint ? td_int_mask_fill(a, m, -77, &gf) : td_float_mask_fill(a, m, 2.5f, &gf), "fill");
                tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_AUTO), "auto");
                tdt_check(where(a, m, c, &v), "mask_where");
                compare("mask_where", g, v, k);
                if (fill) {
                    tdt_check(isint ? td_int_mask_fill(a, m, -77, &vf) : td_float_mask_fill(a, m, 2.5f, &vf), "fill");
                    compare("mask_fill", gf, vf, k);
                }
                td_tensor *ts[7] = { a, m, c, g, v, gf, vf };
                for (int t = 0; t < 7; t++)
                    if (ts[t] != NULL)
                        td_tensor_release(ts[t]);
            }
        }
}

typedef td_status (*un_fn)(const td_tensor *, td_tensor **);

static td_status powf_s(const td_tensor *a, td_tensor **out) { return td_float_powf_scalar(a, 1.7f, out); }
static td_status clamp_(const td_tensor *a, td_tensor **out) { return td_float_clamp(a, -0.5f, 0.75f, out); }
static td_status add_s(const td_tensor *a, td_tensor **out) { return td_float_add_scalar(a, 0.25f, out); }
static td_status mul_s(const td_tensor *a, td_tensor **out) { return td_float_mul_scalar(a, -3.0f, out); }

typedef struct un_op {
    const char *name;
    un_fn f;
    enum kind a, out;
} un_op;

static const un_op un_ops[] = {
    { "float_neg", td_float_neg, KF, KF },         { "float_abs", td_float_abs, KF, KF },
    { "float_exp", td_float_exp, KF, KF },         { "float_log", td_float_log, KF, KF },
    { "float_sqrt", td_float_sqrt, KF, KF },       { "float_sin", td_float_sin, KF, KF },
    { "float_cos", td_float_cos, KF, KF },         { "float_tanh", td_float_tanh, KF, KF },
    { "float_sigmoid", td_float_sigmoid, KF, KF }, { "float_relu", td_float_relu, KF, KF },
    { "float_gelu", td_float_gelu, KF, KF },       { "float_powf_scalar", powf_s, KF, KF },
    { "float_clamp", clamp_, KF, KF },             { "float_add_scalar", add_s, KF, KF },
    { "float_mul_scalar", mul_s, KF, KF },         { "float_into_int", td_float_into_int, KF, KI },
    { "int_into_float", td_int_into_float, KI, KF }, { "bool_into_float", td_bool_into_float, KB, KF },
    { "bool_into_int", td_bool_into_int, KB, KI }, { "bool_not", td_bool_not, KB, KB },
};

/* The unary ops: the pipeline specialized to the op (AUTO) against the runtime switch. */
static void test_unary(void **state)
{
    (void)state;
    static const int64_t sizes[] = { 0, 1, 5, 4099 };
    for (size_t o = 0; o < sizeof un_ops / sizeof un_ops[0]; o++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            const un_op *op = &un_ops[o];
            td_tensor *a = make(op->a, &sizes[s], 1, 21 + s), *g = NULL, *v = NULL;
            tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_GENERIC), "generic");
            tdt_check(op->f(a, &g), op->name);
            tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_AUTO), "auto");
            tdt_check(op->f(a, &v), op->name);
            compare(op->name, g, v, op->out);
            td_tensor_release(a);
            td_tensor_release(g);
            td_tensor_release(v);
        }
}

/* Host data for the fmath / iops checks: floats mostly in [-4, 4], with special values and
 * magnitudes far apart mixed in; ints in [-1000, 1000]; shift counts and exponents in [-3, 40]
 * (both sides of the valid ranges). A fixed LCG: the same values on every run. */
enum { SF, SI, SSH };

static td_tensor *make_special(int kind, const int64_t *shape, int ndim, uint32_t seed)
{
    static const float special[] = { 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 1e-40f, -1e-40f, 1e30f, -1e30f,
                                     3e38f, 8192.5f, -12345.678f, 2.5f, -2.5f, INFINITY, -INFINITY,
                                     NAN, 0.9999999f, 1.0000001f, 1e-7f, 7.0f };
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    float *f = malloc(sizeof(float) * (size_t)(n + 1));
    int32_t *w = malloc(sizeof(int32_t) * (size_t)(n + 1));
    assert_non_null(f);
    assert_non_null(w);
    uint32_t x = seed * 2654435761u + 12345u;
    for (int64_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        const uint32_t r = x >> 8;
        if (kind == SF)
            f[i] = i % 5 == 3 ? special[r % (sizeof special / sizeof special[0])]
                              : ((float)(r % 65536u) / 8192.0f - 4.0f) * (i % 7 == 1 ? 1000.0f : 1.0f);
        else if (kind == SI)
            w[i] = (int32_t)(r % 2001u) - 1000;
        else
            w[i] = (int32_t)(r % 44u) - 3;
    }
    td_tensor *t = NULL;
    if (kind == SF)
        tdt_check(td_float_from_data(vk, f, shape, ndim, &t), "float from data");
    else
        tdt_check(td_int_from_data(vk, w, shape, ndim, &t), "int from data");
    free(f);
    free(w);
    return t;
}

static td_status rem_s(const td_tensor *a, td_tensor **out) { return td_float_remainder_scalar(a, 1.5f, out); }
static td_status rem_sn(const td_tensor *a, td_tensor **out) { return td_float_remainder_scalar(a, -0.75f, out); }
static td_status and_s(const td_tensor *a, td_tensor **out) { return td_int_bitwise_and_scalar(a, 0x5a5, out); }
static td_status or_s(const td_tensor *a, td_tensor **out) { return td_int_bitwise_or_scalar(a, -77, out); }
static td_status xor_s(const td_tensor *a, td_tensor **out) { return td_int_bitwise_xor_scalar(a, 0x3c3c, out); }
static td_status shl_s(const td_tensor *a, td_tensor **out) { return td_int_bitwise_left_shift_scalar(a, 3, out); }
static td_status shl_big(const td_tensor *a, td_tensor **out) { return td_int_bitwise_left_shift_scalar(a, 33, out); }
static td_status shr_s(const td_tensor *a, td_tensor **out) { return td_int_bitwise_right_shift_scalar(a, 2, out); }
static td_status shr_neg(const td_tensor *a, td_tensor **out) { return td_int_bitwise_right_shift_scalar(a, -1, out); }
static td_status powi_s(const td_tensor *a, td_tensor **out) { return td_int_powi_scalar(a, 3, out); }
static td_status powi_neg(const td_tensor *a, td_tensor **out) { return td_int_powi_scalar(a, -1, out); }

typedef struct coded_op {
    const char *name;
    un_fn u;  /* a unary or scalar form, or */
    bin_fn b; /* a form on two tensors */
    int a, bk;
    enum kind out;
} coded_op;

static const coded_op coded_ops[] = {
    { "float_acos", td_float_acos, NULL, SF, 0, KF },       { "float_asin", td_float_asin, NULL, SF, 0, KF },
    { "float_atan", td_float_atan, NULL, SF, 0, KF },       { "float_tan", td_float_tan, NULL, SF, 0, KF },
    { "float_ceil", td_float_ceil, NULL, SF, 0, KF },       { "float_floor", td_float_floor, NULL, SF, 0, KF },
    { "float_round", td_float_round, NULL, SF, 0, KF },     { "float_trunc", td_float_trunc, NULL, SF, 0, KF },
    { "float_erf", td_float_erf, NULL, SF, 0, KF },         { "float_log1p", td_float_log1p, NULL, SF, 0, KF },
    { "float_is_nan", td_float_is_nan, NULL, SF, 0, KB },   { "float_is_inf", td_float_is_inf, NULL, SF, 0, KB },
    { "float_remainder_scalar", rem_s, NULL, SF, 0, KF },   { "float_remainder_scalar -", rem_sn, NULL, SF, 0, KF },
    { "float_atan2", NULL, td_float_atan2, SF, SF, KF },    { "float_remainder", NULL, td_float_remainder, SF, SF, KF },
    { "int_bitwise_and_scalar", and_s, NULL, SI, 0, KI },   { "int_bitwise_or_scalar", or_s, NULL, SI, 0, KI },
    { "int_bitwise_xor_scalar", xor_s, NULL, SI, 0, KI },   { "int_bitwise_left_shift_scalar", shl_s, NULL, SI, 0, KI },
    { "int_bitwise_left_shift_scalar 33", shl_big, NULL, SI, 0, KI },
    { "int_bitwise_right_shift_scalar", shr_s, NULL, SI, 0, KI },
    { "int_bitwise_right_shift_scalar -1", shr_neg, NULL, SI, 0, KI },
    { "int_powi_scalar", powi_s, NULL, SI, 0, KI },         { "int_powi_scalar -1", powi_neg, NULL, SSH, 0, KI },
    { "int_bitwise_and", NULL, td_int_bitwise_and, SI, SI, KI }, { "int_bitwise_or", NULL, td_int_bitwise_or, SI, SI, KI },
    { "int_bitwise_xor", NULL, td_int_bitwise_xor, SI, SI, KI },
    { "int_bitwise_left_shift", NULL, td_int_bitwise_left_shift, SI, SSH, KI },
    { "int_bitwise_right_shift", NULL, td_int_bitwise_right_shift, SI, SSH, KI },
    { "int_powi", NULL, td_int_powi, SSH, SSH, KI },
};

/* fmath.comp and iops.comp: the pipeline specialized to the op (AUTO) against the runtime switch
 * (GENERIC), bit for bit; the tensor forms also broadcast. */
static void test_fmath_iops(void **state)
{
    (void)state;
    static const shape_case cshapes[] = {
        { 1, 1, { 0 }, { 0 } },       { 1, 1, { 1 }, { 1 } },   { 1, 1, { 5 }, { 5 } },
        { 1, 1, { 4099 }, { 4099 } }, { 2, 2, { 3, 1 }, { 1, 5 } }, { 1, 2, { 1 }, { 4, 9 } },
    };
    for (size_t o = 0; o < sizeof coded_ops / sizeof coded_ops[0]; o++)
        for (size_t s = 0; s < sizeof cshapes / sizeof cshapes[0]; s++) {
            const coded_op *op = &coded_ops[o];
            const shape_case *sc = &cshapes[s];
            if (op->u != NULL && sc->na != sc->nb)
                continue; /* the broadcasts: tensor forms only */
            td_tensor *a = make_special(op->a, sc->a, sc->na, (uint32_t)(1 + s + 7 * o)), *b = NULL;
            if (op->b != NULL)
                b = make_special(op->bk, sc->b, sc->nb, (uint32_t)(100 + s + 7 * o));
            td_tensor *g = NULL, *v = NULL;
            tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_GENERIC), "generic");
            tdt_check(op->u != NULL ? op->u(a, &g) : op->b(a, b, &g), op->name);
            tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_AUTO), "auto");
            tdt_check(op->u != NULL ? op->u(a, &v) : op->b(a, b, &v), op->name);
            compare(op->name, g, v, op->out);
            td_tensor_release(a);
            if (b != NULL)
                td_tensor_release(b);
            td_tensor_release(g);
            td_tensor_release(v);
        }
    /* the triangular masks (iops.comp without inputs) */
    static const int64_t mshape[2][3] = { { 5, 7, 0 }, { 2, 4, 6 } };
    static const int64_t offsets[] = { -3, -1, 0, 2, 9, INT64_MAX, INT64_MIN };
    for (int m = 0; m < 2; m++)
        for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++)
            for (int tri = 0; tri < 2; tri++) {
                const int nd = m == 0 ? 2 : 3;
                td_tensor *g = NULL, *v = NULL;
                tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_GENERIC), "generic");
                tdt_check(tri ? td_bool_triu_mask(vk, mshape[m], nd, offsets[k], &g)
                              : td_bool_tril_mask(vk, mshape[m], nd, offsets[k], &g), "mask");
                tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_AUTO), "auto");
                tdt_check(tri ? td_bool_triu_mask(vk, mshape[m], nd, offsets[k], &v)
                              : td_bool_tril_mask(vk, mshape[m], nd, offsets[k], &v), "mask");
                compare(tri ? "bool_triu_mask" : "bool_tril_mask", g, v, KB);
                td_tensor_release(g);
                td_tensor_release(v);
            }
}

static void test_switch_errors(void **state)
{
    (void)state;
    assert_int_equal(td_vulkan_set_elementwise_kernel(vk, (td_vulkan_elementwise_kernel)7), TD_E_INVALID);
    assert_int_equal(td_vulkan_set_elementwise_kernel(NULL, TD_VULKAN_ELEMENTWISE_AUTO) != TD_OK, 1);
    td_device *cpu = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "cpu");
    assert_int_equal(td_vulkan_set_elementwise_kernel(cpu, TD_VULKAN_ELEMENTWISE_AUTO), TD_E_BACKEND_MISMATCH);
    td_device_release(cpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_fmath_iops),
        cmocka_unit_test(test_switch_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
