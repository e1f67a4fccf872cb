// Binary and ternary elementwise ops (ew.comp's op codes), vectorized: each invocation does
// 4 V elements with uvec4 loads and stores (a software device such as lavapipe runs
// every load and store as a loop over the lanes, so a quarter as many accesses pay). For
// inputs that have the result's shape or a single element (flags), no broadcast index math.
// Buffers come in size classes of at least 256 bytes (a multiple of 16), so the last, partial
// vector may be loaded whole; it is stored component by component, up to n.
//
// Built three times (backend.cmake): as it stands on 32-bit words; with TD_HALF for f16 / bf16
// inputs (the float ops 0-11 only, computed in f32: each input widened exactly, the result
// rounded once to nearest even, half.glsl, as the CPU's "via f32"), reading 4 elements as two
// packed words (uvec2); with TD_HALF and TD_S16 reading them as a u16vec4 (16-bit storage).
// A 16-bit result is stored as 4 elements, a bool result as 4 words, either way as units of
// 8 bytes: the last, partial unit is stored whole (the elements past n are not part of the
// tensor; buffers are size classes of at least 256 bytes, so it lies inside).
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#define HV u16vec4
#else
#define HV uvec2
#endif
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#ifdef TD_HALF
layout(std430, binding = 1) readonly buffer A { HV a[]; };
layout(std430, binding = 2) readonly buffer B { HV b[]; };
layout(std430, binding = 4) writeonly buffer O { HV o[]; };
#else
layout(std430, binding = 1) readonly buffer A { uvec4 a[]; };
layout(std430, binding = 2) readonly buffer B { uvec4 b[]; };
layout(std430, binding = 3) readonly buffer C { uvec4 c[]; };
layout(std430, binding = 4) writeonly buffer O { uvec4 o[]; };
#endif

// p: n, (unused), (unused), scalar. The op and which inputs are one element (broadcast) are
// specialization constants, one pipeline each: a software device runs every branch of a switch
// on a runtime value (masked), so a runtime op would cost all 24 ops for every element.
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint FL = 0u; // bit k: input k is one element
layout(constant_id = 2) const uint DT = 1u; // TD_HALF: the inputs' dtype (half.glsl: DT_F16, DT_BF16)

#include "math.glsl"
#ifdef TD_HALF
#include "half.glsl"

// 4 16-bit elements as 16-bit values, from a buffer element (16-bit values live only in buffers).
#ifdef TD_S16
#define HALVES(v) uvec4(v)
#else
#define HALVES(v) uvec4((v).x & 0xffffu, (v).x >> 16, (v).y & 0xffffu, (v).y >> 16)
#endif

uvec4 widen(uvec4 h)
{
    return uvec4(to_f32(DT, h.x), to_f32(DT, h.y), to_f32(DT, h.z), to_f32(DT, h.w));
}

uvec4 narrow(uvec4 r)
{
    return uvec4(from_f32(DT, r.x), from_f32(DT, r.y), from_f32(DT, r.z), from_f32(DT, r.w));
}

// Stores 4 16-bit values (h) as the unit j of o.
void store4(uint j, uvec4 h)
{
#ifdef TD_S16
    o[j] = u16vec4(h);
#else
    o[j] = uvec2(h.x | (h.y << 16), h.z | (h.w << 16));
#endif
}
#endif

int idiv(int x, int y)
{
    return y == -1 ? int(0u - uint(x)) : x / y;
}

