// float_matmul for a small K, an outer product when K is 1 (mmouter.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#define T float
#define T4 vec4
#define ZERO 0.0
#define ZERO4 vec4(0.0)
#include "mmouter.glsl"
