// Batched matmul for skinny shapes (one of M, N, K small), included by mmthin.comp (float) and
// imthin.comp (uint words), which define T, T4, ZERO and ZERO4: no shared memory and no barrier,
// each invocation reads A and B itself and computes a block of C of R rows by 4 columns
// (R = 4, or 1 when M is 1, so that a row vector wastes no lanes), or, when the host says so, 4
// rows by 1 column (a matrix times a column vector). Blocks are numbered row-major over C, 64
// per workgroup along x and y (the host spreads them over two dims), batches along z.
// One dispatch covers the k range [k begin, k end) and adds to C when told to accumulate; its
// k loop is the only one (lavapipe ends a shader's loops after 65535 iterations in all: the
// host cuts a long K).
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { T a[]; };
layout(std430, binding = 2) readonly buffer B { T b[]; };
layout(std430, binding = 4) buffer O { T o[]; };

// p: M, N, K, nb, batch dims[8], a batch strides[8], b batch strides[8], batch offset,
//    k begin, k end, accumulate (as matmul.comp), then the block shape: 0: 4 x 4, 1: 1 x 4,
//    2: 4 x 1; blocks per row of C; the number of blocks
void main()
{
    uint M = p[0], N = p[1], K = p[2], nb = p[3];
    uint shape = p[32], per_row = p[33];
    uint blk = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
    if (blk >= p[34])
        return;
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
    uint obase = batch * M * N;
    uint k0 = p[29], kend = p[30];
    bool accumulate = p[31] != 0u;
    uint rb = blk / per_row, cb = blk - rb * per_row;
    if (shape == 2u) { // 4 rows x 1 column: C[r .. r+3][c]
        uint r = rb * 4u, c = cb;
        uint r1 = min(r + 1u, M - 1u), r2 = min(r + 2u, M - 1u), r3 = min(r + 3u, M - 1u);
        T4 acc = ZERO4;
        for (uint k = k0; k < kend; k++) {
            T bv = b[boff + k * N + c];
            acc += T4(a[aoff + r * K + k], a[aoff + r1 * K + k], a[aoff + r2 * K + k], a[aoff + r3 * K + k]) * bv;
        }
        for (uint i = 0u; i < 4u; i++)
            if (r + i < M) {
                uint at = obase + (r + i) * N + c;
                o[at] = accumulate ? o[at] + acc[i] : acc[i];
            }
        return;
    }
    // 4 columns c .. c+3 (clamped reads past N; not written)
    uint c = cb * 4u;
    uint c1 = min(c + 1u, N - 1u), c2 = min(c + 2u, N - 1u), c3 = min(c + 3u, N - 1u);
    if (shape == 1u) { // 1 row
        uint r = rb;
        T4 acc = ZERO4;
        for (uint k = k0; k < kend; k++) {
            uint bk = boff + k * N;
            acc += T4(b[bk + c], b[bk + c1], b[bk + c2], b[bk + c3]) * a[aoff + r * K + k];
        }
        for (uint j = 0u; j < 4u; j++)
            if (c + j < N) {
                uint at = obase + r * N + c + j;
                o[at] = accumulate ? o[at] + acc[j] : acc[j];
            }
        return;
    }
    uint r = rb * 4u;
    uint r1 = min(r + 1u, M - 1u), r2 = min(r + 2u, M - 1u), r3 = min(r + 3u, M - 1u);
    T4 acc0 = ZERO4, acc1 = ZERO4, acc2 = ZERO4, acc3 = ZERO4;
    for (uint k = k0; k < kend; k++) {
        uint bk = boff + k * N;
        T4 bv = T4(b[bk + c], b[bk + c1], b[bk + c2], b[bk + c3]);
        acc0 += bv * a[aoff + r * K + k];
        acc1 += bv * a[aoff + r1 * K + k];
        acc2 += bv * a[aoff + r2 * K + k];
        acc3 += bv * a[aoff + r3 * K + k];
    }
    for (uint i = 0u; i < 4u; i++) {
        if (r + i >= M)
            break;
        T4 v = i == 0u ? acc0 : i == 1u ? acc1 : i == 2u ? acc2 : acc3;
        for (uint j = 0u; j < 4u; j++)
            if (c + j < N) {
                uint at = obase + (r + i) * N + c + j;
                o[at] = accumulate ? o[at] + v[j] : v[j];
            }
    }
}
