-- Int ops (issue 10, burn's IntTensorOps): scalar arithmetic, abs/sign/powers, comparisons,
-- reductions, bitwise ops, matmul and random. Results follow PyTorch's int32 semantics:
-- arithmetic wraps around on overflow (two's complement), division truncates toward zero
-- like int_div. Int results are never tracked by autodiff (these families have no
-- autodiff arms), so no op here has `backward`.

-- ---- bitwise ops and int powers through int arithmetic (issue 23): an int32 is 65536 hi +
-- lo, each half an unsigned 16-bit value (hi taken mod 65536: its two's complement bits);
-- bit k of a half x is x / 2^k - x / 2^(k+1) * 2 (the divisions truncate, exactly floor for
-- x >= 0); a result half is the sum of its bits times 2^k, and the halves are joined by a
-- wrapping multiply. About 25 elementwise passes per bit: the portable definition, not the
-- fast path. (Specs run without the string library: the statements are built by `..`.)

-- bit k of the int tensor named x, an expression
local function bit(x, k)
  if k == 0 then return "(" .. x .. " - " .. x .. " / 2 * 2)" end
  return "(" .. x .. " / " .. (1 << k) .. " - " .. x .. " / " .. (1 << (k + 1)) .. " * 2)"
end

-- statements naming x_l, x_h: the unsigned 16-bit halves of the int tensor named x
local function halves(x, out)
  out[#out + 1] = x .. "_l = int_remainder(" .. x .. ", int_full(device(" .. x .. "), shape(" .. x .. "), 65536))"
  out[#out + 1] = x .. "_h = int_remainder((" .. x .. " - " .. x .. "_l) / 65536, int_full(device(" .. x ..
    "), shape(" .. x .. "), 65536))"
end

-- The decomposition of a & b, a | b or a ^ b: combine(u, v) spells a result bit from bits
-- u and v (0 or 1); four bits a statement.
local function bitwise_decomp(combine)
  local out = {}
  halves("a", out)
  halves("b", out)
  for hi = 1, 2 do
    local h = hi == 1 and "l" or "h"
    for g = 0, 3 do
      local e = g == 0 and "" or ("r_" .. h .. (g - 1) .. " + ")
      for k = 4 * g, 4 * g + 3 do
        e = e .. combine(bit("a_" .. h, k), bit("b_" .. h, k)) .. " * " .. (1 << k) .. (k < 4 * g + 3 and " + " or "")
      end
      out[#out + 1] = "r_" .. h .. g .. " = " .. e
    end
  end
  out[#out + 1] = "r_h3 * 65536 + r_l3"
  return out
end

-- 2^x for the int tensor named x with values in [0, 32), from its five bits (a wrapping
-- product: 2^31 is INT32_MIN, which multiplies as 2^31 mod 2^32), an expression
local function pow2(x)
  local e = ""
  for k = 0, 4 do
    e = e .. (k > 0 and " * " or "") .. "(" .. bit(x, k) .. " * " .. ((1 << (1 << k)) - 1) .. " + 1)"
  end
  return e
end

-- v: 1 where the shift b lies in [0, 32), else 0; s: b mod 32
local SHIFT_HEAD = {
  "v = bool_into_int(int_greater(b, int_full(device(b), shape(b), -1))) * " ..
    "bool_into_int(int_greater(int_full(device(b), shape(b), 32), b))",
  "s = int_remainder(b, int_full(device(b), shape(b), 32))",
}

local function left_shift_decomp()
  return { SHIFT_HEAD[1], SHIFT_HEAD[2], "a * (" .. pow2("s") .. ") * v" }
end

-- floor(a / 2^s) as two floor divisions by 2^t, 2^u (t + u = s, each at most 16, so the
-- divisors fit): (x - x mod d) / d is exact, x mod d (int_remainder) being in [0, d); a
-- shift outside [0, 32) gives -1 for a < 0 and 0 else
local function right_shift_decomp()
  return { SHIFT_HEAD[1], SHIFT_HEAD[2], "t = s / 2", "u = s - t",
    "t2 = " .. pow2("t"), "u2 = " .. pow2("u"),
    "x = (a - int_remainder(a, t2)) / t2",
    "y = (x - int_remainder(x, u2)) / u2",
    "n = bool_into_int(int_greater(int_full(device(a), shape(a), 0), a))",
    "y * v - n * (1 - v)" }
end

-- a^b by square and multiply over the 31 bits of e = max(b, 0) (wrapping products), four
-- bits a statement: q{g} is a^(16^g), t{g} its fourth power; b < 0 gives 1
-- for a = 1, +-1 for a = -1 (-1 for odd b), else 0
local function powi_decomp()
  local out = {
    "nn = bool_into_int(int_greater(b, int_full(device(b), shape(b), -1)))",
    "e = b * nn",
    "q0 = a",
  }
  for g = 0, 7 do
    out[#out + 1] = "t" .. g .. " = q" .. g .. " * q" .. g .. " * (q" .. g .. " * q" .. g .. ")"
    local pw = { "q" .. g, "q" .. g .. " * q" .. g, "t" .. g, "t" .. g .. " * t" .. g }
    local r = g == 0 and "" or ("r" .. (g - 1) .. " * ")
    for j = 0, 3 do
      local k = 4 * g + j
      if k <= 30 then
        local bk = k == 30 and "e / 1073741824" or bit("e", k)
        r = r .. (j > 0 and " * " or "") .. "(" .. bk .. " * (" .. pw[j + 1] .. " - 1) + 1)"
      end
    end
    out[#out + 1] = "r" .. g .. " = " .. r
    if g < 7 then out[#out + 1] = "q" .. (g + 1) .. " = t" .. g .. " * t" .. g .. " * (t" .. g .. " * t" .. g .. ")" end
  end
  out[#out + 1] = "one = bool_into_int(int_equal(a, int_full(device(a), shape(a), 1)))"
  out[#out + 1] = "m1 = bool_into_int(int_equal(a, int_full(device(a), shape(a), -1)))"
  out[#out + 1] = "r7 * nn + (one + m1 * (1 - int_remainder(b, int_full(device(b), shape(b), 2)) * 2)) * (1 - nn)"
  return out
end

-- ---- scalar arithmetic (the decomposition language lowers `int tensor (+) int scalar`
-- to these) ----

op {
  name = "int_neg",
  id = 500,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Elementwise -a (wraps around: -INT32_MIN is INT32_MIN).",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_full(device(a), shape(a), 0) - a",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -2, 0, 7, -100, 2147483647 } },
      out = { shape = { 2, 3 }, data = { -1, 2, 0, -7, 100, -2147483647 } } },
    -- 2^31 does not fit: -(-2^31) wraps to -2^31, as torch.neg does on int32
    { a = { shape = {}, data = { -2147483648 } },
      out = { shape = {}, data = { -2147483648 } } },
  },
}

op {
  name = "int_add_scalar",
  id = 501,
  family = "unary",
  doc = "Elementwise a + value (wraps around on overflow).",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "a + int_full(device(a), shape(a), value)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, -2, 0, 40 } }, value = 5,
      out = { shape = { 2, 2 }, data = { 6, 3, 5, 45 } } },
    -- INT32_MAX + 1 wraps to INT32_MIN; INT32_MIN + 1 does not wrap
    { a = { shape = { 2 }, data = { 2147483647, -2147483648 } }, value = 1,
      out = { shape = { 2 }, data = { -2147483648, -2147483647 } } },
    { a = { shape = { 3 }, data = { -2147483648, 0, 5 } }, value = -1,
      out = { shape = { 3 }, data = { 2147483647, -1, 4 } } },
  },
}

op {
  name = "int_sub_scalar",
  id = 502,
  family = "unary",
  doc = "Elementwise a - value (wraps around on overflow).",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "a - int_full(device(a), shape(a), value)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, -2, 0, 40 } }, value = 5,
      out = { shape = { 2, 2 }, data = { -4, -7, -5, 35 } } },
    -- INT32_MIN - 1 wraps to INT32_MAX
    { a = { shape = { 2 }, data = { -2147483648, 2147483647 } }, value = 1,
      out = { shape = { 2 }, data = { 2147483647, 2147483646 } } },
    -- 0 - INT32_MIN = 2^31 wraps to INT32_MIN
    { a = { shape = { 2 }, data = { 0, -1 } }, value = -2147483648,
      out = { shape = { 2 }, data = { -2147483648, 2147483647 } } },
  },
}

op {
  name = "int_mul_scalar",
  id = 503,
  family = "unary",
  doc = "Elementwise a * value (wraps around on overflow).",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "a * int_full(device(a), shape(a), value)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, -2, 0, 40 } }, value = -3,
      out = { shape = { 2, 2 }, data = { -3, 6, 0, -120 } } },
    -- 65536 * 65536 = 2^32 wraps to 0; 65537 * 65536 = 2^32 + 2^16 wraps to 65536;
    -- -32768 * 65536 = -2^31 fits
    { a = { shape = { 3 }, data = { 65536, 65537, -32768 } }, value = 65536,
      out = { shape = { 3 }, data = { 0, 65536, -2147483648 } } },
    -- INT32_MIN * -1 = 2^31 wraps to INT32_MIN; INT32_MAX * -1 = -INT32_MAX
    { a = { shape = { 2 }, data = { -2147483648, 2147483647 } }, value = -1,
      out = { shape = { 2 }, data = { -2147483648, -2147483647 } } },
  },
}

op {
  name = "int_div_scalar",
  id = 504,
  family = "unary",
  doc = "Elementwise a / value truncated toward zero, like int_div; a zero value is an error (TD_E_INVALID).",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "a / int_full(device(a), shape(a), value)",
  semantics = "truncates toward zero like C (torch.div with rounding_mode='trunc'); INT32_MIN / -1 wraps to INT32_MIN",
  examples = {
    { a = { shape = { 4 }, data = { 7, -7, 6, 0 } }, value = 2,
      out = { shape = { 4 }, data = { 3, -3, 3, 0 } } },
    { a = { shape = { 2, 2 }, data = { 7, -7, 1, -1 } }, value = -2,
      out = { shape = { 2, 2 }, data = { -3, 3, 0, 0 } } },
    -- 2^31 does not fit: INT32_MIN / -1 wraps to INT32_MIN; INT32_MAX / -1 = -INT32_MAX
    { a = { shape = { 2 }, data = { -2147483648, 2147483647 } }, value = -1,
      out = { shape = { 2 }, data = { -2147483648, -2147483647 } } },
    { a = { shape = { 2 }, data = { -2147483648, 2147483647 } }, value = 2147483647,
      out = { shape = { 2 }, data = { -1, 1 } } },
  },
}

op {
  name = "int_remainder_scalar",
  id = 505,
  family = "unary",
  doc = "Elementwise remainder of a / value with the sign of value (torch.remainder), like int_remainder; a zero value is an error (TD_E_INVALID).",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_remainder(a, int_full(device(a), shape(a), value))",
  examples = {
    -- C's % truncates (-7 % 3 = -1); a nonzero remainder whose sign differs from value's
    -- gets value added: -1 + 3 = 2
    { a = { shape = { 2, 3 }, data = { 7, -7, 5, -5, 0, 6 } }, value = 3,
      out = { shape = { 2, 3 }, data = { 1, 2, 2, 1, 0, 0 } } },
    { a = { shape = { 2, 3 }, data = { 7, -7, 5, -5, 0, 6 } }, value = -3,
      out = { shape = { 2, 3 }, data = { -2, -1, -1, -2, 0, 0 } } },
    -- INT32_MIN = -1 * INT32_MAX - 1, so the remainder is -1 + INT32_MAX; -1 likewise
    { a = { shape = { 3 }, data = { -2147483648, 2147483647, -1 } }, value = 2147483647,
      out = { shape = { 3 }, data = { 2147483646, 0, 2147483646 } } },
    { a = { shape = { 2 }, data = { -2147483648, 5 } }, value = -1,
      out = { shape = { 2 }, data = { 0, 0 } } },
  },
}

-- ---- abs, sign, powers ----

op {
  name = "int_abs",
  id = 506,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Elementwise |a| (wraps around: |INT32_MIN| is INT32_MIN, as torch.abs on int32).",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_mask_where(a, int_lower(a, int_full(device(a), shape(a), 0)), -a)",
  examples = {
    { a = { shape = { 2, 3 }, data = { -3, 0, 5, -2147483647, 2147483647, -2147483648 } },
      out = { shape = { 2, 3 }, data = { 3, 0, 5, 2147483647, 2147483647, -2147483648 } } },
  },
}

op {
  name = "int_sign",
  id = 507,
  family = "unary",
  doc = "Elementwise sign of a: -1, 0 or 1.",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
  decompose = {
    "zero = int_full(device(a), shape(a), 0)",
    "bool_into_int(int_greater(a, zero)) - bool_into_int(int_lower(a, zero))",
  },
  examples = {
    { a = { shape = { 2, 3 }, data = { -5, 0, 7, -2147483648, 2147483647, -1 } },
      out = { shape = { 2, 3 }, data = { -1, 0, 1, -1, 1, -1 } } },
  },
}

op {
  name = "int_powi",
  id = 508,
  family = "binary",
  doc = "Elementwise a raised to the int power b, broadcasting (wraps around on overflow); for b < 0 the result is 1 for a = 1, +-1 for a = -1 (-1 when b is odd) and 0 otherwise.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  decompose = powi_decomp(),
  semantics = "torch.pow on int32 tensors (0^0 = 1; negative exponents as in its integer kernel)",
  examples = {
    { a = { shape = { 6 }, data = { 2, -3, 0, 5, 1, -1 } }, b = { shape = { 6 }, data = { 10, 3, 0, 0, -4, -3 } },
      out = { shape = { 6 }, data = { 1024, -27, 1, 1, 1, -1 } } },
    -- (-2)^31 = -2^31 fits exactly
    { a = { shape = { 5 }, data = { 2, -1, 0, 3, -2 } }, b = { shape = { 5 }, data = { -1, -2, -3, 2, 31 } },
      out = { shape = { 5 }, data = { 0, 1, 0, 9, -2147483648 } } },
    { a = { shape = { 2, 1 }, data = { 2, 3 } }, b = { shape = { 3 }, data = { 0, 1, 2 } },
      out = { shape = { 2, 3 }, data = { 1, 2, 4, 1, 3, 9 } } },
    -- modulo 2^32: 2^32 -> 0; 3^21 = 10460353203 - 2 * 2^32 = 1870418611; 2^31 -> -2^31
    { a = { shape = { 3 }, data = { 2, 3, 2 } }, b = { shape = { 3 }, data = { 32, 21, 31 } },
      out = { shape = { 3 }, data = { 0, 1870418611, -2147483648 } } },
    { a = { shape = { 2 }, data = { -1, -1 } }, b = { shape = { 2 }, data = { -2147483648, 2147483647 } },
      out = { shape = { 2 }, data = { 1, -1 } } },
  },
}

op {
  name = "int_powi_scalar",
  id = 509,
  family = "unary",
  doc = "Elementwise a raised to the int power exponent (wraps around on overflow); a negative exponent gives 1 for a = 1, +-1 for a = -1 and 0 otherwise, as int_powi.",
  args = { "int a", "i32 exponent" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_powi(a, int_full(device(a), shape(a), exponent))",
  semantics = "torch.pow on int32 (0^0 = 1); PyTorch rejects a negative scalar exponent for int tensors, here it is defined as for int_powi",
  examples = {
    { a = { shape = { 2, 3 }, data = { 2, -3, 0, 1, -1, 5 } }, exponent = 3,
      out = { shape = { 2, 3 }, data = { 8, -27, 0, 1, -1, 125 } } },
    { a = { shape = { 3 }, data = { 0, -2147483648, 7 } }, exponent = 0,
      out = { shape = { 3 }, data = { 1, 1, 1 } } },
    { a = { shape = { 5 }, data = { 1, -1, 2, 0, -2 } }, exponent = -1,
      out = { shape = { 5 }, data = { 1, -1, 0, 0, 0 } } },
    -- 65536^2 = 2^32 -> 0; 46341^2 = 2147488281 - 2^32 = -2147479015; 46340^2 = 2147395600 fits
    { a = { shape = { 3 }, data = { 65536, -46341, 46340 } }, exponent = 2,
      out = { shape = { 3 }, data = { 0, -2147479015, 2147395600 } } },
  },
}

-- ---- maximum, minimum, clamp ----

op {
  name = "int_maximum",
  id = 510,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "binary",
  doc = "Elementwise max(a, b), broadcasting.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  decompose = "int_mask_where(a, int_lower(a, b), b)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -5, 3, 2147483647, -2147483648, 0 } }, b = { shape = { 3 }, data = { 2, -6, 3 } },
      out = { shape = { 2, 3 }, data = { 2, -5, 3, 2147483647, -6, 3 } } },
  },
}

