/* Row conversions f16 / bf16 <-> f32 (internal, not installed): n elements from src to dst,
 * bit for bit what td_half.h's scalar functions give for every input (NaN payloads, signalling
 * NaNs, subnormals, ties, overflow), whichever path runs. Any alignment; src and dst must not
 * overlap. n == 0 does nothing.
 *
 * Paths, chosen once at run time from what the processor reports (cpuid through libgcc),
 * and each one selectable for the tests:
 *   portable   the td_half.h functions in a loop (every machine);
 *   avx2       F16C vcvtph2ps / vcvtps2ph (rounding imm 0: nearest even) 8 lanes, bf16 by
 *              integer round-to-nearest-even in AVX2 registers;
 *   avx512     AVX-512F vcvtph2ps / vcvtps2ph 16 lanes, bf16 by the same integer rounding
 *              (AVX-512BW for the 32 -> 16 bit narrowing), masked tails;
 *   avx512bf16 as avx512, but f32 -> bf16 by AVX-512 BF16's vcvtneps2bf16, whose flushed
 *              subnormal-input lanes are redone with the integer rounding.
 * TD_CPU_CAPABILITY=default / avx2 lowers the choice as for the cpu kernels. */
#ifndef TD_CONVERT_H
#define TD_CONVERT_H

#include <stdbool.h>
#include <stddef.h>

void td_f16_to_f32_row(const void *src, void *dst, size_t n);
void td_f32_to_f16_row(const void *src, void *dst, size_t n);
void td_bf16_to_f32_row(const void *src, void *dst, size_t n);
void td_f32_to_bf16_row(const void *src, void *dst, size_t n);

/* c = a + b for n f16 (bf16) values: each pair widened to f32 in registers, added, the sum
 * rounded once (nearest even), as td_half.h's functions around an f32 add give it. The
 * pattern of the 16-bit elementwise kernels (and bench_dtypes' "add"); c may be a or b. */
void td_f16_add_row(const void *a, const void *b, void *c, size_t n);
void td_bf16_add_row(const void *a, const void *b, void *c, size_t n);

enum {
    TD_CONVERT_PORTABLE = 0,
    TD_CONVERT_AVX2 = 1,
    TD_CONVERT_AVX512 = 2,
    TD_CONVERT_AVX512BF16 = 3,
    TD_CONVERT_PATHS = 4
};

/* Whether this processor (and build) can run a path. */
bool td_convert_path_available(int path);
/* The path the row functions use: the best available one unless td_convert_force set one. */
int td_convert_path(void);
/* Forces a path (for tests and benchmarks; not thread-safe against running conversions).
 * Returns false, changing nothing, when it is not available; a negative path goes back to
 * the automatic choice. */
bool td_convert_force(int path);
const char *td_convert_path_name(int path);

#endif
