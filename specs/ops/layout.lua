-- Layout ops for every primitive class: results are new contiguous tensors, except the
-- reshapes, which are views sharing their input's storage (view = true).

op {
  name = "float_reshape",
  id = 29,
  family = "unary_float",
  doc = "Returns a float tensor with the same elements in a new shape; one dimension may be -1 (inferred). A view: the result shares a's storage (no copy; tensors are never written in place).",
  args = { "float a", "shape shape" },
  returns = "float",
  shape = "reshape(a, shape)",
  view = true, -- the result shares a's storage (row-major data is the same in any shape)
  examples = {
    { a = { shape = { 2, 3 }, data = { 0.5, 1, 1.5, 2, 2.5, 3 } }, shape = { 3, 2 },
      out = { shape = { 3, 2 }, data = { 0.5, 1, 1.5, 2, 2.5, 3 } } },
    { a = { shape = { 2, 3 }, data = { 0.5, 1, 1.5, 2, 2.5, 3 } }, shape = { -1 },
      out = { shape = { 6 }, data = { 0.5, 1, 1.5, 2, 2.5, 3 } } },
    { a = { shape = { 2, 3, 2 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } }, shape = { 3, -1 },
      out = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } } },
    { a = { shape = { 1, 1 }, data = { 2.5 } }, shape = {},
      out = { shape = {}, data = { 2.5 } } },
    -- zero-size: to and from shapes with a 0; -1 inferred from the others
    { a = { shape = { 2, 0, 3 }, data = {} }, shape = { -1, 3 },
      out = { shape = { 0, 3 }, data = {} } },
  },
  backward = { a = "reshape_as(grad, a)" },
  bound = "memory",
}

op {
  name = "float_swap_dims",
  id = 30,
  family = "unary_float",
  doc = "Returns a float tensor with dimensions dim0 and dim1 exchanged (negative dims count from the end; a 0-d tensor takes dims 0 and -1 and is returned as it is).",
  args = { "float a", "dim dim0", "dim dim1" },
  returns = "float",
  shape = "swap_dims(a, dim0, dim1)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 0.5, 1, 1.5, 2, 2.5, 3 } }, dim0 = 0, dim1 = 1,
      out = { shape = { 3, 2 }, data = { 0.5, 2, 1, 2.5, 1.5, 3 } } },
    { a = { shape = { 2, 1, 3 }, data = { 0, 0.5, 1, 1.5, 2, 2.5 } }, dim0 = -1, dim1 = 0,
      out = { shape = { 3, 1, 2 }, data = { 0, 1.5, 0.5, 2, 1, 2.5 } } },
    { a = { shape = { 2, 3, 2 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } }, dim0 = 1, dim1 = -1,
      out = { shape = { 2, 2, 3 }, data = { 0, 1, 2, 0.5, 1.5, 2.5, 3, 4, 5, 3.5, 4.5, 5.5 } } },
    { a = { shape = {}, data = { 2.5 } }, dim0 = 0, dim1 = -1, out = { shape = {}, data = { 2.5 } } },
  },
  backward = { a = "swap_dims(grad, dim0, dim1)" },
  bound = "memory",
}

op {
  name = "float_permute",
  id = 31,
  family = "unary_float",
  doc = "Returns a float tensor whose dimension i is dimension perm[i] of a (negative entries count from the end, as in PyTorch).",
  args = { "float a", "dims perm" },
  returns = "float",
  shape = "permute(a, perm)",
  examples = {
    { a = { shape = { 2, 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9, 9.5, 10, 10.5, 11, 11.5 } },
      perm = { 2, 0, 1 },
      out = { shape = { 4, 2, 3 }, data = { 0, 2, 4, 6, 8, 10, 0.5, 2.5, 4.5, 6.5, 8.5, 10.5, 1, 3, 5, 7, 9, 11, 1.5, 3.5, 5.5, 7.5, 9.5, 11.5 } } },
    { a = { shape = { 2, 3 }, data = { 0.5, 1, 1.5, 2, 2.5, 3 } }, perm = { 1, 0 },
      out = { shape = { 3, 2 }, data = { 0.5, 2, 1, 2.5, 1.5, 3 } } },
    { a = { shape = { 2, 3, 2 }, data = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 } }, perm = { -1, 0, -2 },
      out = { shape = { 2, 2, 3 }, data = { 0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11 } } },
    -- zero-size: dims of 0 move like the others
    { a = { shape = { 2, 0, 3 }, data = {} }, perm = { 2, 0, 1 },
      out = { shape = { 3, 2, 0 }, data = {} } },
  },
  backward = { a = "inverse_permute(grad, perm)" },
  bound = "memory",
}

