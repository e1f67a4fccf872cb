/* A tour of tdispatch: runs a few ops of every family on each enabled backend (and
 * on autodiff wrapping it), prints what it did, and shows what an error looks like.
 *   tour [--backend=NAME] [--help] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_ops.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        td_status st_ = (call);                                                            \
        if (st_ != TD_OK) {                                                                \
            fprintf(stderr, "%s failed: %s: %s\n", #call, td_status_name(st_), td_last_error()); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static void print_tensor(const char *label, const td_tensor *t)
{
    int64_t dims[TD_MAX_DIMS], n;
    int nd;
    td_dtype dt;
    CHECK(td_tensor_shape(t, dims, &nd));
    CHECK(td_tensor_numel(t, &n));
    CHECK(td_tensor_dtype(t, &dt));
    printf("  %-28s shape [", label);
    for (int i = 0; i < nd; i++)
        printf(i ? ", %lld" : "%lld", (long long)dims[i]);
    printf("] ");
    if (dt == TD_F32) {
        float *v = malloc(sizeof(float) * (size_t)n);
        CHECK(td_float_into_data(t, v, n));
        for (int64_t i = 0; i < n && i < 8; i++)
            printf("%s%.4g", i ? " " : "", (double)v[i]);
        free(v);
    } else if (dt == TD_I32) {
        int32_t *v = malloc(sizeof(int32_t) * (size_t)n);
        CHECK(td_int_into_data(t, v, n));
        for (int64_t i = 0; i < n && i < 8; i++)
            printf("%s%d", i ? " " : "", v[i]);
        free(v);
    } else {
        bool *v = malloc(sizeof(bool) * (size_t)n);
        CHECK(td_bool_into_data(t, v, n));
        for (int64_t i = 0; i < n && i < 8; i++)
            printf("%s%s", i ? " " : "", v[i] ? "true" : "false");
        free(v);
    }
    printf("%s\n", n > 8 ? " ..." : "");
}

static void tour(td_device *dev, const char *name)
{
    printf("%s\n", name);
    static const float xs[] = { 1, -2, 3, -4, 5, -6 };
    static const int64_t s23[] = { 2, 3 }, s3[] = { 3 }, s32[] = { 3, 2 };
    static const float bias[] = { 0.5f, 0.25f, 0.125f };
    td_tensor *x, *b, *y, *r, *w, *m, *s, *am, *gt, *ci, *sl, *parts[2], *cat;
    CHECK(td_float_from_data(dev, xs, s23, 2, &x));
    CHECK(td_float_from_data(dev, bias, s3, 1, &b));
    print_tensor("x = from_data", x);
    CHECK(td_float_add(x, b, &y));
    print_tensor("x + bias (broadcast)", y);
    CHECK(td_float_relu(y, &r));
    print_tensor("relu", r);
    CHECK(td_float_random(dev, s32, 2, TD_NORMAL, 0.0f, 1.0f, 42, &w));
    print_tensor("w = random normal, seed 42", w);
    CHECK(td_float_matmul(r, w, &m));
    print_tensor("relu(x + bias) @ w", m);
    CHECK(td_float_sum_dim(m, -1, &s));
    print_tensor("sum over the last dim", s);
    CHECK(td_float_argmax(x, 1, &am));
    print_tensor("argmax(x, dim 1)", am);
    CHECK(td_float_greater(x, b, &gt));
    print_tensor("x > bias", gt);
    CHECK(td_float_into_int(x, &ci));
    static const int64_t st[] = { 0, 1 }, en[] = { 2, 3 };
    CHECK(td_int_slice(ci, st, 2, en, 2, &sl));
    print_tensor("int(x)[:, 1:3]", sl);
    parts[0] = x;
    parts[1] = r;
    CHECK(td_float_cat((const td_tensor *const *)parts, 2, 0, &cat));
    print_tensor("cat([x, relu], dim 0)", cat);
    CHECK(td_sync(dev));

    td_tensor *bad = NULL;
    td_status st_bad = td_float_matmul(x, x, &bad);
    printf("  %-28s %s: %s\n", "x @ x (an error)", td_status_name(st_bad), td_last_error());

    td_tensor *all[] = { x, b, y, r, w, m, s, am, gt, ci, sl, cat };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
}

/* Quantized weights (docs/dtypes.md section 8): w [4, 32] in q4_0, ggml's blocks of 32
 * values in 18 bytes, times f32 activations by float_matmul_nt (x @ w^T, the layout ggml
 * keeps weights in). A backend that does not store q4_0 says so. */
