-- Float math (issue 10, "float math"): inverse and hyperbolic trigonometry, rounding, erf,
-- log1p, reciprocals, integer powers, remainders, scalar arithmetic and comparisons.
-- Names are burn's, semantics PyTorch's. Expected values are computed from the math (closed
-- forms where they exist, e.g. acos(0.5) = pi/3, asinh(1) = ln(1 + sqrt 2)), rounded to f32.

-- ---- inverse trigonometry ----

op {
  name = "float_acos",
  autocast = "f32",
  id = 100,
  family = "unary_float",
  doc = "Elementwise arc cosine of a, in [0, pi]; NaN outside [-1, 1].",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- 2 atan(sqrt((1 - a) / (1 + a))): no cancellation near 1; -1 gives inf there, hence pi
  decompose = "float_atan(float_sqrt((1.0 - a) / (a + 1.0))) * 2.0",
  examples = {
    -- acos(0.5) = pi/3, acos(-0.5) = 2pi/3
    { a = { shape = { 7 }, data = { 1, 0, -1, 0.5, -0.5, 2, "nan" } },
      out = { shape = { 7 }, data = { 0, 1.5707964, 3.1415927, 1.0471976, 2.0943951, "nan", "nan" } } },
  },
  tolerance = 1e-4,
  backward = { a = "-grad / sqrt(1 - a * a)" },
  bound = "memory",
}