op {
  name = "float_expand",
  id = 32,
  family = "unary_float",
  doc = "Broadcasts a float tensor to shape: size-1 dims repeat, -1 keeps a size, new dims go in front.",
  args = { "float a", "shape shape" },
  returns = "float",
  shape = "expand(a, shape)",
  examples = {
    { a = { shape = { 3, 1 }, data = { 0.5, 1, 1.5 } }, shape = { 2, 3, 2 },
      out = { shape = { 2, 3, 2 }, data = { 0.5, 0.5, 1, 1, 1.5, 1.5, 0.5, 0.5, 1, 1, 1.5, 1.5 } } },
    { a = { shape = { 1, 3 }, data = { 0.5, 1, 1.5 } }, shape = { 2, -1 },
      out = { shape = { 2, 3 }, data = { 0.5, 1, 1.5, 0.5, 1, 1.5 } } },
    { a = { shape = {}, data = { 2 } }, shape = { 2, 2 },
      out = { shape = { 2, 2 }, data = { 2, 2, 2, 2 } } },
  },
  backward = { a = "grad" },
  bound = "memory",
}

op {
  name = "float_slice",
  id = 33,
  family = "unary_float",
  doc = "Returns the sub-tensor [starts[i], ends[i]) along each of the first len(starts) dims of a float tensor (a negative bound counts from the end of its dim, as in PyTorch).",
  args = { "float a", "dims starts", "dims ends" },
  returns = "float",
  shape = "slice(a, starts, ends)",
  semantics = "a bound outside its dim (after a negative one is counted from the end) is an error, where PyTorch's indexing clamps it",
  examples = {
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } },
      starts = { 1, 1 },
      ends = { 3, 3 },
      out = { shape = { 2, 2 }, data = { 2.5, 3, 4.5, 5 } } },
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } }, starts = { 1 }, ends = { 2 },
      out = { shape = { 1, 4 }, data = { 2, 2.5, 3, 3.5 } } },
    { a = { shape = { 2, 3, 2 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } },
      starts = { 0, 1 },
      ends = { 2, 3 },
      out = { shape = { 2, 2, 2 }, data = { 1, 1.5, 2, 2.5, 4, 4.5, 5, 5.5 } } },
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } }, starts = { -2, 1 }, ends = { 3, -1 },
      out = { shape = { 2, 2 }, data = { 2.5, 3, 4.5, 5 } } },
    -- zero-size: a range of length 0
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } }, starts = { 1 }, ends = { 1 },
      out = { shape = { 0, 4 }, data = {} } },
  },
  backward = { a = "slice_grad(grad, a, starts, ends)" },
  bound = "memory",
}

