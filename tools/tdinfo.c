/* tdinfo: what this tdispatch build has: its backends, their devices, and how many ops each
 * implements (like `vulkaninfo --summary`). --ops adds the op x backend list. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_backend_api.h"
#include "td_ops.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tdinfo [--ops] [--help]\n"
               "  Prints the version, the backends built in, each backend's devices (name, type,\n"
               "  memory, driver), the default device (TD_DEVICE=name[:index], else the best\n"
               "  device by type) and how many ops each backend implements.\n"
               "  --ops   also list every op with the backends that implement it\n"
               "  --help  this text\n");
}

/* devices: how many the backend has (the hint to select another only when there is one). */
static void print_device(const td_device_info *d, int devices)
{
    printf("  %s:%d  %s\n", td_backend_name(d->backend), d->index, d->name);
    printf("      type %s, %.1f GiB, %s\n", d->type, (double)d->memory_bytes / (1024.0 * 1024.0 * 1024.0),
           d->driver);
    if (d->software && devices > 1)
        printf("      a software implementation: correct, but slow (select another device with "
               "TD_%s_DEVICE=<index>)\n",
               d->backend == TD_BACKEND_VULKAN ? "VULKAN" : "<BACKEND>");
    else if (d->software)
        printf("      a software implementation: correct, but slow\n");
}

/* TD_<BACKEND>_DEVICE=n makes device n the one programs open as index 0: say which, and
 * fail on a value that is not an index of this backend (the library refuses it too). */
