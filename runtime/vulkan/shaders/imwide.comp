// int_matmul, register-blocked for software devices (lavapipe): 128x256 tiles of C, 16x32
// outputs per invocation (mmtile.glsl) on int32 words with wrapping (mod 2^32)
// products and sums, the product of two int32s mod 2^32 being the same in uint arithmetic. There every load is a loop over the SIMD lanes
// while arithmetic is vectorized, so the bigger a block (the more multiply-adds per load), the
// faster: 16x32 ran 1024x1024 in about half the time of 8x8 (bench_vulkan_matmul).
#version 450
#extension GL_GOOGLE_include_directive : require
#define T uint
#define ZERO 0u
#define T4 uvec4
#define ZERO4 uvec4(0u)
#define RB 16
#define CQ 8
#include "mmtile.glsl"
