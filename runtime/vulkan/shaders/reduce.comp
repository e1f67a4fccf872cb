// Reductions of a viewed as [outer, size, inner], one chunk of the size dim per thread, into
// [outer, parts, inner] (parts = ceil(size / chunk)): sum, mean, max, min, argmax, argmin.
// The host chains passes until one part is left, so that no thread loops more than a chunk:
// lavapipe stops a shader's loops after 65535 iterations in all.
//
// Built twice more (backend.cmake) with TD_HALF: a's elements are f16 / bf16 (the constant DT),
// read as uint16_t with TD_S16 (16-bit storage) or as halves of packed words, and widened
// exactly (half.glsl); partials and results stay f32 (the host runs this form for the first
// pass only and rounds the f32 result once, on the device). Only the float sums, means,
// extremes and arg-extremes (ops 0-5) and the float product's first passes (14, 17: values
// read through LA) are run on it.
// Built once more with TD_F64 (only where the device has shaderFloat64): a's elements and the
// value results are doubles, every pass of the float ops (0-5, 7, 8, 14-17) runs on it and
// computes in double (a compensated sum, exact extremes, a plain product of doubles, whose
// range is a double's), and the mean divides by p[6] as a uint (the original size).
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#if defined(TD_HALF) && defined(TD_S16)
layout(std430, binding = 1) readonly buffer A { uint16_t a[]; };
#else
layout(std430, binding = 1) readonly buffer A { uint a[]; };
#endif
layout(std430, binding = 2) readonly buffer B { uint b[]; };  // the previous pass's indices (gathers)
layout(std430, binding = 4) writeonly buffer O { uint o[]; };
#ifdef TD_F64
layout(std430, binding = 1) readonly buffer AD { double ad[]; };
layout(std430, binding = 4) writeonly buffer OD { double od[]; };
#endif

#ifdef TD_HALF
#include "half.glsl"
layout(constant_id = 0) const uint DT = 1u; // half.glsl's DT_F16 or DT_BF16
#ifdef TD_S16
#define LA(i) to_f32(DT, uint(a[i]))
#else
#define LA(i) to_f32(DT, (a[(i) >> 1] >> (((i) & 1u) * 16u)) & 0xffffu)
#endif
#else
#define LA(i) a[i] // element i of a, as a 32-bit word
#endif

// p: outer, size, inner, op, chunk, parts, divisor (float bits, mean)
// op: 0 sum, 1 mean, 2 max, 3 min, 4 argmax, 5 argmin, 6 int sum (wrapping), 7 argmax and
// 8 argmin of partial extremes whose indices are b's (the result gathers them), 9 int product
// (wrapping), and the exact int mean: 10 int32 -> int64 partial sums, 11 int64 -> int64,
// 12 int64 -> mean, 13 int32 -> mean (int64 values as (lo, hi) word pairs, added with carries:
// no shaderInt64 needed; the mean divides the sum by p[6] (a uint), truncated toward zero)

// (hi, lo) += (xh, xl)
void add64(inout uint hi, inout uint lo, uint xh, uint xl)
{
    uint c;
    lo = uaddCarry(lo, xl, c);
    hi += xh + c;
}

// The int64 (hi, lo) divided by n (1 <= n <= 2^31), truncated toward zero, as an int32 word
// (the mean of int32 values fits).
uint div64(uint hi, uint lo, uint n)
{
    bool neg = (hi >> 31) != 0u;
    if (neg) {                       // magnitude: two's complement negation
        lo = ~lo;
        hi = ~hi;
        uint c;
        lo = uaddCarry(lo, 1u, c);
        hi += c;
    }
    uint rem = 0u, q = 0u;           // rem < n <= 2^31, so rem << 1 | bit fits 32 bits
    for (int k = 63; k >= 0; k--) {
        uint bit = k >= 32 ? (hi >> uint(k - 32)) & 1u : (lo >> uint(k)) & 1u;
        rem = (rem << 1) | bit;
        q <<= 1;
        if (rem >= n) {
            rem -= n;
            q |= 1u;
        }
    }
    return neg ? 0u - q : q;
}

#include "prod.glsl"