static int check_device_env(td_backend be, int devices)
{
    char var[64] = "TD_";
    size_t k = 3;
    for (const char *c = td_backend_name(be); *c != '\0' && k + sizeof "_DEVICE" < sizeof var; c++)
        var[k++] = (char)((*c >= 'a' && *c <= 'z') ? *c - 'a' + 'A' : *c);
    memcpy(var + k, "_DEVICE", sizeof "_DEVICE");
    const char *env = getenv(var);
    if (env == NULL || env[0] == '\0')
        return 0;
    td_device *d = NULL;
    const td_status st = td_device_open(be, 0, &d);
    td_device_info info;
    const int ok = st == TD_OK && td_device_info_of(d, &info) == TD_OK;
    td_device_release(d);
    if (!ok) {
        fprintf(stderr, "tdinfo: %s=%s: %s\n", var, env, td_last_error());
        return 1;
    }
    printf("  %s=%s: programs opening %s:0 get %s:%d of these %d\n", var, env, td_backend_name(be),
           td_backend_name(be), info.index, devices);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "ops", no_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int list_ops = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': list_ops = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "tdinfo: unknown option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tdinfo: unexpected argument '%s' (tdinfo takes options only)\n", argv[optind]);
        usage(stderr);
        return 2;
    }

    printf("tdispatch %s\n", td_version());
    /* Backend modules (TD_BACKEND_PATH, docs/adding-a-backend.md): loaded by the first
     * question about backends, so counted first. */
    const int nmod = td_backend_module_count();
    bool loaded[TD_BACKEND_COUNT] = { false };
    for (int i = 0; i < nmod; i++) {
        td_backend_module_info mi;
        if (td_backend_module_info_get(i, &mi) == TD_OK)
            loaded[mi.backend] = true;
    }
    printf("backends built in:");
    for (int b = 0; b < TD_BACKEND_AUTODIFF; b++)
        if (td_backend_enabled((td_backend)b) && !loaded[b])
            printf(" %s", td_backend_name((td_backend)b));
    printf(" (autodiff wraps each)\n");
    printf("backend modules: %d loaded (backend ABI version %d)\n", nmod, TD_BACKEND_ABI_VERSION);
    for (int i = 0; i < nmod; i++) {
        td_backend_module_info mi;
        if (td_backend_module_info_get(i, &mi) != TD_OK)
            continue;
        int nd = 0;
        const bool counted = td_device_count(mi.backend, &nd) == TD_OK;
        printf("  %s (id %d): %s, ABI version %u, %d device%s\n", mi.name, (int)mi.backend, mi.path, mi.abi_version,
               counted ? nd : 0, nd == 1 ? "" : "s");
    }
    printf("distributed ops: %s\n", td_dist_available() ? "MPI" : "not in this build (no MPI)");

    int rc = 0;
    for (int b = 0; b < TD_BACKEND_AUTODIFF; b++) {
        const td_backend be = (td_backend)b;
        if (!td_backend_enabled(be))
            continue;
        int n = 0;
        td_status st = td_device_count(be, &n);
        if (st != TD_OK) {
            printf("%s: cannot count devices: %s (%s)\n", td_backend_name(be), td_status_name(st), td_last_error());
            rc = 1;
            continue;
        }
        if (n == 0) {
            /* opening device 0 says why there is none */
            td_device *d = NULL;
            st = td_device_open(be, 0, &d);
            td_device_release(d);
            printf("%s: no devices (%s)\n", td_backend_name(be), st != TD_OK ? td_last_error() : "none found");
            continue;
        }
        printf("%s: %d device%s\n", td_backend_name(be), n, n == 1 ? "" : "s");
        if (check_device_env(be, n) != 0)
            rc = 1;
        for (int i = 0; i < n; i++) {
            td_device_info info;
            st = td_device_info_get(be, i, &info);
            if (st == TD_OK) {
                print_device(&info, n);
            } else {
                printf("  %s:%d  %s (%s)\n", td_backend_name(be), i, td_status_name(st), td_last_error());
                rc = 1;
            }
        }
    }

    /* The device programs open when told none (td_default_device): the one TD_DEVICE names,
     * else the first in the default order; and why. A TD_DEVICE naming nothing is an error. */
    td_device_choice choice;
    const td_status cs = td_default_device_choice(&choice);
    if (cs == TD_OK) {
        printf("default device: %s:%d (%s)\n", td_backend_name(choice.backend), choice.index, choice.reason);
    } else {
        printf("default device: none: %s (%s)\n", td_status_name(cs), td_last_error());
        rc = 1;
    }

    /* The dtype table of each backend (docs/dtypes.md): what it stores, what its kernels
     * compute, what its generated arms run via f32 (from the specs), and what device 0 runs
     * on dedicated units (the backend's dtype_accelerated hook: cpuid on the CPU, the
     * device's features on Vulkan). */
    for (int b = 0; b < TD_BACKEND_AUTODIFF; b++) {
        const td_backend be = (td_backend)b;
        if (!td_backend_enabled(be))
            continue;
        printf("%s dtypes:  stores  computes  via f32  accelerated (device 0)\n", td_backend_name(be));
        for (int d = 0; d < TD_DTYPE_COUNT; d++) {
            const unsigned u = td_backend_dtype_usage(be, (td_dtype)d);
            if (u & TD_USAGE_STORES)
                printf("  %-6s   %-6s  %-8s  %-7s  %s\n", td_dtype_name((td_dtype)d), "yes",
                       (u & TD_USAGE_COMPUTES) ? "yes" : "-", (u & TD_USAGE_VIA_F32) ? "yes" : "-",
                       (u & TD_USAGE_ACCELERATED) ? "yes" : "-");
        }
    }

    int in_specs = 0;
    for (int op = 0; op < TD_OP_COUNT; op++)
        in_specs += td_op_exists((td_op)op);
    printf("ops: %d in the specs; run by", in_specs);
    for (int b = 0; b <= TD_BACKEND_AUTODIFF; b++) {
        const td_backend be = (td_backend)b;
        if (!td_backend_enabled(be))
            continue;
        int native = 0, composite = 0;
        for (int op = 0; op < TD_OP_COUNT; op++) {
            const td_support s = td_backend_support(be, (td_op)op);
            native += s == TD_SUPPORT_NATIVE;
            composite += s == TD_SUPPORT_COMPOSITE;
        }
        printf("%s %s %d (%d native)", b ? "," : "", td_backend_name(be), native + composite, native);
    }
    printf("\n");
    if (list_ops) { /* SUPPORT.md's cells: a backend name, with '*' where it runs a composite */
        printf("  (op: the backends that run it; * by its decomposition)\n");
        for (int op = 0; op < TD_OP_COUNT; op++) {
            if (!td_op_exists((td_op)op))
                continue;
            printf("  %-24s", td_op_name((td_op)op));
            for (int b = 0; b < TD_BACKEND_AUTODIFF; b++) {
                const td_support s = td_backend_support((td_backend)b, (td_op)op);
                if (s != TD_SUPPORT_NONE)
                    printf(" %s%s", td_backend_name((td_backend)b), s == TD_SUPPORT_COMPOSITE ? "*" : "");
            }
            printf("\n");
        }
    }
    return rc;
}
