// Batched matmul for skinny shapes (one of M, N, K small), included by mmthin.comp (float) and
// imthin.comp (uint words), which define T, T4, ZERO and ZERO4: no shared memory and no barrier,
// each invocation reads A and B itself and computes a block of C: 4 rows by 4 CW columns, 1 row
// by 4 columns when M is 1 (so that a row vector wastes no lanes), or 4 rows by 1 column when N
// is 1 (a matrix times a column vector), as the host says. B's rows and C's are read and written
// as aligned vec4s when N is a multiple of 4, A's rows in quads of k when K is (on lavapipe
// every load is a loop over the SIMD lanes: the fewer loads per multiply-add, the faster).
// Blocks are numbered row-major over C, 64 per workgroup along x and y (the host spreads them
// over two dims), batches along z.
// One dispatch covers the k range [k begin, k end) and adds to C when told to accumulate; its
// k loop is the only long one (lavapipe ends a shader's loops after 65535 iterations in all:
// the host cuts a long K). Each output sums its products in k order.
#define CW 4 // column quads of a 4-row block
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#include "mmload.glsl"
layout(std430, binding = 4) buffer O { T o[]; };
layout(std430, binding = 4) buffer O4 { T4 o4[]; };

// p: M, N, K, nb, batch dims[8], a batch strides[8], b batch strides[8], batch offset,
//    k begin, k end, accumulate (as matmul.comp), then whether N is a multiple of 4, the block
//    shape (0: 4 x 4, 1: 1 x 4, 2: 4 x 1), blocks per row of C, the number of blocks, whether K
//    is a multiple of 4 (then so are k begin and k end)
uint M, N, obase, boff;
bool quads, accumulate;

// B[k][c .. c+3] (c a multiple of 4; zeros past N, never read)
T4 load_b(uint k, uint c)
{
    uint at = boff + k * N + c;
    if (quads)
        return c < N ? LB4(at >> 2u) : ZERO4;
    return T4(c < N ? LB(at) : ZERO, c + 1u < N ? LB(at + 1u) : ZERO, c + 2u < N ? LB(at + 2u) : ZERO,
              c + 3u < N ? LB(at + 3u) : ZERO);
}

// Stores C[r][c .. c+3] (c a multiple of 4; columns past N are not written).
void store4(uint r, uint c, T4 v)
{
    uint at = obase + r * N + c;
    if (c >= N)
        return;
    if (quads) {
        if (accumulate)
            v += o4[at >> 2u];
        o4[at >> 2u] = v;
        return;
    }
    for (uint e = 0u; e < 4u; e++)
        if (c + e < N) {
            T x = v[e];
            if (accumulate)
                x += o[at + e];
            o[at + e] = x;
        }
}

