// Float math of issue 10 without a sound decomposition into other ops: inverse
// trigonometry, tan (the driver's sin and cos may err by 2^-11), rounding, erf, log1p, classification and remainders. Parameters as in
// ew.comp (n, op, ndim, scalar, dims[8], strides of a[8] and b[8]); unary ops read only a,
// the scalar ops take their f32 argument from `scalar`.
// Special values and subnormals are classified on the bits, so a driver that flushes
// subnormals in comparisons cannot misroute them (see math.glsl).
// Built twice more (backend.cmake) with TD_HALF: a and b hold f16 / bf16 (the constant DT), as
// uint16_t with TD_S16 (16-bit storage) or halves of packed words; each invocation computes two
// consecutive elements of the result, each input widened exactly, computed in f32 as below and
// rounded once to nearest even (half.glsl), written as one packed word or two uint16_t; is_nan /
// is_inf write their two bools as words.
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef TD_S16
#extension GL_EXT_shader_16bit_storage : require
#endif
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer P { uint p[]; };
#if defined(TD_HALF) && defined(TD_S16)
layout(std430, binding = 1) readonly buffer A { uint16_t a[]; };
layout(std430, binding = 2) readonly buffer B { uint16_t b[]; };
layout(std430, binding = 4) writeonly buffer OH { uint16_t oh[]; };
#else
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
#endif
layout(std430, binding = 4) writeonly buffer O { uint o[]; };

#include "math.glsl"

// The op: p[1], or a specialization constant (vk_coded_elementwise, unless
// td_vulkan_set_elementwise_kernel asks for GENERIC), which folds the switch: a software device
// runs every case of a switch on a runtime value, masked, for every element.
layout(constant_id = 0) const uint OPC = 0xffffffffu;

#define PI_F uintBitsToFloat(0x40490fdbu)    // 3.1415927
#define PIO2_F uintBitsToFloat(0x3fc90fdbu)  // 1.5707964
#define PIO4_F uintBitsToFloat(0x3f490fdbu)  // 0.7853982

bool is_nan_(uint u) { return (u & 0x7fffffffu) > 0x7f800000u; }
bool is_inf_(uint u) { return (u & 0x7fffffffu) == 0x7f800000u; }
bool is_zero_or_sub(uint u) { return (u & 0x7f800000u) == 0u; }
bool neg_(uint u) { return (u >> 31) != 0u; }

// atan on [0, inf] (Cephes atanf: reduction to |t| <= tan(pi/8), relative error ~2e-7).
float atan_pos(float x)
{
    float y = 0.0;
    if (x > 2.414213562373095) {
        y = PIO2_F;
        x = -1.0 / x;
    } else if (x > 0.4142135623730950) {
        y = PIO4_F;
        x = (x - 1.0) / (x + 1.0);
    }
    float z = x * x;
    return y + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z -
                 3.33329491539e-1) * z * x + x);
}

float atan_(float x)
{
    uint u = floatBitsToUint(x);
    if (is_nan_(u) || is_zero_or_sub(u))
        return x;
    float r = atan_pos(abs(x));
    return neg_(u) ? -r : r;
}

// C99 atan2(y, x), every special case of F.9.1.4.
float atan2_(float y, float x)
{
    uint uy = floatBitsToUint(y), ux = floatBitsToUint(x);
    if (is_nan_(uy) || is_nan_(ux))
        return NAN_F;
    float r;
    if (is_inf_(uy) && is_inf_(ux)) {
        r = neg_(ux) ? 3.0 * PIO4_F : PIO4_F;
    } else if ((uy & 0x7fffffffu) == 0u) {     // y = +-0
        r = neg_(ux) ? PI_F : 0.0;
    } else if ((ux & 0x7fffffffu) == 0u || is_inf_(uy)) {
        r = PIO2_F;
    } else if (is_inf_(ux)) {
        r = neg_(ux) ? PI_F : 0.0;
    } else {
        // |y / x| in double-free float: atan of the ratio, then the quadrant
        float q = abs(y) / abs(x);
        float t = atan_pos(q);
        r = neg_(ux) ? PI_F - t : t;
    }
    return neg_(uy) ? -r : r;
}

