// 2-D max and average pooling of x [N, C, H, W] (planes = N * C) and their backward ops, as
// runtime/cpu/cpu_module.c, to the bit where the CPU's order of additions is kept:
//   op 0: max pool, one thread per output: the window's maximum (a NaN wins, the last one;
//         else the first maximum; padding never wins);
//   op 1: the same window's argmax (its place in the plane) into o, for op 2;
//   op 2: max pool backward, one thread per element of x: the grads of the windows whose
//         argmax (c, from op 1) it is, added in window order (the CPU's order);
//   op 3: average pool, one thread per output: the clipped window's sum in row-major order,
//         divided as PyTorch (count_include_pad);
//   op 4: average pool backward, one thread per element of x: grad / divisor of every window
//         that holds it, in window order.
// Window loops are bounded by the host (lavapipe ends a shader's loops after 65535
// iterations in all).
// Built again with TD_HALF (f16 / bf16 elements widened exactly, f32 sums into an f32 result
// that the host rounds once) and TD_F64 (double throughout): xload.glsl. Op 1's argmaxes are
// int32 words in every build.
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "xload.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { int p[]; };
XBUF(A, 1, a)  // x (ops 0, 1, 3) or grad (2, 4)
layout(std430, binding = 3) readonly buffer C { int c[]; };    // op 2: the argmaxes of op 1
layout(std430, binding = 4) writeonly buffer O { uint o[]; };  // op 1
layout(std430, binding = 4) writeonly buffer OX { XT ox[]; };  // the others

// p: planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, op, include_pad
int h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;

int argmax_at(uint pbase, int i, int j)
{
    int best = -1;
    XT m = XZERO;
    for (int ka = 0; ka < kh; ka++) {
        int ih = i * sh - ph + ka * dh;
        if (ih < 0 || ih >= h)
            continue;
        for (int kb = 0; kb < kw; kb++) {
            int iw = j * sw - pw + kb * dw;
            if (iw < 0 || iw >= w)
                continue;
            XT v = XLD(a, pbase + uint(ih * w + iw));
            if (best < 0 || v > m || isnan(v)) {
                m = v;
                best = ih * w + iw;
            }
        }
    }
    return best;
}

// The clipped window (i, j) of an average pool and its divisor.
XT avg_window(int i, int j, bool include_pad, out int h0, out int h1, out int w0, out int w1)
{
    int hs = i * sh - ph, ws = j * sw - pw;
    int he = min(hs + kh, h + ph), we = min(ws + kw, w + pw);
    int padded = (he - hs) * (we - ws);
    h0 = max(hs, 0);
    w0 = max(ws, 0);
    h1 = min(he, h);
    w1 = min(we, w);
    return XT(include_pad ? padded : (h1 - h0) * (w1 - w0));
}

// ceil(x / y) for y > 0
int cdiv(int x, int y)
{
    return x >= 0 ? (x + y - 1) / y : -((-x) / y);
}

// floor(x / y) for y > 0
int fdiv(int x, int y)
{
    return x >= 0 ? x / y : -((-x + y - 1) / y);
}

void main()
{
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint planes = uint(p[0]);
    h = p[1]; w = p[2]; oh = p[3]; ow = p[4]; kh = p[5]; kw = p[6]; sh = p[7]; sw = p[8];
    ph = p[9]; pw = p[10]; dh = p[11]; dw = p[12];
    int op = p[13];
    bool include_pad = p[14] != 0;
    if (op == 2 || op == 4) {
        if (t >= planes * uint(h * w))
            return;
        uint pl = t / uint(h * w);
        int at = int(t % uint(h * w)), ih = at / w, iw = at % w;
        uint gbase = pl * uint(oh * ow);
        int ext_h = op == 2 ? (kh - 1) * dh : kh - 1, ext_w = op == 2 ? (kw - 1) * dw : kw - 1;
        int i0 = max(cdiv(ih + ph - ext_h, sh), 0), i1 = min(fdiv(ih + ph, sh), oh - 1);
        int j0 = max(cdiv(iw + pw - ext_w, sw), 0), j1 = min(fdiv(iw + pw, sw), ow - 1);
        XT s = XZERO;
        for (int i = i0; i <= i1; i++)
            for (int j = j0; j <= j1; j++) {
                uint g = gbase + uint(i * ow + j);
                if (op == 2) {
                    if (c[g] == at)
                        s += XLD(a, g);
                } else {
                    int h0, h1, w0, w1;
                    XT div = avg_window(i, j, include_pad, h0, h1, w0, w1);
                    if (ih >= h0 && ih < h1 && iw >= w0 && iw < w1)
                        s += XLD(a, g) / div;
                }
            }
        ox[t] = s;
        return;
    }
    if (t >= planes * uint(oh * ow))
        return;
    uint pl = t / uint(oh * ow);
    int r = int(t % uint(oh * ow)), i = r / ow, j = r % ow;
    uint pbase = pl * uint(h * w);
    if (op == 3) {
        int h0, h1, w0, w1;
        XT div = avg_window(i, j, include_pad, h0, h1, w0, w1);
        XT s = XZERO;
        for (int ih = h0; ih < h1; ih++)
            for (int iw = w0; iw < w1; iw++)
                s += XLD(a, pbase + uint(ih * w + iw));
        ox[t] = s / div;
        return;
    }
    int best = argmax_at(pbase, i, j);
    if (op == 1)
        o[t] = uint(best);
    else
        ox[t] = best < 0 ? XNEG_INF : XLD(a, pbase + uint(best));
}
