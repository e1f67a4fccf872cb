-- Int and bool ops with two tensor inputs; shapes broadcast as in PyTorch.

op {
  name = "int_add",
  id = 59,
  family = "binary",
  doc = "Elementwise a + b, broadcasting (wraps around on overflow).",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  int_degree = 1, -- a sum: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, b = { shape = { 3 }, data = { 10, 20, 30 } },
      out = { shape = { 2, 3 }, data = { 11, 22, 33, 14, 25, 36 } } },
    { a = { shape = { 2, 1 }, data = { 1, -2 } }, b = { shape = { 1, 3 }, data = { 10, 20, 30 } },
      out = { shape = { 2, 3 }, data = { 11, 21, 31, 8, 18, 28 } } },
    { a = { shape = { 2 }, data = { 2147483647, -2147483648 } }, b = { shape = { 2 }, data = { 1, -1 } },
      out = { shape = { 2 }, data = { -2147483648, 2147483647 } } },
    -- zero-size: a 0-d tensor broadcasts to an empty one
    { a = { shape = { 0 }, data = {} }, b = { shape = {}, data = { 7 } },
      out = { shape = { 0 }, data = {} } },
  },
}

op {
  name = "int_sub",
  id = 60,
  family = "binary",
  doc = "Elementwise a - b, broadcasting (wraps around on overflow).",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  int_degree = 1, -- a difference: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  decompose = "a + int_mul_scalar(b, -1)",
  examples = {
    { a = { shape = { 2, 1 }, data = { 10, 20 } }, b = { shape = { 3 }, data = { 1, 2, 3 } },
      out = { shape = { 2, 3 }, data = { 9, 8, 7, 19, 18, 17 } } },
    { a = { shape = {}, data = { 5 } }, b = { shape = { 2 }, data = { 1, 7 } },
      out = { shape = { 2 }, data = { 4, -2 } } },
    { a = { shape = { 1 }, data = { -2147483648 } }, b = { shape = { 1 }, data = { 1 } },
      out = { shape = { 1 }, data = { 2147483647 } } },
  },
}

op {
  name = "int_mul",
  id = 61,
  family = "binary",
  doc = "Elementwise a * b, broadcasting (wraps around on overflow).",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  int_degree = 2, -- a product of two: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -2, 3, 4, 5, -6 } }, b = { shape = { 2, 1 }, data = { 2, -1 } },
      out = { shape = { 2, 3 }, data = { 2, -4, 6, -4, -5, 6 } } },
    { a = { shape = { 3 }, data = { 65536, -3, 0 } }, b = { shape = { 1 }, data = { 65536 } },
      out = { shape = { 3 }, data = { 0, -196608, 0 } } },
  },
}

op {
  name = "int_div",
  id = 62,
  family = "binary",
  doc = "Elementwise a / b truncated toward zero, broadcasting; a zero divisor is an error.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  semantics = "truncates toward zero like C (torch.div with rounding_mode='trunc'); INT32_MIN / -1 wraps to INT32_MIN",
  examples = {
    { a = { shape = { 4 }, data = { 7, -7, 7, -7 } }, b = { shape = { 4 }, data = { 2, 2, -2, -2 } },
      out = { shape = { 4 }, data = { 3, -3, -3, 3 } } },
    { a = { shape = { 2, 3 }, data = { 9, -9, 0, 5, -5, 1 } }, b = { shape = { 2, 1 }, data = { 4, -3 } },
      out = { shape = { 2, 3 }, data = { 2, -2, 0, -1, 1, 0 } } },
    { a = { shape = { 2 }, data = { -2147483648, 6 } }, b = { shape = {}, data = { -1 } },
      out = { shape = { 2 }, data = { -2147483648, -6 } } },
  },
  domain = { b = "nonzero" }, -- a zero divisor is an error
}

op {
  name = "int_remainder",
  id = 63,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "binary",
  doc = "Elementwise remainder with the sign of the divisor (torch.remainder), broadcasting; a zero divisor is an error.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  -- C's remainder a - trunc(a / b) * b (int_div; a zero b is its error), plus b where it is
  -- nonzero and its sign differs from b's
  decompose = {
    "r = a - int_div(a, b) * b",
    "z = int_full(device(a), shape(r), 0)",
    "fix = bool_and(bool_not(int_equal(r, z)), bool_not_equal(int_greater(z, r), int_greater(z, b)))",
    "int_mask_where(r, fix, r + b)",
  },
  examples = {
    { a = { shape = { 4 }, data = { 7, -7, 7, -7 } }, b = { shape = { 4 }, data = { 2, 2, -2, -2 } },
      out = { shape = { 4 }, data = { 1, 1, -1, -1 } } },
    { a = { shape = { 2, 3 }, data = { 5, -5, 6, -6, 0, 1 } }, b = { shape = { 2, 1 }, data = { 3, -4 } },
      out = { shape = { 2, 3 }, data = { 2, 1, 0, -2, 0, -3 } } },
  },
  domain = { b = "nonzero" },
}