op {
  name = "int_minimum",
  id = 511,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "binary",
  doc = "Elementwise min(a, b), broadcasting.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  decompose = "int_mask_where(a, int_greater(a, b), b)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -5, 3, 2147483647, -2147483648, 0 } }, b = { shape = { 3 }, data = { 2, -6, 3 } },
      out = { shape = { 2, 3 }, data = { 1, -6, 3, 2, -2147483648, 0 } } },
  },
}

op {
  name = "int_clamp",
  id = 512,
  family = "unary",
  doc = "Elementwise min(max(a, min), max); when min > max every element is max (torch.clamp).",
  args = { "int a", "i32 min", "i32 max" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_minimum(int_maximum(a, int_full(device(a), shape(a), min)), int_full(device(a), shape(a), max))",
  examples = {
    { a = { shape = { 2, 3 }, data = { -5, -1, 0, 3, 7, 2147483647 } }, min = -1, max = 3,
      out = { shape = { 2, 3 }, data = { -1, -1, 0, 3, 3, 3 } } },
    { a = { shape = { 3 }, data = { -2147483648, 0, 9 } }, min = 5, max = 2,
      out = { shape = { 3 }, data = { 2, 2, 2 } } },
  },
}

op {
  name = "int_clamp_min",
  id = 513,
  family = "unary",
  doc = "Elementwise max(a, min).",
  args = { "int a", "i32 min" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_maximum(a, int_full(device(a), shape(a), min))",
  examples = {
    { a = { shape = { 5 }, data = { -2147483648, -3, 0, 4, 2147483647 } }, min = 0,
      out = { shape = { 5 }, data = { 0, 0, 0, 4, 2147483647 } } },
  },
}

op {
  name = "int_clamp_max",
  id = 514,
  family = "unary",
  doc = "Elementwise min(a, max).",
  args = { "int a", "i32 max" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_minimum(a, int_full(device(a), shape(a), max))",
  examples = {
    { a = { shape = { 5 }, data = { -2147483648, -3, 0, 4, 2147483647 } }, max = 0,
      out = { shape = { 5 }, data = { -2147483648, -3, 0, 0, 0 } } },
  },
}

-- ---- comparisons ----

op {
  name = "int_not_equal",
  id = 515,
  family = "binary",
  doc = "Elementwise a != b as bool, broadcasting.",
  args = { "int a", "int b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  decompose = "bool_not(int_equal(a, b))",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, b = { shape = { 3 }, data = { 1, 5, 6 } },
      out = { shape = { 2, 3 }, data = { false, true, true, true, false, false } } },
    { a = { shape = { 2 }, data = { -2147483648, 2147483647 } }, b = { shape = {}, data = { -2147483648 } },
      out = { shape = { 2 }, data = { false, true } } },
  },
}

op {
  name = "int_greater_equal",
  id = 516,
  family = "binary",
  doc = "Elementwise a >= b as bool, broadcasting.",
  args = { "int a", "int b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  decompose = "bool_not(int_lower(a, b))",
  examples = {
    { a = { shape = { 2, 1 }, data = { 2, 5 } }, b = { shape = { 3 }, data = { 1, 2, 6 } },
      out = { shape = { 2, 3 }, data = { true, true, false, true, true, false } } },
    { a = { shape = {}, data = { 0 } }, b = { shape = { 3 }, data = { -1, 0, 1 } },
      out = { shape = { 3 }, data = { true, true, false } } },
  },
}

op {
  name = "int_lower_equal",
  id = 517,
  family = "binary",
  doc = "Elementwise a <= b as bool, broadcasting.",
  args = { "int a", "int b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  decompose = "bool_not(int_greater(a, b))",
  examples = {
    { a = { shape = { 2, 1 }, data = { 2, 5 } }, b = { shape = { 3 }, data = { 1, 2, 6 } },
      out = { shape = { 2, 3 }, data = { false, true, true, false, false, true } } },
    { a = { shape = {}, data = { 0 } }, b = { shape = { 3 }, data = { -1, 0, 1 } },
      out = { shape = { 3 }, data = { false, true, true } } },
  },
}

op {
  name = "int_equal_elem",
  id = 518,
  family = "unary",
  doc = "Elementwise a == value as bool.",
  args = { "int a", "i32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "int_equal(a, int_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -2, 3, -2, 5, -2147483648 } }, value = -2,
      out = { shape = { 2, 3 }, data = { false, true, false, true, false, false } } },
    { a = { shape = { 2 }, data = { -2147483648, 2147483647 } }, value = -2147483648,
      out = { shape = { 2 }, data = { true, false } } },
  },
}

op {
  name = "int_not_equal_elem",
  id = 519,
  family = "unary",
  doc = "Elementwise a != value as bool.",
  args = { "int a", "i32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "int_not_equal(a, int_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -2, 3, -2, 5, -2147483648 } }, value = -2,
      out = { shape = { 2, 3 }, data = { true, false, true, false, true, true } } },
    { a = { shape = { 2 }, data = { -2147483648, 2147483647 } }, value = 2147483647,
      out = { shape = { 2 }, data = { true, false } } },
  },
}

