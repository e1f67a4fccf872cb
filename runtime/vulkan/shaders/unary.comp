// Unary elementwise ops, casts and fills on 32-bit words (float, int, or bool as uint).
// Built twice more (backend.cmake) with TD_HALF: the float -> float ops (0-14) on f16 / bf16,
// each invocation a pair of elements (one packed word, or two uint16_t with TD_S16), each
// widened exactly, computed in f32 as below and rounded once to nearest even (half.glsl); and
// the cast to int32 (15), of the widened values (exact), writing two int32 words.
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#if defined(TD_HALF) && defined(TD_S16)
layout(std430, binding = 1) readonly buffer A { uint16_t a[]; };
layout(std430, binding = 4) writeonly buffer O { uint16_t o[]; };
layout(std430, binding = 4) writeonly buffer OW { uint ow[]; }; // the int32 result of op 15
#else
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 4) writeonly buffer O { uint o[]; };
#endif

#include "math.glsl"

// The op: p[1], or a specialization constant (vk_dispatch_unary), which folds the switch: a
// software device runs every case of a switch on a runtime value, masked, for every element.
layout(constant_id = 0) const uint OPC = 0xffffffffu;

// GLSL has no erf: Numerical Recipes' erfc rational approximation (fractional error < 1.2e-7)
// of |x|. gelu takes its CDF from it directly: Phi(x) = erfc(-x / sqrt 2) / 2, so the lower
// tail keeps that relative accuracy (1 + erf(x / sqrt 2) cancelled there, as the CPU's
// formula no longer does).
float erfc_abs(float x)
{
    float z = abs(x);
    float t = 1.0 / (1.0 + 0.5 * z);
    return t * exp_(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
           t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
           t * (-0.82215223 + t * 0.17087277)))))))));
}

// gelu: x Phi(x), Phi from erfc(|x| / sqrt 2) on the side where it is small (NaN: x * NaN).
float gelu_(float x)
{
    float r = 0.5 * erfc_abs(x * 0.70710678118654752440);
    return x * (x >= 0.0 ? 1.0 - r : r);
}

// With e = e^-|x| <= 1: no overflow on either side.
float sigmoid_(float x)
{
    float e = exp_(-abs(x));
    return x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

int f2i(float x)
{
    if (isnan(x))
        return 0;
    if (x >= 2147483648.0)
        return 2147483647;
    if (x <= -2147483648.0)
        return int(0x80000000u);
    return int(x);
}

// The float -> float ops (0-14) of x.
float fop(uint op, float x, float s0, float s1)
{
    float r = 0.0;
    switch (op) {
    case 0u: r = -x; break;
    case 1u: r = abs(x); break;
    case 2u: r = exp_(x); break;
    case 3u: r = log_(x); break;
    case 4u: r = x < 0.0 ? NAN_F : sqrt(x); break;
    case 5u: r = sin_(x); break;
    case 6u: r = cos_(x); break;
    case 7u: r = tanh_(x); break;
    case 8u: r = sigmoid_(x); break;
    case 9u: r = x < 0.0 ? 0.0 : x; break;
    case 10u: r = gelu_(x); break;
    case 11u: r = pow_(x, s0); break;
    case 12u: { float y = x < s0 ? s0 : x; r = isnan(x) ? x : (y > s1 ? s1 : y); } break;
    case 13u: r = x + s0; break;
    default: r = x * s0; break; // 14
    }
    return r;
}

#ifdef TD_HALF
#include "half.glsl"
layout(constant_id = 1) const uint DT = 1u; // half.glsl's DT_F16 or DT_BF16

uint h1(uint op, uint h, float s0, float s1)
{
    return from_f32(DT, floatBitsToUint(fop(op, uintBitsToFloat(to_f32(DT, h)), s0, s1)));
}

void main()
{
    uint k = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint i = 2u * k, n = p[0];
    if (i >= n)
        return;
    uint op = OPC != 0xffffffffu ? OPC : p[1];
    float s0 = uintBitsToFloat(p[2]), s1 = uintBitsToFloat(p[3]);
    if (op == 15u) {                  // float_into_int: one int32 word per element
#ifdef TD_S16
        uint h0 = uint(a[i]), hn = i + 1u < n ? uint(a[i + 1u]) : 0u;
#else
        uint h0 = a[k] & 0xffffu, hn = a[k] >> 16;
#endif
#ifdef TD_S16
        ow[i] = uint(f2i(uintBitsToFloat(to_f32(DT, h0))));
        if (i + 1u < n)
            ow[i + 1u] = uint(f2i(uintBitsToFloat(to_f32(DT, hn))));
#else
        o[i] = uint(f2i(uintBitsToFloat(to_f32(DT, h0))));
        if (i + 1u < n)
            o[i + 1u] = uint(f2i(uintBitsToFloat(to_f32(DT, hn))));
#endif
        return;
    }
#ifdef TD_S16
    o[i] = uint16_t(h1(op, uint(a[i]), s0, s1));
    if (i + 1u < n)
        o[i + 1u] = uint16_t(h1(op, uint(a[i + 1u]), s0, s1));
#else
    // the word's upper half past the last element is not part of the tensor
    uint w = a[k];
    o[k] = h1(op, w & 0xffffu, s0, s1) | (h1(op, w >> 16, s0, s1) << 16);
#endif
}
#else
void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (i >= p[0])
        return;
    uint op = OPC != 0xffffffffu ? OPC : p[1];
    float s0 = uintBitsToFloat(p[2]), s1 = uintBitsToFloat(p[3]);
    if (op == 20u) { o[i] = p[2]; return; }                   // fill
    if (op == 21u) { o[i] = p[2] + i * p[3]; return; }        // arange, wrapping like the cast
    uint w = a[i];
    float x = uintBitsToFloat(w);
    float r = 0.0;
    if (op <= 14u) {
        o[i] = floatBitsToUint(fop(op, x, s0, s1));
        return;
    }
    switch (op) {
    case 15u: o[i] = uint(f2i(x)); return;
    case 16u: r = float(int(w)); break;
    case 17u: r = w != 0u ? 1.0 : 0.0; break;
    case 18u: o[i] = w != 0u ? 1u : 0u; return;
    case 19u: o[i] = w != 0u ? 0u : 1u; return;
    default: o[i] = w; return;                                 // 22: copy
    }
    o[i] = floatBitsToUint(r);
}
#endif