op {
  name = "float_asin",
  autocast = "f32",
  id = 101,
  family = "unary_float",
  doc = "Elementwise arc sine of a, in [-pi/2, pi/2]; NaN outside [-1, 1].",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- atan(a / sqrt((1 - a)(1 + a))): +-1 give +-inf there, hence +-pi/2; NaN outside [-1, 1]
  decompose = "float_atan(a / float_sqrt((1.0 - a) * (a + 1.0)))",
  examples = {
    -- asin(0.5) = pi/6
    { a = { shape = { 2, 3 }, data = { 0, 1, -1, 0.5, -0.5, 1.5 } },
      out = { shape = { 2, 3 }, data = { 0, 1.5707964, -1.5707964, 0.5235988, -0.5235988, "nan" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad / sqrt(1 - a * a)" },
  bound = "memory",
}

op {
  name = "float_atan",
  id = 102,
  family = "unary_float",
  doc = "Elementwise arc tangent of a, in (-pi/2, pi/2).",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- Cephes' atanf: |a| reduced to [0, tan(pi/8)] (beyond tan(3 pi/8) through -1/|a| + pi/2,
  -- between through (|a| - 1)/(|a| + 1) + pi/4), a degree-9 odd polynomial there, signed
  decompose = {
    "ax = float_abs(a)",
    "zero = float_zeros(device(a), shape(a))",
    "big = float_greater(ax, float_full(device(a), shape(a), 2.414213562373095))",
    "mid = bool_and(bool_not(big), float_greater(ax, float_full(device(a), shape(a), 0.4142135623730950)))",
    "x1 = float_mask_where(ax, mid, (ax - 1.0) / (ax + 1.0))",
    "x = float_mask_where(x1, big, -1.0 / ax)",
    "y0 = bool_into_float(mid) * 0.78539816339744831 + bool_into_float(big) * 1.5707963267948966",
    "z = x * x",
    "r = y0 + ((((z * 0.0805374449538 - 0.138776856032) * z + 0.199777106478) * z - 0.333329491539) * z * x + x)",
    "float_mask_where(r, float_greater(zero, a), -r)",
  },
  examples = {
    -- atan(1) = pi/4, atan(+-inf) = +-pi/2, atan(0.5) = 0.46364761
    { a = { shape = { 6 }, data = { 0, 1, -1, "inf", "-inf", 0.5 } },
      out = { shape = { 6 }, data = { 0, 0.7853982, -0.7853982, 1.5707964, -1.5707964, 0.4636476 } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad / (a * a + 1)" },
  bound = "memory",
}

op {
  name = "float_atan2",
  id = 103,
  family = "binary_float",
  doc = "Elementwise angle of the point (b, a), i.e. atan(a / b) in the right quadrant, in [-pi, pi], broadcasting (torch.atan2(a, b)).",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  -- atan(a / b), plus pi with a's sign where b's sign bit is set (b < 0, -0, -inf); where
  -- a / b is NaN with neither a NaN, both are zeros (a itself, or pi with a's sign) or
  -- both infinities (pi/4 or 3 pi/4 with a's sign). A sign bit: x < 0 or 1 / x < 0 (-0).
  decompose = {
    "z = float_zeros(device(a), shape(a))",
    "zb = float_zeros(device(b), shape(b))",
    "sa = bool_or(float_greater(z, a), float_greater(z, float_ones(device(a), shape(a)) / a))",
    "sb = bool_or(float_greater(zb, b), float_greater(zb, float_ones(device(b), shape(b)) / b))",
    "r = float_atan(a / b)",
    "pi = float_mask_where(float_full(device(a), shape(r), 3.14159265358979), sa, float_full(device(a), shape(r), -3.14159265358979))",
    "r1 = r + float_mask_where(float_zeros(device(a), shape(r)), sb, pi)",
    "zz = bool_and(float_equal(a, z), float_equal(b, zb))",
    "r2 = float_mask_where(r1, zz, float_mask_where(a, sb, pi))",
    "q = pi * 0.25",
    "ii = bool_and(float_is_inf(a), float_is_inf(b))",
    "float_mask_where(r2, ii, float_mask_where(q, sb, q * 3.0))",
  },
  examples = {
    -- the four diagonals: +-pi/4, +-3pi/4; (0, -1) is pi
    { a = { shape = { 6 }, data = { 1, 1, -1, -1, 0, 0 } }, b = { shape = { 6 }, data = { 1, -1, 1, -1, 1, -1 } },
      out = { shape = { 6 }, data = { 0.7853982, 2.3561945, -0.7853982, -2.3561945, 0, 3.1415927 } } },
    -- on the axes and at infinity: atan2(1, 0) = pi/2, atan2(1, inf) = 0, atan2(1, -inf) = pi
    { a = { shape = { 2, 1 }, data = { 1, -1 } }, b = { shape = { 3 }, data = { 0, "inf", "-inf" } },
      out = { shape = { 2, 3 }, data = { 1.5707964, 0, 3.1415927, -1.5707964, 0, -3.1415927 } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad * b / (a * a + b * b)", b = "-grad * a / (a * a + b * b)" },
  bound = "memory",
}

-- ---- hyperbolic functions ----

op {
  name = "float_cosh",
  autocast = "f32",
  id = 104,
  family = "unary_float",
  doc = "Elementwise hyperbolic cosine of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- e^89 overflows although cosh(89) = 2.2e38 does not: the last 0.7 before overflow give inf
  decompose = "(float_exp(a) + float_exp(-a)) * 0.5",
  examples = {
    -- (e + 1/e) / 2 = 1.5430806, (e^2 + e^-2) / 2 = 3.7621957
    { a = { shape = { 6 }, data = { 0, 1, -1, 2, "inf", "-inf" } },
      out = { shape = { 6 }, data = { 1, 1.5430806, 1.5430806, 3.7621957, "inf", "inf" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad * sinh(a)" },
  bound = "memory",
}

op {
  name = "float_sinh",
  autocast = "f32",
  id = 105,
  family = "unary_float",
  doc = "Elementwise hyperbolic sine of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- e^a - e^-a cancels for small |a|: below 0.3 the odd Taylor series to a^5 (relative
  -- error below a^6 / 5040 = 1.5e-7); above, the cancellation costs at most ~2 ULP
  decompose = {
    "s = a * a",
    "small = a + a * s * (s * 0.00833333333 + 0.166666667)",
    "big = (float_exp(a) - float_exp(-a)) * 0.5",
    "float_mask_where(big, float_lower(float_abs(a), float_full(device(a), shape(a), 0.3)), small)",
  },
  examples = {
    -- (e - 1/e) / 2 = 1.1752012, (e^2 - e^-2) / 2 = 3.6268604
    { a = { shape = { 6 }, data = { 0, 1, -1, 2, "inf", "-inf" } },
      out = { shape = { 6 }, data = { 0, 1.1752012, -1.1752012, 3.6268604, "inf", "-inf" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad * cosh(a)" },
  bound = "memory",
}

op {
  name = "float_tan",
  autocast = "f32",
  id = 106,
  family = "unary_float",
  doc = "Elementwise tangent of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_sin(a) / float_cos(a)",
  examples = {
    -- tan(pi/4) = 1; tan(1) = 1.5574077; tan(inf) is NaN
    { a = { shape = { 5 }, data = { 0, 0.7853982, -0.7853982, 1, "inf" } },
      out = { shape = { 5 }, data = { 0, 1, -1, 1.5574077, "nan" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad * (result * result + 1)" },
  bound = "memory",
}

op {
  name = "float_asinh",
  id = 107,
  family = "unary_float",
  doc = "Elementwise inverse hyperbolic sine of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- asinh|a| = log1p(|a| + a^2 / (1 + sqrt(a^2 + 1))) (accurate near 0), and ln|a| + ln 2
  -- above 1e18 where a^2 would overflow; the sign of a put back (NaN stays NaN); a itself
  -- below 2^-12, where asinh a = a in float, which keeps the sign of -0 (-r would not)
  decompose = {
    "x = float_abs(a)",
    "small = float_log1p(x + x * x / (float_sqrt(x * x + 1.0) + 1.0))",
    "big = float_log(x) + 0.693147180559945",
    "r = float_mask_where(small, float_greater(x, float_full(device(a), shape(a), 1e18)), big)",
    "s = float_mask_where(r, float_lower(a, float_zeros(device(a), shape(a))), -r)",
    "float_mask_where(s, float_lower(x, float_full(device(a), shape(a), 0.000244140625)), a)",
  },
  zero_sign = true, -- asinh(-0) = -0: the comparisons check the sign of a zero result
  examples = {
    -- asinh(x) = ln(x + sqrt(x^2 + 1)): ln(1 + sqrt 2) = 0.8813736, ln(2 + sqrt 5) = 1.4436355
    { a = { shape = { 6 }, data = { 0, 1, -1, 2, "inf", "-inf" } },
      out = { shape = { 6 }, data = { 0, 0.8813736, -0.8813736, 1.4436355, "inf", "-inf" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad / sqrt(a * a + 1)" },
  bound = "memory",
}

op {
  name = "float_acosh",
  id = 108,
  family = "unary_float",
  doc = "Elementwise inverse hyperbolic cosine of a, >= 0; NaN below 1.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- log1p(t + sqrt(t (a + 1))) with t = a - 1 (exact near 1, accurate there), and
  -- ln a + ln 2 above 1e18 where the product would overflow
  decompose = {
    "t = a - 1.0",
    "small = float_log1p(t + float_sqrt(t * (a + 1.0)))",
    "big = float_log(a) + 0.693147180559945",
    "float_mask_where(small, float_greater(a, float_full(device(a), shape(a), 1e18)), big)",
  },
  examples = {
    -- acosh(x) = ln(x + sqrt(x^2 - 1)): ln(2 + sqrt 3) = 1.3169579, ln(10 + sqrt 99) = 2.9932228
    { a = { shape = { 6 }, data = { 1, 2, 10, 0.5, "inf", "nan" } },
      out = { shape = { 6 }, data = { 0, 1.3169579, 2.9932228, "nan", "inf", "nan" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad / sqrt((a - 1) * (a + 1))" },
  bound = "memory",
  gradcheck = { a = "above_one" },
}

op {
  name = "float_atanh",
  id = 109,
  family = "unary_float",
  doc = "Elementwise inverse hyperbolic tangent of a; +-inf at +-1, NaN outside [-1, 1].",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- atanh(a) = log1p(2a / (1 - a)) / 2: accurate near 0, +-inf at +-1, NaN beyond
  decompose = "float_log1p(a * 2.0 / (1.0 - a)) * 0.5",
  examples = {
    -- atanh(x) = ln((1 + x) / (1 - x)) / 2: ln(3) / 2 = 0.5493061
    { a = { shape = { 6 }, data = { 0, 0.5, -0.5, 1, -1, 2 } },
      out = { shape = { 6 }, data = { 0, 0.5493061, -0.5493061, "inf", "-inf", "nan" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad / (1 - a * a)" },
  bound = "memory",
}

-- ---- rounding (integer-valued results: a zero gradient, as in PyTorch) ----

op {
  name = "float_ceil",
  id = 110,
  family = "unary_float",
  doc = "Elementwise smallest integer value not less than a (inf and NaN unchanged). Its gradient is zero everywhere, as in PyTorch: a graph through it backpropagates zeros.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = "-float_floor(-a)",
  examples = {
    { a = { shape = { 8 }, data = { 1.5, -1.5, 0.2, -0.2, 2, "inf", "nan", 8388607.5 } },
      out = { shape = { 8 }, data = { 2, -1, 1, 0, 2, "inf", "nan", 8388608 } } },
  },
  -- piecewise constant: the derivative is 0 wherever it exists; as in PyTorch the result is
  -- tracked and backpropagates zeros (zeros, not grad * 0: an inf or NaN grad gives 0 too)
  backward = { a = "zeros_as(grad, a)" },
  bound = "memory",
}

op {
  name = "float_floor",
  id = 111,
  family = "unary_float",
  doc = "Elementwise largest integer value not greater than a (inf and NaN unchanged). Its gradient is zero everywhere, as in PyTorch: a graph through it backpropagates zeros.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- below 2^23 in magnitude: truncate through int (a saturating, exact conversion there),
  -- minus 1 where that rose above a; a itself where it is already whole (larger, inf, NaN)
  -- or a zero (keeping its sign)
  decompose = {
    "z = float_zeros(device(a), shape(a))",
    "small = float_greater(float_full(device(a), shape(a), 8388608.0), float_abs(a))",
    "safe = float_mask_where(z, small, a)",
    "t = int_into_float(float_into_int(safe))",
    "f = t - bool_into_float(float_greater(t, safe))",
    "float_mask_where(f, bool_or(bool_not(small), float_equal(a, z)), a)",
  },
  examples = {
    { a = { shape = { 7 }, data = { 1.5, -1.5, 0.2, -0.2, 2, "-inf", "nan" } },
      out = { shape = { 7 }, data = { 1, -2, 0, -1, 2, "-inf", "nan" } } },
  },
  -- piecewise constant: the derivative is 0 wherever it exists; as in PyTorch the result is
  -- tracked and backpropagates zeros (zeros, not grad * 0: an inf or NaN grad gives 0 too)
  backward = { a = "zeros_as(grad, a)" },
  bound = "memory",
}

op {
  name = "float_round",
  id = 112,
  family = "unary_float",
  doc = "Elementwise a rounded to the nearest integer, halves to the even one (torch.round). Its gradient is zero everywhere, as in PyTorch: a graph through it backpropagates zeros.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- floor, plus 1 where the rest is above a half or a half over an odd floor; a zero result
  -- takes the sign of a (a * 0), as torch.round(-0.3) is -0
  decompose = {
    "f = float_floor(a)",
    "d = a - f",
    "half = float_full(device(a), shape(a), 0.5)",
    "odd = float_equal(f - float_floor(f * 0.5) * 2.0, float_full(device(a), shape(a), 1.0))",
    "up = bool_or(float_greater(d, half), bool_and(float_equal(d, half), odd))",
    "r = float_mask_where(f, up, f + 1.0)",
    "float_mask_where(r, float_equal(r, float_zeros(device(a), shape(a))), a * 0.0)",
  },
  examples = {
    { a = { shape = { 2, 5 }, data = { 0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6, -2.6, "inf", 8388609 } },
      out = { shape = { 2, 5 }, data = { 0, 2, 2, 0, -2, 2, 3, -3, "inf", 8388609 } } },
  },
  -- piecewise constant: the derivative is 0 wherever it exists; as in PyTorch the result is
  -- tracked and backpropagates zeros (zeros, not grad * 0: an inf or NaN grad gives 0 too)
  backward = { a = "zeros_as(grad, a)" },
  bound = "memory",
}

op {
  name = "float_trunc",
  id = 113,
  family = "unary_float",
  doc = "Elementwise a rounded toward zero (inf and NaN unchanged). Its gradient is zero everywhere, as in PyTorch: a graph through it backpropagates zeros.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_mask_where(float_floor(a), float_greater(float_zeros(device(a), shape(a)), a), float_ceil(a))",
  examples = {
    { a = { shape = { 7 }, data = { 1.7, -1.7, 0.5, -0.5, 3, "inf", 1e10 } },
      out = { shape = { 7 }, data = { 1, -1, 0, 0, 3, "inf", 1e10 } } },
  },
  -- piecewise constant: the derivative is 0 wherever it exists; as in PyTorch the result is
  -- tracked and backpropagates zeros (zeros, not grad * 0: an inf or NaN grad gives 0 too)
  backward = { a = "zeros_as(grad, a)" },
  bound = "memory",
}

op {
  name = "float_sign",
  id = 114,
  family = "unary_float",
  doc = "Elementwise sign of a: 1, -1, or 0 for +-0 and NaN. Its gradient is zero everywhere, as in PyTorch: a graph through it backpropagates zeros.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = {
    "z = float_zeros(device(a), shape(a))",
    "bool_into_float(float_greater(a, z)) - bool_into_float(float_lower(a, z))",
  },
  semantics = "as torch.sign: NaN gives 0 (computed as (a > 0) - (a < 0))",
  examples = {
    { a = { shape = { 7 }, data = { 2.5, -0.1, 0, -0.0, "inf", "-inf", "nan" } },
      out = { shape = { 7 }, data = { 1, -1, 0, 0, 1, -1, 0 } } },
  },
  -- piecewise constant: the derivative is 0 wherever it exists; as in PyTorch the result is
  -- tracked and backpropagates zeros (zeros, not grad * 0: an inf or NaN grad gives 0 too)
  backward = { a = "zeros_as(grad, a)" },
  bound = "memory",
}

-- ---- special functions ----

op {
  name = "float_erf",
  id = 115,
  family = "unary_float",
  doc = "Elementwise error function of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- below |a| = 0.5 the Taylor series to a^11 (next term below 3e-8 of the value); above,
  -- Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7), signed
  decompose = {
    "ax = float_abs(a)",
    "t = 1.0 / (ax * 0.3275911 + 1.0)",
    "p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))",
    "big = 1.0 - p * float_exp(-(ax * ax))",
    "s = a * a",
    "small = a * (1.0 - s * (1.0 / 3.0 - s * (0.1 - s * (1.0 / 42.0 - s * (1.0 / 216.0 - s * (1.0 / 1320.0)))))) * 1.1283791671",
    "signed = float_mask_where(big, float_greater(float_zeros(device(a), shape(a)), a), -big)",
    "float_mask_where(signed, float_greater(float_full(device(a), shape(a), 0.5), ax), small)",
  },
  examples = {
    -- erf(0.5) = 0.52049988, erf(1) = 0.84270079, erf(2) = 0.99532227 (tables)
    { a = { shape = { 7 }, data = { 0, 0.5, 1, -1, 2, "inf", "-inf" } },
      out = { shape = { 7 }, data = { 0, 0.5204999, 0.8427008, -0.8427008, 0.9953223, 1, -1 } } },
  },
  tolerance = 1e-4,
  -- d/dx erf(x) = 2 / sqrt(pi) * e^(-x^2); 2 / sqrt(pi) = 1.1283791671
  backward = { a = "grad * exp(-(a * a)) * 1.1283791671" },
  bound = "memory",
}

op {
  name = "float_log1p",
  autocast = "f32",
  id = 116,
  family = "unary_float",
  doc = "Elementwise ln(1 + a), accurate for tiny a; -inf at -1, NaN below.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- Kahan's log(u) * a / (u - 1) with u = 1 + a, accurate for tiny a; a itself where
  -- u rounds to 1 (a tiny, -0 kept) and where a is +inf (where the quotient is NaN)
  decompose = {
    "u = a + 1.0",
    "d = u - 1.0",
    "r = float_log(u) * (a / d)",
    "r1 = float_mask_where(r, float_equal(d, float_full(device(a), shape(a), 0.0)), a)",
    "inf = -float_log(float_zeros(device(a), shape(a)))",
    "float_mask_where(r1, float_equal(a, inf), a)",
  },
  examples = {
    -- ln 2 = 0.6931472, ln 0.5 = -ln 2; ln(1 + 1e-10) = 1e-10 - 5e-21, 1e-10 in f32
    { a = { shape = { 7 }, data = { 0, 1, -0.5, 1e-10, -1, -2, "inf" } },
      out = { shape = { 7 }, data = { 0, 0.6931472, -0.6931472, 1e-10, "-inf", "nan", "inf" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad / (a + 1)" },
  bound = "memory",
  gradcheck = { a = "positive" },
}

op {
  name = "float_recip",
  autocast = "f32",
  id = 117,
  family = "unary_float",
  doc = "Elementwise 1 / a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_div(float_ones(device(a), shape(a)), a)",
  examples = {
    { a = { shape = { 6 }, data = { 2, -4, 0.5, 0, -0.0, "inf" } },
      out = { shape = { 6 }, data = { 0.5, -0.25, 2, "inf", "-inf", 0 } } },
  },
  backward = { a = "-grad * result * result" },
  bound = "memory",
}

op {
  name = "float_hypot",
  id = 118,
  family = "binary_float",
  doc = "Elementwise sqrt(a^2 + b^2) without undue overflow, broadcasting; inf if either is infinite, even with a NaN.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  -- m sqrt(1 + (n / m)^2) with m = max(|a|, |b|), n = min: no overflow; 0 where m = 0
  -- (0 / 0), and inf where either is infinite (the NaN of inf / inf, or a NaN partner)
  decompose = {
    "x = float_abs(a)",
    "y = float_abs(b)",
    "m = float_maximum(x, y)",
    "r = float_minimum(x, y) / m",
    "h = float_mask_fill(m * float_sqrt(r * r + 1.0), float_equal(m, float_zeros(device(a), shape(a))), 0.0)",
    "inf = -float_log(float_zeros(device(a), shape(a)))",
    "float_mask_where(h, bool_or(float_equal(x, inf), float_equal(y, inf)), inf)",
  },
  examples = {
    { a = { shape = { 6 }, data = { 3, 5, 0, "inf", "nan", 3e30 } }, b = { shape = { 6 }, data = { 4, -12, 0, "nan", 1, 4e30 } },
      out = { shape = { 6 }, data = { 5, 13, 0, "inf", "nan", 5e30 } } },
    { a = { shape = { 2, 1 }, data = { 1, -8 } }, b = { shape = { 3 }, data = { 0, 1, "-inf" } },
      -- sqrt 2 = 1.4142135, sqrt 65 = 8.0622577
      out = { shape = { 2, 3 }, data = { 1, 1.4142135, "inf", 8, 8.0622577, "inf" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad * a / result", b = "grad * b / result" },
  bound = "memory",
}

-- ---- powers and remainders ----

op {
  name = "float_powi",
  id = 119,
  family = "binary_float",
  doc = "Elementwise a raised to the integer power b (an int tensor), broadcasting; 0^0 = 1.",
  args = { "float a", "int b" },
  returns = "float",
  shape = "broadcast(a, b)",
  decompose = "float_powf(a, int_into_float(b))",
  semantics = "as torch.pow(float tensor, int tensor): b is converted to float, so |b| beyond 2^24 rounds",
  examples = {
    { a = { shape = { 6 }, data = { 2, -3, 0.5, 0, 2, "nan" } }, b = { shape = { 6 }, data = { 3, 3, -2, 0, -1, 0 } },
      out = { shape = { 6 }, data = { 8, -27, 4, 1, 0.5, 1 } } },
    { a = { shape = { 2, 1 }, data = { 2, -1 } }, b = { shape = { 3 }, data = { 0, 1, 2 } },
      out = { shape = { 2, 3 }, data = { 1, 2, 4, 1, -1, 1 } } },
  },
  tolerance = 1e-4,
  -- b * a^(b - 1), and 0 where b = 0 (PyTorch masks it, so 0^0 has gradient 0, not NaN)
  backward = { a = "grad * powi_grad(a, b)" },
  bound = "memory",
}

op {
  name = "float_powi_scalar",
  id = 120,
  family = "unary_float",
  doc = "Elementwise a raised to the integer power exponent; 0^0 = 1.",
  args = { "float a", "i32 exponent" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_powf_scalar(a, exponent)",
  examples = {
    { a = { shape = { 4 }, data = { 2, -3, 0.5, 0 } }, exponent = 3,
      out = { shape = { 4 }, data = { 8, -27, 0.125, 0 } } },
    { a = { shape = { 2, 2 }, data = { 2, -0.5, 4, 0 } }, exponent = -2,
      out = { shape = { 2, 2 }, data = { 0.25, 4, 0.0625, "inf" } } },
    { a = { shape = { 3 }, data = { 0, "nan", "inf" } }, exponent = 0,
      out = { shape = { 3 }, data = { 1, 1, 1 } } },
  },
  tolerance = 1e-4,
  -- exponent * a^(exponent - 1), and 0 where exponent = 0 (as PyTorch)
  backward = { a = "grad * powi_scalar_grad(a, exponent)" },
  bound = "memory",
}

op {
  name = "float_remainder",
  id = 121,
  family = "binary_float",
  doc = "Elementwise remainder of a / b with the sign of b (a - floor(a / b) * b, computed exactly), broadcasting; NaN where b is 0.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  semantics = "as torch.remainder: fmod(a, b), plus b when it is nonzero and its sign differs from b's",
  examples = {
    -- the first example's shapes are the gradient check's: small, so that its random
    -- inputs stay clear of the jumps where a / b crosses an integer
    { a = { shape = { 2 }, data = { 7.5, -7.5 } }, b = { shape = { 2 }, data = { 2, 2 } },
      out = { shape = { 2 }, data = { 1.5, 0.5 } } },
    { a = { shape = { 6 }, data = { 5, -5, 5, -5, 5.5, 0 } }, b = { shape = { 6 }, data = { 3, 3, -3, -3, 2, 3 } },
      out = { shape = { 6 }, data = { 2, 1, -1, -2, 1.5, 0 } } },
    -- fmod(-1, inf) = -1, the sign differs from inf's: -1 + inf = inf
    { a = { shape = { 2, 1 }, data = { -1, "inf" } }, b = { shape = { 3 }, data = { 0, "inf", 0.75 } },
      out = { shape = { 2, 3 }, data = { "nan", "inf", 0.5, "nan", "nan", "nan" } } },
  },
  backward = { a = "grad", b = "-grad * floor(a / b)" },
  bound = "memory",
}

op {
  name = "float_remainder_scalar",
  id = 122,
  family = "unary_float",
  doc = "Elementwise remainder of a / value with the sign of value (as float_remainder).",
  args = { "float a", "f32 value" },
  returns = "float",
  shape = "same(a)",
  examples = {
    { a = { shape = { 4 }, data = { 5, -5, 5.5, -0.5 } }, value = 3,
      out = { shape = { 4 }, data = { 2, 1, 2.5, 2.5 } } },
    { a = { shape = { 4 }, data = { 3, -3, 1, "inf" } }, value = -2,
      out = { shape = { 4 }, data = { -1, -1, -1, "nan" } } },
  },
  backward = { a = "grad" },
  bound = "memory",
}

-- ---- scalar arithmetic and clamps ----

op {
  name = "float_sub_scalar",
  id = 123,
  family = "unary_float",
  doc = "Elementwise a - value.",
  args = { "float a", "f32 value" },
  returns = "float",
  shape = "same(a)",
  decompose = "a - value",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, 2, -3, "inf" } }, value = 0.5,
      out = { shape = { 2, 2 }, data = { 0.5, 1.5, -3.5, "inf" } } },
  },
  backward = { a = "grad" },
  bound = "memory",
}

op {
  name = "float_div_scalar",
  id = 124,
  family = "unary_float",
  doc = "Elementwise a / value.",
  args = { "float a", "f32 value" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_div(a, float_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, -3, 0, 4 } }, value = 2,
      out = { shape = { 2, 2 }, data = { 0.5, -1.5, 0, 2 } } },
    { a = { shape = { 3 }, data = { 1, 3, 1e-30 } }, value = 3,
      out = { shape = { 3 }, data = { 0.33333334, 1, 3.3333334e-31 } } },
  },
  backward = { a = "grad / value" },
  bound = "memory",
}

op {
  name = "float_clamp_min",
  id = 125,
  family = "unary_float",
  zero_sign = true, -- the comparisons check the sign of a zero result (the doc's -0 / +0 rule)
  doc = "Elementwise max(a, min); NaN stays NaN; a bound that ties a leaves a (torch.clamp(-0., min=0.) is -0.).",
  args = { "float a", "f32 min" },
  returns = "float",
  shape = "same(a)",
  -- the bound first: float_maximum gives b on a tie, so a -0 / +0 tie keeps a
  decompose = "float_maximum(float_full(device(a), shape(a), min), a)",
  examples = {
    { a = { shape = { 6 }, data = { -2, -0.5, 0, 1, "nan", "-inf" } }, min = -1,
      out = { shape = { 6 }, data = { -1, -0.5, 0, 1, "nan", -1 } } },
  },
  -- PyTorch passes the gradient where a >= min (a tie included)
  backward = { a = "grad * at_least(a, min)" },
  bound = "memory",
}

op {
  name = "float_clamp_max",
  id = 126,
  family = "unary_float",
  zero_sign = true, -- the comparisons check the sign of a zero result (the doc's -0 / +0 rule)
  doc = "Elementwise min(a, max); NaN stays NaN; a bound that ties a leaves a (torch.clamp(0., max=-0.) is 0.).",
  args = { "float a", "f32 max" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_minimum(float_full(device(a), shape(a), max), a)",
  examples = {
    { a = { shape = { 6 }, data = { -2, 0.5, 3, "inf", "nan", 1 } }, max = 1,
      out = { shape = { 6 }, data = { -2, 0.5, 1, 1, "nan", 1 } } },
  },
  -- PyTorch passes the gradient where a <= max (a tie included)
  backward = { a = "grad * at_most(a, max)" },
  bound = "memory",
}

-- ---- classification and comparisons (bool results) ----

op {
  name = "float_is_nan",
  id = 127,
  family = "unary_float",
  doc = "Elementwise: is a NaN, as bool.",
  args = { "float a" },
  returns = "bool",
  shape = "same(a)",
  decompose = "bool_not(float_equal(a, a))",
  examples = {
    { a = { shape = { 6 }, data = { "nan", 1, "inf", "-inf", 0, 1e-39 } },
      out = { shape = { 6 }, data = { true, false, false, false, false, false } } },
  },
}

op {
  name = "float_is_inf",
  id = 128,
  family = "unary_float",
  doc = "Elementwise: is a +inf or -inf, as bool.",
  args = { "float a" },
  returns = "bool",
  shape = "same(a)",
  decompose = {
    "inf = -float_log(float_zeros(device(a), shape(a)))",
    "float_equal(float_abs(a), inf)",
  },
  examples = {
    { a = { shape = { 6 }, data = { "nan", 1, "inf", "-inf", 0, 3.4e38 } },
      out = { shape = { 6 }, data = { false, false, true, true, false, false } } },
  },
}

op {
  name = "float_not_equal",
  id = 129,
  family = "binary_float",
  doc = "Elementwise a != b as bool, broadcasting (true where either is NaN).",
  args = { "float a", "float b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  decompose = "bool_not(float_equal(a, b))",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, "nan", 5, 6 } }, b = { shape = { 3 }, data = { 1, 5, 6 } },
      out = { shape = { 2, 3 }, data = { false, true, true, true, false, false } } },
    { a = { shape = { 3 }, data = { "nan", 0, "inf" } }, b = { shape = { 3 }, data = { "nan", -0.0, "inf" } },
      out = { shape = { 3 }, data = { true, false, false } } },
  },
}

op {
  name = "float_equal_elem",
  id = 130,
  family = "unary_float",
  doc = "Elementwise a == value as bool.",
  args = { "float a", "f32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "float_equal(a, float_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 5 }, data = { 1, 2, "nan", 2, -2 } }, value = 2,
      out = { shape = { 5 }, data = { false, true, false, true, false } } },
    { a = { shape = { 2, 2 }, data = { 0, -0.0, 1, "nan" } }, value = 0,
      out = { shape = { 2, 2 }, data = { true, true, false, false } } },
  },
}

op {
  name = "float_not_equal_elem",
  id = 131,
  family = "unary_float",
  doc = "Elementwise a != value as bool (true where a is NaN).",
  args = { "float a", "f32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "bool_not(float_equal(a, float_full(device(a), shape(a), value)))",
  examples = {
    { a = { shape = { 5 }, data = { 1, 2, "nan", 2, -2 } }, value = 2,
      out = { shape = { 5 }, data = { true, false, true, false, true } } },
  },
}

op {
  name = "float_greater_elem",
  id = 132,
  family = "unary_float",
  doc = "Elementwise a > value as bool.",
  args = { "float a", "f32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "float_greater(a, float_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 6 }, data = { 1, 2, 3, "nan", "inf", "-inf" } }, value = 2,
      out = { shape = { 6 }, data = { false, false, true, false, true, false } } },
  },
}

op {
  name = "float_greater_equal_elem",
  id = 133,
  family = "unary_float",
  doc = "Elementwise a >= value as bool.",
  args = { "float a", "f32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "float_greater_equal(a, float_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 6 }, data = { 1, 2, 3, "nan", "inf", "-inf" } }, value = 2,
      out = { shape = { 6 }, data = { false, true, true, false, true, false } } },
  },
}

op {
  name = "float_lower_elem",
  id = 134,
  family = "unary_float",
  doc = "Elementwise a < value as bool.",
  args = { "float a", "f32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "float_lower(a, float_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 6 }, data = { 1, 2, 3, "nan", "inf", "-inf" } }, value = 2,
      out = { shape = { 6 }, data = { true, false, false, false, false, true } } },
  },
}

op {
  name = "float_lower_equal_elem",
  id = 135,
  family = "unary_float",
  doc = "Elementwise a <= value as bool.",
  args = { "float a", "f32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "float_lower_equal(a, float_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 6 }, data = { 1, 2, 3, "nan", "inf", "-inf" } }, value = 2,
      out = { shape = { 6 }, data = { true, true, false, false, false, true } } },
  },
}

op {
  name = "float_square",
  id = 136,
  family = "unary_float",
  doc = "Elementwise a * a (torch.square).",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = "a * a",
  examples = {
    -- 3^2, (-1.5)^2, 0, inf^2, 1e20^2 overflows to inf
    { a = { shape = { 5 }, data = { 3, -1.5, 0, "-inf", 1e20 } },
      out = { shape = { 5 }, data = { 9, 2.25, 0, "inf", "inf" } } },
  },
  backward = { a = "grad * 2 * a" },
  bound = "memory",
}
