// The operands A (binding 1) and B (binding 2) of the matmul shaders (mmtile.glsl, mmthin.glsl,
// mmouter.glsl), read through LA(i) / LB(i) (element i, a T) and LA4(q) / LB4(q) (elements
// 4q .. 4q+3, a T4; only where the host says the quad is aligned and inside the matrix).
// As built plainly, a[] / b[] hold T words. With TD_HALF they hold f16 / bf16 (the constant DT,
// half.glsl's DT_F16 or DT_BF16), read as uint16_t / u16vec4 with TD_S16 (16-bit storage) or as
// halves of packed 32-bit words (uint / uvec2), and widened exactly to f32 (half.glsl, integer
// arithmetic): the including shader keeps T = float, so products are summed in f32 and C is f32
// (the host rounds it once into the 16-bit result on the device, cvt.comp).
#ifdef TD_HALF
#include "half.glsl"
layout(constant_id = 2) const uint DT = 1u;
#ifdef TD_S16
layout(std430, binding = 1) readonly buffer A { uint16_t a[]; };
layout(std430, binding = 1) readonly buffer A4 { u16vec4 a4[]; };
layout(std430, binding = 2) readonly buffer B { uint16_t b[]; };
layout(std430, binding = 2) readonly buffer B4 { u16vec4 b4[]; };
#define H1(arr, i) uint(arr[i])
#define H4(v) uvec4(v)
#else
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer A4 { uvec2 a4[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 2) readonly buffer B4 { uvec2 b4[]; };
#define H1(arr, i) ((arr[(i) >> 1u] >> (((i) & 1u) * 16u)) & 0xffffu)
#define H4(v) uvec4((v).x & 0xffffu, (v).x >> 16u, (v).y & 0xffffu, (v).y >> 16u)
#endif
float widen1(uint h)
{
    return uintBitsToFloat(to_f32(DT, h));
}
vec4 widen4(uvec4 h)
{
    return vec4(widen1(h.x), widen1(h.y), widen1(h.z), widen1(h.w));
}
#define LA(i) widen1(H1(a, i))
#define LB(i) widen1(H1(b, i))
#define LA4(q) widen4(H4(a4[q]))
#define LB4(q) widen4(H4(b4[q]))
#else
layout(std430, binding = 1) readonly buffer A { T a[]; };
layout(std430, binding = 1) readonly buffer A4 { T4 a4[]; };
layout(std430, binding = 2) readonly buffer B { T b[]; };
layout(std430, binding = 2) readonly buffer B4 { T4 b4[]; };
#define LA(i) a[i]
#define LB(i) b[i]
#define LA4(q) a4[q]
#define LB4(q) b4[q]
#endif