op {
  name = "int_equal",
  id = 64,
  family = "binary",
  doc = "Elementwise a == b as bool, broadcasting.",
  args = { "int a", "int b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  -- through int_greater alone (bool_not and bool_and come from int_equal): neither is greater
  decompose = {
    "g = bool_into_int(int_greater(a, b)) + bool_into_int(int_greater(b, a))",
    "int_greater(int_full(device(a), shape(g), 1), g)",
  },
  int_degree = 1, -- a comparison: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, b = { shape = { 3 }, data = { 1, 5, 6 } },
      out = { shape = { 2, 3 }, data = { true, false, false, false, true, true } } },
    { a = { shape = { 2, 1 }, data = { 3, 4 } }, b = { shape = { 1, 2 }, data = { 4, 3 } },
      out = { shape = { 2, 2 }, data = { false, true, true, false } } },
  },
}

op {
  name = "int_greater",
  id = 65,
  family = "binary",
  doc = "Elementwise a > b as bool, broadcasting.",
  args = { "int a", "int b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  int_degree = 1, -- a comparison: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  examples = {
    { a = { shape = { 2, 1 }, data = { 2, 5 } }, b = { shape = { 3 }, data = { 1, 2, 6 } },
      out = { shape = { 2, 3 }, data = { true, false, false, true, true, false } } },
    { a = { shape = {}, data = { 0 } }, b = { shape = { 3 }, data = { -1, 0, 1 } },
      out = { shape = { 3 }, data = { true, false, false } } },
  },
}

op {
  name = "int_lower",
  id = 66,
  family = "binary",
  doc = "Elementwise a < b as bool, broadcasting.",
  args = { "int a", "int b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  int_degree = 1, -- a comparison: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  decompose = "int_greater(b, a)",
  examples = {
    { a = { shape = { 2, 1 }, data = { 2, 5 } }, b = { shape = { 3 }, data = { 1, 2, 6 } },
      out = { shape = { 2, 3 }, data = { false, false, true, false, false, true } } },
    { a = { shape = {}, data = { 0 } }, b = { shape = { 3 }, data = { -1, 0, 1 } },
      out = { shape = { 3 }, data = { false, false, true } } },
  },
}

op {
  name = "int_mask_where",
  id = 67,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "binary",
  doc = "Elementwise mask ? value : a, broadcasting all three.",
  args = { "int a", "bool mask", "int value" },
  returns = "int",
  shape = "broadcast3(a, mask, value)",
  -- value * m + a * (1 - m) with m the mask as 0/1: each product is by 0 or 1, so exact
  decompose = { "m = bool_into_int(mask)", "a * (1 - m) + value * m" },
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      mask = { shape = { 3 }, data = { true, false, true } },
      value = { shape = { 2, 1 }, data = { -1, -2 } },
      out = { shape = { 2, 3 }, data = { -1, 2, -1, -2, 5, -2 } } },
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } },
      mask = { shape = { 2, 2 }, data = { false, true, true, false } },
      value = { shape = {}, data = { 0 } },
      out = { shape = { 2, 2 }, data = { 1, 0, 0, 4 } } },
  },
}

op {
  name = "bool_and",
  id = 68,
  family = "binary",
  doc = "Elementwise logical and, broadcasting.",
  args = { "bool a", "bool b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  -- both true: the two 0/1 ints add up to 2
  decompose = { "s = bool_into_int(a) + bool_into_int(b)", "int_equal(s, int_full(device(a), shape(s), 2))" },
  examples = {
    { a = { shape = { 2, 1 }, data = { true, false } }, b = { shape = { 2 }, data = { true, false } },
      out = { shape = { 2, 2 }, data = { true, false, false, false } } },
    { a = { shape = { 3 }, data = { true, true, false } }, b = { shape = {}, data = { true } },
      out = { shape = { 3 }, data = { true, true, false } } },
  },
}

op {
  name = "bool_or",
  id = 69,
  family = "binary",
  doc = "Elementwise logical or, broadcasting.",
  args = { "bool a", "bool b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  decompose = "bool_not(bool_and(bool_not(a), bool_not(b)))",
  examples = {
    { a = { shape = { 2, 1 }, data = { true, false } }, b = { shape = { 2 }, data = { true, false } },
      out = { shape = { 2, 2 }, data = { true, true, true, false } } },
    { a = { shape = { 3 }, data = { true, false, false } }, b = { shape = {}, data = { false } },
      out = { shape = { 3 }, data = { true, false, false } } },
  },
}
