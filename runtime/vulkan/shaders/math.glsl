// Float math shared by the shaders (included by unary.comp, ew.comp and fmath.comp): exp, log, pow,
// tanh with C99 (Annex F) special values, subnormal inputs and results, and an error of about
// 1 ULP (exp, log, pow) or 3 ULP (tanh), computed with float arithmetic only.
// The driver's exp, log, exp2 and log2 builtins are not used: the Vulkan precision rules let
// them lose many ULP at large |x|, and drivers may read subnormal inputs wrongly or return 0
// for subnormal results (lavapipe's log2 takes the exponent field of a subnormal for that of
// a normal number, and its exp2 gives 0 below 2^-126). Subnormal inputs are rescaled through
// their bits and special values classified on the bits, so a driver that treats subnormals as
// zero in comparisons cannot misroute them; subnormal results still need a driver that keeps
// subnormals in a plain multiplication (Vulkan lets it flush them; lavapipe keeps them).
//
// Double-float values (hi + lo, |lo| <= ulp(hi) / 2) carry the intermediate results; the
// error-free sums and products need exact IEEE float operations in order, which `precise`
// guarantees (no fused multiply-adds, no reassociation).

#define NAN_F uintBitsToFloat(0x7fc00000u)
#define INF_F uintBitsToFloat(0x7f800000u)

// ln 2 = LN2_HI + LN2_LO with LN2_HI of 15 significant bits, so k * LN2_HI is exact for
// |k| < 512; 2/3 = TT_HI + TT_LO.
#define LN2_HI uintBitsToFloat(0x3f317200u)   // 0.693145751953125
#define LN2_LO uintBitsToFloat(0x35bfbe8eu)   // 1.4286068e-06
#define INV_LN2 uintBitsToFloat(0x3fb8aa3bu)  // 1.442695
#define SQRT2 uintBitsToFloat(0x3fb504f3u)    // 1.4142135
#define TT_HI uintBitsToFloat(0x3f2aaaabu)    // 0.6666667
#define TT_LO uintBitsToFloat(0xb2aaaaabu)    // -1.9868215e-08

// a + b exactly, as (sum, error).
vec2 two_sum(float a, float b)
{
    precise float s = a + b;
    precise float bb = s - a;
    precise float e = (a - (s - bb)) + (b - bb);
    return vec2(s, e);
}

// a * b exactly, as (product, error), by Dekker's splitting (|a|, |b| < 2^115).
vec2 two_prod(float a, float b)
{
    precise float p = a * b;
    precise float c = 4097.0 * a;
    precise float ah = c - (c - a);
    precise float al = a - ah;
    precise float d = 4097.0 * b;
    precise float bh = d - (d - b);
    precise float bl = b - bh;
    precise float e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return vec2(p, e);
}

// ln(x) as a double-float, for finite x > 0 given by its bits u (subnormals included), with
// a relative error below 2^-33 (measured against double log over every 37th float).
// x = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1, s = f / (2 + f);
// ln(m) = 2s + 2s^3/3 + 2s^5/5 + ... (|s| < 0.172), the first two terms in double-float.
vec2 log_ff(uint u)
{
    int e = -127;
    if (u < 0x00800000u) {             // subnormal: x = u * 2^-149, and float(u) is exact
        u = floatBitsToUint(float(u));
        e -= 149;
    }
    e += int(u >> 23);
    precise float m = uintBitsToFloat((u & 0x007fffffu) | 0x3f800000u);
    if (m > SQRT2) {
        m *= 0.5;
        e += 1;
    }
    precise float f = m - 1.0;         // exact
    precise float d = 2.0 + f;
    precise float dl = f - (d - 2.0);  // d + dl = 2 + f exactly
    precise float sh = f / d;
    vec2 pr = two_prod(sh, d);
    precise float sl = (((f - pr.x) - pr.y) - sh * dl) / d;  // s = sh + sl
    vec2 z2 = two_prod(sh, sh);
    vec2 c3 = two_prod(z2.x, sh);
    precise float s3lo = c3.y + (z2.y * sh + 3.0 * z2.x * sl);   // s^3 = c3.x + s3lo
    vec2 t3 = two_prod(TT_HI, c3.x);
    precise float t3lo = t3.y + (TT_HI * s3lo + TT_LO * c3.x);   // 2s^3/3 = t3.x + t3lo
    precise float z = z2.x;
    precise float rest = 2.0 * sh * z * z * (1.0 / 5.0 + z * (1.0 / 7.0 + z * (1.0 / 9.0 +
                         z * (1.0 / 11.0 + z * (1.0 / 13.0)))));
    precise float ef = float(e);
    vec2 s1 = two_sum(ef * LN2_HI, 2.0 * sh);
    vec2 s2 = two_sum(s1.x, t3.x);
    precise float lo = (s1.y + s2.y) + (ef * LN2_LO + (2.0 * sl + (t3lo + rest)));
    return two_sum(s2.x, lo);
}

