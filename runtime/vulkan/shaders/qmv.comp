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
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; }; // K % 32 == 0: rows are whole vec4s
layout(std430, binding = 2) readonly buffer W { uint w[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };
layout(constant_id = 0) const uint KIND = 0u;
layout(constant_id = 1) const uint LANES = 64u; // a power of two, 1 .. 64

#include "half.glsl"
#include "qblock.glsl"

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
                    s += dot(qb_vals(q[t], false), x[xi + t]);
            } else {
                for (uint t = 0u; t < 4u; t++)
                    s += dot(qb_vals(q[t], false), x[xi + t]) + dot(qb_vals(q[t], true), x[xi + 4u + t]);
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
