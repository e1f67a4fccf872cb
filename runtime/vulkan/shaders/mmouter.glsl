// Batched matmul for a small K (an outer product when K is 1), included by mmouter.comp (float)
// and imouter.comp (uint words), which define T, T4, ZERO and ZERO4. With K small the work is
// the stores of C: M x N of them for 2 K flops each. On lavapipe every load or store is a loop
// over the SIMD lanes, and both sides of a branch on a value it cannot see run (masked), so:
//  - each invocation writes RB rows of C (a workgroup's size apart) by QB column quads, as vec4
//    stores, from QB quads of B and RB words of A per k;
//  - every invocation of a workgroup has the same columns (the workgroup's x; rows go along the
//    invocations), so B's quads are read at one address across the SIMD vector;
//  - whether N is a multiple of 4 (then B's rows and C's are aligned quads) and whether this
//    dispatch adds to C (k ranges after the first) are specialization constants, one pipeline
//    each: no masked-off accumulate load or word-by-word store left in the shader;
//  - reads past the last row or column are clamped (never a branch around a load); only the
//    stores are guarded.
// Rows go along x (local) and y (workgroups), blocks of columns along x (workgroups), batches
// along z; the host adds row, column-block and batch offsets when a grid would be too large.
// One dispatch covers the k range [k begin, k end) (the only loop, short when K is; the host cuts
// a long K: lavapipe ends a shader's loops after 65535 iterations in all). Each output sums its
// products in k order.
#define QB 8u // column quads per invocation (vk_kernels_matmul.c: VK_MMOUTER_COLS = 4 QB)
#define RB 4u // rows per invocation, a workgroup apart (VK_MMOUTER_ROWS = 64 RB)
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#include "mmload.glsl"
layout(std430, binding = 4) buffer O { T o[]; };
layout(std430, binding = 4) buffer O4 { T4 o4[]; };

layout(constant_id = 0) const uint QUADS = 0u; // N % 4 == 0
layout(constant_id = 1) const uint ACC = 0u;   // add to C

// p: M, N, K, nb, batch dims[8], a batch strides[8], b batch strides[8], batch offset, k begin,
//    k end, accumulate (unread: ACC says it), then the row offset and the column-block offset
//    (in blocks of QB quads)
void main()
{
    uint M = p[0], N = p[1], K = p[2], nb = p[3];
    uint r0 = gl_WorkGroupID.y * (gl_WorkGroupSize.x * RB) + gl_LocalInvocationID.x + p[32];
    uint c = (gl_WorkGroupID.x + p[33]) * (4u * QB); // the first column of the block
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
    uint arow[RB];
    for (uint i = 0u; i < RB; i++)
        arow[i] = aoff + min(r0 + i * gl_WorkGroupSize.x, M - 1u) * K;
    uint cbase = batch * M * N;
    uint k0 = p[29], kend = p[30];
    if (QUADS != 0u) {
        uint nq = N >> 2u, q = c >> 2u;
        T4 acc[RB][QB];
        for (uint i = 0u; i < RB; i++)
            for (uint j = 0u; j < QB; j++)
                acc[i][j] = ZERO4;
        for (uint k = k0; k < kend; k++) {
            uint bq = (boff + k * N) >> 2u;
            T4 bv[QB];
            for (uint j = 0u; j < QB; j++)
                bv[j] = LB4(bq + min(q + j, nq - 1u));
            for (uint i = 0u; i < RB; i++) {
                T x = LA(arow[i] + k);
                for (uint j = 0u; j < QB; j++)
                    acc[i][j] += bv[j] * x;
            }
        }
        for (uint i = 0u; i < RB; i++) {
            uint r = r0 + i * gl_WorkGroupSize.x, oq = (cbase + r * N) >> 2u;
            for (uint j = 0u; j < QB; j++)
                if (r < M && q + j < nq) {
                    T4 v = acc[i][j];
                    if (ACC != 0u)
                        v += o4[oq + q + j];
                    o4[oq + q + j] = v;
                }
        }
        return;
    }
    T acc[RB][4u * QB];
    for (uint i = 0u; i < RB; i++)
        for (uint j = 0u; j < 4u * QB; j++)
            acc[i][j] = ZERO;
    for (uint k = k0; k < kend; k++) {
        uint bk = boff + k * N;
        T bv[4u * QB];
        for (uint j = 0u; j < 4u * QB; j++)
            bv[j] = LB(bk + min(c + j, N - 1u));
        for (uint i = 0u; i < RB; i++) {
            T x = LA(arow[i] + k);
            for (uint j = 0u; j < 4u * QB; j++)
                acc[i][j] += bv[j] * x;
        }
    }
    for (uint i = 0u; i < RB; i++) {
        uint r = r0 + i * gl_WorkGroupSize.x, o0 = cbase + r * N;
        for (uint j = 0u; j < 4u * QB; j++)
            if (r < M && c + j < N) {
                T v = acc[i][j];
                if (ACC != 0u)
                    v += o[o0 + c + j];
                o[o0 + c + j] = v;
            }
    }
}
