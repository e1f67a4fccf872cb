/* examples/gpt_model.h's other ways of holding the linear weights (test_generate checks the
 * f32 [in, out] step against a plain C forward): [out, in] through td_float_matmul_nt, read
 * from the GGUF file gpt_write_gguf wrote (f32, q8_0, q4_0) or made in memory (gpt_quantized,
 * bench_generate's rows). The f32 [out, in] logits must equal the [in, out] ones (another
 * kernel, the weights transposed: 1e-4); the quantized ones must differ from f32 by the
 * quantization's error, neither zero (the f32 weights ran after all) nor large (a weight in
 * the wrong layout gives logits of another model), and a file and the model in memory give
 * the same. And the loader refuses files that do not hold the model their metadata says. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../examples/gpt_model.h"
#include "tdt.h"

static td_device *dev, *ad;

/* width 32: one q8_0 / q4_0 block per row of a square weight */
enum { V = 13, T = 12, L = 2, H = 2, D = 32 };

#define tdt_check_ok(call) tdt_check((call), #call)

/* Greedy-free: the logits of every step of a fixed text, prompt 3 then one token a step. */
static void run_text(const gpt *g, float out[T - 2][V])
{
    const int32_t text[T] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8 };
    td_tensor *kc[L] = { NULL }, *vc[L] = { NULL };
    tdt_check_ok(gpt_step(g, dev, text, 3, 0, kc, vc, out[0]));
    for (int n = 4; n <= T; n++)
        tdt_check_ok(gpt_step(g, dev, text + n - 1, 1, n - 1, kc, vc, out[n - 3]));
    gpt_clear_cache(kc, L);
    gpt_clear_cache(vc, L);
}

static double largest_difference(float a[T - 2][V], float b[T - 2][V])
{
    double worst = 0.0;
    for (int i = 0; i < T - 2; i++)
        for (int j = 0; j < V; j++)
            worst = fmax(worst, fabs((double)a[i][j] - b[i][j]));
    return worst;
}

static void test_out_in_layouts_match_the_f32_step(void **state)
{
    (void)state;
    gpt g, gt, gf, q8, q4, f8;
    tdt_check_ok(gpt_random(dev, V, T, L, H, D, 11, &g));
    static float base[T - 2][V], other[T - 2][V], r8[T - 2][V], r4[T - 2][V], file8[T - 2][V];
    run_text(&g, base);
    double spread = 0.0;
    for (int j = 0; j < V; j++)
        spread = fmax(spread, fabs((double)base[T - 3][j] - base[T - 3][0]));
    assert_true(spread > 1.0); /* logits far from constant: a wrong layout would show */

    /* f32 [out, in]: in memory, and through an f32 GGUF file */
    tdt_check_ok(gpt_quantized(&g, TD_F32, &gt));
    assert_int_equal(gt.nt, 1);
    run_text(&gt, other);
    const double d_mem = largest_difference(base, other);
    tdt_check_ok(gpt_write_gguf(&g, "gpt_model_f32.gguf", TD_F32));
    tdt_check_ok(gpt_load("gpt_model_f32.gguf", dev, "test_gpt_model", &gf));
    assert_int_equal(gf.nt, 1);
    run_text(&gf, other);
    const double d_file = largest_difference(base, other);

    /* q8_0 and q4_0 in memory; q8_0 through a file (the same blocks: the same logits) */
    tdt_check_ok(gpt_quantized(&g, TD_Q8_0, &q8));
    tdt_check_ok(gpt_quantized(&g, TD_Q4_0, &q4));
    td_dtype d = TD_F32;
    tdt_check_ok(td_tensor_dtype(q8.block[1][GPT_FC2_W], &d));
    assert_int_equal(d, TD_Q8_0);
    tdt_check_ok(td_tensor_dtype(q4.tail[GPT_HEAD], &d));
    assert_int_equal(d, TD_Q4_0);
    run_text(&q8, r8);
    run_text(&q4, r4);
    tdt_check_ok(gpt_write_gguf(&g, "gpt_model_q8_0.gguf", TD_Q8_0));
    tdt_check_ok(gpt_load("gpt_model_q8_0.gguf", dev, "test_gpt_model", &f8));
    assert_int_equal(f8.wdtype, TD_Q8_0);
    run_text(&f8, file8);
    const double e8 = largest_difference(base, r8), e4 = largest_difference(base, r4);
    const double e8_file = largest_difference(r8, file8);
    print_message("f32 [out, in] against [in, out]: %.3g in memory, %.3g through GGUF; q8_0 %.3g, q4_0 %.3g from "
                  "f32 (logits spread %.3g); q8_0 file against memory %.3g\n",
                  d_mem, d_file, e8, e4, spread, e8_file);
    gpt_free(&g);
    gpt_free(&gt);
    gpt_free(&gf);
    gpt_free(&q8);
    gpt_free(&q4);
    gpt_free(&f8);
    remove("gpt_model_f32.gguf");
    remove("gpt_model_q8_0.gguf");
    if (!(d_mem <= 1e-4 && d_file <= 1e-4))
        fail_msg("f32 [out, in] logits differ from [in, out]: %g (memory), %g (file)", d_mem, d_file);
    /* q4_0 keeps 4 bits a weight, q8_0 8: errors of a few hundredths to tenths of logits a few
     * units apart; q8_0 well below q4_0; neither zero */
    assert_true(e8 > 1e-5 && e8 < 0.1 * spread);
    assert_true(e4 > e8 && e4 < 0.5 * spread);
    assert_true(e8_file == 0.0);
}

