// Strided gather/scatter of 32-bit words: every layout op (reshape, permute, expand, slice, cat, ...).
#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer S { uint s[]; };
layout(std430, binding = 4) writeonly buffer D { uint dst[]; };

// p: n, ndim, src_off, dst_off, dims[8], src strides[8], dst strides[8]
void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (i >= p[0])
        return;
    uint si = p[2], di = p[3], rest = i;
    for (uint d = p[1]; d > 0u; d--) {
        uint k = rest % p[3u + d];
        rest /= p[3u + d];
        si += k * p[11u + d];
        di += k * p[19u + d];
    }
    dst[di] = s[si];
}