// e^(th + tl) for a double-float argument (not NaN; |tl| <= ulp(th)); subnormal results are
// rounded once, infinities and underflow to 0 follow. th = k ln2 + r, |r| <= ln2 / 2 (in
// double-float), e^r by its Taylor series to r^8, then 2^k in two exact steps.
float exp_ff(float th, float tl)
{
    if (th > 89.0)                     // e^89 > FLT_MAX (inf too)
        return INF_F;
    if (th < -104.0)                   // e^-104 < 2^-150 (-inf too)
        return 0.0;
    precise float kf = roundEven(th * INV_LN2);
    precise float a = th - kf * LN2_HI;  // exact
    vec2 r = two_sum(a, tl - kf * LN2_LO);
    precise float rh = r.x;
    precise float q = rh * rh * (0.5 + rh * (1.0 / 6.0 + rh * (1.0 / 24.0 + rh * (1.0 / 120.0 +
                      rh * (1.0 / 720.0 + rh * (1.0 / 5040.0 + rh * (1.0 / 40320.0)))))));
    precise float p = 1.0 + (rh + (r.y + q));
    int k = int(kf);                   // in [-150, 128]
    int k1 = k / 2;
    precise float s1 = uintBitsToFloat(uint(k1 + 127) << 23);
    precise float s2 = uintBitsToFloat(uint(k - k1 + 127) << 23);
    precise float res = (p * s1) * s2;   // p * s1 is exact (normal); one rounding
    return res;
}

// expf.
float exp_(float x)
{
    return isnan(x) ? x : exp_ff(x, 0.0);
}

// logf: log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN stays NaN.
float log_(float x)
{
    uint u = floatBitsToUint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return x;
    if ((u & 0x7fffffffu) == 0u)
        return -INF_F;
    if ((u >> 31) != 0u)
        return NAN_F;
    if (u == 0x7f800000u)
        return x;
    vec2 l = log_ff(u);
    return l.x + l.y;
}

// powf, with every special value of C99 F.9.4.4.
float pow_(float x, float y)
{
    uint ux = floatBitsToUint(x), uy = floatBitsToUint(y);
    uint ax = ux & 0x7fffffffu, ay = uy & 0x7fffffffu;
    bool xneg = (ux >> 31) != 0u, yneg = (uy >> 31) != 0u;
    if (ay == 0u || ux == 0x3f800000u)       // pow(x, +-0) = pow(+1, y) = 1, even for NaN
        return 1.0;
    if (ax > 0x7f800000u || ay > 0x7f800000u)
        return NAN_F;
    if (ay == 0x7f800000u) {                 // y = +-inf
        if (ax == 0x3f800000u)               // pow(-1, +-inf) = 1
            return 1.0;
        return (ax < 0x3f800000u) == yneg ? INF_F : 0.0;
    }
    // y finite and nonzero: integer? odd? (Every float >= 2^23 is an integer and every one
    // >= 2^24 even; testing the bits keeps a subnormal y from passing for an integer.)
    float fy = uintBitsToFloat(ay);
    bool yint = ay >= 0x4b000000u || (ay >= 0x3f800000u && fract(fy) == 0.0);
    bool odd = yint && ay < 0x4b800000u && (uint(fy) & 1u) == 1u;
    if (ax == 0u || ax == 0x7f800000u) {     // x = +-0 or +-inf
        float r = (ax == 0u) == yneg ? INF_F : 0.0;
        return xneg && odd ? -r : r;
    }
    if (xneg && !yint)                       // finite x < 0, finite non-integer y
        return NAN_F;
    if (y == 1.0)                            // exact, and x * x correctly rounded
        return x;
    if (y == 2.0)
        return x * x;
    // |x|^y = e^(y ln|x|), y ln|x| in double-float. Beyond |y| = 2^31 the result overflows
    // or underflows anyway (|ln|x|| >= 2^-24 for x != 1), and the split would overflow.
    vec2 l = log_ff(ax);
    vec2 t;
    if (ay > 0x4f000000u) {
        t = vec2(y * l.x, 0.0);
    } else {
        vec2 p = two_prod(y, l.x);
        precise float tl = p.y + y * l.y;
        t = two_sum(p.x, tl);
    }
    float r = exp_ff(t.x, t.y);
    return xneg && odd ? -r : r;
}

// tanh: x below 2^-12 (zeros and subnormals included), an odd Taylor series to x^15 below
// 0.5, else (1 - e^-2|x|) / (1 + e^-2|x|).
float tanh_(float x)
{
    float ax = abs(x);
    if (ax < 0.000244140625)
        return x;
    if (ax < 0.5) {
        float z = x * x;
        float p = z * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0 + z * (62.0 / 2835.0 +
                  z * (-1382.0 / 155925.0 + z * (21844.0 / 6081075.0 + z * (-929569.0 / 638512875.0)))))));
        return x + x * p;
    }
    float t = exp_(-2.0 * ax);
    float r = (1.0 - t) / (1.0 + t);
    return x < 0.0 ? -r : r;
}