// asin on [0, 1] (Cephes asinf: above 0.5, asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2))).
float asin_pos(float a)
{
    bool big = a > 0.5;
    float z, x;
    if (big) {
        z = 0.5 * (1.0 - a);
        x = sqrt(z);
    } else {
        x = a;
        z = x * x;
    }
    float r = ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z +
               1.6666752422e-1) * z * x + x;
    return big ? PIO2_F - 2.0 * r : r;
}

float asin_(float x)
{
    uint u = floatBitsToUint(x);
    if (is_nan_(u) || is_zero_or_sub(u))
        return x;
    float ax = abs(x);
    if (ax > 1.0)
        return NAN_F;
    float r = asin_pos(ax);
    return neg_(u) ? -r : r;
}

// acos(x) = pi/2 - asin(x) in the middle; 2 asin(sqrt((1 - x) / 2)) above 0.5 and
// pi - 2 asin(sqrt((1 + x) / 2)) below -0.5 (no cancellation near +-1).
float acos_(float x)
{
    uint u = floatBitsToUint(x);
    if (is_nan_(u))
        return x;
    if (is_zero_or_sub(u))
        return PIO2_F;
    if (abs(x) > 1.0)
        return NAN_F;
    if (x > 0.5)
        return 2.0 * asin_pos(sqrt(0.5 * (1.0 - x)));
    if (x < -0.5)
        return PI_F - 2.0 * asin_pos(sqrt(0.5 * (1.0 + x)));
    return PIO2_F - asin_(x);
}

// erf: an odd Taylor series below 0.5 (relative accuracy near 0), else Numerical Recipes'
// erfc rational approximation (fractional error < 1.2e-7), as unary.comp's gelu.
float erf_(float x)
{
    uint u = floatBitsToUint(x);
    if (is_nan_(u) || (u & 0x7fffffffu) == 0u)
        return x;
    if (is_zero_or_sub(u)) // erf x = 2/sqrt(pi) x there (x itself was 12% off)
        return 1.1283791670955126 * x;
    float z = abs(x);
    if (z < 0.5) {
        float s = x * x;
        // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320 + x^13/9360)
        float q = 1.0 + s * (-1.0 / 3.0 + s * (1.0 / 10.0 + s * (-1.0 / 42.0 + s * (1.0 / 216.0 +
                  s * (-1.0 / 1320.0 + s * (1.0 / 9360.0))))));
        return 1.1283791670955126 * x * q;
    }
    float t = 1.0 / (1.0 + 0.5 * z);
    float r = t * exp_(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
              t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
              t * (-0.82215223 + t * 0.17087277)))))))));
    float e = 1.0 - r;
    return neg_(u) ? -e : e;
}

// log1p: ln(u) * (x / (u - 1)) with u = 1 + x rounded, which cancels the rounding of u
// (Goldberg); x itself where 1 + x rounds to 1.
float log1p_(float x)
{
    uint ux = floatBitsToUint(x);
    if (is_nan_(ux) || ux == 0x7f800000u)
        return x;
    precise float u = 1.0 + x;
    if (u == 1.0)
        return x;
    if (u == 0.0)
        return -INF_F;
    if (u < 0.0)
        return NAN_F;
    precise float d = u - 1.0;
    return log_(u) * (x / d);
}