// 14 floats -> float products as (m, e) word pairs (prod.glsl), 15 pairs -> pairs,
// 16 pairs -> float, 17 floats -> float.
void main()
{
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint outer = p[0], size = p[1], inner = p[2], op = p[3], chunk = p[4], parts = p[5];
    if (t >= outer * parts * inner)
        return;
    uint i = t % inner, part = (t / inner) % parts, slab = t / (inner * parts);
    uint first = part * chunk;
    uint base = (slab * size + first) * inner + i;
    uint cnt = min(chunk, size - first);
#ifdef TD_F64
    if (op >= 14u) {                                  // partial products are doubles too
        double acc = 1.0LF;
        for (uint k = 0u; k < cnt; k++)
            acc *= ad[base + k * inner];
        od[t] = acc;
        return;
    }
    if (op <= 1u) {                                   // compensated (Kahan) double sum
        precise double s = 0.0LF, c = 0.0LF;
        for (uint k = 0u; k < cnt; k++) {
            precise double y = ad[base + k * inner] - c;
            precise double u = s + y;
            c = isinf(u) ? 0.0LF : (u - s) - y;
            s = u;
        }
        od[t] = op == 1u ? s / double(p[6]) : s;
        return;
    }
    double dbest = ad[base];
    uint didx = 0u;
    bool dmax = op == 2u || op == 4u || op == 7u;
    for (uint k = 1u; k < cnt; k++) {
        double v = ad[base + k * inner];
        if (!isnan(dbest) && (isnan(v) || (dmax ? v > dbest : v < dbest))) {
            dbest = v;
            didx = k;
        }
    }
    if (op <= 3u)
        od[t] = dbest;
    else if (op <= 5u)
        o[t] = first + didx;
    else
        o[t] = b[base + didx * inner];
    return;
#endif
    if (op == 6u) {
        uint acc = 0u;
        for (uint k = 0u; k < cnt; k++)
            acc += LA(base + k * inner);
        o[t] = acc;
        return;
    }
    if (op == 9u) {
        uint acc = 1u;
        for (uint k = 0u; k < cnt; k++)
            acc *= LA(base + k * inner);
        o[t] = acc;
        return;
    }
    if (op >= 14u) {
        float m = 1.0;
        int e = 0;
        pmul(m, e, 1.0, 0);
        bool pairs = op == 15u || op == 16u;
        for (uint k = 0u; k < cnt; k++) {
            uint at = base + k * inner;
            float xm;
            int xe;
            if (pairs) {
                xm = uintBitsToFloat(LA(2u * at));
                xe = int(LA(2u * at + 1u));
            } else {
                split(uintBitsToFloat(LA(at)), xm, xe);
            }
            pmul(m, e, xm, xe);
        }
        if (op <= 15u) {
            o[2u * t] = floatBitsToUint(m);
            o[2u * t + 1u] = uint(e);
        } else {
            o[t] = floatBitsToUint(pfloat(m, e));
        }
        return;
    }
    if (op >= 10u) {
        uint hi = 0u, lo = 0u;
        bool pairs = op == 11u || op == 12u;
        for (uint k = 0u; k < cnt; k++) {
            uint at = base + k * inner;
            if (pairs) {
                add64(hi, lo, LA(2u * at + 1u), LA(2u * at));
            } else {
                uint v = LA(at);
                add64(hi, lo, (v >> 31) != 0u ? 0xffffffffu : 0u, v);
            }
        }
        if (op <= 11u) {
            o[2u * t] = lo;
            o[2u * t + 1u] = hi;
        } else {
            o[t] = div64(hi, lo, p[6]);
        }
        return;
    }
    if (op <= 1u) {                                   // compensated (Kahan) float sum
        precise float s = 0.0, c = 0.0;
        for (uint k = 0u; k < cnt; k++) {
            precise float y = uintBitsToFloat(LA(base + k * inner)) - c;
            precise float u = s + y;
            c = isinf(u) ? 0.0 : (u - s) - y;  // an infinite sum would turn c into NaN
            s = u;
        }
        o[t] = floatBitsToUint(op == 1u ? s / uintBitsToFloat(p[6]) : s);
        return;
    }
    float best = uintBitsToFloat(LA(base));
    uint idx = 0u;
    bool want_max = op == 2u || op == 4u || op == 7u;
    for (uint k = 1u; k < cnt; k++) {
        float v = uintBitsToFloat(LA(base + k * inner));
        bool beats = !isnan(best) && (isnan(v) || (want_max ? v > best : v < best));
        if (beats) {
            best = v;
            idx = k;
        }
    }
    if (op <= 3u)
        o[t] = floatBitsToUint(best);
    else if (op <= 5u)
        o[t] = first + idx;
    else
        o[t] = b[base + idx * inner];
}
