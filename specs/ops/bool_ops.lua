-- Bool logic and masks (burn's BoolTensorOps): xor, equality, mask_where and mask_fill.
-- Ids 420-439.

op {
  name = "bool_xor",
  id = 420,
  family = "binary",
  doc = "Elementwise logical exclusive or, broadcasting.",
  args = { "bool a", "bool b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  examples = {
    { a = { shape = { 2, 1 }, data = { true, false } }, b = { shape = { 2 }, data = { true, false } },
      out = { shape = { 2, 2 }, data = { false, true, true, false } } },
    { a = { shape = { 3 }, data = { true, false, true } }, b = { shape = {}, data = { true } },
      out = { shape = { 3 }, data = { false, true, false } } },
  },
  decompose = "bool_and(bool_or(a, b), bool_not(bool_and(a, b)))",
}

op {
  name = "bool_equal",
  id = 421,
  family = "binary",
  doc = "Elementwise a == b, broadcasting.",
  args = { "bool a", "bool b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  examples = {
    { a = { shape = { 2, 1 }, data = { true, false } }, b = { shape = { 2 }, data = { true, false } },
      out = { shape = { 2, 2 }, data = { true, false, false, true } } },
    { a = { shape = { 3 }, data = { true, false, false } }, b = { shape = {}, data = { false } },
      out = { shape = { 3 }, data = { false, true, true } } },
  },
  decompose = "bool_not(bool_xor(a, b))",
}

op {
  name = "bool_not_equal",
  id = 422,
  family = "binary",
  doc = "Elementwise a != b, broadcasting.",
  args = { "bool a", "bool b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  examples = {
    { a = { shape = { 2, 1 }, data = { true, false } }, b = { shape = { 2 }, data = { true, false } },
      out = { shape = { 2, 2 }, data = { false, true, true, false } } },
    { a = { shape = { 2, 2 }, data = { true, true, false, false } }, b = { shape = { 2, 2 }, data = { true, false, true, false } },
      out = { shape = { 2, 2 }, data = { false, true, true, false } } },
  },
  decompose = "bool_xor(a, b)",
}

op {
  name = "bool_mask_where",
  id = 423,
  family = "binary",
  doc = "Elementwise mask ? value : a, broadcasting all three (like float_mask_where).",
  args = { "bool a", "bool mask", "bool value" },
  returns = "bool",
  shape = "broadcast3(a, mask, value)",
  examples = {
    { a = { shape = { 2, 3 }, data = { true, false, true, false, true, false } },
      mask = { shape = { 3 }, data = { true, false, false } },
      value = { shape = { 2, 1 }, data = { false, true } },
      out = { shape = { 2, 3 }, data = { false, false, true, true, true, false } } },
    { a = { shape = {}, data = { false } },
      mask = { shape = { 2, 2 }, data = { true, false, true, false } },
      value = { shape = { 2 }, data = { true, false } },
      out = { shape = { 2, 2 }, data = { true, false, true, false } } },
  },
  decompose = "bool_or(bool_and(mask, value), bool_and(bool_not(mask), a))",
}

op {
  name = "bool_mask_fill",
  id = 424,
  family = "unary",
  doc = "Returns a with value (0 is false, anything else true) where mask is true; mask broadcasts to a's shape.",
  args = { "bool a", "bool mask", "i32 value" },
  returns = "bool",
  shape = "mask_fill(a, mask)",
  semantics = "burn's bool_mask_fill takes a bool value; the C entry takes it as an int32_t (C's truth value)",
  examples = {
    { a = { shape = { 2, 2 }, data = { true, false, false, true } },
      mask = { shape = { 2, 1 }, data = { true, false } }, value = 0,
      out = { shape = { 2, 2 }, data = { false, false, false, true } } },
    { a = { shape = { 2, 2 }, data = { true, false, false, true } },
      mask = { shape = { 2 }, data = { false, true } }, value = 1,
      out = { shape = { 2, 2 }, data = { true, true, false, true } } },
    { a = { shape = { 3 }, data = { false, true, false } },
      mask = { shape = {}, data = { true } }, value = -7,
      out = { shape = { 3 }, data = { true, true, true } } },
  },
  decompose = "bool_not(int_equal(int_mask_fill(bool_into_int(a), mask, value), int_zeros(device(a), shape(a))))",
}
