// Float dtype conversions on the device (td_float_cast and the "via f32" copies): f32, f16 and
// bf16 in any direction, bit for bit as the CPU (half.glsl). Each invocation converts a pair of
// elements, 2k and 2k + 1, so that a 16-bit result is one whole 32-bit word: with TD_S16 (the
// device's storageBuffer16BitAccess) every buffer is read and written as uint16_t, f32 as two
// halves; without it as uint words, a 16-bit element being half a word.
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#ifdef TD_S16
layout(std430, binding = 1) readonly buffer A { uint16_t a[]; };
layout(std430, binding = 4) writeonly buffer O { uint16_t o[]; };
#else
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 4) writeonly buffer O { uint o[]; };
#endif
layout(constant_id = 0) const uint FROM = 0u;
layout(constant_id = 1) const uint TO = 0u;

#include "half.glsl"

// Element i of the source as f32 bits.
uint load(uint i)
{
#ifdef TD_S16
    if (FROM == DT_F32)
        return uint(a[2u * i]) | (uint(a[2u * i + 1u]) << 16);
    return to_f32(FROM, uint(a[i]));
#else
    if (FROM == DT_F32)
        return a[i];
    return to_f32(FROM, (a[i >> 1] >> ((i & 1u) * 16u)) & 0xffffu);
#endif
}

void main()
{
    uint k = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint n = p[0];
    uint i = 2u * k;
    if (i >= n)
        return;
    bool two = i + 1u < n;
    uint x0 = load(i), x1 = two ? load(i + 1u) : 0u;
#ifdef TD_S16
    if (TO == DT_F32) {
        o[2u * i] = uint16_t(x0 & 0xffffu);
        o[2u * i + 1u] = uint16_t(x0 >> 16);
        if (two) {
            o[2u * i + 2u] = uint16_t(x1 & 0xffffu);
            o[2u * i + 3u] = uint16_t(x1 >> 16);
        }
    } else {
        o[i] = uint16_t(from_f32(TO, x0));
        if (two)
            o[i + 1u] = uint16_t(from_f32(TO, x1));
    }
#else
    if (TO == DT_F32) {
        o[i] = x0;
        if (two)
            o[i + 1u] = x1;
    } else {
        // the word's upper half past the last element is zero: buffers are whole words
        o[k] = from_f32(TO, x0) | (from_f32(TO, x1) << 16);
    }
#endif
}
