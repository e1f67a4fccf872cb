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

// sin, cos: x = k pi/2 + r, |r| <= pi/4 (a little more where k, rounded in double, is one off),
// then the Taylor series of sin r / cos r (to r^21 / r^20: the first term left out is below
// 2^-60 of the sum for |r| <= 0.82; the coefficients are 1 / n! rounded to double) picked and
// signed by k mod 4. The reduction:
//   |x| < 2^47: Cody-Waite with pi/2 as PIO2_1 + PIO2_2 + PIO2_3 (each the double nearest what
//     the parts before it leave, 2^-160 short of pi/2 in all), k PIO2_1 and k PIO2_2 as exact
//     sums of two doubles (two_prod): x - k PIO2_1 is exact (a multiple of x's and PIO2_1's
//     last bits below 1), and the rest leaves r with a
//     relative error near 2^-53 even where it is smallest (no double below 2^1024 comes closer
//     to a multiple of pi/2 than about 2^-61, k PIO2_3 <= 2^-61, the parts' shortfall
//     k 2^-160 <= 2^-113);
//   larger |x|: Payne-Hanek. x = M 2^E (M the 53-bit significand); x 2/pi mod 4 needs only
//     the bits of 2/pi from weight 2^(1-E) down: 7 words of them (TWO_OVER_PI: floor(2^1184
//     2/pi), computed with exact integers) times M in 32-bit limbs, whose two bits above the
//     binary point are k mod 4 and whose next 128 are the fraction (rounded to the nearest
//     quarter turn: its magnitude as 4 exact doubles summed, times pi/2 in two parts). The
//     bits of 2/pi left out weigh < 2^-136 of a quarter turn, far below 2^-61 2^-53.
// NaN and infinities give NaN, as C's sin / cos.
const uint TWO_OVER_PI[37] = uint[37](
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u,
    0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu,
    0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u,
    0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, 0xde05980fu,
    0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du,
    0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u,
    0x56033046u
);
const double PIO2_1 = 1.5707963267948966LF;
const double PIO2_2 = 6.123233995736766e-17LF;
const double PIO2_3 = -1.4973849048591698e-33LF;
const double TWO_OVER_PI_D = 0.6366197723675814LF;

double sin_poly(double r)
{
    double s = r * r;
    double q = 1.9572941063391263e-20LF;
    q = q * s - 8.22063524662433e-18LF;
    q = q * s + 2.8114572543455206e-15LF;
    q = q * s - 7.647163731819816e-13LF;
    q = q * s + 1.6059043836821613e-10LF;
    q = q * s - 2.505210838544172e-08LF;
    q = q * s + 2.7557319223985893e-06LF;
    q = q * s - 0.0001984126984126984LF;
    q = q * s + 0.008333333333333333LF;
    q = q * s - 0.16666666666666666LF;
    precise double y = r + r * s * q;
    return y;
}

double cos_poly(double r)
{
    double s = r * r;
    double q = 4.110317623312165e-19LF;
    q = q * s - 1.5619206968586225e-16LF;
    q = q * s + 4.779477332387385e-14LF;
    q = q * s - 1.1470745597729725e-11LF;
    q = q * s + 2.08767569878681e-09LF;
    q = q * s - 2.755731922398589e-07LF;
    q = q * s + 2.48015873015873e-05LF;
    q = q * s - 0.001388888888888889LF;
    q = q * s + 0.041666666666666664LF;
    precise double y = 1.0LF + s * (-0.5LF + s * q);
    return y;
}

// P[at..] += v (32-bit limbs, least significant first), carrying upward.
void limb_add(inout uint P[9], int at, uint v)
{
    for (int i = at; i < 9 && v != 0u; i++) {
        uint c;
        P[i] = uaddCarry(P[i], v, c);
        v = c;
    }
}

// The 32 bits of P from bit pos up.
uint limb_bits(uint P[9], int pos)
{
    int w = pos >> 5, b = pos & 31;
    uint lo = w < 9 ? P[w] : 0u, hi = w + 1 < 9 ? P[w + 1] : 0u;
    return b == 0 ? lo : (lo >> uint(b)) | (hi << uint(32 - b));
}