op {
  name = "int_greater_elem",
  id = 520,
  family = "unary",
  doc = "Elementwise a > value as bool.",
  args = { "int a", "i32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "int_greater(a, int_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 5 }, data = { -2147483648, -1, 0, 1, 2147483647 } }, value = 0,
      out = { shape = { 5 }, data = { false, false, false, true, true } } },
    { a = { shape = { 5 }, data = { -2147483648, -1, 0, 1, 2147483647 } }, value = 2147483647,
      out = { shape = { 5 }, data = { false, false, false, false, false } } },
  },
}

op {
  name = "int_greater_equal_elem",
  id = 521,
  family = "unary",
  doc = "Elementwise a >= value as bool.",
  args = { "int a", "i32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "int_greater_equal(a, int_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 5 }, data = { -2147483648, -1, 0, 1, 2147483647 } }, value = 0,
      out = { shape = { 5 }, data = { false, false, true, true, true } } },
    { a = { shape = { 5 }, data = { -2147483648, -1, 0, 1, 2147483647 } }, value = -2147483648,
      out = { shape = { 5 }, data = { true, true, true, true, true } } },
  },
}

op {
  name = "int_lower_elem",
  id = 522,
  family = "unary",
  doc = "Elementwise a < value as bool.",
  args = { "int a", "i32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "int_lower(a, int_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 5 }, data = { -2147483648, -1, 0, 1, 2147483647 } }, value = 0,
      out = { shape = { 5 }, data = { true, true, false, false, false } } },
    { a = { shape = { 5 }, data = { -2147483648, -1, 0, 1, 2147483647 } }, value = -2147483648,
      out = { shape = { 5 }, data = { false, false, false, false, false } } },
  },
}

