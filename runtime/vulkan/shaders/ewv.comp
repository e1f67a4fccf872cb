// Binary and ternary elementwise ops (ew.comp's op codes), vectorized: each invocation does
// 4 V elements with uvec4 loads and stores (a software device such as lavapipe runs
// every load and store as a loop over the lanes, so a quarter as many accesses pay). For
// inputs that have the result's shape or a single element (flags), no broadcast index math.
// Buffers come in size classes of at least 256 bytes (a multiple of 16), so the last, partial
// vector may be loaded whole; it is stored component by component, up to n.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { uvec4 a[]; };
layout(std430, binding = 2) readonly buffer B { uvec4 b[]; };
layout(std430, binding = 3) readonly buffer C { uvec4 c[]; };
layout(std430, binding = 4) writeonly buffer O { uvec4 o[]; };

// p: n, (unused), (unused), scalar. The op and which inputs are one element (broadcast) are
// specialization constants, one pipeline each: a software device runs every branch of a switch
// on a runtime value (masked), so a runtime op would cost all 24 ops for every element.
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint FL = 0u; // bit k: input k is one element

#include "math.glsl"

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
    uvec4 wa = (FL & 1u) != 0u ? uvec4(a[0].x) : a[j];
    uvec4 wb = (FL & 2u) != 0u ? uvec4(b[0].x) : b[j];
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
        uint left = n - 4u * j;
        if (left >= 4u) {
            o[j] = r;
        } else {
            for (uint k = 0u; k < left; k++)
                o[j][k] = r[k];
        }
    }
}