int irem(int x, int y)
{
    if (y == -1 || y == 0)
        return 0;
    int r = int(uint(x) - uint(idiv(x, y)) * uint(y));
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

bvec4 or4(bvec4 u, bvec4 v)
{
    return notEqual(uvec4(u) | uvec4(v), uvec4(0u));
}

bvec4 and4(bvec4 u, bvec4 v)
{
    return notEqual(uvec4(u) & uvec4(v), uvec4(0u));
}

// Vectors per invocation: V, strided by the grid's invocation count T (the host dispatches
// ceil(n / (4 V)) invocations, so V T vectors cover n): neighbouring invocations touch
// neighbouring vectors, as a GPU's memory wants.
#define V 4u

uvec4 apply(uint j)
{
#ifdef TD_HALF
    uvec4 wa = widen((FL & 1u) != 0u ? uvec4(HALVES(a[0]).x) : HALVES(a[j]));
    uvec4 wb = widen((FL & 2u) != 0u ? uvec4(HALVES(b[0]).x) : HALVES(b[j]));
#else
    uvec4 wa = (FL & 1u) != 0u ? uvec4(a[0].x) : a[j];
    uvec4 wb = (FL & 2u) != 0u ? uvec4(b[0].x) : b[j];
#endif
    vec4 x = uintBitsToFloat(wa), y = uintBitsToFloat(wb);
    uvec4 r = uvec4(0u);
    switch (OP) {
    case 0u: r = floatBitsToUint(x + y); break;
    case 1u: r = floatBitsToUint(x - y); break;
    case 2u: r = floatBitsToUint(x * y); break;
    case 3u: r = floatBitsToUint(x / y); break;
    case 4u:
        for (int k = 0; k < 4; k++)
            r[k] = floatBitsToUint(pow_(x[k], y[k]));
        break;
    case 5u: r = mix(wb, wa, or4(isnan(x), greaterThan(x, y))); break;
    case 6u: r = mix(wb, wa, or4(isnan(x), lessThan(x, y))); break;
    case 7u: r = uvec4(equal(x, y)); break;
    case 8u: r = uvec4(greaterThan(x, y)); break;
    case 9u: r = uvec4(greaterThanEqual(x, y)); break;
    case 10u: r = uvec4(lessThan(x, y)); break;
    case 11u: r = uvec4(lessThanEqual(x, y)); break;
#ifndef TD_HALF
    case 12u: r = wa + wb; break;
    case 13u: r = wa - wb; break;
    case 14u: r = wa * wb; break;
    case 15u:
        for (int k = 0; k < 4; k++)
            r[k] = wb[k] == 0u ? 0u : uint(idiv(int(wa[k]), int(wb[k])));
        break;
    case 16u:
        for (int k = 0; k < 4; k++)
            r[k] = uint(irem(int(wa[k]), int(wb[k])));
        break;
    case 17u: r = uvec4(equal(ivec4(wa), ivec4(wb))); break;
    case 18u: r = uvec4(greaterThan(ivec4(wa), ivec4(wb))); break;
    case 19u: r = uvec4(lessThan(ivec4(wa), ivec4(wb))); break;
    case 20u: r = uvec4(and4(notEqual(wa, uvec4(0u)), notEqual(wb, uvec4(0u)))); break;
    case 21u: r = uvec4(or4(notEqual(wa, uvec4(0u)), notEqual(wb, uvec4(0u)))); break;
    case 22u: {
        uvec4 wc = (FL & 4u) != 0u ? uvec4(c[0].x) : c[j];
        r = mix(wa, wc, notEqual(wb, uvec4(0u)));
        break;
    }
    default: r = mix(wa, uvec4(p[3]), notEqual(wb, uvec4(0u))); break; // 23: mask_fill
#endif
    }
    return r;
}

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint n = p[0];
    uint nv = (n + 3u) / 4u, t = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u;
    for (uint v = 0u; v < V; v++) {
        uint j = i + v * t;
        if (j >= nv)
            return;
        uvec4 r = apply(j);
#ifdef TD_HALF
        if (OP >= 7u) { // a comparison: bools, one word each, as (low, high) halves
            store4(2u * j, uvec4(r.x, 0u, r.y, 0u));
            store4(2u * j + 1u, uvec4(r.z, 0u, r.w, 0u));
        } else {
            store4(j, narrow(r));
        }
#else
        uint left = n - 4u * j;
        if (left >= 4u) {
            o[j] = r;
        } else {
            for (uint k = 0u; k < left; k++)
                o[j][k] = r[k];
        }
#endif
    }
}
