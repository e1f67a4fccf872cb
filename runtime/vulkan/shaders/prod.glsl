// Float products with a double's range (the CPU multiplies in double): a value m * 2^e, m a
// float in [0.5, 1) by magnitude (or 0, inf, NaN, which the float products then propagate),
// e an int. Past a double's range the product turns inf or 0 for good, as the double's does.
// Included by reduce.comp (float_prod, float_prod_dim) and scan.comp (float_cumprod).
#define PE_MAX 1024     // e > 1024: m * 2^e >= 2^1024, past DBL_MAX: inf
#define PE_MIN (-1073)  // e < -1073: below 2^-1074, the least subnormal double: 0 (about)

// x as m * 2^e (m in [0.5, 1) by magnitude) when finite and nonzero; else m = x, e = 0.
void split(float x, out float m, out int e)
{
    uint u = floatBitsToUint(x);
    uint ex = (u >> 23) & 0xffu;
    e = 0;
    if (ex == 0xffu || (u & 0x7fffffffu) == 0u) {
        m = x;
        return;
    }
    if (ex == 0u) {                         // subnormal: scale up by 2^24 (exact)
        x *= 16777216.0;
        u = floatBitsToUint(x);
        ex = (u >> 23) & 0xffu;
        e = -24;
    }
    m = uintBitsToFloat((u & 0x807fffffu) | 0x3f000000u);
    e += int(ex) - 126;
}

// (m, e) *= (xm, xe)
void pmul(inout float m, inout int e, float xm, int xe)
{
    float q = m * xm;
    int qe;
    float qm;
    split(q, qm, qe);
    m = qm;
    uint u = floatBitsToUint(m);
    if (((u >> 23) & 0xffu) == 0xffu || (u & 0x7fffffffu) == 0u) {
        e = 0;
        return;
    }
    e += xe + qe;
    if (e > PE_MAX) {
        m = uintBitsToFloat((u & 0x80000000u) | 0x7f800000u);  // +-inf
        e = 0;
    } else if (e < PE_MIN) {
        m = uintBitsToFloat(u & 0x80000000u);                  // +-0
        e = 0;
    }
}

float pow2(int k)
{
    return uintBitsToFloat(uint(k + 127) << 23);
}

// m * 2^e rounded once to a float (subnormal results too).
float pfloat(float m, int e)
{
    uint u = floatBitsToUint(m);
    if (((u >> 23) & 0xffu) == 0xffu || (u & 0x7fffffffu) == 0u)
        return m;
    if (e > 128)
        return uintBitsToFloat((u & 0x80000000u) | 0x7f800000u);
    if (e < -160)
        return uintBitsToFloat(u & 0x80000000u);
    if (e >= -125)
        return e > 64 ? (m * pow2(64)) * pow2(e - 64) : m * pow2(e);   // exact
    return (m * pow2(e + 64)) * pow2(-64);          // one rounding, into the subnormals
}

