// 2-D convolution (cross-correlation) of x [N, C, H, W] with weight [O, C / groups, kh, kw]
// plus bias [O], and its two backward ops, one thread per result element:
//   op 0: forward, out [N, O, OH, OW]: bias + the sum over (c, ka, kb) of its group;
//   op 1: grad of x, [N, C, H, W]: the sum over (o of the group, ka, kb) of the grads whose
//         window reads this element, times the weight;
//   op 2: grad of weight, [O, C / groups, kh, kw]: the sum over (n, y, x) of grad times the
//         element of x the weight met there.
// Each dispatch covers the reduction indices [r0, r1) and adds to the result of the previous
// ones (the host cuts the reduction into ranges of 4096: lavapipe ends a shader's loops after
// 65535 iterations in all). Zero padding: places outside x are zeros that still multiply
// (0 * inf is NaN, as in the CPU's im2col + GEMM and in PyTorch) in the forward op and the
// weight's grad; the grad of x has no padded places.
// Built again with TD_HALF (f16 / bf16 operands widened exactly, f32 sums into an f32 o that the
// host rounds once) and TD_F64 (double throughout): xload.glsl.
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "xload.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { int p[]; };
XBUF(A, 1, a)     // x (op 0) or grad (1, 2)
XBUF(B, 2, b)     // weight (0, 1) or x (2)
XBUF(C, 3, bias)
layout(std430, binding = 4) buffer O { XT o[]; };

// p: N, C, H, W, O, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw, groups, op, r0, r1
void main()
{
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    int N = p[0], C = p[1], H = p[2], W = p[3], O = p[4], OH = p[5], OW = p[6], kh = p[7], kw = p[8];
    int sh = p[9], sw = p[10], ph = p[11], pw = p[12], dh = p[13], dw = p[14], groups = p[15], op = p[16];
    int r0 = p[17], r1 = p[18];
    int Cg = C / groups, Og = O / groups;
    XT acc = XZERO, init = XZERO;
    if (op == 0) {
        if (t >= uint(N) * uint(O) * uint(OH * OW))
            return;
        int xx = int(t % uint(OW)), y = int((t / uint(OW)) % uint(OH));
        int oc = int((t / uint(OW * OH)) % uint(O)), n = int(t / (uint(OW * OH) * uint(O)));
        int g = oc / Og;
        init = XLD(bias, oc);
        for (int r = r0; r < r1; r++) {
            int kb = r % kw, ka = (r / kw) % kh, c = r / (kw * kh);
            int ih = y * sh - ph + ka * dh, iw = xx * sw - pw + kb * dw;
            XT v = XZERO;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                v = XLD(a, uint(((n * C + g * Cg + c) * H + ih)) * uint(W) + uint(iw));
            acc += v * XLD(b, uint(((oc * Cg + c) * kh + ka) * kw + kb));
        }
    } else if (op == 1) {
        if (t >= uint(N) * uint(C) * uint(H * W))
            return;
        int iw = int(t % uint(W)), ih = int((t / uint(W)) % uint(H));
        int ci = int((t / uint(W * H)) % uint(C)), n = int(t / (uint(W * H) * uint(C)));
        int g = ci / Cg, c = ci % Cg;
        for (int r = r0; r < r1; r++) {
            int kb = r % kw, ka = (r / kw) % kh, oc = g * Og + r / (kw * kh);
            int ty = ih + ph - ka * dh, tx = iw + pw - kb * dw;
            if (ty < 0 || tx < 0 || ty % sh != 0 || tx % sw != 0)
                continue;
            int y = ty / sh, xx = tx / sw;
            if (y < OH && xx < OW)
                acc += XLD(a, uint((n * O + oc) * OH + y) * uint(OW) + uint(xx)) *
                       XLD(b, uint(((oc * Cg + c) * kh + ka) * kw + kb));
        }
    } else {
        if (t >= uint(O) * uint(Cg * kh * kw))
            return;
        int kb = int(t % uint(kw)), ka = int((t / uint(kw)) % uint(kh));
        int c = int((t / uint(kw * kh)) % uint(Cg)), oc = int(t / uint(kw * kh * Cg));
        int g = oc / Og;
        for (int r = r0; r < r1; r++) {
            int xx = r % OW, y = (r / OW) % OH, n = r / (OW * OH);
            int ih = y * sh - ph + ka * dh, iw = xx * sw - pw + kb * dw;
            XT v = XZERO;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                v = XLD(b, uint(((n * C + g * Cg + c) * H + ih)) * uint(W) + uint(iw));
            acc += XLD(a, uint((n * O + oc) * OH + y) * uint(OW) + uint(xx)) * v;
        }
    }
    o[t] = (r0 == 0 ? init : o[t]) + acc;
}
