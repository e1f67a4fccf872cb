// float_matmul_nt of f32 activations x [M, K] by block-quantized weights w [N, K] (q8_0 or
// q4_0, qblock.glsl): y[M, N] = x @ dequantize(w)^T, dequantized on the fly and accumulated in
// f32 (x is not quantized). A workgroup of 64 invocations computes 64 / LANES output columns for
// ROWS rows of x: the LANES invocations of a column take its K / 32 blocks in turn (block i by
// lane i % LANES), each block's words read once for all ROWS rows, and their partial sums are
// reduced as a tree in shared memory. LANES = 64 (one column per workgroup) spreads a long K
// over the workgroup, the decode matrix x vector on a GPU; LANES = 1 (64 columns, no shared
// memory or barriers) is for software devices, where a barrier is a costly switch of every
// invocation and the SIMD lanes run across invocations. Parameters: M, N, K, the first row of
// this dispatch, the first column.
// Built twice more (backend.cmake) with TD_HALF: x holds f16 / bf16 activations (the constant DT),
// as uint16_t with TD_S16 (16-bit storage) or packed two to a word, each widened exactly as it is
// loaded; the sums and y stay f32 (the host rounds y once into the 16-bit result, cvt.comp).
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#if defined(TD_HALF) && defined(TD_S16)
layout(std430, binding = 1) readonly buffer X { uint16_t xh[]; };
#elif defined(TD_HALF)
layout(std430, binding = 1) readonly buffer X { uint xw[]; };
#else
layout(std430, binding = 1) readonly buffer X { vec4 x[]; }; // K % 32 == 0: rows are whole vec4s
#endif
layout(std430, binding = 2) readonly buffer W { uint w[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };
layout(constant_id = 0) const uint KIND = 0u;
layout(constant_id = 1) const uint LANES = 64u; // a power of two, 1 .. 64

#include "half.glsl"
#include "qblock.glsl"

// Elements 4 i .. 4 i + 3 of x (K % 32 == 0: rows are whole groups of four).
#ifdef TD_HALF
layout(constant_id = 2) const uint DT = 1u; // half.glsl's DT_F16 or DT_BF16
float xh1(uint h) { return uintBitsToFloat(to_f32(DT, h)); }
#ifdef TD_S16
vec4 xv(uint i)
{
    return vec4(xh1(uint(xh[4u * i])), xh1(uint(xh[4u * i + 1u])), xh1(uint(xh[4u * i + 2u])),
                xh1(uint(xh[4u * i + 3u])));
}
#else
vec4 xv(uint i)
{
    uint w0 = xw[2u * i], w1 = xw[2u * i + 1u];
    return vec4(xh1(w0 & 0xffffu), xh1(w0 >> 16), xh1(w1 & 0xffffu), xh1(w1 >> 16));
}
#endif
#else
#define xv(i) x[i]
#endif

#define ROWS 4u
shared vec4 part[64];

void main()
{
    const uint m = p[0], n = p[1], k = p[2];
    const uint lid = gl_LocalInvocationID.x, lane = lid % LANES;
    const uint j = p[4] + (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * (64u / LANES) + lid / LANES;
    const bool live = j < n; // no return before the barriers
    const uint r0 = p[3] + gl_WorkGroupID.z * ROWS;
    const uint nr = min(ROWS, m - r0);
    const uint nb = live ? k / 32u : 0u, kv = k / 4u;
    vec4 acc = vec4(0.0);
    uint q[8];
    for (uint b = lane; b < nb; b += LANES) {
        const float d = qb_load(j * nb + b, q);
        for (uint r = 0u; r < nr; r++) {
            const uint xi = (r0 + r) * kv + b * 8u;
            float s = 0.0;
            if (KIND == 0u) {
                for (uint t = 0u; t < 8u; t++)
                    s += dot(qb_vals(q[t], false), xv(xi + t));
            } else {
                for (uint t = 0u; t < 4u; t++)
                    s += dot(qb_vals(q[t], false), xv(xi + t)) + dot(qb_vals(q[t], true), xv(xi + 4u + t));
            }
            acc[r] += d * s;
        }
    }
    if (LANES > 1u) {
        part[lid] = acc;
        barrier();
        for (uint h = LANES / 2u; h > 0u; h >>= 1) {
            if (lane < h)
                part[lid] += part[lid + h];
            barrier();
        }
        acc = part[lid];
    }
    if (live && lane == 0u)
        for (uint r = 0u; r < nr; r++)
            y[(r0 + r) * n + j] = acc[r];
}
