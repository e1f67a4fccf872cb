/* Rows of f16 / bf16 to and from f32: the scalar conversions of td_half.h in a loop, one
 * place per direction. The dtype traits (td_cast.c) and the "via f32" paths call these;
 * vectorized versions with the same names and signatures (F16C, AVX-512 BF16) may replace
 * this file. n counts elements; src and dst do not overlap. */
#include "td_half.h"
#include "td_internal.h"

void td_f16_to_f32_row(const void *src, void *dst, size_t n)
{
    const uint16_t *s = src;
    float *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = td_f16_to_f32(s[i]);
}

void td_f32_to_f16_row(const void *src, void *dst, size_t n)
{
    const float *s = src;
    uint16_t *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = td_f32_to_f16(s[i]);
}

void td_bf16_to_f32_row(const void *src, void *dst, size_t n)
{
    const uint16_t *s = src;
    float *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = td_bf16_to_f32(s[i]);
}

void td_f32_to_bf16_row(const void *src, void *dst, size_t n)
{
    const float *s = src;
    uint16_t *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = td_f32_to_bf16(s[i]);
}