op {
  name = "float_slice_assign",
  id = 86,
  family = "binary_float",
  doc = "Returns a copy of a float tensor a whose slice [starts, ends) is replaced by value (a negative bound counts from the end of its dim).",
  args = { "float a", "float value", "dims starts", "dims ends" },
  returns = "float",
  shape = "slice_assign(a, value, starts, ends)",
  -- by flat positions: p lists a's flat positions of the slice (an arange sliced), the slice
  -- is set to -0 by a mask (hit counts scatter_add's ones there) and value scatter-added:
  -- -0 + v is v for every v (-0, NaN and inf included)
  decompose = {
    "f = int_reshape(int_arange(device(a), 0, numel(a), 1), shape(a))",
    "p = int_reshape(int_slice(f, starts, ends), array(-1))",
    "flat = float_reshape(a, array(-1))",
    "hit = float_scatter_add(float_zeros(device(a), shape(flat)), 0, p, float_ones(device(a), shape(p)))",
    "base = float_mask_where(flat, float_greater_elem(hit, 0.5), float_full(device(a), shape(flat), -0.0))",
    "float_reshape(float_scatter_add(base, 0, p, float_reshape(value, array(-1))), shape(a))",
  },
  semantics = "a bound outside its dim (after a negative one is counted from the end) is an error, where PyTorch's indexing clamps it",
  examples = {
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } },
      value = { shape = { 2, 2 }, data = { -0.5, -1, -1.5, -2 } },
      starts = { 1, 1 },
      ends = { 3, 3 },
      out = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, -0.5, -1, 3.5, 4, -1.5, -2, 5.5 } } },
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } },
      value = { shape = { 1, 4 }, data = { -0.5, -1, -1.5, -2 } },
      starts = { 2 },
      ends = { 3 },
      out = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, -0.5, -1, -1.5, -2 } } },
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } },
      value = { shape = { 1, 4 }, data = { -0.5, -1, -1.5, -2 } }, starts = { -1 }, ends = { 3 },
      out = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, -0.5, -1, -1.5, -2 } } },
    -- zero-size: an empty region: a copy of a
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } }, value = { shape = { 0, 2 }, data = {} }, starts = { 1 }, ends = { 1 },
      out = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } } },
  },
  backward = { a = "slice_assign(grad, zeros_as(grad, value), starts, ends)", value = "slice(grad, starts, ends)" },
  bound = "memory",
}

op {
  name = "float_cat",
  id = 87,
  family = "multi",
  doc = "Concatenates float tensors along dim (negative dims count from the end); all other sizes must agree, and 0-d tensors cannot be concatenated.",
  args = { "floats xs", "dim dim" },
  returns = "float",
  shape = "cat(xs, dim)",
  examples = {
    { xs = { { shape = { 2, 1 }, data = { 0.5, 1 } }, { shape = { 2, 2 }, data = { 1.5, 2, 2.5, 3 } } }, dim = 1,
      out = { shape = { 2, 3 }, data = { 0.5, 1.5, 2, 1, 2.5, 3 } } },
    { xs = { { shape = { 2, 2 }, data = { 1.5, 2, 2.5, 3 } }, { shape = { 1, 2 }, data = { 3.5, 4 } }, { shape = { 2, 2 }, data = { 1.5, 2, 2.5, 3 } } },
      dim = 0,
      out = { shape = { 5, 2 }, data = { 1.5, 2, 2.5, 3, 3.5, 4, 1.5, 2, 2.5, 3 } } },
    { xs = { { shape = { 2, 1, 2 }, data = { 0.5, 1, 1.5, 2 } }, { shape = { 2, 2, 2 }, data = { 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6 } } },
      dim = -2,
      out = { shape = { 2, 3, 2 }, data = { 0.5, 1, 2.5, 3, 3.5, 4, 1.5, 2, 4.5, 5, 5.5, 6 } } },
    -- zero-size: empty inputs add nothing; [0] is skipped whatever the other shapes (PyTorch)
    { xs = { { shape = { 2, 2 }, data = { 1, 2, 3, 4 } }, { shape = { 0 }, data = {} }, { shape = { 1, 2 }, data = { 5, 6 } } }, dim = 0,
      out = { shape = { 3, 2 }, data = { 1, 2, 3, 4, 5, 6 } } },
    { xs = { { shape = { 2, 0 }, data = {} }, { shape = { 2, 1 }, data = { 7, 8 } } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 7, 8 } } },
  },
  backward = { xs = "cat_slice(grad, dim)" },
  bound = "memory",
}