// sin and cos over the whole float range. The Vulkan precision rules leave the builtins'
// error unbounded outside [-pi, pi] (lavapipe's sin(1e9) is off by 0.03; GPUs do worse), so
// the argument is reduced here: |x| = m 2^e (m a 24-bit integer) times 2/pi, modulo 4, by
// Payne and Hanek's method on the bits of 2/pi below, in exact 32-bit integer arithmetic
// (the product is kept to 96 bits: its error is below 2^-72 of a quarter turn, enough for
// arguments near a multiple of pi/2), then sin and cos of the remainder in [-pi/4, pi/4] by
// the minimax polynomials of Cephes' sinf and cosf (about 1 ULP).
const uint TWO_OVER_PI_[8] = uint[8](0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u,
                                     0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u);

// Bits k+1 .. k+32 of 2/pi as one word (bit 1 is worth 1/2; bits 0 and above are 0).
uint two_over_pi_bits_(int k)
{
    if (k <= -32)
        return 0u;
    if (k < 0)
        return TWO_OVER_PI_[0] >> uint(-k);
    int w = k >> 5, sh = k & 31;
    uint hi = TWO_OVER_PI_[w];
    if (sh == 0)
        return hi;
    uint lo = w + 1 < 8 ? TWO_OVER_PI_[w + 1] : 0u;
    return (hi << uint(sh)) | (lo >> uint(32 - sh));
}

// |x| (finite, above pi/4) = (4 n + q) pi/2 + r, |r| <= pi/4: returns r, q in [0, 3].
float reduce_pio2_(float ax, out uint q)
{
    uint u = floatBitsToUint(ax);
    int e = int(u >> 23) - 150;
    uint m = (u & 0x7fffffu) | 0x800000u;
    // |x| 2/pi = 4 m frac(2^(e-2) 2/pi) modulo 4: the bits of 2/pi from e-1 on, 96 of them.
    int s = e - 2;
    uint w0 = two_over_pi_bits_(s), w1 = two_over_pi_bits_(s + 32), w2 = two_over_pi_bits_(s + 64);
    uint h2, l2, h1, l1, h0, l0;
    umulExtended(m, w2, h2, l2);
    umulExtended(m, w1, h1, l1);
    umulExtended(m, w0, h0, l0);
    uint mid = l1 + h2;
    uint carry = mid < l1 ? 1u : 0u;
    uint top = l0 + h1 + carry;
    // top's two high bits are the quadrant; the 62 bits below them a fraction of a quarter.
    q = top >> 30;
    uint fhi = top & 0x3fffffffu;
    float sign = 1.0;
    if ((fhi & 0x20000000u) != 0u) { // at least half a quarter: r = (f - 1) pi/2, the next quadrant
        q = (q + 1u) & 3u;
        fhi = (~fhi & 0x3fffffffu) + (mid == 0u ? 1u : 0u);
        mid = ~mid + 1u;
        sign = -1.0;
    }
    float f = float(fhi) * uintBitsToFloat(0x30800000u) + float(mid) * uintBitsToFloat(0x20800000u); // 2^-30, 2^-62
    return sign * f * 1.57079632679489661923;
}

float sin_poly_(float z)
{
    float zz = z * z;
    return z + z * zz * ((-1.9515295891e-4 * zz + 8.3321608736e-3) * zz - 1.6666654611e-1);
}

float cos_poly_(float z)
{
    float zz = z * z;
    return 1.0 - 0.5 * zz + zz * zz * ((2.443315711809948e-5 * zz - 1.388731625493765e-3) * zz + 4.166664568298827e-2);
}

float sin_(float x)
{
    if ((floatBitsToUint(x) & 0x7f800000u) == 0x7f800000u) // NaN or an infinity
        return NAN_F;
    float ax = abs(x);
    if (ax < 0.000244140625)
        return x; // below 2^-12 sin x = x in float; keeps -0 (the polynomial would give +0)
    if (ax <= 0.78539816339744830962)
        return sin_poly_(x);
    uint q;
    float r = reduce_pio2_(ax, q);
    float v = (q & 1u) == 0u ? sin_poly_(r) : cos_poly_(r);
    if (q >= 2u)
        v = -v;
    return x < 0.0 ? -v : v;
}

float cos_(float x)
{
    if ((floatBitsToUint(x) & 0x7f800000u) == 0x7f800000u) // NaN or an infinity
        return NAN_F;
    float ax = abs(x);
    if (ax <= 0.78539816339744830962)
        return cos_poly_(ax);
    uint q;
    float r = reduce_pio2_(ax, q);
    float v = (q & 1u) == 0u ? cos_poly_(r) : sin_poly_(r);
    return q == 1u || q == 2u ? -v : v;
}