op {
  name = "int_lower_equal_elem",
  id = 523,
  family = "unary",
  doc = "Elementwise a <= value as bool.",
  args = { "int a", "i32 value" },
  returns = "bool",
  shape = "same(a)",
  decompose = "int_lower_equal(a, int_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 5 }, data = { -2147483648, -1, 0, 1, 2147483647 } }, value = 0,
      out = { shape = { 5 }, data = { true, true, true, false, false } } },
    { a = { shape = { 5 }, data = { -2147483648, -1, 0, 1, 2147483647 } }, value = 2147483647,
      out = { shape = { 5 }, data = { true, true, true, true, true } } },
  },
}

-- ---- reductions ----

op {
  name = "int_sum_dim",
  id = 524,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Sum along dim (wraps around on overflow); the reduced dim is kept with size 1; an empty dim sums to 0.",
  args = { "int a", "dim dim" },
  returns = "int",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True); the int32 result wraps (PyTorch sums int32 into int64)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 0,
      out = { shape = { 1, 3 }, data = { 5, 7, 9 } } },
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = -1,
      out = { shape = { 2, 1 }, data = { 6, 15 } } },
    -- INT32_MAX + 1 wraps to INT32_MIN, INT32_MIN - 1 to INT32_MAX
    { a = { shape = { 2, 2 }, data = { 2147483647, -2147483648, 1, -1 } }, dim = 0,
      out = { shape = { 1, 2 }, data = { -2147483648, 2147483647 } } },
    { a = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 5, 6, 7, 8 } }, dim = 1,
      out = { shape = { 2, 1, 2 }, data = { 4, 6, 12, 14 } } },
  },
}