op {
  name = "int_reshape",
  id = 11,
  family = "unary",
  doc = "Returns an int tensor with the same elements in a new shape; one dimension may be -1 (inferred). A view: the result shares a's storage (no copy; tensors are never written in place).",
  args = { "int a", "shape shape" },
  returns = "int",
  shape = "reshape(a, shape)",
  view = true, -- the result shares a's storage (row-major data is the same in any shape)
  examples = {
    { a = { shape = { 2, 3 }, data = { -4, -3, -2, -1, 0, 1 } }, shape = { 3, 2 },
      out = { shape = { 3, 2 }, data = { -4, -3, -2, -1, 0, 1 } } },
    { a = { shape = { 2, 3 }, data = { -4, -3, -2, -1, 0, 1 } }, shape = { -1 },
      out = { shape = { 6 }, data = { -4, -3, -2, -1, 0, 1 } } },
    { a = { shape = { 2, 3, 2 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6 } }, shape = { 3, -1 },
      out = { shape = { 3, 4 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6 } } },
    { a = { shape = { 1, 1 }, data = { 0 } }, shape = {},
      out = { shape = {}, data = { 0 } } },
  },
}

op {
  name = "int_swap_dims",
  id = 12,
  family = "unary",
  doc = "Returns an int tensor with dimensions dim0 and dim1 exchanged (negative dims count from the end; a 0-d tensor takes dims 0 and -1 and is returned as it is).",
  args = { "int a", "dim dim0", "dim dim1" },
  returns = "int",
  shape = "swap_dims(a, dim0, dim1)",
  -- exact through the float kernel: a = 65536 hi + lo with hi in [-2^15, 2^15) and lo in
  -- [0, 2^16), both exact in f32 (as int_max_dim); moved apart and put together again
  decompose = {
    "lo = int_remainder(a, int_full(device(a), shape(a), 65536))",
    "hi = int_into_float((a - lo) / 65536)",
    "h = float_into_int(float_swap_dims(hi, dim0, dim1))",
    "h * 65536 + float_into_int(float_swap_dims(int_into_float(lo), dim0, dim1))",
  },
  examples = {
    { a = { shape = { 2, 3 }, data = { -4, -3, -2, -1, 0, 1 } }, dim0 = 0, dim1 = 1,
      out = { shape = { 3, 2 }, data = { -4, -1, -3, 0, -2, 1 } } },
    { a = { shape = { 2, 1, 3 }, data = { -5, -4, -3, -2, -1, 0 } }, dim0 = -1, dim1 = 0,
      out = { shape = { 3, 1, 2 }, data = { -5, -2, -4, -1, -3, 0 } } },
    { a = { shape = { 2, 3, 2 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6 } }, dim0 = 1, dim1 = -1,
      out = { shape = { 2, 2, 3 }, data = { -5, -3, -1, -4, -2, 0, 1, 3, 5, 2, 4, 6 } } },
    { a = { shape = {}, data = { -7 } }, dim0 = 0, dim1 = -1, out = { shape = {}, data = { -7 } } },
  },
}

op {
  name = "int_permute",
  id = 13,
  family = "unary",
  doc = "Returns an int tensor whose dimension i is dimension perm[i] of a (negative entries count from the end, as in PyTorch).",
  args = { "int a", "dims perm" },
  returns = "int",
  shape = "permute(a, perm)",
  examples = {
    { a = { shape = { 2, 3, 4 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 } },
      perm = { 2, 0, 1 },
      out = { shape = { 4, 2, 3 }, data = { -5, -1, 3, 7, 11, 15, -4, 0, 4, 8, 12, 16, -3, 1, 5, 9, 13, 17, -2, 2, 6, 10, 14, 18 } } },
    { a = { shape = { 2, 3 }, data = { -4, -3, -2, -1, 0, 1 } }, perm = { 1, 0 },
      out = { shape = { 3, 2 }, data = { -4, -1, -3, 0, -2, 1 } } },
    { a = { shape = { 2, 3, 2 }, data = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 } }, perm = { -2, -1, 0 },
      out = { shape = { 3, 2, 2 }, data = { 0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11 } } },
  },
}

