/* Block-quantized rows q8_0 and q4_0, byte-compatible with ggml's blocks (internal, not
 * installed; docs/dtypes.md section 8, docs/kernels.md "Quantized blocks").
 *
 * A row of n values (n a multiple of 32) is n / 32 blocks, packed without padding:
 *   q8_0, 34 bytes: d (f16 bits, little-endian), qs[32] signed; value j = qs[j] * d.
 *   q4_0, 18 bytes: d (f16 bits), qs[16]; byte j holds value j in its low nibble and value
 *         j + 16 in its high nibble; value = (nibble - 8) * d.
 * Quantizing follows ggml's reference quantizers (quantize_row_q8_0_ref / _q4_0_ref), the
 * ones it uses to write model files:
 *   q8_0: amax = max |x|, d = amax / 127, id = d != 0 ? 1 / d : 0 (all in f32), qs[j] =
 *         roundf(x[j] * id) (ties away from zero), d stored as f16 (nearest even);
 *   q4_0: m = the x of largest magnitude (the first one on ties, sign kept), d = m / -8,
 *         id as above, nibble = min(15, (int)(x * id + 8.5f)) (truncation);
 * so the scale used to quantize is the f32 d, the one stored its f16 rounding, as in ggml.
 * The dot products multiply per block the integer sum of the products (exact) by the
 * product of the two f16 scales, and add the blocks up in f32 (ggml's vec_dot rules); the
 * vector paths add in another order, so their float result may differ by rounding.
 *
 * The checked functions take a length in values and return TD_E_INVALID when it is not a
 * multiple of 32 (or negative) or when blocks sit at an odd address (their scales are
 * 16-bit), TD_E_NULL for a NULL pointer with n > 0, and (quantizing)
 * TD_E_INVALID for an infinite or NaN input, which a block cannot hold (ggml's reference
 * casts NaN to an integer there: undefined behaviour). The _unchecked kernels skip that. */
#ifndef TD_QUANT_H
#define TD_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "td_core.h"

#define TD_QK 32

typedef struct td_block_q8_0 {
    uint16_t d; /* f16 bits */
    int8_t qs[TD_QK];
} td_block_q8_0;

typedef struct td_block_q4_0 {
    uint16_t d; /* f16 bits */
    uint8_t qs[TD_QK / 2];
} td_block_q4_0;

_Static_assert(sizeof(td_block_q8_0) == 34, "q8_0 blocks are ggml's 34 bytes");
_Static_assert(sizeof(td_block_q4_0) == 18, "q4_0 blocks are ggml's 18 bytes");
_Static_assert(offsetof(td_block_q8_0, qs) == 2 && offsetof(td_block_q4_0, qs) == 2, "d first, then qs");

/* Bytes of a row of n values (n a multiple of 32). */
static inline size_t td_q8_0_row_bytes(int64_t n)
{
    return (size_t)(n / TD_QK) * sizeof(td_block_q8_0);
}
static inline size_t td_q4_0_row_bytes(int64_t n)
{
    return (size_t)(n / TD_QK) * sizeof(td_block_q4_0);
}

td_status td_quantize_row_q8_0(const float *x, void *dst, int64_t n);
td_status td_quantize_row_q4_0(const float *x, void *dst, int64_t n);
td_status td_dequantize_row_q8_0(const void *src, float *y, int64_t n);
td_status td_dequantize_row_q4_0(const void *src, float *y, int64_t n);
/* *out = sum over the row of x[i] * y[i] in the blocks' values (y: activations in q8_0). */
td_status td_vec_dot_q8_0_q8_0(int64_t n, const void *x, const void *y, float *out);
td_status td_vec_dot_q4_0_q8_0(int64_t n, const void *x, const void *y, float *out);

/* The kernels without checks (nb whole blocks, finite inputs). */
void td_quantize_q8_0_unchecked(const float *x, td_block_q8_0 *y, int64_t nb);
void td_quantize_q4_0_unchecked(const float *x, td_block_q4_0 *y, int64_t nb);
void td_dequantize_q8_0_unchecked(const td_block_q8_0 *x, float *y, int64_t nb);
void td_dequantize_q4_0_unchecked(const td_block_q4_0 *x, float *y, int64_t nb);
float td_dot_q8_0_q8_0_unchecked(const td_block_q8_0 *x, const td_block_q8_0 *y, int64_t nb);
float td_dot_q4_0_q8_0_unchecked(const td_block_q4_0 *x, const td_block_q8_0 *y, int64_t nb);

/* The dot products' paths, chosen at run time (TD_CPU_CAPABILITY=default / avx2 lowers the
 * choice as for the cpu kernels); forcing one is for tests and benchmarks. */
enum { TD_QUANT_PORTABLE = 0, TD_QUANT_AVX2 = 1, TD_QUANT_AVX512VNNI = 2, TD_QUANT_PATHS = 3 };
bool td_quant_path_available(int path);
int td_quant_path(void);
bool td_quant_force(int path); /* false when not available; a negative path: automatic */
const char *td_quant_path_name(int path);

#endif
