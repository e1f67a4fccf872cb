-- Int and bool ops with one tensor input: reductions, casts, host read-back.

op {
  name = "int_mask_fill",
  id = 21,
  family = "unary",
  doc = "Returns a with value where mask is true; mask broadcasts to a's shape.",
  args = { "int a", "bool mask", "i32 value" },
  returns = "int",
  shape = "mask_fill(a, mask)",
  decompose = "int_mask_where(a, mask, int_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      mask = { shape = { 3 }, data = { true, false, true } },
      value = 0,
      out = { shape = { 2, 3 }, data = { 0, 2, 0, 0, 5, 0 } } },
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      mask = { shape = { 2, 1 }, data = { false, true } },
      value = -7,
      out = { shape = { 2, 3 }, data = { 1, 2, 3, -7, -7, -7 } } },
  },
}

op {
  name = "int_sum",
  id = 22,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Sum of all elements as a 0-dim tensor (wraps around on overflow).",
  args = { "int a" },
  returns = "int",
  shape = "reduce_all(a)",
  -- flattened, summed along dim 0 ([1]), then the 0-d shape (a dot of two vectors is 0-d)
  decompose = {
    "o = float_zeros(device(a), array(1))",
    "int_reshape(int_sum_dim(int_reshape(a, array(-1)), 0), shape(float_matmul(o, o)))",
  },
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -2, 3, 4, 5, 6 } },
      out = { shape = {}, data = { 17 } } },
    { a = { shape = { 2 }, data = { 2147483647, 1 } },
      out = { shape = {}, data = { -2147483648 } } },
    -- zero-size: the sum of nothing is 0
    { a = { shape = { 0 }, data = {} },
      out = { shape = {}, data = { 0 } } },
  },
}

op {
  name = "int_into_float",
  id = 23,
  family = "unary",
  doc = "Converts to float.",
  args = { "int a" },
  returns = "float",
  dtype_twin = "convert",
  shape = "same(a)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 0, -3, 7, 100000 } },
      out = { shape = { 2, 2 }, data = { 0, -3, 7, 100000 } } },
    { a = { shape = { 2 }, data = { 16777217, -2147483648 } },
      out = { shape = { 2 }, data = { 16777216, -2147483648 } } },
  },
}

op {
  name = "bool_into_float",
  id = 24,
  family = "unary",
  doc = "Converts to float: true is 1, false is 0.",
  args = { "bool a" },
  returns = "float",
  dtype_twin = "convert",
  shape = "same(a)",
  decompose = "int_into_float(bool_into_int(a))",
  examples = {
    { a = { shape = { 2, 2 }, data = { true, false, false, true } },
      out = { shape = { 2, 2 }, data = { 1, 0, 0, 1 } } },
  },
}

op {
  name = "bool_into_int",
  id = 25,
  family = "unary",
  doc = "Converts to int: true is 1, false is 0.",
  args = { "bool a" },
  returns = "int",
  dtype_twin = "convert",
  shape = "same(a)",
  -- a mask select of 0.0 and 1.0, cast
  decompose = "float_into_int(float_mask_where(float_zeros(device(a), shape(a)), a, float_ones(device(a), shape(a))))",
  examples = {
    { a = { shape = { 3 }, data = { false, true, true } },
      out = { shape = { 3 }, data = { 0, 1, 1 } } },
  },
}

op {
  name = "bool_not",
  id = 26,
  family = "unary",
  doc = "Elementwise logical not.",
  args = { "bool a" },
  returns = "bool",
  shape = "same(a)",
  decompose = "int_equal(bool_into_int(a), int_full(device(a), shape(a), 0))",
  examples = {
    { a = { shape = { 2, 2 }, data = { true, false, false, true } },
      out = { shape = { 2, 2 }, data = { false, true, true, false } } },
    -- zero-size: an empty result
    { a = { shape = { 3, 0 }, data = {} },
      out = { shape = { 3, 0 }, data = {} } },
  },
}

op {
  name = "int_into_data",
  id = 27,
  family = "unary",
  doc = "Copies the elements, row-major, into dst, which holds at least numel ints.",
  args = { "int a", "i32_out dst" },
  returns = "host",
  dtype_twin = "into_data",
  shape = "host_out(a, dst)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, -2, 3, -4 } },
      out = { data = { 1, -2, 3, -4 } } },
    { a = { shape = {}, data = { 5 } },
      out = { data = { 5 } } },
  },
}

op {
  name = "bool_into_data",
  id = 28,
  family = "unary",
  doc = "Copies the elements, row-major, into dst, which holds at least numel bools.",
  args = { "bool a", "bool_out dst" },
  returns = "host",
  shape = "host_out(a, dst)",
  examples = {
    { a = { shape = { 3, 1 }, data = { true, false, true } },
      out = { data = { true, false, true } } },
  },
}