op {
  name = "int_expand",
  id = 14,
  family = "unary",
  doc = "Broadcasts an int tensor to shape: size-1 dims repeat, -1 keeps a size, new dims go in front.",
  args = { "int a", "shape shape" },
  returns = "int",
  shape = "expand(a, shape)",
  examples = {
    { a = { shape = { 3, 1 }, data = { -4, -3, -2 } }, shape = { 2, 3, 2 },
      out = { shape = { 2, 3, 2 }, data = { -4, -4, -3, -3, -2, -2, -4, -4, -3, -3, -2, -2 } } },
    { a = { shape = { 1, 3 }, data = { -4, -3, -2 } }, shape = { 2, -1 },
      out = { shape = { 2, 3 }, data = { -4, -3, -2, -4, -3, -2 } } },
    { a = { shape = {}, data = { -1 } }, shape = { 2, 2 },
      out = { shape = { 2, 2 }, data = { -1, -1, -1, -1 } } },
  },
}

op {
  name = "int_slice",
  id = 15,
  family = "unary",
  doc = "Returns the sub-tensor [starts[i], ends[i]) along each of the first len(starts) dims of an int tensor (a negative bound counts from the end of its dim, as in PyTorch).",
  args = { "int a", "dims starts", "dims ends" },
  returns = "int",
  shape = "slice(a, starts, ends)",
  -- exact through float_slice, split in two halves as int_swap_dims
  decompose = {
    "lo = int_remainder(a, int_full(device(a), shape(a), 65536))",
    "hi = int_into_float((a - lo) / 65536)",
    "h = float_into_int(float_slice(hi, starts, ends))",
    "h * 65536 + float_into_int(float_slice(int_into_float(lo), starts, ends))",
  },
  semantics = "a bound outside its dim (after a negative one is counted from the end) is an error, where PyTorch's indexing clamps it",
  examples = {
    { a = { shape = { 3, 4 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6 } }, starts = { 1, 1 }, ends = { 3, 3 },
      out = { shape = { 2, 2 }, data = { 0, 1, 4, 5 } } },
    { a = { shape = { 3, 4 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6 } }, starts = { 1 }, ends = { 2 },
      out = { shape = { 1, 4 }, data = { -1, 0, 1, 2 } } },
    { a = { shape = { 2, 3, 2 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6 } },
      starts = { 0, 1 },
      ends = { 2, 3 },
      out = { shape = { 2, 2, 2 }, data = { -3, -2, -1, 0, 3, 4, 5, 6 } } },
    { a = { shape = { 5 }, data = { 10, 20, 30, 40, 50 } }, starts = { -3 }, ends = { -1 },
      out = { shape = { 2 }, data = { 30, 40 } } },
    -- zero-size: a range of length 0 in the second dim
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, starts = { 0, 3 }, ends = { 2, 3 },
      out = { shape = { 2, 0 }, data = {} } },
  },
}

op {
  name = "int_slice_assign",
  id = 70,
  family = "binary",
  doc = "Returns a copy of an int tensor a whose slice [starts, ends) is replaced by value (a negative bound counts from the end of its dim).",
  args = { "int a", "int value", "dims starts", "dims ends" },
  returns = "int",
  shape = "slice_assign(a, value, starts, ends)",
  -- exact through float_slice_assign, a and value split in two halves as int_swap_dims
  decompose = {
    "lo = int_remainder(a, int_full(device(a), shape(a), 65536))",
    "hi = int_into_float((a - lo) / 65536)",
    "vlo = int_remainder(value, int_full(device(value), shape(value), 65536))",
    "vhi = int_into_float((value - vlo) / 65536)",
    "h = float_into_int(float_slice_assign(hi, vhi, starts, ends))",
    "h * 65536 + float_into_int(float_slice_assign(int_into_float(lo), int_into_float(vlo), starts, ends))",
  },
  semantics = "a bound outside its dim (after a negative one is counted from the end) is an error, where PyTorch's indexing clamps it",
  examples = {
    { a = { shape = { 3, 4 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6 } },
      value = { shape = { 2, 2 }, data = { -6, -7, -8, -9 } },
      starts = { 1, 1 },
      ends = { 3, 3 },
      out = { shape = { 3, 4 }, data = { -5, -4, -3, -2, -1, -6, -7, 2, 3, -8, -9, 6 } } },
    { a = { shape = { 3, 4 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6 } },
      value = { shape = { 1, 4 }, data = { -6, -7, -8, -9 } },
      starts = { 2 },
      ends = { 3 },
      out = { shape = { 3, 4 }, data = { -5, -4, -3, -2, -1, 0, 1, 2, -6, -7, -8, -9 } } },
    -- zero-size: an empty region: a copy of a
    { a = { shape = { 3 }, data = { 1, 2, 3 } }, value = { shape = { 0 }, data = {} }, starts = { 3 }, ends = { 3 },
      out = { shape = { 3 }, data = { 1, 2, 3 } } },
  },
}

