// Strided gather/scatter of elements: every layout op (permute, expand, slice, cat, ...), for
// every dtype, since a move is only bytes. The element size ES (a specialization constant) is
// 4 (f32, i32, bool words), 8 (f64: two words) or 2 (f16 / bf16 packed two to a word); built
// again with TD_S16 (backend.cmake: copy16) the buffers are uint16_t (storageBuffer16BitAccess)
// and the element is one of them.
//
// Packed 16-bit elements share words, so a thread that writes one element of a word writes its
// half with atomicAnd / atomicOr (the other half may be another thread's, or not part of this
// copy). Where the host sees that the result is written in whole words (PAIRS: the last dim
// even and contiguous in the result, every word's two elements consecutive in that dim), each
// thread writes two elements as one plain word.
//
// Flags: FILL writes the value p[36] (p[36..37] for 8 bytes) instead of reading the source;
// MASK writes only where the mask (bool words, binding 2, strides p[28..35]) is nonzero.
#version 450
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint ES = 4u; // bytes an element (the TD_S16 build: 2)
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#ifdef TD_S16
layout(std430, binding = 1) readonly buffer S { uint16_t s[]; };
layout(std430, binding = 4) buffer D { uint16_t dst[]; };
#else
layout(std430, binding = 1) readonly buffer S { uint s[]; };
layout(std430, binding = 4) buffer D { uint dst[]; };
#endif
layout(std430, binding = 2) readonly buffer M { uint mask[]; };

const uint FILL = 1u, MASK = 2u, PAIRS = 4u;

#ifndef TD_S16
// The 16-bit element at index e of packed words.
uint half_at(uint e)
{
    return (s[e >> 1u] >> ((e & 1u) * 16u)) & 0xffffu;
}
#endif

// p: n (invocations), ndim | flags << 8, src_off, dst_off, dims[8], src strides[8], dst
// strides[8], mask strides[8], value[2] (elements, not bytes or words)
void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (i >= p[0])
        return;
    const uint nd = p[1] & 0xffu, fl = p[1] >> 8u;
    const bool fill = (fl & FILL) != 0u;
    uint si = p[2], di = p[3], mi = 0u, rest = (fl & PAIRS) != 0u ? 2u * i : i;
    for (uint d = nd; d > 0u; d--) {
        uint k = rest % p[3u + d];
        rest /= p[3u + d];
        si += k * p[11u + d];
        di += k * p[19u + d];
        mi += k * p[27u + d];
    }
    if ((fl & MASK) != 0u && mask[mi] == 0u)
        return;
#ifdef TD_S16
    // (16-bit storage has no 16-bit locals: each element goes from buffer to buffer)
    if (fill) {
        dst[di] = uint16_t(p[36] & 0xffffu);
        if ((fl & PAIRS) != 0u)
            dst[di + 1u] = uint16_t(p[36] & 0xffffu);
    } else {
        dst[di] = s[si];
        if ((fl & PAIRS) != 0u)
            dst[di + 1u] = s[si + p[11u + nd]];
    }
#else
    if (ES == 8u) {
        const uvec2 v = fill ? uvec2(p[36], p[37]) : uvec2(s[2u * si], s[2u * si + 1u]);
        dst[2u * di] = v.x;
        dst[2u * di + 1u] = v.y;
    } else if (ES == 2u) {
        const uint lo = fill ? p[36] & 0xffffu : half_at(si);
        if ((fl & PAIRS) != 0u) {
            const uint hi = fill ? lo : half_at(si + p[11u + nd]);
            dst[di >> 1u] = lo | (hi << 16u);
        } else {
            const uint sh = (di & 1u) * 16u;
            atomicAnd(dst[di >> 1u], ~(0xffffu << sh));
            atomicOr(dst[di >> 1u], lo << sh);
        }
    } else {
        dst[di] = fill ? p[36] : s[si];
    }
#endif
}
