// Batched matmul C[b] = A[b] x B[b] with broadcast batch dims: 16x16 tiles in shared memory.
// One dispatch covers the k range [k begin, k end) and adds to C when told to accumulate: the
// host cuts a long K, since lavapipe ends a shader's loops after 65535 iterations in all.
#version 450
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { float a[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };
layout(std430, binding = 4) buffer O { float o[]; };

// p: M, N, K, nb, batch dims[8], a batch strides[8], b batch strides[8], batch offset,
//    k begin, k end, accumulate
shared float ta[16][16];
shared float tb[16][16];

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
    float acc = 0.0;
    for (uint k0 = p[29]; k0 < kend; k0 += 16u) {
        ta[ly][lx] = (row < M && k0 + lx < kend) ? a[aoff + row * K + k0 + lx] : 0.0;
        tb[ly][lx] = (col < N && k0 + ly < kend) ? b[boff + (k0 + ly) * N + col] : 0.0;
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