op {
  name = "int_cat",
  id = 88,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "multi",
  doc = "Concatenates int tensors along dim (negative dims count from the end); all other sizes must agree, and 0-d tensors cannot be concatenated.",
  args = { "ints xs", "dim dim" },
  returns = "int",
  shape = "cat(xs, dim)",
  examples = {
    { xs = { { shape = { 2, 1 }, data = { -4, -3 } }, { shape = { 2, 2 }, data = { -2, -1, 0, 1 } } }, dim = 1,
      out = { shape = { 2, 3 }, data = { -4, -2, -1, -3, 0, 1 } } },
    { xs = { { shape = { 2, 2 }, data = { -2, -1, 0, 1 } }, { shape = { 1, 2 }, data = { 2, 3 } }, { shape = { 2, 2 }, data = { -2, -1, 0, 1 } } },
      dim = 0,
      out = { shape = { 5, 2 }, data = { -2, -1, 0, 1, 2, 3, -2, -1, 0, 1 } } },
    { xs = { { shape = { 2, 1, 2 }, data = { -4, -3, -2, -1 } }, { shape = { 2, 2, 2 }, data = { 0, 1, 2, 3, 4, 5, 6, 7 } } },
      dim = -2,
      out = { shape = { 2, 3, 2 }, data = { -4, -3, 0, 1, 2, 3, -2, -1, 4, 5, 6, 7 } } },
    -- zero-size: all empty
    { xs = { { shape = { 0, 3 }, data = {} }, { shape = { 0, 3 }, data = {} } }, dim = 0,
      out = { shape = { 0, 3 }, data = {} } },
  },
}

op {
  name = "bool_reshape",
  id = 16,
  family = "unary",
  doc = "Returns a bool tensor with the same elements in a new shape; one dimension may be -1 (inferred). A view: the result shares a's storage (no copy; tensors are never written in place).",
  args = { "bool a", "shape shape" },
  returns = "bool",
  shape = "reshape(a, shape)",
  view = true, -- the result shares a's storage (row-major data is the same in any shape)
  examples = {
    { a = { shape = { 2, 3 }, data = { false, false, true, false, false, true } }, shape = { 3, 2 },
      out = { shape = { 3, 2 }, data = { false, false, true, false, false, true } } },
    { a = { shape = { 2, 3 }, data = { false, false, true, false, false, true } }, shape = { -1, 1, 2 },
      out = { shape = { 3, 1, 2 }, data = { false, false, true, false, false, true } } },
  },
}

