// float_matmul, register-blocked for software devices (lavapipe): 128x256 tiles of C, 16x32
// outputs per invocation (mmtile.glsl). There every load is a loop over the SIMD lanes
// while arithmetic is vectorized, so the bigger a block (the more multiply-adds per load), the
// faster: 16x32 ran 1024x1024 in about half the time of 8x8 (bench_vulkan_matmul).
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
#ifdef TD_F64
#define T double
#define T4 dvec4
#define ZERO 0.0LF
#define ZERO4 dvec4(0.0LF)
#else
#define T float
#define ZERO 0.0
#define T4 vec4
#define ZERO4 vec4(0.0)
#endif
#define RB 16
#define CQ 8
#include "mmtile.glsl"
