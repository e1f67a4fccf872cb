// f32 <-> f16 / bf16 on bit patterns in integer arithmetic only, step for step as
// runtime/core/td_half.h: round to nearest even, subnormals kept, NaN quieted with its sign and
// top payload bits. Not the driver's conversions: Vulkan lets OpFConvert round toward zero or
// flush subnormals, and packHalf2x16 leaves its rounding unspecified, so these are what make a
// device's f16 / bf16 bits equal the CPU's.
uint f32_to_f16(uint x)
{
    uint sign = (x >> 16) & 0x8000u;
    uint ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return sign | 0x7e00u | ((ax >> 13) & 0x3ffu);
    if (ax >= 0x477ff000u)
        return sign | 0x7c00u;
    if (ax >= 0x38800000u)
        return sign | ((ax + 0xfffu + ((ax >> 13) & 1u) - 0x38000000u) >> 13);
    uint e = ax >> 23;
    if (e < 102u)
        return sign;
    uint mant = (ax & 0x7fffffu) | 0x800000u;
    uint shift = 126u - e; // 14..24
    uint q = mant >> shift;
    uint rem = mant & ((1u << shift) - 1u);
    uint half_ = 1u << (shift - 1u);
    if (rem > half_ || (rem == half_ && (q & 1u) != 0u))
        q++;
    return sign | q;
}

uint f16_to_f32(uint h)
{
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0x1fu)
        return sign | 0x7f800000u | (m << 13);
    if (e != 0u)
        return sign | ((e + 112u) << 23) | (m << 13);
    if (m == 0u)
        return sign;
    // subnormal m * 2^-24: normalize (no loop: the top bit's place)
    uint s = 10u - uint(findMSB(m));
    return sign | ((113u - s) << 23) | (((m << s) & 0x3ffu) << 13);
}

uint f32_to_bf16(uint x)
{
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (x >> 16) | 0x0040u;
    return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

uint bf16_to_f32(uint b)
{
    return b << 16;
}

// Dtype codes of the device shaders: f32 (or any 32-bit word), f16, bf16.
#define DT_F32 0u
#define DT_F16 1u
#define DT_BF16 2u

uint to_f32(uint dt, uint h)
{
    return dt == DT_F16 ? f16_to_f32(h) : dt == DT_BF16 ? bf16_to_f32(h) : h;
}

uint from_f32(uint dt, uint x)
{
    return dt == DT_F16 ? f32_to_f16(x) : dt == DT_BF16 ? f32_to_bf16(x) : x;
}