// |x| (finite, >= 2^47) reduced: returns r, sets q = k mod 4.
double reduce_big(double ax, out uint q)
{
    uvec2 w = unpackDouble2x32(ax);
    int E = int((w.y >> 20) & 0x7ffu) - 1075;
    uint m0 = w.x, m1 = (w.y & 0xfffffu) | 0x100000u;
    // the window: words i0 .. i0 + 6 of 2/pi, bit j (weight 2^-j) of word i being j = 32 i + 1 .. 32 i + 32
    int i0 = max(0, (E - 2) >> 5);
    uint P[9] = uint[9](0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u);
    for (int k = 0; k < 7; k++) {
        uint v = TWO_OVER_PI[i0 + 6 - k], hi, lo;   // limb k, least significant first
        umulExtended(v, m0, hi, lo);
        limb_add(P, k, lo);
        limb_add(P, k + 1, hi);
        umulExtended(v, m1, hi, lo);
        limb_add(P, k + 1, lo);
        limb_add(P, k + 2, hi);
    }
    // x 2/pi = P 2^(E - 32 i0 - 224): the binary point is at bit pt of P
    int pt = 224 - (E - 32 * i0);
    q = limb_bits(P, pt) & 3u;
    uint f3 = limb_bits(P, pt - 32), f2 = limb_bits(P, pt - 64), f1 = limb_bits(P, pt - 96),
         f0 = limb_bits(P, pt - 128);
    bool neg = (f3 >> 31) != 0u;       // fraction >= 1/2: the next quarter turn, r < 0
    if (neg) {
        q = (q + 1u) & 3u;
        uint c0, c1, c2;
        f0 = uaddCarry(~f0, 1u, c0);
        f1 = uaddCarry(~f1, c0, c1);
        f2 = uaddCarry(~f2, c1, c2);
        f3 = ~f3 + c2;
    }
    precise double f = ((double(f0) * pow2_d(-128) + double(f1) * pow2_d(-96)) + double(f2) * pow2_d(-64)) +
                       double(f3) * pow2_d(-32);
    precise double r = f * PIO2_1 + f * PIO2_2;
    return neg ? -r : r;
}

// a b = h + l exactly (Dekker's product: each split into two 26-bit halves; |a|, |b| < 2^996).
// Not fma(a, b, -h): Vulkan lets a driver compute fma unfused, and lavapipe does.
void two_prod(double a, double b, out double h, out double l)
{
    precise double ca = 134217729.0LF * a;            // 2^27 + 1
    precise double ah = ca - (ca - a);
    precise double al = a - ah;
    precise double cb = 134217729.0LF * b;
    precise double bh = cb - (cb - b);
    precise double bl = b - bh;
    precise double p = a * b;
    precise double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    h = p;
    l = e;
}

// |x| (finite) = k pi/2 + r: returns r, sets q = k mod 4 (the two reductions above).
double reduce_pio2(double ax, out uint q)
{
    if (ax < 140737488355328.0LF) {    // 2^47
        double k = floor(ax * TWO_OVER_PI_D + 0.5LF);
        double ph, pl, qh, ql;
        two_prod(k, PIO2_1, ph, pl);
        two_prod(k, PIO2_2, qh, ql);
        precise double t1 = (ax - ph) - pl;  // exact: x - ph by Sterbenz (or k = 0), then a representable result
        precise double t2 = (t1 - qh) - ql;
        precise double rr = t2 - k * PIO2_3;
        q = uint(mod(k, 4.0LF));
        return rr;
    }
    return reduce_big(ax, q);
}

bool sign_d(double x)
{
    return (unpackDouble2x32(x).y >> 31) != 0u;
}

// sin (which 0) or cos (which 1) of x.
double sincos_d(double x, uint which)
{
    if (isnan(x) || isinf(x))
        return nan_d();
    uint q;
    double r = reduce_pio2(abs(x), q);
    q += which;                       // cos x = sin(x + pi/2)
    double y = (q & 1u) == 0u ? sin_poly(r) : cos_poly(r);
    if ((q & 2u) != 0u)
        y = -y;
    return which == 0u && sign_d(x) ? -y : y;
}

// tan x = sin r / cos r for even k, -cos r / sin r for odd k (one reduction, one division).
double tan_d(double x)
{
    if (isnan(x) || isinf(x))
        return nan_d();
    uint q;
    double r = reduce_pio2(abs(x), q);
    double s = sin_poly(r), c = cos_poly(r);
    double y = (q & 1u) == 0u ? s / c : -c / s;
    return sign_d(x) ? -y : y;
}

