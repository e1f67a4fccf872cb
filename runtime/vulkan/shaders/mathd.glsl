// Double-precision math for the f64 shaders (ewd.comp). GLSL has double sqrt, floor, fma,
// frexp and ldexp but no double exp, log or pow: these are computed here in double arithmetic
// only (argument reduction, then polynomials whose truncation error is below 2^-60 relative),
// so each is within a few ULP of the correctly rounded result (tests/backends/vulkan/
// test_vulkan_f64.c holds them to <math.h>). Every literal carries LF: a bare literal is a float.
// The steps whose rounding is part of the method are `precise` (SPIR-V NoContraction): without
// it a driver may reassociate them as real-number algebra (Mesa's NIR folds k HI + k LO into
// k (HI + LO), which loses the split of ln 2: exp(700) was 400 ULP off on lavapipe).
#ifndef TD_MATHD_GLSL
#define TD_MATHD_GLSL

double inf_d()
{
    return packDouble2x32(uvec2(0u, 0x7ff00000u));
}

double nan_d()
{
    return packDouble2x32(uvec2(0u, 0x7ff80000u));
}

// ln 2 split so that k * LN2_HI is exact for |k| < 2^21 (its low 32 bits are zero).
const double LN2_HI = 6.93147180369123816490e-01LF;
const double LN2_LO = 1.90821492927058770002e-10LF;
const double INV_LN2 = 1.44269504088896338700e+00LF;

// 2^k for k in [-1022, 1023], from its bits.
double pow2_d(int k)
{
    return packDouble2x32(uvec2(0u, uint(k + 1023) << 20));
}

// x * 2^k for k in [-2044, 2046], as two exact multiplications by powers of two (the second
// rounds once where the result is subnormal). Not ldexp: what a driver lowers ldexp on doubles
// to is not specified as exact.
double scale_d(double x, int k)
{
    int h = k / 2;
    precise double r = x * pow2_d(h) * pow2_d(k - h);
    return r;
}

// e^r for |r| <= ln2 / 2 + a little: Taylor to r^15 (the next term is below 2^-64 relative).
double exp_poly(double r)
{
    double p = 1.0LF / 1307674368000.0LF;
    p = p * r + (1.0LF / 87178291200.0LF);
    p = p * r + (1.0LF / 6227020800.0LF);
    p = p * r + (1.0LF / 479001600.0LF);
    p = p * r + (1.0LF / 39916800.0LF);
    p = p * r + (1.0LF / 3628800.0LF);
    p = p * r + (1.0LF / 362880.0LF);
    p = p * r + (1.0LF / 40320.0LF);
    p = p * r + (1.0LF / 5040.0LF);
    p = p * r + (1.0LF / 720.0LF);
    p = p * r + (1.0LF / 120.0LF);
    p = p * r + (1.0LF / 24.0LF);
    p = p * r + (1.0LF / 6.0LF);
    p = p * r + 0.5LF;
    // 1 + r + r^2 p, the leading terms added last
    precise double res = 1.0LF + (r + r * r * p);
    return res;
}

// e^x: x = k ln2 + r (Cody-Waite, k * LN2_HI exact), e^r by the polynomial, scaled by 2^k.
double exp_d(double x)
{
    if (isnan(x))
        return x;
    if (x > 709.782712893384LF)
        return inf_d();
    if (x < -745.1332191019412LF)
        return 0.0LF;
    double k = roundEven(x * INV_LN2);
    precise double r = (x - k * LN2_HI) - k * LN2_LO; // k LN2_HI and the subtraction exact
    return scale_d(exp_poly(r), int(k));
}

// e^x - 1: for |x| < ln2 / 2 the series itself (no cancellation), else e^x - 1.
double expm1_d(double x)
{
    if (abs(x) < 0.34657359027997264LF) {
        double p = 1.0LF / 6402373705728000.0LF; // 1/18!
        p = p * x + (1.0LF / 355687428096000.0LF);
        p = p * x + (1.0LF / 20922789888000.0LF);
        p = p * x + (1.0LF / 1307674368000.0LF);
        p = p * x + (1.0LF / 87178291200.0LF);
        p = p * x + (1.0LF / 6227020800.0LF);
        p = p * x + (1.0LF / 479001600.0LF);
        p = p * x + (1.0LF / 39916800.0LF);
        p = p * x + (1.0LF / 3628800.0LF);
        p = p * x + (1.0LF / 362880.0LF);
        p = p * x + (1.0LF / 40320.0LF);
        p = p * x + (1.0LF / 5040.0LF);
        p = p * x + (1.0LF / 720.0LF);
        p = p * x + (1.0LF / 120.0LF);
        p = p * x + (1.0LF / 24.0LF);
        p = p * x + (1.0LF / 6.0LF);
        p = p * x + 0.5LF;
        return x + x * x * p;
    }
    return exp_d(x) - 1.0LF;
}

