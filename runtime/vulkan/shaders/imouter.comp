// int_matmul for a small K (mmouter.glsl) on int32 words, wrapping (mod 2^32) as imatmul.comp.
#version 450
#extension GL_GOOGLE_include_directive : require
#define T uint
#define T4 uvec4
#define ZERO 0u
#define ZERO4 uvec4(0u)
#include "mmouter.glsl"
