// The element type of the conv / pool / scan shaders in each of their builds (backend.cmake),
// for buffers of float elements declared with XBUF(block, binding, array) and read with
// XLD(array, i) (element i, an XT):
//   plain: f32 words, computed in f32 (XT float);
//   TD_HALF: f16 / bf16 elements (the constant DT, half.glsl's DT_F16 or DT_BF16), uint16_t
//     with TD_S16 (16-bit storage) or halves of packed 32-bit words, widened exactly to f32 as
//     they are loaded and computed in f32 (XT float): the shader's result is an f32 buffer
//     that the host rounds once into the 16-bit result (cvt.comp);
//   TD_F64: doubles, computed in double (XT double; only where the device has shaderFloat64).
// XZERO is XT's zero, XNEG_INF its -infinity.
#ifdef TD_HALF
#include "half.glsl"
layout(constant_id = 0) const uint DT = 1u;
#define XT float
#ifdef TD_S16
#define XBUF(blk, n, arr) layout(std430, binding = n) readonly buffer blk { uint16_t arr[]; };
#define XLD(arr, i) uintBitsToFloat(to_f32(DT, uint(arr[i])))
#else
#define XBUF(blk, n, arr) layout(std430, binding = n) readonly buffer blk { uint arr[]; };
#define XLD(arr, i) uintBitsToFloat(to_f32(DT, (arr[uint(i) >> 1u] >> ((uint(i) & 1u) * 16u)) & 0xffffu))
#endif
#elif defined(TD_F64)
#define XT double
#define XBUF(blk, n, arr) layout(std430, binding = n) readonly buffer blk { double arr[]; };
#define XLD(arr, i) arr[i]
#else
#define XT float
#define XBUF(blk, n, arr) layout(std430, binding = n) readonly buffer blk { float arr[]; };
#define XLD(arr, i) arr[i]
#endif
#define XZERO XT(0.0)
#define XNEG_INF XT(uintBitsToFloat(0xff800000u))