/* A file whose metadata claims another shape than its tensors have: refused (TD_E_SHAPE),
 * nothing held; one without train_gpt's metadata: TD_E_INVALID. */
static void test_load_refuses_files_of_another_model(void **state)
{
    (void)state;
    gpt g, h;
    tdt_check_ok(gpt_random(dev, V, T, L, H, D, 12, &g));
    g.width = 2 * D; /* the metadata says 64, the tensors are 32 wide */
    tdt_check_ok(gpt_write_gguf(&g, "gpt_model_bad.gguf", TD_F32));
    g.width = D;
    assert_int_equal(gpt_load("gpt_model_bad.gguf", dev, "test_gpt_model", &h), TD_E_SHAPE);
    assert_null(h.block[0][GPT_WQ]);
    assert_null(h.tail[GPT_WTE]);
    gpt q;
    tdt_check_ok(gpt_quantized(&g, TD_Q8_0, &q));
    assert_int_equal(gpt_save(&q, "gpt_model_never.safetensors"), TD_E_INVALID); /* [out, in]: not train_gpt's */
    assert_int_equal(gpt_quantized(&g, TD_F16, &h), TD_E_INVALID);
    gpt_free(&q);
    if (!td_safetensors_available()) { /* reading safetensors needs cJSON */
        gpt_free(&g);
        remove("gpt_model_bad.gguf");
        return;
    }
    g.context = T + 1; /* a position table shorter than the context */
    tdt_check_ok(gpt_save(&g, "gpt_model_bad.safetensors"));
    g.context = T;
    assert_int_equal(gpt_load("gpt_model_bad.safetensors", dev, "test_gpt_model", &h), TD_E_SHAPE);
    const char *names[] = { "wte" };
    td_tensor *ts[] = { g.tail[GPT_WTE] };
    tdt_check_ok(td_safetensors_save("gpt_model_nometa.safetensors", names, ts, 1, NULL, 0));
    assert_int_equal(gpt_load("gpt_model_nometa.safetensors", dev, "test_gpt_model", &h), TD_E_INVALID);
    gpt_free(&g);
    remove("gpt_model_bad.gguf");
    remove("gpt_model_bad.safetensors");
    remove("gpt_model_nometa.safetensors");
}

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &dev, &ad, NULL);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_out_in_layouts_match_the_f32_step),
        TDT_TEST(test_load_refuses_files_of_another_model),
    };
    return cmocka_run_group_tests_name("gpt_model", tests, setup, teardown);
}