op {
  name = "int_mean_dim",
  id = 525,
  family = "unary",
  doc = "Mean along dim, truncated toward zero (the exact sum divided by the dim's size, so it never overflows); the reduced dim is kept with size 1; an empty dim is an error.",
  args = { "int a", "dim dim" },
  returns = "int",
  shape = "reduce_dim_nonempty(a, dim)",
  semantics = "PyTorch has no int mean; burn divides its int sum by the size (truncating), which agrees unless that sum overflows",
  examples = {
    -- 7 / 3 = 2.33 -> 2, -7 / 3 -> -2
    { a = { shape = { 2, 3 }, data = { 1, 2, 4, -1, -2, -4 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 2, -2 } } },
    -- 5 / 2, 7 / 2, 9 / 2
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 2, 3, 4 } } },
    -- 6442450940 / 3 = 2147483646.67 -> 2147483646; -4294967297 / 3 = -1431655765.67 -> -1431655765
    { a = { shape = { 3, 2 }, data = { 2147483647, -2147483648, 2147483647, -2147483648, 2147483646, -1 } }, dim = 0,
      out = { shape = { 1, 2 }, data = { 2147483646, -1431655765 } } },
  },
}

op {
  name = "int_prod",
  id = 526,
  family = "unary",
  doc = "Product of all elements as a 0-dim tensor (wraps around on overflow); an empty tensor gives 1.",
  args = { "int a" },
  returns = "int",
  shape = "reduce_all(a)",
  semantics = "the int32 result wraps (PyTorch multiplies int32 into int64)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -2, 3, 4, 5, -6 } },
      out = { shape = {}, data = { 720 } } },
    -- 2^16 * 2^16 = 2^32 -> 0
    { a = { shape = { 3 }, data = { 65536, 65536, 3 } },
      out = { shape = {}, data = { 0 } } },
    -- 46341^2 = 2147488281 - 2^32
    { a = { shape = { 2 }, data = { 46341, 46341 } },
      out = { shape = {}, data = { -2147479015 } } },
    { a = { shape = {}, data = { -9 } },
      out = { shape = {}, data = { -9 } } },
  },
}

op {
  name = "int_prod_dim",
  id = 527,
  family = "unary",
  doc = "Product along dim (wraps around on overflow); the reduced dim is kept with size 1; an empty dim gives 1.",
  args = { "int a", "dim dim" },
  returns = "int",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True); the int32 result wraps",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 6, 120 } } },
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 4, 10, 18 } } },
    -- 2^16 * 2^16 = 2^32 -> 0; -1 * INT32_MIN = 2^31 -> INT32_MIN
    { a = { shape = { 2, 2 }, data = { 65536, -1, 65536, -2147483648 } }, dim = 0,
      out = { shape = { 1, 2 }, data = { 0, -2147483648 } } },
  },
}

op {
  name = "int_max",
  id = 528,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Maximum of all elements as a 0-dim tensor; an empty tensor is an error.",
  args = { "int a" },
  returns = "int",
  shape = "reduce_all_nonempty(a)",
  -- flattened (int_arange only gives the 1-d shape [numel]), then int_max_dim
  decompose = {
    "flat = int_reshape(a, shape(int_arange(device(a), 0, numel(a), 1)))",
    "int_reshape(int_max_dim(flat, 0), shape(int_sum(a)))",
  },
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -5, 3, 2147483647, -2147483648, 0 } },
      out = { shape = {}, data = { 2147483647 } } },
    { a = { shape = { 3 }, data = { -7, -2147483648, -3 } },
      out = { shape = {}, data = { -3 } } },
    { a = { shape = {}, data = { 4 } },
      out = { shape = {}, data = { 4 } } },
  },
}

op {
  name = "int_min",
  id = 529,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Minimum of all elements as a 0-dim tensor; an empty tensor is an error.",
  args = { "int a" },
  returns = "int",
  shape = "reduce_all_nonempty(a)",
  -- flattened (int_arange only gives the 1-d shape [numel]), then int_min_dim
  decompose = {
    "flat = int_reshape(a, shape(int_arange(device(a), 0, numel(a), 1)))",
    "int_reshape(int_min_dim(flat, 0), shape(int_sum(a)))",
  },
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -5, 3, 2147483647, -2147483648, 0 } },
      out = { shape = {}, data = { -2147483648 } } },
    { a = { shape = { 3 }, data = { 7, 2147483647, 3 } },
      out = { shape = {}, data = { 3 } } },
    { a = { shape = {}, data = { 4 } },
      out = { shape = {}, data = { 4 } } },
  },
}

