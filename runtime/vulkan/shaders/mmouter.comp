// float_matmul for a small K, an outer product when K is 1 (mmouter.glsl).
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
#define T4 vec4
#define ZERO 0.0
#define ZERO4 vec4(0.0)
#endif
#include "mmouter.glsl"
