// int_matmul, register-blocked: 64x64 tiles of C, 8x8 outputs per invocation (mmtile.glsl) on int32 words with wrapping (mod 2^32)
// products and sums, the product of two int32s mod 2^32 being the same in uint arithmetic.
// imwide.comp is the same with bigger blocks, for software devices.
#version 450
#extension GL_GOOGLE_include_directive : require
#define T uint
#define ZERO 0u
#define T4 uvec4
#define ZERO4 uvec4(0u)
#define RB 8
#define CQ 2
#include "mmtile.glsl"