void main()
{
    M = p[0];
    N = p[1];
    uint K = p[2], nb = p[3];
    quads = p[32] != 0u;
    uint shape = p[33], per_row = p[34];
    uint blk = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
    if (blk >= p[35])
        return;
    uint batch = gl_WorkGroupID.z + p[28];
    uint aoff = 0u, rest = batch;
    boff = 0u;
    for (uint d = nb; d > 0u; d--) {
        uint k = rest % p[3u + d];
        rest /= p[3u + d];
        aoff += k * p[11u + d];
        boff += k * p[19u + d];
    }
    aoff *= M * K;
    boff *= K * N;
    obase = batch * M * N;
    uint k0 = p[29], kend = p[30];
    accumulate = p[31] != 0u;
    bool kquads = p[36] != 0u;
    uint rb = blk / per_row, cb = blk - rb * per_row;
    if (shape == 2u) { // 4 rows x 1 column: C[r .. r+3][c] (rows past M read row M-1, not written)
        uint r = rb * 4u, c = cb;
        uint a0 = aoff + r * K, a1 = aoff + min(r + 1u, M - 1u) * K, a2 = aoff + min(r + 2u, M - 1u) * K,
             a3 = aoff + min(r + 3u, M - 1u) * K;
        T4 acc = ZERO4;
        if (kquads)
            for (uint k = k0; k < kend; k += 4u) {
                T4 x0 = LA4((a0 + k) >> 2u), x1 = LA4((a1 + k) >> 2u), x2 = LA4((a2 + k) >> 2u), x3 = LA4((a3 + k) >> 2u);
                uint bk = boff + k * N + c;
                acc += T4(x0.x, x1.x, x2.x, x3.x) * LB(bk);
                acc += T4(x0.y, x1.y, x2.y, x3.y) * LB(bk + N);
                acc += T4(x0.z, x1.z, x2.z, x3.z) * LB(bk + 2u * N);
                acc += T4(x0.w, x1.w, x2.w, x3.w) * LB(bk + 3u * N);
            }
        else
            for (uint k = k0; k < kend; k++)
                acc += T4(LA(a0 + k), LA(a1 + k), LA(a2 + k), LA(a3 + k)) * LB(boff + k * N + c);
        for (uint i = 0u; i < 4u; i++)
            if (r + i < M) {
                uint at = obase + (r + i) * N + c;
                T x = acc[i];
                if (accumulate)
                    x += o[at];
                o[at] = x;
            }
        return;
    }
    uint c = cb * 4u;
    if (shape == 1u) { // 1 row, columns c .. c+3
        uint ar = aoff + rb * K;
        T4 acc = ZERO4;
        if (kquads)
            for (uint k = k0; k < kend; k += 4u) {
                T4 x = LA4((ar + k) >> 2u);
                acc += load_b(k, c) * x.x;
                acc += load_b(k + 1u, c) * x.y;
                acc += load_b(k + 2u, c) * x.z;
                acc += load_b(k + 3u, c) * x.w;
            }
        else
            for (uint k = k0; k < kend; k++)
                acc += load_b(k, c) * LA(ar + k);
        store4(rb, c, acc);
        return;
    }
    // 4 rows x CW column quads
    uint r = rb * 4u;
    c = cb * uint(4 * CW);
    uint a0 = aoff + r * K, a1 = aoff + min(r + 1u, M - 1u) * K, a2 = aoff + min(r + 2u, M - 1u) * K,
         a3 = aoff + min(r + 3u, M - 1u) * K;
    T4 acc[4][CW];
    for (uint j = 0u; j < uint(CW); j++) {
        acc[0][j] = ZERO4;
        acc[1][j] = ZERO4;
        acc[2][j] = ZERO4;
        acc[3][j] = ZERO4;
    }
    if (kquads)
        for (uint k = k0; k < kend; k += 4u) {
            T4 x[4];
            x[0] = LA4((a0 + k) >> 2u);
            x[1] = LA4((a1 + k) >> 2u);
            x[2] = LA4((a2 + k) >> 2u);
            x[3] = LA4((a3 + k) >> 2u);
            for (uint j = 0u; j < uint(CW); j++) {
                uint cj = c + 4u * j;
                T4 b0 = load_b(k, cj), b1 = load_b(k + 1u, cj), b2 = load_b(k + 2u, cj), b3 = load_b(k + 3u, cj);
                for (uint i = 0u; i < 4u; i++) {
                    T4 v = acc[i][j];
                    v += b0 * x[i].x;
                    v += b1 * x[i].y;
                    v += b2 * x[i].z;
                    v += b3 * x[i].w;
                    acc[i][j] = v;
                }
            }
        }
    else
        for (uint k = k0; k < kend; k++) {
            T x0 = LA(a0 + k), x1 = LA(a1 + k), x2 = LA(a2 + k), x3 = LA(a3 + k);
            for (uint j = 0u; j < uint(CW); j++) {
                T4 bv = load_b(k, c + 4u * j);
                acc[0][j] += bv * x0;
                acc[1][j] += bv * x1;
                acc[2][j] += bv * x2;
                acc[3][j] += bv * x3;
            }
        }
    for (uint i = 0u; i < 4u; i++)
        if (r + i < M)
            for (uint j = 0u; j < uint(CW); j++)
                store4(r + i, c + 4u * j, acc[i][j]);
}
