// Cumulative ops along a dim of a viewed as [outer, size, inner]: one thread per line (slab,
// column), over the rows [k0, k1) of it; a later range starts from the result's row k0 - 1.
// The host runs ranges of at most 4096 rows (lavapipe stops a shader's loops after 65535
// iterations in all). Reduce / cumulative / sort group (specs/ops/reduce_sort.lua).
// Built again (float ops only) with TD_HALF (f16 / bf16 elements widened exactly, the scan in
// f32 into an f32 result that the host rounds once) and TD_F64 (double throughout; cumprod a
// plain running product of doubles): xload.glsl.
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "xload.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { uint a[]; };  // int ops
XBUF(AX, 1, ax)                                                // float ops
layout(std430, binding = 3) buffer C { uint cy[]; };  // float cumprod: each line's (m, e) carry
layout(std430, binding = 4) buffer O { uint o[]; };  // read back (the carry) and written
layout(std430, binding = 4) buffer OX { XT ox[]; };

#include "prod.glsl"

// p: outer, size, inner, op, k0, k1
// op: 0 float cumsum (compensated), 1 float cummax, 2 float cummin (NaN sticks, as torch.cummax),
//     3 int cumsum, 4 int cumprod (both wrap around), 5 float cumprod with a double's range
//     (prod.glsl; the (m, e) carry between ranges in cy, as the result's row is rounded)
void main()
{
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint outer = p[0], size = p[1], inner = p[2], op = p[3], k0 = p[4], k1 = p[5];
    if (t >= outer * inner)
        return;
    uint base = (t / inner) * size * inner + t % inner;
#ifdef TD_F64
    if (op == 5u) {
        double q = k0 == 0u ? 1.0LF : ox[base + (k0 - 1u) * inner];
        for (uint k = k0; k < k1; k++) {
            q *= ax[base + k * inner];
            ox[base + k * inner] = q;
        }
        return;
    }
#else
    if (op == 5u) {
        float m = 1.0;
        int e = 0;
        if (k0 == 0u) {
            pmul(m, e, 1.0, 0);
        } else {
            m = uintBitsToFloat(cy[2u * t]);
            e = int(cy[2u * t + 1u]);
        }
        for (uint k = k0; k < k1; k++) {
            float xm;
            int xe;
            split(XLD(ax, base + k * inner), xm, xe);
            pmul(m, e, xm, xe);
            ox[base + k * inner] = pfloat(m, e);
        }
        cy[2u * t] = floatBitsToUint(m);
        cy[2u * t + 1u] = uint(e);
        return;
    }
#endif
    uint first = k0;
    if (op >= 3u) {
        uint carry = 0u;
        if (k0 == 0u) {
            carry = a[base];
            o[base] = carry;
            first = 1u;
        } else {
            carry = o[base + (k0 - 1u) * inner];
        }
        uint acc = carry;
        for (uint k = first; k < k1; k++) {
            uint x = a[base + k * inner];
            acc = op == 3u ? acc + x : acc * x;
            o[base + k * inner] = acc;
        }
        return;
    }
    XT carry;
    if (k0 == 0u) {
        carry = XLD(ax, base);
        ox[base] = carry;
        first = 1u;
    } else {
        carry = ox[base + (k0 - 1u) * inner];
    }
    if (op == 0u) {
        precise XT s = carry, c = XZERO;
        for (uint k = first; k < k1; k++) {
            precise XT y = XLD(ax, base + k * inner) - c;
            precise XT u = s + y;
            c = isinf(u) ? XZERO : (u - s) - y;  // an infinite sum would turn c into NaN
            s = u;
            ox[base + k * inner] = s;
        }
        return;
    }
    XT best = carry;
    for (uint k = first; k < k1; k++) {
        XT x = XLD(ax, base + k * inner);
        if (isnan(x) || (!isnan(best) && (op == 1u ? x >= best : x <= best)))
            best = x;
        ox[base + k * inner] = best;
    }
}
