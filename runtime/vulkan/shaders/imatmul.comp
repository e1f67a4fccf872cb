// int_matmul: matmul.comp on int32 words with wrapping (mod 2^32) products and sums, the
// product of two int32s mod 2^32 being the same in uint arithmetic. Same parameters, tiles
// and k chunking (lavapipe ends a shader's loops after 65535 iterations in all).
#version 450
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 4) buffer O { uint o[]; };

// p: M, N, K, nb, batch dims[8], a batch strides[8], b batch strides[8], batch offset,
//    k begin, k end, accumulate
shared uint ta[16][16];
shared uint tb[16][16];

void main()
{
    uint M = p[0], N = p[1], K = p[2], nb = p[3];
    uint batch = gl_WorkGroupID.z + p[28];
    uint aoff = 0u, boff = 0u, rest = batch;
    for (uint d = nb; d > 0u; d--) {
        uint k = rest % p[3u + d];
        rest /= p[3u + d];
        aoff += k * p[11u + d];
        boff += k * p[19u + d];
    }
    aoff *= M * K;
    boff *= K * N;
    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    uint col = gl_WorkGroupID.x * 16u + lx, row = gl_WorkGroupID.y * 16u + ly;
    uint kend = p[30];
    uint acc = 0u;
    for (uint k0 = p[29]; k0 < kend; k0 += 16u) {
        ta[ly][lx] = (row < M && k0 + lx < kend) ? a[aoff + row * K + k0 + lx] : 0u;
        tb[ly][lx] = (col < N && k0 + ly < kend) ? b[boff + (k0 + ly) * N + col] : 0u;
        barrier();
        for (uint k = 0u; k < 16u; k++)
            acc += ta[ly][k] * tb[k][lx];
        barrier();
    }
    if (row < M && col < N) {
        uint at = batch * M * N + row * N + col;
        o[at] = p[31] != 0u ? o[at] + acc : acc;
    }
}