// gelu x = x/2 (1 + erf(x / sqrt 2)). With z = x / sqrt 2:
//   |z| < 0.75: erf z by its Taylor series 2/sqrt(pi) sum (-1)^n z^(2n+1) / (n! (2n+1)) (to
//     n = 22: the first term left out is below 2^-70 of the sum), then 1 + erf z (for z < 0 a
//     cancellation of at most 1.3 bits: 1 + erf z >= erfc 0.75 = 0.289);
//   |z| >= 0.75: erfc |z| = e^(-z^2) / (sqrt(pi) t), t Laplace's continued fraction
//     |z| + (1/2) / (|z| + 1 / (|z| + (3/2) / (|z| + ...))), evaluated from the tail: it
//     converges slowest near 0.75 (2^-56 after 370 levels there, 220 at 1, 70 at 2), so 400
//     levels below |z| = 1, 240 below 2, 80 above;
//     e^(-z^2) = e^(-x^2 / 2) with x^2 split exactly into hi + lo (z rounded would
//     err by 2 z^2 ULP: 1400 at z = -26); then x - x/2 erfc z for z > 0, x/2 erfc |z| for z < 0.
//     Past |z| = 27.3 the result is x itself, or -0 (below half the least subnormal).
// NaN stays NaN; gelu(inf) = inf, gelu(-inf) = NaN (-inf times 0), as PyTorch's.
const double INV_SQRT2 = 0.7071067811865476LF;
const double TWO_OVER_SQRTPI = 1.1283791670955126LF;
const double SQRTPI = 1.772453850905516LF;

double gelu_d(double x)
{
    if (isnan(x))
        return x;
    if (isinf(x))
        return x > 0.0LF ? x : nan_d();
    double z = x * INV_SQRT2, az = abs(z);
    if (az < 0.75LF) {
        double s = z * z, term = z, sum = z;
        for (int n = 1; n <= 22; n++) {
            term *= -s / double(n);
            sum += term / double(2 * n + 1);
        }
        return 0.5LF * x * (1.0LF + TWO_OVER_SQRTPI * sum);
    }
    if (az > 27.5LF)
        return x > 0.0LF ? x : -0.0LF;
    double hi, lo;
    two_prod(x, x, hi, lo);                           // |x| <= 38.9 here
    double t = az;
    for (int n = az < 1.0LF ? 400 : az < 2.0LF ? 240 : 80; n > 0; n--)
        t = az + 0.5LF * double(n) / t;
    // e^(-hi/2) = 2^k e^r as exp_d, the factors applied before the scaling by 2^k, which rounds
    // once (a subnormal e^(-hi/2) rounded first would cost the tail's last digits)
    double u = -0.5LF * hi;
    double k = roundEven(u * INV_LN2);
    precise double r = (u - k * LN2_HI) - k * LN2_LO;
    double m = exp_poly(r) * (1.0LF - 0.5LF * lo) / (SQRTPI * t); // erfc |z| / 2^k
    return x > 0.0LF ? x - 0.5LF * x * scale_d(m, int(k)) : scale_d(0.5LF * x * m, int(k));
}

// erf: the Taylor series of gelu_d below |x| = 0.75; above, 1 - erfc |x| by the same continued
// fraction and exact x^2 (erfc is small there: no cancellation worth a bit); from 5.93 on the
// double nearest is +-1.
double erf_d(double x)
{
    if (isnan(x) || x == 0.0LF)       // erf(-0) = -0
        return x;
    double az = abs(x);
    if (az < 0.75LF) {
        double s = x * x, term = x, sum = x;
        for (int n = 1; n <= 22; n++) {
            term *= -s / double(n);
            sum += term / double(2 * n + 1);
        }
        return TWO_OVER_SQRTPI * sum;
    }
    double r = 1.0LF;
    if (az < 6.0LF) {
        double hi, lo;
        two_prod(az, az, hi, lo);
        double t = az;
        for (int n = az < 1.0LF ? 400 : az < 2.0LF ? 240 : 80; n > 0; n--)
            t = az + 0.5LF * double(n) / t;
        r = 1.0LF - exp_d(-hi) * (1.0LF - lo) / (SQRTPI * t);
    }
    return x < 0.0LF ? -r : r;
}

// log1p: u = 1 + x rounded, then log u scaled by x / (u - 1), which puts back what the
// rounding of u lost (u - 1 is exact); x itself where u rounds to 1.
double log1p_d(double x)
{
    if (isnan(x) || x == inf_d())
        return x;
    if (x < -1.0LF)
        return nan_d();
    if (x == -1.0LF)
        return -inf_d();
    precise double u = 1.0LF + x;
    if (u == 1.0LF)
        return x;
    precise double d = u - 1.0LF;
    return log_d(u) * (x / d);
}