op {
  name = "int_max_dim",
  id = 530,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Maximum along dim; the reduced dim is kept with size 1; an empty dim is an error.",
  args = { "int a", "dim dim" },
  returns = "int",
  shape = "reduce_dim_nonempty(a, dim)",
  -- exact through float reductions: a = 65536 hi + lo with hi in [-2^15, 2^15) and lo in
  -- [0, 2^16), both exact in f32; the max is the largest hi, then the largest lo among the
  -- elements with that hi (the others' lo masked to -1)
  decompose = {
    "lo = int_remainder(a, int_full(device(a), shape(a), 65536))",
    "hi = (a - lo) / 65536",
    "mh = float_into_int(float_max_dim(int_into_float(hi), dim))",
    "rest = int_mask_fill(lo, bool_not(int_equal(hi, mh)), -1)",
    "mh * 65536 + float_into_int(float_max_dim(int_into_float(rest), dim))",
  },
  semantics = "keeps the reduced dim (PyTorch keepdim=True); values only",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 5, 7 } } },
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 7, 5, 3 } } },
    { a = { shape = { 2, 2 }, data = { -2147483648, -2147483648, -2147483648, 2147483647 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { -2147483648, 2147483647 } } },
  },
}

op {
  name = "int_min_dim",
  id = 531,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Minimum along dim; the reduced dim is kept with size 1; an empty dim is an error.",
  args = { "int a", "dim dim" },
  returns = "int",
  shape = "reduce_dim_nonempty(a, dim)",
  -- as int_max_dim, with the others' lo masked to 65536
  decompose = {
    "lo = int_remainder(a, int_full(device(a), shape(a), 65536))",
    "hi = (a - lo) / 65536",
    "mh = float_into_int(float_min_dim(int_into_float(hi), dim))",
    "rest = int_mask_fill(lo, bool_not(int_equal(hi, mh)), 65536)",
    "mh * 65536 + float_into_int(float_min_dim(int_into_float(rest), dim))",
  },
  semantics = "keeps the reduced dim (PyTorch keepdim=True); values only",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { -2, 0 } } },
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 1, 0, -2 } } },
    { a = { shape = { 2, 2 }, data = { 2147483647, 2147483647, -2147483648, 2147483647 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 2147483647, -2147483648 } } },
  },
}

op {
  name = "int_argmax",
  id = 532,
  family = "unary",
  doc = "Index of the maximum along dim (first one on ties); the reduced dim is kept with size 1; an empty dim is an error.",
  args = { "int a", "dim dim" },
  returns = "int",
  shape = "reduce_dim_nonempty(a, dim)",
  -- the first index holding the max: float_argmax of the 0/1 mask takes the first 1
  decompose = "float_argmax(bool_into_float(int_equal(a, int_max_dim(a, dim))), dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 4 }, data = { 1, 3, 3, 2, 5, 5, 1, 5 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 1, 0 } } },
    { a = { shape = { 2, 3 }, data = { 1, 4, 2, 1, 0, 7 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 0, 0, 1 } } },
    { a = { shape = { 3 }, data = { -2147483648, 2147483647, 2147483647 } }, dim = 0,
      out = { shape = { 1 }, data = { 1 } } },
  },
}

op {
  name = "int_argmin",
  id = 533,
  family = "unary",
  doc = "Index of the minimum along dim (first one on ties); the reduced dim is kept with size 1; an empty dim is an error.",
  args = { "int a", "dim dim" },
  returns = "int",
  shape = "reduce_dim_nonempty(a, dim)",
  -- the first index holding the min (float_argmax of the 0/1 mask takes the first 1)
  decompose = "float_argmax(bool_into_float(int_equal(a, int_min_dim(a, dim))), dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 4 }, data = { 1, 3, 3, 2, 5, 5, 1, 1 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 0, 2 } } },
    { a = { shape = { 2, 3 }, data = { 1, 4, 2, 1, 0, 7 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 0, 1, 0 } } },
    { a = { shape = { 3 }, data = { 2147483647, -2147483648, -2147483648 } }, dim = 0,
      out = { shape = { 1 }, data = { 1 } } },
  },
}

op {
  name = "int_mean",
  id = 534,
  family = "unary",
  doc = "Mean of all elements as a 0-dim tensor, truncated toward zero (the exact sum divided by numel, so it never overflows); an empty tensor is an error.",
  args = { "int a" },
  returns = "int",
  shape = "reduce_all_nonempty(a)",
  semantics = "PyTorch has no int mean; burn divides its int sum by numel (truncating), which agrees unless that sum overflows",
  examples = {
    -- 21 / 6 = 3.5 -> 3
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      out = { shape = {}, data = { 3 } } },
    -- -2147483649 / 2 = -1073741824.5 -> -1073741824 (the int32 sum would have wrapped)
    { a = { shape = { 2 }, data = { -2147483648, -1 } },
      out = { shape = {}, data = { -1073741824 } } },
    { a = { shape = {}, data = { -7 } },
      out = { shape = {}, data = { -7 } } },
  },
}

-- ---- matmul, random ----

op {
  name = "int_matmul",
  id = 535,
  int_degree = 2, -- homogeneous of degree 2: i64 comparisons scale the inputs by 2^16 (docs/comparisons.md)
  family = "binary",
  doc = "Matrix product over the last two dims, batch dims broadcasting (wraps around on overflow); 1-d operands as torch.matmul (a [k] as [1, k], b [k] as [k, 1], the added dim removed).",
  args = { "int a", "int b" },
  returns = "int",
  shape = "matmul(a, b)",
  examples = {
    -- [1 2 3; 4 5 6] @ [7 8; 9 10; 11 12]: 7 + 18 + 33, 8 + 20 + 36; 28 + 45 + 66, 32 + 50 + 72
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, b = { shape = { 3, 2 }, data = { 7, 8, 9, 10, 11, 12 } },
      out = { shape = { 2, 2 }, data = { 58, 64, 139, 154 } } },
    -- batch of 2 [1 x 2] rows times one [2 x 1] column: 1 - 2, 3 - 4
    { a = { shape = { 2, 1, 2 }, data = { 1, 2, 3, 4 } }, b = { shape = { 2, 1 }, data = { 1, -1 } },
      out = { shape = { 2, 1, 1 }, data = { -1, -1 } } },
    -- 2^16 * 2^16 - 1 = 2^32 - 1 -> -1 modulo 2^32
    { a = { shape = { 1, 2 }, data = { 65536, 1 } }, b = { shape = { 2, 1 }, data = { 65536, -1 } },
      out = { shape = { 1, 1 }, data = { -1 } } },
    -- 1-d operands: [1, 2] @ [[1, 2], [3, 4]] = [7, 10]; [[1, 2], [3, 4]] @ [1, 2] = [5, 11]; dot 1 - 4 = -3
    { a = { shape = { 2 }, data = { 1, 2 } }, b = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } },
      out = { shape = { 2 }, data = { 7, 10 } } },
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } }, b = { shape = { 2 }, data = { 1, 2 } },
      out = { shape = { 2 }, data = { 5, 11 } } },
    { a = { shape = { 2 }, data = { 1, 2 } }, b = { shape = { 2 }, data = { 1, -2 } },
      out = { shape = {}, data = { -3 } } },
  },
}

