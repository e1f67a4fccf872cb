// float_matmul, register-blocked 64x64 tiles (mmtile.glsl; matmul.comp is the one-output-per-
// invocation kernel it replaced, kept for td_vulkan_set_matmul_kernel).
#version 450
#extension GL_GOOGLE_include_directive : require
#define T float
#define ZERO 0.0
#define T4 vec4
#define ZERO4 vec4(0.0)
#include "mmtile.glsl"
