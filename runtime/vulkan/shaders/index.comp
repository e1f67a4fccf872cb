// Indexing ops of issue 10 (gather, select, one_hot, scatter_add/assign, select_add) on 32-bit
// words (the moves also on 16- and 64-bit elements, below). Index values were checked on the host. The scatters run one thread per line along
// dim (select_add: per (outer, inner) pair) and add in index order, as the CPU does.
//
// GATHER, SELECT and SCATTER_SET only move elements, so they take every dtype: the element size
// ES (a specialization constant) is 4, 8 (f64: two words) or 2 (f16 / bf16 packed two to a word,
// each element written with atomicAnd / atomicOr, as copy.comp); built again with TD_S16
// (backend.cmake: index16) the buffers are uint16_t. The adding modes and ONE_HOT are 32-bit only,
// but built once more with TD_F64 (indexd, only where the device has shaderFloat64) the float
// adding modes add doubles (word pairs, each element owned by one thread).
#version 450
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM uint16_t
#else
#define ELEM uint
#endif
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint ES = 4u; // bytes an element (the TD_S16 build: 2)
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer S { ELEM s[]; };   // a (gather, select) or value (scatters)
layout(std430, binding = 2) readonly buffer I { int idx[]; };
layout(std430, binding = 4) buffer D { ELEM dst[]; };

// p: n, mode, ndim, dim (one_hot: classes; select_add: n of dim), len (scatters: indices' length
// along dim; select_add: k), dims[8] (p[5..12]), strides A[8] (p[13..20]), B[8] (p[21..28]),
// C[8] (p[29..36]); select_add: inner = p[5]. The scatters and select_add take the entries
// [p[37], p[38]) of their line: the host cuts lines into passes of at most 4096 (lavapipe
// stops loops past 65535 iterations).
const uint GATHER = 0u, SELECT = 1u, ONE_HOT = 2u, SCATTER_ADD_F = 3u, SCATTER_ADD_I = 4u, SCATTER_SET = 5u,
           SELECT_ADD_F = 6u, SELECT_ADD_I = 7u;

// dst element di = s element si, whatever their size.
void move(uint di, uint si)
{
#ifdef TD_S16
    dst[di] = s[si];
#else
    if (ES == 8u) {
        dst[2u * di] = s[2u * si];
        dst[2u * di + 1u] = s[2u * si + 1u];
    } else if (ES == 2u) {
        const uint h = (s[si >> 1u] >> ((si & 1u) * 16u)) & 0xffffu, sh = (di & 1u) * 16u;
        atomicAnd(dst[di >> 1u], ~(0xffffu << sh));
        atomicOr(dst[di >> 1u], h << sh);
    } else {
        dst[di] = s[si];
    }
#endif
}

#ifdef TD_F64
// dst element o (a double) += s element si
void add_d(uint o, uint si)
{
    double x = packDouble2x32(uvec2(dst[2u * o], dst[2u * o + 1u])) + packDouble2x32(uvec2(s[2u * si], s[2u * si + 1u]));
    uvec2 w = unpackDouble2x32(x);
    dst[2u * o] = w.x;
    dst[2u * o + 1u] = w.y;
}
#define ADD_AT(mode, o, si) add_d(o, si)
#else
#define ADD_AT(mode, o, si) dst[o] = add_words(mode, dst[o], s[si])
#endif

#ifndef TD_S16
uint add_words(uint mode, uint x, uint y)
{
    if (mode == SCATTER_ADD_F || mode == SELECT_ADD_F)
        return floatBitsToUint(uintBitsToFloat(x) + uintBitsToFloat(y));
    if (mode == SCATTER_SET)
        return y;
    return x + y; // int32 wraps
}
#endif

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (i >= p[0])
        return;
    uint mode = p[1], nd = p[2], dim = p[3];
#ifndef TD_S16
    if (mode == ONE_HOT) {
        dst[i] = uint(idx[i / dim]) == i % dim ? 1u : 0u;
        return;
    }
    if (mode == SELECT_ADD_F || mode == SELECT_ADD_I) {
        uint inner = p[5], k = p[4], o = i / inner, r = i % inner;
        for (uint j = p[37]; j < p[38]; j++) {
            uint di = (o * dim + uint(idx[j])) * inner + r;
            ADD_AT(mode, di, (o * k + j) * inner + r);
        }
        return;
    }
#endif
    // Coordinates of i over dims (row-major), walked from the last dim.
    uint rest = i, a = 0u, b = 0u, c = 0u, cdim = 0u;
    for (uint d = nd; d > 0u; d--) {
        uint e = d - 1u, k = rest % p[5u + e];
        rest /= p[5u + e];
        if (e == dim)
            cdim = k;
        else {
            a += k * p[13u + e];
            b += k * p[21u + e];
            c += k * p[29u + e];
        }
    }
    if (mode == GATHER) {
        move(i, a + uint(idx[i]) * p[13u + dim]);
    } else if (mode == SELECT) {
        move(i, a + uint(idx[cdim]) * p[13u + dim]);
    } else if (mode == SCATTER_SET) {
        for (uint j = p[37]; j < p[38]; j++)
            move(a + uint(idx[b + j * p[21u + dim]]) * p[13u + dim], c + j * p[29u + dim]);
    }
#ifndef TD_S16
    else {
        // A: out strides, B: indices strides, C: value strides; dims has 1 at dim.
        for (uint j = p[37]; j < p[38]; j++) {
            uint o = a + uint(idx[b + j * p[21u + dim]]) * p[13u + dim];
            ADD_AT(mode, o, c + j * p[29u + dim]);
        }
    }
#endif
}