op {
  name = "int_random",
  id = 536,
  family = "creation",
  doc = "Creates an int tensor of values uniform in [low, high); the same seed gives the same values on every backend. low < high, else TD_E_INVALID.",
  args = { "device device", "shape shape", "i32 low", "i32 high", "u64 seed" },
  returns = "int",
  shape = "random_int(shape, low, high)",
  semantics = "counter-based generator (float_random's splitmix64 of seed and element index): element i is low + ((h >> 32) * (high - low)) >> 32 with h = mix(seed ^ mix(2 i)), so results do not depend on threading",
  examples = {
    -- a range of one value
    { shape = { 2, 3 }, low = 7, high = 8, seed = 42,
      out = { shape = { 2, 3 }, data = { 7, 7, 7, 7, 7, 7 } } },
    { shape = {}, low = -2147483648, high = -2147483647, seed = 0,
      out = { shape = {}, data = { -2147483648 } } },
  },
}

-- ---- bitwise (two's complement) ----

op {
  name = "int_bitwise_and",
  id = 537,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "binary",
  doc = "Elementwise bitwise a & b, broadcasting.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  decompose = bitwise_decomp(function(u, v) return u .. " * " .. v end),
  examples = {
    { a = { shape = { 4 }, data = { 12, -1, 0, -2147483648 } }, b = { shape = { 4 }, data = { 10, 2147483647, -1, -1 } },
      out = { shape = { 4 }, data = { 8, 2147483647, 0, -2147483648 } } },
    -- -6 is ...11010: & 3 = 010, & 5 = 000
    { a = { shape = { 2, 1 }, data = { 6, -6 } }, b = { shape = { 3 }, data = { 3, 5, -1 } },
      out = { shape = { 2, 3 }, data = { 2, 4, 6, 2, 0, -6 } } },
  },
}

op {
  name = "int_bitwise_or",
  id = 538,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "binary",
  doc = "Elementwise bitwise a | b, broadcasting.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  decompose = bitwise_decomp(function(u, v) return "(" .. u .. " + " .. v .. " - " .. u .. " * " .. v .. ")" end),
  examples = {
    { a = { shape = { 4 }, data = { 12, -1, 0, -2147483648 } }, b = { shape = { 4 }, data = { 10, 2147483647, -1, -1 } },
      out = { shape = { 4 }, data = { 14, -1, -1, -1 } } },
    -- -6 is ...11010: | 3 = ...11011 = -5, | 5 = ...11111 = -1
    { a = { shape = { 2, 1 }, data = { 6, -6 } }, b = { shape = { 3 }, data = { 3, 5, -1 } },
      out = { shape = { 2, 3 }, data = { 7, 7, -1, -5, -1, -1 } } },
  },
}

op {
  name = "int_bitwise_xor",
  id = 539,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "binary",
  doc = "Elementwise bitwise a ^ b, broadcasting.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  decompose = bitwise_decomp(function(u, v) return "(" .. u .. " + " .. v .. " - " .. u .. " * " .. v .. " * 2)" end),
  examples = {
    -- -1 ^ 0x7fffffff = 0x80000000
    { a = { shape = { 4 }, data = { 12, -1, 0, -2147483648 } }, b = { shape = { 4 }, data = { 10, 2147483647, -1, -1 } },
      out = { shape = { 4 }, data = { 6, -2147483648, -1, 2147483647 } } },
    -- x ^ -1 = ~x = -x - 1; -6 ^ 3 = ...11001 = -7, -6 ^ 5 = ...11111 = -1
    { a = { shape = { 2, 1 }, data = { 6, -6 } }, b = { shape = { 3 }, data = { 3, 5, -1 } },
      out = { shape = { 2, 3 }, data = { 5, 3, -7, -7, -1, 5 } } },
  },
}

op {
  name = "int_bitwise_not",
  id = 540,
  family = "unary",
  doc = "Elementwise bitwise ~a (= -a - 1).",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
  decompose = "-a - 1",
  examples = {
    { a = { shape = { 5 }, data = { 0, -1, 5, -2147483648, 2147483647 } },
      out = { shape = { 5 }, data = { -1, 0, -6, 2147483647, -2147483648 } } },
  },
}

op {
  name = "int_bitwise_left_shift",
  id = 541,
  family = "binary",
  doc = "Elementwise a << b, broadcasting: bits shifted out are lost (wraps around); a shift b < 0 or b >= 32 gives 0.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  decompose = left_shift_decomp(),
  semantics = "torch.bitwise_left_shift on int32, including its results for shifts outside [0, 32)",
  examples = {
    -- 1 << 31 = 0x80000000; -1 << 1 = 0xfffffffe
    { a = { shape = { 6 }, data = { 1, 1, 3, -1, 5, 7 } }, b = { shape = { 6 }, data = { 0, 31, 4, 1, 32, -1 } },
      out = { shape = { 6 }, data = { 1, -2147483648, 48, -2, 0, 0 } } },
    -- 0x40000000 << 1 = 0x80000000; 0xbfffffff << 1 = 0x7ffffffe
    { a = { shape = { 2 }, data = { 1073741824, -1073741825 } }, b = { shape = {}, data = { 1 } },
      out = { shape = { 2 }, data = { -2147483648, 2147483646 } } },
  },
}

op {
  name = "int_bitwise_right_shift",
  id = 542,
  family = "binary",
  doc = "Elementwise arithmetic a >> b (rounds toward -infinity), broadcasting; a shift b < 0 or b >= 32 gives 0 for a >= 0 and -1 for a < 0.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  decompose = right_shift_decomp(),
  semantics = "torch.bitwise_right_shift on int32, including its results for shifts outside [0, 32)",
  examples = {
    { a = { shape = { 6 }, data = { -8, 8, -1, -2147483648, 5, -5 } }, b = { shape = { 6 }, data = { 1, 2, 31, 31, 40, -3 } },
      out = { shape = { 6 }, data = { -4, 2, -1, -1, 0, -1 } } },
    -- -7 >> 1 = floor(-3.5) = -4
    { a = { shape = { 2, 1 }, data = { -7, 7 } }, b = { shape = { 2 }, data = { 1, 0 } },
      out = { shape = { 2, 2 }, data = { -4, -7, 3, 7 } } },
  },
}

op {
  name = "int_bitwise_and_scalar",
  id = 543,
  family = "unary",
  doc = "Elementwise bitwise a & value.",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_bitwise_and(a, int_full(device(a), shape(a), value))",
  examples = {
    -- -6 is ...11010, & 1010 = 1010
    { a = { shape = { 4 }, data = { 12, -1, 0, -6 } }, value = 10,
      out = { shape = { 4 }, data = { 8, 10, 0, 10 } } },
    { a = { shape = { 3 }, data = { -1, 2147483647, -5 } }, value = -2147483648,
      out = { shape = { 3 }, data = { -2147483648, 0, -2147483648 } } },
  },
}

op {
  name = "int_bitwise_or_scalar",
  id = 544,
  family = "unary",
  doc = "Elementwise bitwise a | value.",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_bitwise_or(a, int_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 4 }, data = { 12, -1, 0, -6 } }, value = 10,
      out = { shape = { 4 }, data = { 14, -1, 10, -6 } } },
    { a = { shape = { 3 }, data = { 0, 2147483647, 5 } }, value = -2147483648,
      out = { shape = { 3 }, data = { -2147483648, -1, -2147483643 } } },
  },
}

