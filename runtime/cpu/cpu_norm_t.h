/* CPU backend: layer norm's three kernels, instantiated by cpu_norm.c for float and double
 * (one source for both: T is the element and arithmetic type, LN(name) the instance's name,
 * LN_SUM8 its 8-lane row sum; <tgmath.h> makes sqrt sqrtf for float). No include guard:
 * included once per type. */

/* The sum of (x - c)^2 over x[0, n). */
static T LN(sqdev8)(const T *restrict x, T c, int64_t n)
{
    T s8[LANES] = { 0 };
    int64_t j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int t = 0; t < LANES; t++) {
            const T d = x[j + t] - c;
            s8[t] += d * d;
        }
    T s = (T)0;
    for (int t = 0; t < LANES; t++)
        s += s8[t];
    for (; j < n; j++) {
        const T d = x[j] - c;
        s += d * d;
    }
    return s;
}

/* A row's mean and 1 / sqrt(var + eps) (m >= 1). */
static void LN(row_stats)(const T *x, int64_t m, T eps, T *mean, T *inv)
{
    const T mu = LN_SUM8(x, m) / (T)m;
    *mean = mu;
    *inv = (T)1 / sqrt(LN(sqdev8)(x, mu, m) / (T)m + eps);
}

static td_status LN(layer_norm)(const td_tensor *x, const td_tensor *weight, const td_tensor *bias, T eps,
                                 td_tensor *out)
{
    int64_t rows, m;
    geometry(x, weight, &rows, &m);
    const T *px = td_be_data(x), *pw = td_be_data(weight), *pb = td_be_data(bias);
    T *py = td_be_data(out);
    TD_CPU_FOR_WORK(r, rows, rows * m, {
        const T *restrict xr = px + r * m;
        T *restrict yr = py + r * m;
        T mean, inv;
        LN(row_stats)(xr, m, eps, &mean, &inv);
        for (int64_t j = 0; j < m; j++)
            yr[j] = (xr[j] - mean) * inv * pw[j] + pb[j];
    });
    return TD_OK;
}

/* dx = (gw - mean(gw) - xhat * mean(gw * xhat)) / s per row, gw = grad * weight. */
static td_status LN(layer_norm_backward)(const td_tensor *grad, const td_tensor *x, const td_tensor *weight, T eps,
                                          td_tensor *out)
{
    int64_t rows, m;
    geometry(x, weight, &rows, &m);
    const T *pg = td_be_data(grad), *px = td_be_data(x), *pw = td_be_data(weight);
    T *pd = td_be_data(out);
    TD_CPU_FOR_WORK(r, rows, rows * m * 2, {
        const T *restrict xr = px + r * m, *restrict gr = pg + r * m;
        T *restrict dr = pd + r * m;
        T mean, inv;
        LN(row_stats)(xr, m, eps, &mean, &inv);
        T a8[LANES] = { 0 }, b8[LANES] = { 0 };
        int64_t j = 0;
        for (; j + LANES <= m; j += LANES)
            for (int t = 0; t < LANES; t++) {
                const T gw = gr[j + t] * pw[j + t];
                a8[t] += gw;
                b8[t] += gw * ((xr[j + t] - mean) * inv);
            }
        T sa = (T)0, sb = (T)0;
        for (int t = 0; t < LANES; t++) {
            sa += a8[t];
            sb += b8[t];
        }
        for (; j < m; j++) {
            const T gw = gr[j] * pw[j];
            sa += gw;
            sb += gw * ((xr[j] - mean) * inv);
        }
        const T mg = sa / (T)m, mgx = sb / (T)m;
        for (int64_t k = 0; k < m; k++)
            dr[k] = (gr[k] * pw[k] - mg - (xr[k] - mean) * inv * mgx) * inv;
    });
    return TD_OK;
}

/* grad * xhat summed over the rows: chunks of CHUNK rows sum into partial rows of their
 * own (threaded), then the partials add up in chunk order (the same sums on any thread
 * count). */
static td_status LN(layer_norm_backward_weight)(const td_tensor *grad, const td_tensor *x, const td_tensor *weight,
                                                 T eps, td_tensor *out)
{
    enum { CHUNK = 128 };
    int64_t rows, m;
    geometry(x, weight, &rows, &m);
    const T *pg = td_be_data(grad), *px = td_be_data(x);
    T *pd = td_be_data(out);
    if (m == 0)
        return TD_OK;
    const int64_t chunks = (rows + CHUNK - 1) / CHUNK;
    T *part = calloc((size_t)(chunks > 0 ? chunks : 1), sizeof(T) * (size_t)m);
    if (part == NULL)
        return td_error(TD_E_NOMEM, "float_layer_norm_backward_weight: out of memory for %lld partial sums",
                        (long long)(chunks * m));
    TD_CPU_FOR_WORK(c, chunks, rows * m, {
        T *restrict acc = part + c * m;
        const int64_t end = (c + 1) * CHUNK < rows ? (c + 1) * CHUNK : rows;
        for (int64_t r = c * CHUNK; r < end; r++) {
            const T *restrict xr = px + r * m, *restrict gr = pg + r * m;
            T mean, inv;
            LN(row_stats)(xr, m, eps, &mean, &inv);
            for (int64_t j = 0; j < m; j++)
                acc[j] += gr[j] * ((xr[j] - mean) * inv);
        }
    });
    for (int64_t j = 0; j < m; j++)
        pd[j] = (T)0;
    for (int64_t c = 0; c < chunks; c++)
        for (int64_t j = 0; j < m; j++)
            pd[j] += part[c * m + j];
    free(part);
    return TD_OK;
}