op {
  name = "bool_swap_dims",
  id = 17,
  family = "unary",
  doc = "Returns a bool tensor with dimensions dim0 and dim1 exchanged (negative dims count from the end; a 0-d tensor takes dims 0 and -1 and is returned as it is).",
  args = { "bool a", "dim dim0", "dim dim1" },
  returns = "bool",
  shape = "swap_dims(a, dim0, dim1)",
  decompose = "int_greater_elem(int_swap_dims(bool_into_int(a), dim0, dim1), 0)",
  examples = {
    { a = { shape = { 2, 3 }, data = { false, false, true, false, false, true } }, dim0 = 0, dim1 = 1,
      out = { shape = { 3, 2 }, data = { false, false, false, false, true, true } } },
    { a = { shape = { 2, 1, 3 }, data = { true, false, false, true, false, false } }, dim0 = -1, dim1 = 0,
      out = { shape = { 3, 1, 2 }, data = { true, true, false, false, false, false } } },
    { a = { shape = { 2, 3, 2 }, data = { true, false, false, true, false, false, true, false, false, true, false, false } },
      dim0 = 1,
      dim1 = -1,
      out = { shape = { 2, 2, 3 }, data = { true, false, false, false, true, false, true, false, false, false, true, false } } },
    { a = { shape = {}, data = { true } }, dim0 = 0, dim1 = -1, out = { shape = {}, data = { true } } },
  },
}

op {
  name = "bool_permute",
  id = 18,
  family = "unary",
  doc = "Returns a bool tensor whose dimension i is dimension perm[i] of a (negative entries count from the end, as in PyTorch).",
  args = { "bool a", "dims perm" },
  returns = "bool",
  shape = "permute(a, perm)",
  decompose = "int_greater_elem(int_permute(bool_into_int(a), perm), 0)",
  examples = {
    { a = { shape = { 2, 3, 4 }, data = { true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false } },
      perm = { 2, 0, 1 },
      out = { shape = { 4, 2, 3 }, data = { true, false, false, true, false, false, false, false, true, false, false, true, false, true, false, false, true, false, true, false, false, true, false, false } } },
    { a = { shape = { 2, 3 }, data = { false, false, true, false, false, true } }, perm = { 1, 0 },
      out = { shape = { 3, 2 }, data = { false, false, false, false, true, true } } },
    { a = { shape = { 2, 3 }, data = { true, false, false, true, true, false } }, perm = { -1, -2 },
      out = { shape = { 3, 2 }, data = { true, true, false, true, false, false } } },
  },
}

op {
  name = "bool_expand",
  id = 19,
  family = "unary",
  doc = "Broadcasts a bool tensor to shape: size-1 dims repeat, -1 keeps a size, new dims go in front.",
  args = { "bool a", "shape shape" },
  returns = "bool",
  shape = "expand(a, shape)",
  -- through 0/1 ints: int_expand, then back to bool by comparing with 1
  decompose = { "e = int_expand(bool_into_int(a), shape)", "int_equal(e, int_full(device(a), shape(e), 1))" },
  examples = {
    { a = { shape = { 3, 1 }, data = { false, false, true } }, shape = { 2, 3, 2 },
      out = { shape = { 2, 3, 2 }, data = { false, false, false, false, true, true, false, false, false, false, true, true } } },
    { a = { shape = { 1, 3 }, data = { false, false, true } }, shape = { 2, -1 },
      out = { shape = { 2, 3 }, data = { false, false, true, false, false, true } } },
    { a = { shape = {}, data = { false } }, shape = { 2, 2 },
      out = { shape = { 2, 2 }, data = { false, false, false, false } } },
    -- zero-size: a size-1 dim expands to 0
    { a = { shape = { 1, 2 }, data = { true, false } }, shape = { 0, 2 },
      out = { shape = { 0, 2 }, data = {} } },
  },
}

