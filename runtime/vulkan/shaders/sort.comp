// Stable sort, argsort and topk along a dim (a viewed as [outer, size, inner], lines
// l = slab * inner + i) by a merge sort in passes, one thread per element and no loop longer
// than a block (lavapipe ends a shader's loops after 65535 iterations in all):
//   pass 0: blocks of BLOCK elements of each line sorted by ranks (an element's place is the
//           number of elements of its block that go before it, an equal one going before it
//           when its index is lower), into (key, index) pairs, line-major;
//   pass 1: runs of width w merged pairwise: an element's place is its place in its run plus
//           the number of elements of the other run that go before it (a binary search: the
//           left run's equal elements go before a right one's, never the other way: stable);
//   pass 2: the first keep pairs of each line written to out (keys, or indices for argsort).
// NaN sorts as the largest float.
// Built again with TD_HALF (xload.glsl): pass 0 reads f16 / bf16 keys and widens them exactly
// to f32 words, so the later passes and the kept keys are f32 (the host rounds the kept keys,
// exact, into the 16-bit result). Built once more with TD_F64 (only where the device has
// shaderFloat64; every pass on it): keys are doubles, the entries (key low word, key high word,
// index) triples, the kept keys doubles.
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "xload.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#ifdef TD_F64
layout(std430, binding = 1) readonly buffer A { double a[]; };
layout(std430, binding = 2) readonly buffer B { uint s[]; };  // entries of the last pass
layout(std430, binding = 4) writeonly buffer O { uint o[]; };
#define ES 3u                                 // words an entry: key (two), index
#define KT double
#define KEY(i) a[i]
#define SKEY(e) packDouble2x32(uvec2(s[ES * (e)], s[ES * (e) + 1u]))
void put(uint e, KT k, uint idx)
{
    uvec2 w = unpackDouble2x32(k);
    o[ES * e] = w.x;
    o[ES * e + 1u] = w.y;
    o[ES * e + 2u] = idx;
}
#else
#ifdef TD_HALF
XBUF(A, 1, a)
#define KEY(i) floatBitsToUint(XLD(a, i))
#else
layout(std430, binding = 1) readonly buffer A { uint a[]; };
#define KEY(i) a[i]
#endif
layout(std430, binding = 2) readonly buffer B { uint s[]; };  // (key, index) pairs of the last pass
layout(std430, binding = 4) writeonly buffer O { uint o[]; };
#define ES 2u
#define KT uint
#define SKEY(e) s[ES * (e)]
void put(uint e, KT k, uint idx)
{
    o[ES * e] = k;
    o[ES * e + 1u] = idx;
}
#endif

#define BLOCK 256u

// p: outer, size, inner, flags (1 float, 2 descending), w, pass, keep
#ifdef TD_F64
bool before(double fx, double fy, uint flags)
{
    bool desc = (flags & 2u) != 0u;
    bool nx = isnan(fx), ny = isnan(fy);
    return desc ? (fx > fy || (nx && !ny)) : (fx < fy || (ny && !nx));
}
#else
bool before(uint x, uint y, uint flags)
{
    bool desc = (flags & 2u) != 0u;
    if ((flags & 1u) != 0u) {
        float fx = uintBitsToFloat(x), fy = uintBitsToFloat(y);
        bool nx = isnan(fx), ny = isnan(fy);
        return desc ? (fx > fy || (nx && !ny)) : (fx < fy || (ny && !nx));
    }
    int ix = int(x), iy = int(y);
    return desc ? ix > iy : ix < iy;
}
#endif

void main()
{
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint outer = p[0], size = p[1], inner = p[2], flags = p[3], w = p[4], pass = p[5], keep = p[6];
    if (pass == 2u) {
        if (t >= outer * inner * keep)
            return;
        uint l = t / keep, r = t % keep;
        uint slab = l / inner, i = l % inner;
        uint at = (slab * keep + r) * inner + i, e = l * size + r;
        if ((flags & 4u) != 0u) {
            o[at] = s[ES * e + ES - 1u];
        } else {
#ifdef TD_F64
            o[2u * at] = s[ES * e];
            o[2u * at + 1u] = s[ES * e + 1u];
#else
            o[at] = s[ES * e];
#endif
        }
        return;
    }
    if (t >= outer * size * inner)
        return;
    uint l = t / size, k = t % size;
    uint line = l * size;
    if (pass == 0u) {
        uint slab = l / inner, i = l % inner;
        uint abase = slab * size * inner + i;
        KT x = KEY(abase + k * inner);
        uint b0 = k - k % BLOCK, b1 = min(b0 + BLOCK, size);
        uint r = b0;
        for (uint j = b0; j < b1; j++) {
            KT y = KEY(abase + j * inner);
            if (before(y, x, flags) || (j < k && !before(x, y, flags)))
                r++;
        }
        put(line + r, x, k);
        return;
    }
    uint st = k - k % (2u * w);
    uint mid = min(st + w, size), end = min(st + 2u * w, size);
    KT x = SKEY(line + k);
    uint xi = s[ES * (line + k) + ES - 1u];
    uint lo, hi, place;
    bool left = k < mid;
    if (left) {               // right-run elements strictly before x: a prefix of [mid, end)
        lo = mid;
        hi = end;
        place = k - st;
    } else {                  // left-run elements not after x: a prefix of [st, mid)
        lo = st;
        hi = mid;
        place = k - mid;
    }
    uint first = lo;
    while (lo < hi) {         // the first position whose element does not count
        uint m = lo + (hi - lo) / 2u;
        KT y = SKEY(line + m);
        bool counts = left ? before(y, x, flags) : !before(x, y, flags);
        if (counts)
            lo = m + 1u;
        else
            hi = m;
    }
    place += lo - first;
    put(line + st + place, x, xi);
}