// ln x: x = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f / (2 + f),
// ln(1 + f) = f - (f^2/2 - s (f^2/2 + R)), R = 2 (s^2/3 + s^4/5 + ...) to s^24 (|s| < 0.1716:
// the rest is below 2^-64 relative), plus e ln2 in two parts.
double log_d(double x)
{
    if (isnan(x) || x == inf_d())
        return x;
    if (x < 0.0LF)
        return nan_d();
    if (x == 0.0LF)
        return -inf_d();
    int adj = 0;
    if (x < 2.2250738585072014e-308LF) { // subnormal: made normal first
        x *= 18014398509481984.0LF;       // 2^54
        adj = -54;
    }
    int e;
    double m = frexp(x, e); // [0.5, 1)
    if (m < 0.70710678118654752440LF) {
        m *= 2.0LF;
        e -= 1;
    }
    e += adj;
    double f = m - 1.0LF;
    double s = f / (2.0LF + f);
    double z = s * s;
    double q = 2.0LF / 25.0LF;
    q = q * z + (2.0LF / 23.0LF);
    q = q * z + (2.0LF / 21.0LF);
    q = q * z + (2.0LF / 19.0LF);
    q = q * z + (2.0LF / 17.0LF);
    q = q * z + (2.0LF / 15.0LF);
    q = q * z + (2.0LF / 13.0LF);
    q = q * z + (2.0LF / 11.0LF);
    q = q * z + (2.0LF / 9.0LF);
    q = q * z + (2.0LF / 7.0LF);
    q = q * z + (2.0LF / 5.0LF);
    q = q * z + (2.0LF / 3.0LF);
    double R = z * q;
    double hfsq = 0.5LF * f * f;
    double dk = double(e);
    precise double res = dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f);
    return res;
}

// sqrt with one Newton step on the driver's (Vulkan allows it 2 ULP in double): the residual
// x - r^2 exact, r^2 as a sum hi + lo by Dekker's product (not fma, which a driver may compute
// unfused), which leaves r within 1 ULP (the step's own rounding can land a result next to a
// midpoint on the wrong side: sqrt(1 - 2^-53) gives 1, not the nearer 1 - 2^-53). x is scaled by an even power
// of two into [0.5, 2) first, so that neither the split nor the square overflows or underflows.
double sqrt_d(double x)
{
    if (isnan(x) || x < 0.0LF)
        return nan_d();
    if (x == 0.0LF || x == inf_d())
        return x;
    int e;
    double m = frexp(x, e); // [0.5, 1)
    if (x < 2.2250738585072014e-308LF) { // subnormal: made normal first
        m = frexp(x * 18014398509481984.0LF, e);
        e -= 54;
    }
    if ((e & 1) != 0) { // x = m 2^e, e even, m in [0.5, 2)
        m *= 2.0LF;
        e -= 1;
    }
    double r = sqrt(m);
    precise double c = 134217729.0LF * r; // 2^27 + 1
    precise double hi = c - (c - r);
    precise double lo = r - hi;
    precise double p = r * r;
    precise double err = ((hi * hi - p) + 2.0LF * hi * lo) + lo * lo;
    precise double res = r + ((m - p) - err) * (0.5LF / r);
    return scale_d(res, e / 2);
}

// pow with every special value of C99 F.9.4.4, else e^(y ln|x|). ln|x| and the product are
// each rounded, so the result's relative error grows as |y ln|x|| 2^-52 (about 2 |y ln|x||
// ULP; at most ~1500 ULP, 3e-13, where the result is finite, |y ln|x|| < 745): far below the
// f64 comparisons' bound, but not correctly rounded (a double-double log would be).
double pow_d(double x, double y)
{
    double ax = abs(x), ay = abs(y);
    bool xneg = (unpackDouble2x32(x).y >> 31) != 0u, yneg = (unpackDouble2x32(y).y >> 31) != 0u;
    if (ay == 0.0LF || x == 1.0LF) // pow(x, +-0) = pow(+1, y) = 1, even for NaN
        return 1.0LF;
    if (isnan(x) || isnan(y))
        return nan_d();
    if (ay == inf_d()) {
        if (ax == 1.0LF) // pow(-1, +-inf) = 1
            return 1.0LF;
        return (ax < 1.0LF) == yneg ? inf_d() : 0.0LF;
    }
    // every double >= 2^52 is an integer, and every one >= 2^53 even
    bool yint = fract(ay) == 0.0LF;
    bool odd = yint && ay < 9007199254740992.0LF && mod(ay, 2.0LF) == 1.0LF;
    if (ax == 0.0LF || ax == inf_d()) {
        double r = (ax == 0.0LF) == yneg ? inf_d() : 0.0LF;
        return xneg && odd ? -r : r;
    }
    if (xneg && !yint)
        return nan_d();
    if (y == 1.0LF)
        return x;
    if (y == 2.0LF)
        return x * x;
    double r = exp_d(y * log_d(ax));
    return xneg && odd ? -r : r;
}

// tanh: below 2^-27 x itself; below 0.5 through expm1 (no cancellation), else
// (1 - e^-2|x|) / (1 + e^-2|x|); past 19.1 the double nearest is +-1.
double tanh_d(double x)
{
    double ax = abs(x);
    if (isnan(x) || ax < 7.450580596923828e-9LF)
        return x;
    double r;
    if (ax < 0.5LF) {
        double em = expm1_d(2.0LF * ax);
        r = em / (em + 2.0LF);
    } else if (ax > 19.1LF) {
        r = 1.0LF;
    } else {
        double t = exp_d(-2.0LF * ax);
        r = (1.0LF - t) / (1.0LF + t);
    }
    return x < 0.0LF ? -r : r;
}

// With e = e^-|x| <= 1: no overflow on either side.
double sigmoid_d(double x)
{
    if (isnan(x))
        return x;
    double e = exp_d(-abs(x));
    return x >= 0.0LF ? 1.0LF / (1.0LF + e) : e / (1.0LF + e);
}

#endif
