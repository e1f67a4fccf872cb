-- Int ops (issue 10, burn's IntTensorOps): scalar arithmetic, abs/sign/powers, comparisons,
-- reductions, bitwise ops, matmul and random. Results follow PyTorch's int32 semantics:
-- arithmetic wraps around on overflow (two's complement), division truncates toward zero
-- like int_div. Int results are never tracked by autodiff (these families have no
-- autodiff arms), so no op here has `backward`.

-- ---- scalar arithmetic (the decomposition language lowers `int tensor (+) int scalar`
-- to these) ----

op {
  name = "int_neg",
  id = 500,
  family = "unary",
  doc = "Elementwise -a (wraps around: -INT32_MIN is INT32_MIN).",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
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