// atan of a in [0, 1] as hi + lo (|lo| well below hi's last bits, or hi = 0): atan a, or with
// cot, pi/2 - atan a = atan(1/a). Below 0.1875 the Taylor series a - a^3/3 + a^5/5 - ... itself (to
// a^33: the first term left out is below 2^-76 of the sum); above, a = c + d with c = k/8
// (k = 2 .. 8, the nearest), atan a = atan c + atan t, t = (a - c) / (1 + a c), |t| <= 1/16, by
// the same series (to t^19: 2^-72), atan c (and pi/2 - atan c) as two doubles (hi the nearest,
// lo the nearest to the rest: computed with 300-bit arithmetic). a - c is exact (Sterbenz:
// c/2 <= a <= 2c), 1 + a c and the division round once each, so t is within 2^-52 relative and
// |t| 2^-52 <= 2^-56 <= half a unit of atan a >= 0.18: with the series' and the final sum's
// roundings about 1 ULP in all.
const double ATAN_C_HI[9] = double[9](0.0LF, 0.12435499454676144LF, 0.24497866312686414LF,
    0.35877067027057225LF, 0.4636476090008061LF, 0.5585993153435624LF, 0.6435011087932844LF,
    0.7188299996216245LF, 0.7853981633974483LF);
const double ATAN_C_LO[9] = double[9](0.0LF, -3.1253241424539383e-18LF, 1.0698755618734451e-17LF,
    -2.4623815582638635e-17LF, 2.2698777452961687e-17LF, -5.4556305485916264e-18LF,
    1.5834785051444286e-17LF, -2.1478388444456983e-17LF, 3.061616997868383e-17LF);
const double ACOT_C_HI[9] = double[9](1.5707963267948966LF, 1.446441332248135LF, 1.3258176636680326LF,
    1.2120256565243244LF, 1.1071487177940904LF, 1.0121970114513341LF, 0.9272952180016122LF,
    0.8519663271732721LF, 0.7853981633974483LF);
const double ACOT_C_LO[9] = double[9](6.123233995736766e-17LF, 9.211323971545052e-17LF,
    -8.824429373951136e-17LF, 3.034500430874847e-17LF, 9.40447137356638e-17LF, 6.668797050595929e-17LF,
    4.5397554905923374e-17LF, -2.831157406069101e-17LF, 3.061616997868383e-17LF);
const double PI_HI = 3.141592653589793LF;
const double PI_LO = 1.2246467991473532e-16LF;

// atan t - t = t^3 (-1/3 + t^2/5 - t^4/7 + ...), the terms to t^(2 nt + 1).
double atan_tail(double t, int nt)
{
    double s = t * t;
    double q = 0.0LF;
    for (int n = nt; n >= 1; n--)
        q = q * s + ((n & 1) != 0 ? -1.0LF : 1.0LF) / double(2 * n + 1);
    return t * s * q;
}

void atan_unit(double a, bool cot, out double hi, out double lo)
{
    int k = int(roundEven(a * 8.0LF));
    precise double p;
    if (k <= 1) {
        k = 0;
        p = a + atan_tail(a, 16);
    } else {
        double c = double(k) * 0.125LF;
        precise double num = a - c;
        precise double den = 1.0LF + a * c;
        double t = num / den;
        p = t + atan_tail(t, 9);
    }
    hi = cot ? ACOT_C_HI[k] : ATAN_C_HI[k];
    precise double l = cot ? ACOT_C_LO[k] - p : ATAN_C_LO[k] + p;
    lo = l;
}

// atan x: x itself below 2^-27 (x^3/3 is below half its last bit) and for NaN; |x| <= 1 by
// atan_unit, above as pi/2 - atan(1/|x|) (1/|x| rounded: at most a quarter unit of the result);
// signed as x (atan(-0) = -0, atan(+-inf) = +-pi/2).
double atan_d(double x)
{
    double ax = abs(x);
    if (isnan(x) || ax < 7.450580596923828e-9LF)
        return x;
    double hi, lo;
    if (ax <= 1.0LF)
        atan_unit(ax, false, hi, lo);
    else
        atan_unit(1.0LF / ax, true, hi, lo);
    precise double r = hi + lo;
    return sign_d(x) ? -r : r;
}

// asin x = atan(|x| / sqrt(1 - x^2)), signed as x; 1 - x^2 as (1 - |x|)(1 + |x|) from 0.5 on
// (1 - |x| exact there: no cancellation near 1). The ratio is taken the way that is at most 1
// (sqrt(1 - x^2) / |x| with the pi/2 - form past 1/sqrt 2). NaN and |x| > 1 give NaN.
double asin_d(double x)
{
    double ax = abs(x);
    if (isnan(x) || ax < 7.450580596923828e-9LF)
        return x;
    if (ax > 1.0LF)
        return nan_d();
    precise double d = ax >= 0.5LF ? (1.0LF - ax) * (1.0LF + ax) : 1.0LF - ax * ax;
    double sd = sqrt_d(d), hi, lo;
    if (ax <= sd)
        atan_unit(ax / sd, false, hi, lo);
    else
        atan_unit(sd / ax, true, hi, lo);
    precise double r = hi + lo;
    return sign_d(x) ? -r : r;
}

