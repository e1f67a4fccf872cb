// Broadcasting binary and ternary elementwise ops (arithmetic, comparisons, masks).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 3) readonly buffer C { uint c[]; };
layout(std430, binding = 4) writeonly buffer O { uint o[]; };

// p: n, op, ndim, scalar, dims[8], stride a[8], stride b[8], stride c[8]

#include "math.glsl"

// The op: p[1], or a specialization constant (vk_dispatch_ew), which folds the switch: a
// software device runs every case of a switch on a runtime value, masked, for every element.
layout(constant_id = 0) const uint OPC = 0xffffffffu;

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

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (i >= p[0])
        return;
    uint op = OPC != 0xffffffffu ? OPC : p[1], nd = p[2];
    uint ia = 0u, ib = 0u, ic = 0u, rest = i;
    for (uint d = nd; d > 0u; d--) {
        uint k = rest % p[3u + d];
        rest /= p[3u + d];
        ia += k * p[11u + d];
        ib += k * p[19u + d];
        ic += k * p[27u + d];
    }
    uint wa = a[ia], wb = b[ib];
    float x = uintBitsToFloat(wa), y = uintBitsToFloat(wb);
    int xi = int(wa), yi = int(wb);
    uint r = 0u;
    switch (op) {
    case 0u: r = floatBitsToUint(x + y); break;
    case 1u: r = floatBitsToUint(x - y); break;
    case 2u: r = floatBitsToUint(x * y); break;
    case 3u: r = floatBitsToUint(x / y); break;
    case 4u: r = floatBitsToUint(pow_(x, y)); break;
    case 5u: r = (isnan(x) || x > y) ? wa : wb; break;
    case 6u: r = (isnan(x) || x < y) ? wa : wb; break;
    case 7u: r = x == y ? 1u : 0u; break;
    case 8u: r = x > y ? 1u : 0u; break;
    case 9u: r = x >= y ? 1u : 0u; break;
    case 10u: r = x < y ? 1u : 0u; break;
    case 11u: r = x <= y ? 1u : 0u; break;
    case 12u: r = wa + wb; break;
    case 13u: r = wa - wb; break;
    case 14u: r = wa * wb; break;
    case 15u: r = yi == 0 ? 0u : uint(idiv(xi, yi)); break;
    case 16u: r = uint(irem(xi, yi)); break;
    case 17u: r = xi == yi ? 1u : 0u; break;
    case 18u: r = xi > yi ? 1u : 0u; break;
    case 19u: r = xi < yi ? 1u : 0u; break;
    case 20u: r = (wa != 0u && wb != 0u) ? 1u : 0u; break;
    case 21u: r = (wa != 0u || wb != 0u) ? 1u : 0u; break;
    case 22u: r = wb != 0u ? c[ic] : wa; break;
    default: r = wb != 0u ? p[3] : wa; break;                 // 23: mask_fill
    }
    o[i] = r;
}
