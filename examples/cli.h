/* Shared by the training examples: the pieces of their command lines that are the same in
 * each (numbers in a range, the --device name, the backends listed by --help), and the
 * clock and median order their timings use. */
#ifndef EXAMPLES_CLI_H
#define EXAMPLES_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "td_ops.h"

/* A whole decimal integer in [lo, hi] into *out: 0, else -1 (nothing written). */
static inline int ex_parse_long(const char *v, long lo, long hi, long *out)
{
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < lo || n > hi)
        return -1;
    *out = n;
    return 0;
}

/* A whole number in [lo, hi] into *out (NaN is outside every range): 0, else -1. */
static inline int ex_parse_double(const char *v, double lo, double hi, double *out)
{
    char *end = NULL;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || !(x >= lo && x <= hi))
        return -1;
    *out = x;
    return 0;
}

/* "PROG: bad value for '--opt': 'VALUE'" for the option getopt_long just returned: the value
 * comes as the next argument (--opt VALUE: argv[optind - 1] is the value itself) or after
 * '=' (--opt=VALUE); either way the message names the option, then the value. */
static inline void ex_bad_value(const char *prog, char *const *argv, int optind, const char *optarg)
{
    const char *opt = argv[optind - 1];
    size_t len = strlen(opt);
    if (opt == optarg && optind >= 2) {
        opt = argv[optind - 2];
        len = strlen(opt);
    } else if (strchr(opt, '=') != NULL) {
        len = (size_t)(strchr(opt, '=') - opt);
    }
    fprintf(stderr, "%s: bad value for '%.*s': '%s' (see --help)\n", prog, (int)len, opt, optarg);
}

/* The backends of this build (autodiff aside), on one line after what f holds: for --help. */
static inline void ex_print_backends(FILE *f)
{
    for (int b = 0; b < (int)TD_BACKEND_COUNT; b++)
        if (b != (int)TD_BACKEND_AUTODIFF && td_backend_exists((td_backend)b))
            fprintf(f, " %s%s", td_backend_name((td_backend)b), td_backend_enabled((td_backend)b) ? "" : " (disabled)");
    fprintf(f, "\n");
}

/* Whether name is a backend of this build (autodiff aside); else prog says so on stderr,
 * naming the valid ones: a usage error. */
static inline int ex_backend_known(const char *prog, const char *name)
{
    for (int b = 0; b < (int)TD_BACKEND_COUNT; b++) {
        const td_backend be = (td_backend)b;
        if (be != TD_BACKEND_AUTODIFF && td_backend_enabled(be) && strcmp(td_backend_name(be), name) == 0)
            return 1;
    }
    fprintf(stderr, "%s: no backend called '%s' in this build; valid:", prog, name);
    for (int b = 0; b < (int)TD_BACKEND_COUNT; b++) {
        const td_backend be = (td_backend)b;
        if (be != TD_BACKEND_AUTODIFF && td_backend_enabled(be))
            fprintf(stderr, " %s", td_backend_name(be));
    }
    fprintf(stderr, " (see --help)\n");
    return 0;
}

/* Seconds on the monotonic clock, for step times. */
static inline double ex_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* splitmix64 (Steele, Lea and Flood): the examples' seeded random stream (batches, shuffles,
 * sampling), the same numbers on every platform. */
static inline uint64_t ex_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* qsort's order for doubles (medians of step times). */
static inline int ex_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