// acos x = 2 atan(sqrt((1 - x) / (1 + x))); for x < 0 as 2 (pi/2 - atan(sqrt((1 + x) / (1 - x)))),
// so the atan's argument is at most 1 (1 - x is exact from 0.5 on, 1 + x down to -0.5: no
// cancellation at either end). acos 1 = +0, acos -1 = pi; NaN and |x| > 1 give NaN.
double acos_d(double x)
{
    if (isnan(x) || abs(x) > 1.0LF)
        return nan_d();
    bool neg = x < 0.0LF;
    precise double u = 1.0LF - x;
    precise double v = 1.0LF + x;
    double s = sqrt_d(neg ? v / u : u / v), hi, lo;
    atan_unit(s, neg, hi, lo);
    precise double r = hi + lo;
    return 2.0LF * r;
}

// C99 atan2(y, x) with every special case of F.9.1.4; else v = atan(|y| / |x|) (the ratio taken
// at most 1, as atan_d), pi - v where x is negative (pi in two parts), signed as y.
double atan2_d(double y, double x)
{
    if (isnan(x) || isnan(y))
        return nan_d();
    double ay = abs(y), ax = abs(x), r;
    bool xneg = sign_d(x);
    if (isinf(ay) && isinf(ax)) {
        r = xneg ? 2.356194490192345LF : 0.7853981633974483LF;
    } else if (ay == 0.0LF) {
        r = xneg ? PI_HI : 0.0LF;
    } else if (ax == 0.0LF || isinf(ay)) {
        r = PIO2_1;
    } else if (isinf(ax)) {
        r = xneg ? PI_HI : 0.0LF;
    } else {
        double hi, lo;
        if (ay <= ax) {
            double q = ay / ax;
            if (q < 7.450580596923828e-9LF) { // atan q = q to the last bit (q may be subnormal)
                hi = 0.0LF;
                lo = q;
            } else {
                atan_unit(q, false, hi, lo);
            }
        } else {
            atan_unit(ax / ay, true, hi, lo);
        }
        precise double rp = (PI_HI - hi) + (PI_LO - lo);
        precise double rq = hi + lo;
        r = xneg ? rp : rq;
    }
    return sign_d(y) ? -r : r;
}

// The exponent of a finite x > 0 (floor(log2 x)), from its bits (subnormals too).
int ilogb_d(double x)
{
    uvec2 w = unpackDouble2x32(x);
    int e = int((w.y >> 20) & 0x7ffu);
    if (e != 0)
        return e - 1023;
    uint h = w.y & 0xfffffu;
    return h != 0u ? findMSB(h) + 32 - 1074 : findMSB(w.x) - 1074;
}

// x 2^k for x > 0 with x 2^k finite, k >= 0: exact (steps of 2^1000, then the rest).
double scale_up_d(double x, int k)
{
    for (; k > 1000; k -= 1000) {
        precise double y = x * pow2_d(1000);
        x = y;
    }
    precise double r = x * pow2_d(k);
    return r;
}

// C's fmod, exactly: |x| reduced by |y| 2^k, the largest such multiple not above it (Sterbenz:
// t <= |x| < 2t, so |x| - t is exact), until below |y|; signed as x. NaN for NaN, infinite x or
// zero y; x for infinite y.
double fmod_d(double x, double y)
{
    double ax = abs(x), ay = abs(y);
    if (isnan(x) || isnan(y) || isinf(ax) || ay == 0.0LF)
        return nan_d();
    if (isinf(ay) || ax < ay)
        return x;
    int ey = ilogb_d(ay);
    while (ax >= ay) {
        int k = ilogb_d(ax) - ey;
        double t = scale_up_d(ay, k);
        if (t > ax)
            t = scale_up_d(ay, k - 1);
        precise double d = ax - t;
        ax = d;
    }
    return sign_d(x) ? -ax : ax;
}

// torch.remainder: fmod, plus y where it is nonzero and its sign differs from y's (the result
// takes the divisor's sign).
double rem_d(double x, double y)
{
    double m = fmod_d(x, y);
    if (m != 0.0LF && !isnan(m) && sign_d(y) != sign_d(m)) {
        precise double r = m + y;
        m = r;
    }
    return m;
}

#endif
