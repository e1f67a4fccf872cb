// float_dequantize of q8_0 / q4_0 blocks (qblock.glsl) into f32: one invocation per block, its
// 32 values written as 8 vec4s; exact (an f16 scale times a small integer is an f32). Parameters:
// the block count, the first block of this dispatch.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 4) writeonly buffer Y { vec4 y[]; };
layout(constant_id = 0) const uint KIND = 0u;

#include "half.glsl"
#include "qblock.glsl"

void main()
{
    const uint b = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
    if (b >= p[0])
        return;
    uint q[8];
    const float d = qb_load(b, q);
    if (KIND == 0u) {
        for (uint t = 0u; t < 8u; t++)
            y[b * 8u + t] = qb_vals(q[t], false) * d;
    } else {
        for (uint t = 0u; t < 4u; t++) {
            y[b * 8u + t] = qb_vals(q[t], false) * d;
            y[b * 8u + 4u + t] = qb_vals(q[t], true) * d;
        }
    }
}
