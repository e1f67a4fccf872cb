// Stable sort, argsort and topk along a dim (a viewed as [outer, size, inner]) by ranks: an
// element's place in its sorted line is the number of elements that go before it, an equal
// element going before it when its index is lower (stability; NaN is the largest float).
// One thread per element; the rank pass counts over j in [j0, j1) and adds to the ranks of
// the previous dispatches (the host cuts a line into ranges of at most 4096: lavapipe ends a
// shader's loops after 65535 iterations in all). The scatter pass writes each element whose
// rank is below keep to place rank of its line in out (values, or indices for argsort).
// O(size^2) work per line.
#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint rk[]; };  // the ranks (scatter pass)
layout(std430, binding = 4) buffer O { uint o[]; };

// p: outer, size, inner, flags (1 float, 2 descending), j0, j1, keep, pass (0 rank, 1 values,
// 2 indices)
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

void main()
{
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint outer = p[0], size = p[1], inner = p[2], flags = p[3];
    if (t >= outer * size * inner)
        return;
    uint i = t % inner, k = (t / inner) % size, slab = t / (inner * size);
    uint base = slab * size * inner + i;
    uint pass = p[7];
    if (pass == 0u) {
        uint x = a[t], cnt = 0u;
        uint j0 = p[4], j1 = p[5];
        for (uint j = j0; j < j1; j++) {
            uint y = a[base + j * inner];
            if (before(y, x, flags) || (j < k && !before(x, y, flags)))
                cnt++;
        }
        o[t] = (j0 == 0u ? 0u : o[t]) + cnt;
        return;
    }
    uint r = rk[t], keep = p[6];
    if (r >= keep)
        return;
    o[slab * keep * inner + r * inner + i] = pass == 1u ? a[t] : k;
}
