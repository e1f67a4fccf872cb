// Register-blocked batched matmul C[b] = A[b] x B[b] (broadcast batch dims), included by
// mmtile.comp (float) and imtile.comp (uint words: the wrapping int_matmul), which define T, T4,
// ZERO and ZERO4. A workgroup of 8x8 invocations computes a 64x64 tile of C, each invocation 8x8
// of it: rows ly + 8 i (i < 8) and the column quads lx + 8 j (j < 2), so that neighbouring
// invocations touch neighbouring words. A and B pass through shared memory in k slices of 16
// (A's 64x16 row-major, B's 16x64), in quads of 4 words: each invocation stages 4 quads of each,
// read as vec4 when the host says K and N are multiples of 4 (every quad then lies wholly
// inside or outside the matrices and is aligned), word by word otherwise. Between two barriers
// an invocation reads 64 quads and does 1024 multiply-adds (on lavapipe every load is a loop
// over the SIMD lanes, so loads, not arithmetic, set the speed: quads and big blocks cut them).
// Each output sums its products in k order, as matmul.comp did.
// One dispatch covers the k range [k begin, k end) (k begin a multiple of 16) and adds to C when
// told to accumulate: the host cuts a long K (lavapipe ends a shader's loops after 65535
// iterations in all, and the loops here may not all be unrolled).
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
layout(std430, binding = 1) readonly buffer A { T a[]; };
layout(std430, binding = 1) readonly buffer A4 { T4 a4[]; };
layout(std430, binding = 2) readonly buffer B { T b[]; };
layout(std430, binding = 2) readonly buffer B4 { T4 b4[]; };
layout(std430, binding = 4) buffer O { T o[]; };
layout(std430, binding = 4) buffer O4 { T4 o4[]; };

// p: M, N, K, nb, batch dims[8], a batch strides[8], b batch strides[8], batch offset,
//    k begin, k end, accumulate (as matmul.comp), then whether K and N are multiples of 4
shared T4 ta[64][4];  // [row][k quad]
shared T4 tb[16][16]; // [k][column quad]

uint M, N, K, kend, aoff, boff;
bool quads;

// A[r][k .. k+3] (k a multiple of 4), zeros past the matrix or the k range
T4 load_a(uint r, uint k)
{
    if (r >= M)
        return ZERO4;
    uint at = aoff + r * K + k;
    if (quads)
        return k < kend ? a4[at >> 2u] : ZERO4;
    return T4(k < kend ? a[at] : ZERO, k + 1u < kend ? a[at + 1u] : ZERO, k + 2u < kend ? a[at + 2u] : ZERO,
              k + 3u < kend ? a[at + 3u] : ZERO);
}

// B[k][c .. c+3] (c a multiple of 4), zeros past the matrix or the k range
T4 load_b(uint k, uint c)
{
    if (k >= kend)
        return ZERO4;
    uint at = boff + k * N + c;
    if (quads)
        return c < N ? b4[at >> 2u] : ZERO4;
    return T4(c < N ? b[at] : ZERO, c + 1u < N ? b[at + 1u] : ZERO, c + 2u < N ? b[at + 2u] : ZERO,
              c + 3u < N ? b[at + 3u] : ZERO);
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
    uint row0 = gl_WorkGroupID.y * 64u, col0 = gl_WorkGroupID.x * 64u;
    // What this invocation stages: A rows (t >> 2) + 16 q at k quad (t & 3); B k rows (t >> 4) + 4 q
    // at column quad (t & 15).
    uint sar = t >> 2u, saq = t & 3u, sbk = t >> 4u, sbq = t & 15u;
    T4 acc[8][2];
    for (uint i = 0u; i < 8u; i++) {
        acc[i][0] = ZERO4;
        acc[i][1] = ZERO4;
    }
    for (uint k0 = p[29]; k0 < kend; k0 += 16u) {
        for (uint q = 0u; q < 4u; q++) {
            ta[sar + 16u * q][saq] = load_a(row0 + sar + 16u * q, k0 + 4u * saq);
            tb[sbk + 4u * q][sbq] = load_b(k0 + sbk + 4u * q, col0 + 4u * sbq);
        }
        barrier();
        for (uint kq = 0u; kq < 4u; kq++) {
            T4 b0[4], b1[4];
            for (uint s = 0u; s < 4u; s++) {
                b0[s] = tb[4u * kq + s][lx];
                b1[s] = tb[4u * kq + s][lx + 8u];
            }
            for (uint i = 0u; i < 8u; i++) {
                T4 av = ta[ly + 8u * i][kq];
                T4 c0 = acc[i][0], c1 = acc[i][1];
                c0 += av.x * b0[0];
                c1 += av.x * b1[0];
                c0 += av.y * b0[1];
                c1 += av.y * b1[1];
                c0 += av.z * b0[2];
                c1 += av.z * b1[2];
                c0 += av.w * b0[3];
                c1 += av.w * b1[3];
                acc[i][0] = c0;
                acc[i][1] = c1;
            }
        }
        barrier();
    }
    bool accumulate = p[31] != 0u;
    uint obase = batch * M * N;
    for (uint i = 0u; i < 8u; i++) {
        uint r = row0 + ly + 8u * i;
        if (r >= M)
            break;
        for (uint j = 0u; j < 2u; j++) {
            uint c = col0 + 4u * (lx + 8u * j);
            uint at = obase + r * N + c;
            T4 v = acc[i][j];
            if (quads) {
                if (c < N)
                    o4[at >> 2u] = accumulate ? o4[at >> 2u] + v : v;
            } else {
                for (uint e = 0u; e < 4u; e++)
                    if (c + e < N)
                        o[at + e] = accumulate ? o[at + e] + v[e] : v[e];
            }
        }
    }
}
