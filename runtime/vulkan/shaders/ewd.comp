// f64 elementwise ops (needs shaderFloat64; vk_kernels_elementwise.c, vk_dispatch_ewd): ew.comp's
// float binary ops and comparisons (op codes 0-11, broadcasting through strides),
// unary.comp's float -> float ops (codes 0-14, as 32 + code) and its float -> int32 cast (15, as
// 47: NaN 0, saturated, else truncated toward zero) and fmath.comp's unary ops (48 ceil, 49
// floor, 50 round half to even, 51 trunc, 52 erf, 53 log1p, 54 is_nan, 55 is_inf (bool words),
// 56 tan, 57 acos, 58 asin, 59 atan, 60 remainder by the scalar s0) and its binary ops (12
// remainder, 13 atan2, broadcasting as 0-11), one element per invocation,
// computed in double (mathd.glsl). Doubles are read and written as pairs of 32-bit words
// (low word first), so the buffers stay uint arrays as in every other shader; a comparison
// writes a bool as one word.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 4) writeonly buffer O { uint o[]; };

// p: n, ndim, s0, s1 (float scalars, widened exactly), dims[8], stride a[8], stride b[8]
// (0 on broadcast dims; unary ops ignore ndim and the strides).
layout(constant_id = 0) const uint OP = 0u;

#include "mathd.glsl"

double ld(uint i, bool from_b)
{
    return from_b ? packDouble2x32(uvec2(b[2u * i], b[2u * i + 1u])) : packDouble2x32(uvec2(a[2u * i], a[2u * i + 1u]));
}

void st(uint i, double v)
{
    uvec2 w = unpackDouble2x32(v);
    o[2u * i] = w.x;
    o[2u * i + 1u] = w.y;
}

double unary(uint op, double x, double s0, double s1)
{
    switch (op) {
    case 0u: return -x;
    case 1u: return abs(x);
    case 2u: return exp_d(x);
    case 3u: return log_d(x);
    case 4u: return sqrt_d(x);
    case 5u: return sincos_d(x, 0u);
    case 6u: return sincos_d(x, 1u);
    case 7u: return tanh_d(x);
    case 8u: return sigmoid_d(x);
    case 9u: return x < 0.0LF ? 0.0LF : x;
    case 10u: return gelu_d(x);
    case 11u: return pow_d(x, s0);
    case 12u: { double y = x < s0 ? s0 : x; return isnan(x) ? x : (y > s1 ? s1 : y); }
    case 13u: return x + s0;
    default: return x * s0; // 14
    }
}

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (i >= p[0])
        return;
    double s0 = double(uintBitsToFloat(p[2])), s1 = double(uintBitsToFloat(p[3]));
    if (OP >= 48u) {                  // fmath.comp's unary ops (vk_kernels_float_math.c)
        double x = ld(i, false);
        switch (OP) {
        case 48u: st(i, ceil(x)); break;
        case 49u: st(i, floor(x)); break;
        case 50u: st(i, roundEven(x)); break;
        case 51u: st(i, trunc(x)); break;
        case 52u: st(i, erf_d(x)); break;
        case 53u: st(i, log1p_d(x)); break;
        case 54u: o[i] = isnan(x) ? 1u : 0u; break;
        case 55u: o[i] = isinf(x) ? 1u : 0u; break;
        case 56u: st(i, tan_d(x)); break;
        case 57u: st(i, acos_d(x)); break;
        case 58u: st(i, asin_d(x)); break;
        case 59u: st(i, atan_d(x)); break;
        default: st(i, rem_d(x, s0)); break; // 60
        }
        return;
    }
    if (OP == 47u) {
        double x = ld(i, false);
        o[i] = isnan(x) ? 0u : x >= 2147483648.0LF ? 0x7fffffffu : x <= -2147483648.0LF ? 0x80000000u : uint(int(x));
        return;
    }
    if (OP >= 32u) {
        st(i, unary(OP - 32u, ld(i, false), s0, s1));
        return;
    }
    uint ia = 0u, ib = 0u, rest = i;
    for (uint d = p[1]; d > 0u; d--) {
        uint k = rest % p[3u + d];
        rest /= p[3u + d];
        ia += k * p[11u + d];
        ib += k * p[19u + d];
    }
    double x = ld(ia, false), y = ld(ib, true);
    switch (OP) {
    case 0u: st(i, x + y); break;
    case 1u: st(i, x - y); break;
    case 2u: st(i, x * y); break;
    case 3u: st(i, x / y); break;
    case 4u: st(i, pow_d(x, y)); break;
    case 5u: st(i, (isnan(x) || x > y) ? x : y); break;
    case 6u: st(i, (isnan(x) || x < y) ? x : y); break;
    case 7u: o[i] = x == y ? 1u : 0u; break;
    case 8u: o[i] = x > y ? 1u : 0u; break;
    case 9u: o[i] = x >= y ? 1u : 0u; break;
    case 10u: o[i] = x < y ? 1u : 0u; break;
    case 11u: o[i] = x <= y ? 1u : 0u; break;
    case 12u: st(i, rem_d(x, y)); break;
    default: st(i, atan2_d(x, y)); break; // 13
    }
}
