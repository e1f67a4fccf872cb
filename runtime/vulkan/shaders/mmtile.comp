// float_matmul, register-blocked: 64x64 tiles of C, 8x8 outputs per invocation (mmtile.glsl).
// mmwide.comp is the same with bigger blocks, for software devices.
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
#define RB 8
#define CQ 2
#include "mmtile.glsl"