// tan (Cephes tanf): x = j pi/4 + z, |z| <= pi/4, with pi/4 in three parts (exact products
// for |x| < 8192), a polynomial on z, and -1/tan for odd quadrant pairs. Beyond 8192 the
// reduction would lose bits: sin_ / cos_ (math.glsl, exact reduction) there.
float tan_(float xx)
{
    uint u = floatBitsToUint(xx);
    if (is_nan_(u) || is_inf_(u))
        return NAN_F;
    if (is_zero_or_sub(u))
        return xx;
    float x = abs(xx);
    if (x > 8192.0)
        return sin_(xx) / cos_(xx);
    uint j = uint(1.27323954473516 * x);
    float y = float(j);
    if ((j & 1u) == 1u) {
        j += 1u;
        y += 1.0;
    }
    precise float z = ((x - y * 0.78515625) - y * 2.4187564849853515625e-4) - y * 3.77489497744594108e-8;
    float zz = z * z;
    float r = z;
    if (x > 1.0e-4)
        r = (((((9.38540185543e-3 * zz + 3.11992232697e-3) * zz + 2.44301354525e-2) * zz + 5.34112807005e-2) * zz +
              1.33387994085e-1) * zz + 3.33331568548e-1) * zz * z + z;
    if ((j & 2u) == 2u)
        r = -1.0 / r;
    return neg_(u) ? -r : r;
}

// Rounding: integers (|x| >= 2^23), infinities and NaN stay; subnormals are rounded on
// their sign; the rest by the exact builtins. mode 0 floor, 1 ceil, 2 trunc, 3 half-even.
// Every zero result takes the sign of x (IEEE), set on the bits: a driver may compile with
// no-signed-zeros (lavapipe folded the constant -0.0 to +0 and gave floor(+tiny) = -0).
float round_(float x, uint mode)
{
    uint u = floatBitsToUint(x);
    uint ax = u & 0x7fffffffu;
    if (ax >= 0x4b000000u)
        return x;
    if (ax < 0x00800000u) {
        if (ax == 0u)
            return x;
        bool n = neg_(u);
        if (mode == 0u && n)
            return -1.0;
        if (mode == 1u && !n)
            return 1.0;
        return uintBitsToFloat(u & 0x80000000u);
    }
    float r;
    if (mode == 0u)
        r = floor(x);
    else if (mode == 1u)
        r = ceil(x);
    else if (mode == 2u)
        r = trunc(x);
    else
        r = roundEven(x);
    return r == 0.0 ? uintBitsToFloat(u & 0x80000000u) : r;
}

// fmodf, exactly, by integer long division of the significands (musl's fmodf).
float fmod_(float x, float y)
{
    uint ux = floatBitsToUint(x), uy = floatBitsToUint(y);
    int ex = int((ux >> 23) & 0xffu), ey = int((uy >> 23) & 0xffu);
    uint sx = ux & 0x80000000u;
    if ((uy << 1) == 0u || is_nan_(uy) || ex == 0xff)
        return NAN_F;
    if ((ux << 1) <= (uy << 1)) {
        if ((ux << 1) == (uy << 1))
            return uintBitsToFloat(sx);      // +-0 with x's sign
        return x;
    }
    uint i;
    if (ex == 0) {
        for (i = ux << 9; (i >> 31) == 0u; ex--, i <<= 1)
            ;
        ux <<= uint(-ex + 1);
    } else {
        ux &= 0x007fffffu;
        ux |= 0x00800000u;
    }
    if (ey == 0) {
        for (i = uy << 9; (i >> 31) == 0u; ey--, i <<= 1)
            ;
        uy <<= uint(-ey + 1);
    } else {
        uy &= 0x007fffffu;
        uy |= 0x00800000u;
    }
    for (; ex > ey; ex--) {
        i = ux - uy;
        if ((i >> 31) == 0u) {
            if (i == 0u)
                return uintBitsToFloat(sx);
            ux = i;
        }
        ux <<= 1;
    }
    i = ux - uy;
    if ((i >> 31) == 0u) {
        if (i == 0u)
            return uintBitsToFloat(sx);
        ux = i;
    }
    for (; (ux >> 23) == 0u; ux <<= 1, ex--)
        ;
    if (ex > 0) {
        ux -= 0x00800000u;
        ux |= uint(ex) << 23;
    } else {
        ux >>= uint(-ex + 1);
    }
    return uintBitsToFloat(ux | sx);
}