op {
  name = "int_bitwise_xor_scalar",
  id = 545,
  family = "unary",
  doc = "Elementwise bitwise a ^ value.",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_bitwise_xor(a, int_full(device(a), shape(a), value))",
  examples = {
    -- -1 ^ 10 = ~10 = -11; -6 ^ 10 = ...11010 ^ 01010 = ...10000 = -16
    { a = { shape = { 4 }, data = { 12, -1, 0, -6 } }, value = 10,
      out = { shape = { 4 }, data = { 6, -11, 10, -16 } } },
    { a = { shape = { 2 }, data = { 0, -2147483648 } }, value = -1,
      out = { shape = { 2 }, data = { -1, 2147483647 } } },
  },
}

op {
  name = "int_bitwise_left_shift_scalar",
  id = 546,
  family = "unary",
  doc = "Elementwise a << value: bits shifted out are lost (wraps around); a shift value < 0 or value >= 32 gives 0.",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_bitwise_left_shift(a, int_full(device(a), shape(a), value))",
  semantics = "torch.bitwise_left_shift on int32, including its results for shifts outside [0, 32)",
  examples = {
    -- 2^30 << 2 = 2^32 -> 0
    { a = { shape = { 4 }, data = { 1, -3, 1073741824, 5 } }, value = 2,
      out = { shape = { 4 }, data = { 4, -12, 0, 20 } } },
    -- only the lowest bit survives, into bit 31
    { a = { shape = { 3 }, data = { 1, 3, -1 } }, value = 31,
      out = { shape = { 3 }, data = { -2147483648, -2147483648, -2147483648 } } },
    { a = { shape = { 2 }, data = { 1, -1 } }, value = 33,
      out = { shape = { 2 }, data = { 0, 0 } } },
    { a = { shape = { 2 }, data = { 1, -1 } }, value = -1,
      out = { shape = { 2 }, data = { 0, 0 } } },
  },
}

op {
  name = "int_bitwise_right_shift_scalar",
  id = 547,
  family = "unary",
  doc = "Elementwise arithmetic a >> value (rounds toward -infinity); a shift value < 0 or value >= 32 gives 0 for a >= 0 and -1 for a < 0.",
  args = { "int a", "i32 value" },
  returns = "int",
  shape = "same(a)",
  decompose = "int_bitwise_right_shift(a, int_full(device(a), shape(a), value))",
  semantics = "torch.bitwise_right_shift on int32, including its results for shifts outside [0, 32)",
  examples = {
    -- -7 >> 2 = floor(-1.75) = -2; (2^31 - 1) >> 2 = 2^29 - 1
    { a = { shape = { 4 }, data = { -8, 8, -7, 2147483647 } }, value = 2,
      out = { shape = { 4 }, data = { -2, 2, -2, 536870911 } } },
    { a = { shape = { 3 }, data = { 5, -5, 0 } }, value = 32,
      out = { shape = { 3 }, data = { 0, -1, 0 } } },
    { a = { shape = { 3 }, data = { 5, -5, -2147483648 } }, value = -1,
      out = { shape = { 3 }, data = { 0, -1, -1 } } },
  },
}

op {
  name = "int_square",
  id = 548,
  int_degree = 2, -- homogeneous of degree 2: i64 comparisons scale the inputs by 2^16 (docs/comparisons.md)
  family = "unary",
  doc = "Elementwise a * a, wrapping around in int32 (torch.square on int32).",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
  decompose = "a * a",
  examples = {
    -- 46341^2 = 2147488281 = 2^31 + 4633 wraps to -2147479015
    { a = { shape = { 5 }, data = { 3, -4, 0, 46340, 46341 } },
      out = { shape = { 5 }, data = { 9, 16, 0, 2147395600, -2147479015 } } },
  },
}
