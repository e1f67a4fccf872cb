/* Scalar f32 <-> f16 / bf16 conversions, portable C11 (internal, not installed).
 *
 * f32 -> f16 and f32 -> bf16 round to nearest, ties to even (the bits of F16C's vcvtps2ph
 * with rounding mode 0 and of PyTorch's scalar conversions). Finite values past the largest
 * finite result by half an ulp or more become +-inf; results below the smallest normal are
 * subnormals (or a signed zero); -0 stays -0. A NaN stays a NaN with its sign: the quiet
 * bit is set and the top payload bits that fit are kept (f16: the f32 mantissa's bits 21-13,
 * bf16: bits 21-16), the rest of the payload is dropped. Note that AVX-512 BF16's
 * vcvtneps2bf16 flushes subnormal inputs to zero; this converter does not (see docs/dtypes.md).
 *
 * f16 -> f32 and bf16 -> f32 are exact widenings: every bit pattern maps to the f32 with the
 * same value, and a NaN keeps its sign and payload bit for bit (a signalling NaN stays
 * signalling; the next f32 -> f16/bf16 quiets it). */
#ifndef TD_HALF_H
#define TD_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t td_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float td_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t td_f32_to_f16(float f)
{
    uint32_t x = td_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: quiet, sign and top 9 payload bits kept */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* >= 65520 (65504 + half an ulp, a tie to odd 0x7bff) and inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* >= 2^-14: a normal f16 */
        /* round the 13 dropped bits to nearest even; a carry moves into the exponent, which
         * is the right next value; then rebias the exponent from 127 to 15 */
        uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u) - 0x38000000u;
        return (uint16_t)(sign | (r >> 13));
    }
    uint32_t e = ax >> 23;
    if (e < 102u) /* below 2^-25 (f32 subnormals too): rounds to a signed zero */
        return (uint16_t)sign;
    /* value = mant * 2^(e-150); the subnormal f16 is round(value * 2^24) = mant >> (126-e) */
    uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        q++; /* 0x3ff + 1 = 0x400 is the smallest normal, encoded right */
    return (uint16_t)(sign | q);
}

static inline float td_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t m = (uint32_t)h & 0x3ffu;
    uint32_t bits;
    if (e == 0x1fu) {
        bits = sign | 0x7f800000u | (m << 13); /* inf, or NaN with its payload */
    } else if (e != 0u) {
        bits = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m == 0u) {
        bits = sign;
    } else { /* subnormal m * 2^-24: normalize */
        uint32_t ex = 113u; /* 2^(113-127) = 2^-14, the weight of bit 10 */
        while (!(m & 0x400u)) {
            m <<= 1;
            ex--;
        }
        bits = sign | (ex << 23) | ((m & 0x3ffu) << 13);
    }
    return td_f32_from_bits(bits);
}

static inline uint16_t td_f32_to_bf16(float f)
{
    uint32_t x = td_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: quiet, sign and top 6 payload bits kept */
        return (uint16_t)((x >> 16) | 0x0040u);
    /* bf16 is the top half of the f32: round the low 16 bits to nearest even. Subnormals
     * round the same way; a carry into the exponent gives the next binade, and past the
     * largest finite value it gives inf (inf itself has zero low bits and stays inf). */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static inline float td_bf16_to_f32(uint16_t b)
{
    return td_f32_from_bits((uint32_t)b << 16);
}

#endif