static void tour_quantized(td_device *dev)
{
    float xv[2 * 32], wv[4 * 32];
    for (int i = 0; i < 2 * 32; i++)
        xv[i] = (float)((i * 7) % 11 - 5) / 5.0f;
    for (int i = 0; i < 4 * 32; i++)
        wv[i] = (float)((i * 5) % 13 - 6) / 6.0f;
    static const int64_t sx[] = { 2, 32 }, sw[] = { 4, 32 };
    td_tensor *x, *w, *wq = NULL, *y = NULL, *yf, *bad = NULL;
    CHECK(td_float_from_data(dev, xv, sx, 2, &x));
    CHECK(td_float_from_data(dev, wv, sw, 2, &w));
    td_status st = td_float_quantize(w, TD_Q4_0, &wq);
    if (st != TD_OK) {
        printf("  %-28s %s: %s\n", "quantize w to q4_0", td_status_name(st), td_last_error());
    } else {
        unsigned char blocks[4 * 18];
        CHECK(td_float_into_data_dtype(wq, TD_Q4_0, blocks, (int64_t)sizeof blocks));
        printf("  %-28s 128 values in %zu bytes; block 0: d = f16 0x%02x%02x\n", "w in q4_0", sizeof blocks,
               blocks[1], blocks[0]);
        CHECK(td_float_matmul_nt(x, wq, &y));
        print_tensor("x @ q4_0(w)^T", y);
        CHECK(td_float_matmul_nt(x, w, &yf));
        print_tensor("x @ w^T in f32", yf);
        td_status st_bad = td_float_exp(wq, &bad);
        printf("  %-28s %s: %s\n", "exp(q4_0 w) (an error)", td_status_name(st_bad), td_last_error());
        td_tensor_release(yf);
    }
    td_tensor_release(x);
    td_tensor_release(w);
    td_tensor_release(wq);
    td_tensor_release(y);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: tour [--backend=NAME] [--help]\n"
               "  Runs ops of every family on each backend of this build with a device, and on\n"
               "  autodiff over it, printing each result and one error.\n"
               "  --backend=NAME  only this backend (");
    const char *sep = "";
    for (int k = 0; k < TD_BACKEND_AUTODIFF; k++) {
        if (!td_backend_exists((td_backend)k))
            continue;
        fprintf(f, "%s%s%s", sep, td_backend_name((td_backend)k),
                td_backend_enabled((td_backend)k) ? "" : " (not built)");
        sep = ", ";
    }
    fprintf(f, ")\n  --help          this text\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "backend", required_argument, NULL, 'b' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *only = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': only = optarg; break;
        case 'h': usage(stdout); return 0;
        case ':': fprintf(stderr, "tour: option '%s' needs a value\n", argv[optind - 1]); return 2;
        default:
            fprintf(stderr, "tour: unknown option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tour: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    int known = only == NULL;
    for (int k = 0; k < TD_BACKEND_AUTODIFF && !known; k++)
        known = strcmp(only, td_backend_name((td_backend)k)) == 0;
    if (!known) {
        fprintf(stderr, "tour: no backend called '%s'\n", only);
        usage(stderr);
        return 2;
    }

    printf("tdispatch %s tour\n", td_version());
    for (int k = 0; k < TD_BACKEND_AUTODIFF; k++) {
        td_backend be = (td_backend)k;
        if (!td_backend_exists(be) || (only != NULL && strcmp(only, td_backend_name(be)) != 0))
            continue;
        if (!td_backend_enabled(be)) {
            printf("%s: not in this build\n", td_backend_name(be));
            continue;
        }
        td_device *dev, *ad;
        td_status st = td_device_open(be, 0, &dev);
        if (st != TD_OK) { /* the message names the index (TD_<BACKEND>_DEVICE may have picked it) */
            printf("%s: no device (%s)\n", td_backend_name(be), td_last_error());
            continue;
        }
        td_device_info info;
        CHECK(td_device_info_of(dev, &info));
        printf("%s:%d is %s (%s)%s\n", td_backend_name(be), info.index, info.name, info.type,
               info.software ? ", a software implementation: slow" : "");
        char label[64];
        snprintf(label, sizeof label, "backend %s", td_backend_name(be));
        tour(dev, label);
        tour_quantized(dev);
        CHECK(td_device_autodiff(dev, TD_CHECKPOINT_NONE, &ad));
        snprintf(label, sizeof label, "backend autodiff(%s)", td_backend_name(be));
        tour(ad, label);
        td_device_release(ad);
        td_device_release(dev);
    }
    printf("live objects at exit: %ld\n", td_testing_live_objects());
    return td_testing_live_objects() == 0 ? 0 : 1;
}
