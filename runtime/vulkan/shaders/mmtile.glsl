// Register-blocked batched matmul C[b] = A[b] x B[b] (broadcast batch dims), included by
// mmtile.comp / mmwide.comp (float) and imtile.comp / imwide.comp (uint words: the wrapping
// int_matmul; mmtile / mmwide also with TD_HALF or TD_F64, backend.cmake: A and B are read
// through mmload.glsl), which define T, T4, ZERO, ZERO4 and the block: RB rows by CQ column quads (4
// columns each) per invocation. A workgroup of 8x8 invocations computes a tile of C of 8 RB rows
// by 32 CQ columns; an invocation its rows ly + 8 i (i < RB) and column quads lx + 8 j (j < CQ),
// so that neighbouring invocations touch neighbouring words. A and B pass through shared memory
// in k slices of 16 (A's 8 RB x 16 row-major, B's 16 x 32 CQ), in quads of 4 words: each
// invocation stages RB / 2 quads of A and 2 CQ of B, read as vec4 when the host says K and N are
// multiples of 4 (every quad then lies wholly inside or outside the matrices and is aligned),
// word by word otherwise. Between two barriers an invocation reads 4 (RB + 4 CQ) quads from
// shared memory and does 64 RB CQ multiply-adds (on lavapipe every load is a loop over the SIMD
// lanes while arithmetic is vectorized, so loads, not arithmetic, set the speed: quads and big
// blocks cut them). Each output sums its products in k order, as matmul.comp did.
// One dispatch covers the k range [k begin, k end) (k begin a multiple of 16) and adds to C when
// told to accumulate: the host cuts a long K (lavapipe ends a shader's loops after 65535
// iterations in all, and the loops here may not all be unrolled).
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#include "mmload.glsl"
layout(std430, binding = 4) buffer O { T o[]; };
layout(std430, binding = 4) buffer O4 { T4 o4[]; };

// p: M, N, K, nb, batch dims[8], a batch strides[8], b batch strides[8], batch offset,
//    k begin, k end, accumulate (as matmul.comp), then whether K and N are multiples of 4
#define TR (8 * RB)  // rows of the tile
#define TQ (8 * CQ)  // column quads of the tile
shared T4 ta[TR][4];  // [row][k quad]
shared T4 tb[16][TQ]; // [k][column quad]

uint M, N, K, kend, aoff, boff;
bool quads;

// A[r][k .. k+3] (k a multiple of 4), zeros past the matrix or the k range
T4 load_a(uint r, uint k)
{
    if (r >= M)
        return ZERO4;
    uint at = aoff + r * K + k;
    if (quads)
        return k < kend ? LA4(at >> 2u) : ZERO4;
    return T4(k < kend ? LA(at) : ZERO, k + 1u < kend ? LA(at + 1u) : ZERO, k + 2u < kend ? LA(at + 2u) : ZERO,
              k + 3u < kend ? LA(at + 3u) : ZERO);
}

// B[k][c .. c+3] (c a multiple of 4), zeros past the matrix or the k range
T4 load_b(uint k, uint c)
{
    if (k >= kend)
        return ZERO4;
    uint at = boff + k * N + c;
    if (quads)
        return c < N ? LB4(at >> 2u) : ZERO4;
    return T4(c < N ? LB(at) : ZERO, c + 1u < N ? LB(at + 1u) : ZERO, c + 2u < N ? LB(at + 2u) : ZERO,
              c + 3u < N ? LB(at + 3u) : ZERO);
}

void main()
{
    M = p[0];
    N = p[1];
    K = p[2];
    uint nb = p[3];
    uint batch = gl_WorkGroupID.z + p[28];
    uint rest = batch;
    aoff = 0u;
    boff = 0u;
    for (uint d = nb; d > 0u; d--) {
        uint k = rest % p[3u + d];
        rest /= p[3u + d];
        aoff += k * p[11u + d];
        boff += k * p[19u + d];
    }
    aoff *= M * K;
    boff *= K * N;
    kend = p[30];
    quads = p[32] != 0u;
    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    uint t = ly * 8u + lx;
    uint row0 = gl_WorkGroupID.y * uint(TR), col0 = gl_WorkGroupID.x * uint(4 * TQ);
    // What this invocation stages: A rows (t >> 2) + 16 q at k quad (t & 3); B k rows
    // (t / TQ) + (64 / TQ) q at column quad (t % TQ).
    uint sar = t >> 2u, saq = t & 3u, sbk = t / uint(TQ), sbq = t % uint(TQ);
    T4 acc[RB][CQ];
    for (uint i = 0u; i < uint(RB); i++)
        for (uint j = 0u; j < uint(CQ); j++)
            acc[i][j] = ZERO4;
    for (uint k0 = p[29]; k0 < kend; k0 += 16u) {
        for (uint q = 0u; q < uint(RB / 2); q++)
            ta[sar + 16u * q][saq] = load_a(row0 + sar + 16u * q, k0 + 4u * saq);
        for (uint q = 0u; q < uint(2 * CQ); q++)
            tb[sbk + uint(64 / TQ) * q][sbq] = load_b(k0 + sbk + uint(64 / TQ) * q, col0 + 4u * sbq);
        barrier();
        for (uint kq = 0u; kq < 4u; kq++) {
            T4 bv[4][CQ];
            for (uint s = 0u; s < 4u; s++)
                for (uint j = 0u; j < uint(CQ); j++)
                    bv[s][j] = tb[4u * kq + s][lx + 8u * j];
            for (uint i = 0u; i < uint(RB); i++) {
                T4 av = ta[ly + 8u * i][kq];
                for (uint j = 0u; j < uint(CQ); j++) {
                    T4 c = acc[i][j];
                    c += av.x * bv[0][j];
                    c += av.y * bv[1][j];
                    c += av.z * bv[2][j];
                    c += av.w * bv[3][j];
                    acc[i][j] = c;
                }
            }
        }
        barrier();
    }
    bool accumulate = p[31] != 0u;
    uint obase = batch * M * N;
    for (uint i = 0u; i < uint(RB); i++) {
        uint r = row0 + ly + 8u * i;
        if (r >= M)
            break;
        for (uint j = 0u; j < uint(CQ); j++) {
            uint c = col0 + 4u * (lx + 8u * j);
            uint at = obase + r * N + c;
            T4 v = acc[i][j];
            if (quads) {
                if (c < N) {
                    if (accumulate)
                        v += o4[at >> 2u];
                    o4[at >> 2u] = v;
                }
            } else {
                for (uint e = 0u; e < 4u; e++)
                    if (c + e < N) {
                        T x = v[e];
                        if (accumulate)
                            x += o[at + e];
                        o[at + e] = x;
                    }
            }
        }
    }
}