op {
  name = "bool_slice",
  id = 20,
  family = "unary",
  doc = "Returns the sub-tensor [starts[i], ends[i]) along each of the first len(starts) dims of a bool tensor (a negative bound counts from the end of its dim, as in PyTorch).",
  args = { "bool a", "dims starts", "dims ends" },
  returns = "bool",
  shape = "slice(a, starts, ends)",
  decompose = "int_greater_elem(int_slice(bool_into_int(a), starts, ends), 0)",
  semantics = "a bound outside its dim (after a negative one is counted from the end) is an error, where PyTorch's indexing clamps it",
  examples = {
    { a = { shape = { 3, 4 }, data = { true, false, false, true, false, false, true, false, false, true, false, false } },
      starts = { 1, 1 },
      ends = { 3, 3 },
      out = { shape = { 2, 2 }, data = { false, true, true, false } } },
    { a = { shape = { 3, 4 }, data = { true, false, false, true, false, false, true, false, false, true, false, false } },
      starts = { 1 },
      ends = { 2 },
      out = { shape = { 1, 4 }, data = { false, false, true, false } } },
    { a = { shape = { 2, 3, 2 }, data = { true, false, false, true, false, false, true, false, false, true, false, false } },
      starts = { 0, 1 },
      ends = { 2, 3 },
      out = { shape = { 2, 2, 2 }, data = { false, true, false, false, false, true, false, false } } },
    -- zero-size: a range of length 0
    { a = { shape = { 2, 2 }, data = { true, false, false, true } }, starts = { 0, 2 }, ends = { 2, 2 },
      out = { shape = { 2, 0 }, data = {} } },
  },
}

op {
  name = "bool_slice_assign",
  id = 71,
  family = "binary",
  doc = "Returns a copy of a bool tensor a whose slice [starts, ends) is replaced by value (a negative bound counts from the end of its dim).",
  args = { "bool a", "bool value", "dims starts", "dims ends" },
  returns = "bool",
  shape = "slice_assign(a, value, starts, ends)",
  decompose = "int_greater_elem(int_slice_assign(bool_into_int(a), bool_into_int(value), starts, ends), 0)",
  semantics = "a bound outside its dim (after a negative one is counted from the end) is an error, where PyTorch's indexing clamps it",
  examples = {
    { a = { shape = { 3, 4 }, data = { true, false, false, true, false, false, true, false, false, true, false, false } },
      value = { shape = { 2, 2 }, data = { false, false, false, false } },
      starts = { 1, 1 },
      ends = { 3, 3 },
      out = { shape = { 3, 4 }, data = { true, false, false, true, false, false, false, false, false, false, false, false } } },
    { a = { shape = { 3, 4 }, data = { true, false, false, true, false, false, true, false, false, true, false, false } },
      value = { shape = { 1, 4 }, data = { false, true, false, true } },
      starts = { 2 },
      ends = { 3 },
      out = { shape = { 3, 4 }, data = { true, false, false, true, false, false, true, false, false, true, false, true } } },
    -- zero-size: empty a, empty value
    { a = { shape = { 0, 2 }, data = {} }, value = { shape = { 0, 2 }, data = {} }, starts = { 0 }, ends = { 0 },
      out = { shape = { 0, 2 }, data = {} } },
  },
}

op {
  name = "bool_cat",
  id = 89,
  family = "multi",
  doc = "Concatenates bool tensors along dim (negative dims count from the end); all other sizes must agree, and 0-d tensors cannot be concatenated.",
  args = { "bools xs", "dim dim" },
  returns = "bool",
  shape = "cat(xs, dim)",
  examples = {
    { xs = { { shape = { 2, 1 }, data = { false, false } }, { shape = { 2, 2 }, data = { true, false, false, true } } },
      dim = 1,
      out = { shape = { 2, 3 }, data = { false, true, false, false, false, true } } },
    { xs = { { shape = { 2, 2 }, data = { true, false, false, true } }, { shape = { 1, 2 }, data = { false, false } }, { shape = { 2, 2 }, data = { true, false, false, true } } },
      dim = 0,
      out = { shape = { 5, 2 }, data = { true, false, false, true, false, false, true, false, false, true } } },
    { xs = { { shape = { 2, 1, 2 }, data = { false, false, true, false } }, { shape = { 2, 2, 2 }, data = { false, true, false, false, true, false, false, true } } },
      dim = -2,
      out = { shape = { 2, 3, 2 }, data = { false, false, false, true, false, false, true, false, true, false, false, true } } },
    -- zero-size: [0] is skipped whatever the other shapes (PyTorch)
    { xs = { { shape = { 0 }, data = {} }, { shape = { 1, 2 }, data = { true, false } } }, dim = 1,
      out = { shape = { 1, 2 }, data = { true, false } } },
  },
}