// torch.remainder: fmod, plus y where it is nonzero and its sign differs from y's.
float rem_(float x, float y)
{
    float m = fmod_(x, y);
    uint um = floatBitsToUint(m);
    if ((um & 0x7fffffffu) != 0u && !is_nan_(um) && neg_(floatBitsToUint(y)) != neg_(um))
        m += y;
    return m;
}

// The f32 bits of element i of a (from_b false) or b.
#ifdef TD_HALF
#include "half.glsl"
layout(constant_id = 1) const uint DT = 1u; // half.glsl's DT_F16 or DT_BF16
#ifdef TD_S16
#define LDW(arr, i) to_f32(DT, uint(arr[i]))
#else
#define LDW(arr, i) to_f32(DT, (arr[(i) >> 1] >> (((i) & 1u) * 16u)) & 0xffffu)
#endif
#else
#define LDW(arr, i) arr[i]
#endif

// The float ops (all but 9 and 10) of x, y (b's element: ops 12 and 14) and the scalar s.
float fop(uint op, float x, uint ib, float s)
{
    switch (op) {
    case 0u: return acos_(x);
    case 1u: return asin_(x);
    case 2u: return atan_(x);
    case 3u: return round_(x, 1u);                         // ceil
    case 4u: return round_(x, 0u);                         // floor
    case 5u: return round_(x, 3u);                         // round
    case 6u: return round_(x, 2u);                         // trunc
    case 7u: return erf_(x);
    case 8u: return log1p_(x);
    case 11u: return rem_(x, s);                           // remainder_scalar
    case 12u: return atan2_(x, uintBitsToFloat(LDW(b, ib)));
    case 13u: return tan_(x);
    default: return rem_(x, uintBitsToFloat(LDW(b, ib)));  // 14: remainder
    }
}

// Element e's offsets in a and b (broadcast strides).
void offsets(uint e, uint nd, out uint ia, out uint ib)
{
    ia = 0u;
    ib = 0u;
    uint rest = e;
    for (uint d = nd; d > 0u; d--) {
        uint k = rest % p[3u + d];
        rest /= p[3u + d];
        ia += k * p[11u + d];
        ib += k * p[19u + d];
    }
}

#ifdef TD_HALF
void main()
{
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    uint i = 2u * t, n = p[0];
    if (i >= n)
        return;
    uint op = OPC != 0xffffffffu ? OPC : p[1];
    float s = uintBitsToFloat(p[3]);
    uint h[2] = uint[2](0u, 0u);
    for (uint j = 0u; j < 2u && i + j < n; j++) {
        uint ia, ib;
        offsets(i + j, p[2], ia, ib);
        uint wa = LDW(a, ia);
        if (op == 9u || op == 10u)
            o[i + j] = (op == 9u ? is_nan_(wa) : is_inf_(wa)) ? 1u : 0u;
        else
            h[j] = from_f32(DT, floatBitsToUint(fop(op, uintBitsToFloat(wa), ib, s)));
    }
    if (op == 9u || op == 10u)
        return;
#ifdef TD_S16
    oh[i] = uint16_t(h[0]);
    if (i + 1u < n)
        oh[i + 1u] = uint16_t(h[1]);
#else
    o[t] = h[0] | (h[1] << 16);  // the upper half past the last element is not part of the tensor
#endif
}
#else
void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (i >= p[0])
        return;
    uint op = OPC != 0xffffffffu ? OPC : p[1];
    uint ia, ib;
    offsets(i, p[2], ia, ib);
    uint wa = a[ia];
    if (op == 9u || op == 10u) {
        o[i] = (op == 9u ? is_nan_(wa) : is_inf_(wa)) ? 1u : 0u;
        return;
    }
    o[i] = floatBitsToUint(fop(op, uintBitsToFloat(wa), ib, uintBitsToFloat(p[3])));
}
#endif
