-- More layout ops (issue 10): flip, repeat_dim, transpose, narrow, stack, unfold, pad,
-- cross, and the triangular masks; PyTorch's semantics, burn's names. Results are new
-- contiguous tensors.

op {
  name = "float_flip",
  id = 320,
  family = "unary_float",
  doc = "Reverses a float tensor along each of the dims in axes (torch.flip; negative dims count from the end, none may repeat).",
  args = { "float a", "dims axes" },
  returns = "float",
  shape = "flip(a, axes)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 0, 0.5, 1, 1.5, 2, 2.5 } }, axes = { 1 },
      out = { shape = { 2, 3 }, data = { 1, 0.5, 0, 2.5, 2, 1.5 } } },
    { a = { shape = { 2, 3 }, data = { 0, 0.5, 1, 1.5, 2, 2.5 } }, axes = { 0, -1 },
      out = { shape = { 2, 3 }, data = { 2.5, 2, 1.5, 1, 0.5, 0 } } },
    { a = { shape = { 2, 2, 2 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5 } }, axes = { 0 },
      out = { shape = { 2, 2, 2 }, data = { 2, 2.5, 3, 3.5, 0, 0.5, 1, 1.5 } } },
    { a = { shape = { 3 }, data = { -1, 2, 4 } }, axes = {},
      out = { shape = { 3 }, data = { -1, 2, 4 } } },
  },
  backward = { a = "flip(grad, axes)" },
  bound = "memory",
}

op {
  name = "int_flip",
  id = 321,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Reverses an int tensor along each of the dims in axes (torch.flip).",
  args = { "int a", "dims axes" },
  returns = "int",
  shape = "flip(a, axes)",
  examples = {
    { a = { shape = { 2, 3 }, data = { -4, -3, -2, -1, 0, 1 } }, axes = { 1 },
      out = { shape = { 2, 3 }, data = { -2, -3, -4, 1, 0, -1 } } },
    { a = { shape = { 2, 3 }, data = { -4, -3, -2, -1, 0, 1 } }, axes = { -2 },
      out = { shape = { 2, 3 }, data = { -1, 0, 1, -4, -3, -2 } } },
  },
}

op {
  name = "bool_flip",
  id = 322,
  family = "unary",
  doc = "Reverses a bool tensor along each of the dims in axes (torch.flip).",
  args = { "bool a", "dims axes" },
  returns = "bool",
  shape = "flip(a, axes)",
  decompose = "int_greater_elem(int_flip(bool_into_int(a), axes), 0)",
  examples = {
    { a = { shape = { 2, 3 }, data = { true, false, false, false, false, true } }, axes = { 1 },
      out = { shape = { 2, 3 }, data = { false, false, true, true, false, false } } },
  },
}

op {
  name = "float_repeat_dim",
  id = 323,
  family = "unary_float",
  doc = "Repeats a float tensor times times along dim, whole blocks one after another (like torch.Tensor.repeat on one dim). A 0-d a (dim 0 or -1) repeats as [1], giving [times] (torch.tensor(x).repeat(times)).",
  args = { "float a", "dim dim", "i64 times" },
  returns = "float",
  shape = "repeat_dim(a, dim, times)",
  -- float_select with the indices 0 .. n-1 times over; adding a [1] of -0 (exact) makes a 0-d
  -- a the [1] that repeats
  decompose = {
    "b = a + float_full(device(a), array(1), -0.0)",
    "n = size(b, dim)",
    "idx = int_reshape(int_expand(int_reshape(int_arange(device(a), 0, n, 1), array(1, n)), array(times, n)), array(n * times))",
    "float_select(b, dim, idx)",
  },
  examples = {
    { a = { shape = { 2, 2 }, data = { 0.5, 1, 1.5, 2 } }, dim = 0, times = 2,
      out = { shape = { 4, 2 }, data = { 0.5, 1, 1.5, 2, 0.5, 1, 1.5, 2 } } },
    { a = { shape = { 2, 2 }, data = { 0.5, 1, 1.5, 2 } }, dim = -1, times = 3,
      out = { shape = { 2, 6 }, data = { 0.5, 1, 0.5, 1, 0.5, 1, 1.5, 2, 1.5, 2, 1.5, 2 } } },
    { a = { shape = { 2, 2 }, data = { 0.5, 1, 1.5, 2 } }, dim = 1, times = 1,
      out = { shape = { 2, 2 }, data = { 0.5, 1, 1.5, 2 } } },
    -- 0-d a repeats as [1], as torch.tensor(2.5).repeat(3)
    { a = { shape = {}, data = { 2.5 } }, dim = 0, times = 3,
      out = { shape = { 3 }, data = { 2.5, 2.5, 2.5 } } },
  },
  backward = { a = "repeat_dim_grad(grad, a, dim, times)" },
  bound = "memory",
}

op {
  name = "int_repeat_dim",
  id = 324,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Repeats an int tensor times times along dim, whole blocks one after another. A 0-d a (dim 0 or -1) repeats as [1], giving [times].",
  args = { "int a", "dim dim", "i64 times" },
  returns = "int",
  shape = "repeat_dim(a, dim, times)",
  -- as float_repeat_dim, with int_select
  decompose = {
    "b = a + int_full(device(a), array(1), 0)",
    "n = size(b, dim)",
    "idx = int_reshape(int_expand(int_reshape(int_arange(device(a), 0, n, 1), array(1, n)), array(times, n)), array(n * times))",
    "int_select(b, dim, idx)",
  },
  examples = {
    { a = { shape = { 1, 2 }, data = { -1, 7 } }, dim = 0, times = 3,
      out = { shape = { 3, 2 }, data = { -1, 7, -1, 7, -1, 7 } } },
    { a = { shape = { 1, 2 }, data = { -1, 7 } }, dim = 1, times = 2,
      out = { shape = { 1, 4 }, data = { -1, 7, -1, 7 } } },
    { a = { shape = {}, data = { -4 } }, dim = -1, times = 2,
      out = { shape = { 2 }, data = { -4, -4 } } },
  },
}

op {
  name = "bool_repeat_dim",
  id = 325,
  family = "unary",
  doc = "Repeats a bool tensor times times along dim, whole blocks one after another. A 0-d a (dim 0 or -1) repeats as [1], giving [times].",
  args = { "bool a", "dim dim", "i64 times" },
  returns = "bool",
  shape = "repeat_dim(a, dim, times)",
  decompose = "int_greater_elem(int_repeat_dim(bool_into_int(a), dim, times), 0)",
  examples = {
    { a = { shape = { 2, 1 }, data = { true, false } }, dim = 1, times = 2,
      out = { shape = { 2, 2 }, data = { true, true, false, false } } },
    { a = { shape = {}, data = { true } }, dim = 0, times = 2,
      out = { shape = { 2 }, data = { true, true } } },
  },
}

op {
  name = "float_transpose",
  id = 326,
  family = "unary_float",
  doc = "Exchanges the last two dims of a float tensor of at least 2 dims (torch.Tensor.mT).",
  args = { "float a" },
  returns = "float",
  shape = "transpose(a)",
  decompose = "float_swap_dims(a, -2, -1)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 0.5, 1, 1.5, 2, 2.5, 3 } },
      out = { shape = { 3, 2 }, data = { 0.5, 2, 1, 2.5, 1.5, 3 } } },
    { a = { shape = { 2, 1, 3 }, data = { 0, 0.5, 1, 1.5, 2, 2.5 } },
      out = { shape = { 2, 3, 1 }, data = { 0, 0.5, 1, 1.5, 2, 2.5 } } },
    { a = { shape = { 2, 2, 2 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5 } },
      out = { shape = { 2, 2, 2 }, data = { 0, 1, 0.5, 1.5, 2, 3, 2.5, 3.5 } } },
  },
  backward = { a = "transpose(grad)" },
  bound = "memory",
}

op {
  name = "int_transpose",
  id = 327,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Exchanges the last two dims of an int tensor of at least 2 dims.",
  args = { "int a" },
  returns = "int",
  shape = "transpose(a)",
  decompose = "int_swap_dims(a, -2, -1)",
  examples = {
    { a = { shape = { 2, 3 }, data = { -4, -3, -2, -1, 0, 1 } },
      out = { shape = { 3, 2 }, data = { -4, -1, -3, 0, -2, 1 } } },
  },
}

op {
  name = "bool_transpose",
  id = 328,
  family = "unary",
  doc = "Exchanges the last two dims of a bool tensor of at least 2 dims.",
  args = { "bool a" },
  returns = "bool",
  shape = "transpose(a)",
  decompose = "bool_swap_dims(a, -2, -1)",
  examples = {
    { a = { shape = { 2, 3 }, data = { true, true, false, false, false, true } },
      out = { shape = { 3, 2 }, data = { true, false, true, false, false, true } } },
  },
}

op {
  name = "float_narrow",
  id = 329,
  family = "unary_float",
  doc = "Returns entries start .. start + length - 1 of a float tensor along dim (torch.narrow; a negative start counts from the end).",
  args = { "float a", "dim dim", "i64 start", "i64 length" },
  returns = "float",
  shape = "narrow(a, dim, start, length)",
  -- dim moved first, sliced there, moved back; a negative start counted from the end first
  -- (n + idiv(1, n + 1) is max(n, 1), so that an empty dim divides safely)
  decompose = {
    "n = size(a, dim)",
    "m = n + idiv(1, n + 1)",
    "s = start - idiv(start, m) * m",
    "float_swap_dims(float_slice(float_swap_dims(a, 0, dim), array(s), array(s + length)), 0, dim)",
  },
  examples = {
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } }, dim = 0, start = 1, length = 2,
      out = { shape = { 2, 4 }, data = { 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } } },
    -- start -3 of 4 is 1
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } }, dim = 1, start = -3, length = 2,
      out = { shape = { 3, 2 }, data = { 0.5, 1, 2.5, 3, 4.5, 5 } } },
    { a = { shape = { 3, 4 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5 } }, dim = -1, start = 3, length = 1,
      out = { shape = { 3, 1 }, data = { 1.5, 3.5, 5.5 } } },
  },
  backward = { a = "narrow_grad(grad, a, dim, start)" },
  bound = "memory",
}

op {
  name = "int_narrow",
  id = 330,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Returns entries start .. start + length - 1 of an int tensor along dim (torch.narrow).",
  args = { "int a", "dim dim", "i64 start", "i64 length" },
  returns = "int",
  shape = "narrow(a, dim, start, length)",
  -- as float_narrow, with int_swap_dims and int_slice
  decompose = {
    "n = size(a, dim)",
    "m = n + idiv(1, n + 1)",
    "s = start - idiv(start, m) * m",
    "int_swap_dims(int_slice(int_swap_dims(a, 0, dim), array(s), array(s + length)), 0, dim)",
  },
  examples = {
    { a = { shape = { 2, 3 }, data = { -4, -3, -2, -1, 0, 1 } }, dim = 1, start = 1, length = 2,
      out = { shape = { 2, 2 }, data = { -3, -2, 0, 1 } } },
  },
}

op {
  name = "bool_narrow",
  id = 331,
  family = "unary",
  doc = "Returns entries start .. start + length - 1 of a bool tensor along dim (torch.narrow).",
  args = { "bool a", "dim dim", "i64 start", "i64 length" },
  returns = "bool",
  shape = "narrow(a, dim, start, length)",
  decompose = "int_greater_elem(int_narrow(bool_into_int(a), dim, start, length), 0)",
  examples = {
    { a = { shape = { 3, 2 }, data = { true, false, false, true, true, true } }, dim = 0, start = 1, length = 2,
      out = { shape = { 2, 2 }, data = { false, true, true, true } } },
  },
}

op {
  name = "float_stack",
  id = 332,
  family = "multi",
  doc = "Stacks float tensors of one shape along a new dim at position dim (torch.stack; dim in [-(ndim + 1), ndim]).",
  args = { "floats xs", "dim dim" },
  returns = "float",
  shape = "stack(xs, dim)",
  examples = {
    { xs = { { shape = { 2 }, data = { 0.5, 1 } }, { shape = { 2 }, data = { 1.5, 2 } } }, dim = 0,
      out = { shape = { 2, 2 }, data = { 0.5, 1, 1.5, 2 } } },
    { xs = { { shape = { 2 }, data = { 0.5, 1 } }, { shape = { 2 }, data = { 1.5, 2 } } }, dim = 1,
      out = { shape = { 2, 2 }, data = { 0.5, 1.5, 1, 2 } } },
    -- dim -1 of a 3-d result is 2: out[i][0][k] = xs[k][i][0]
    { xs = { { shape = { 2, 1 }, data = { 1, 2 } }, { shape = { 2, 1 }, data = { 3, 4 } }, { shape = { 2, 1 }, data = { 5, 6 } } },
      dim = -1,
      out = { shape = { 2, 1, 3 }, data = { 1, 3, 5, 2, 4, 6 } } },
    { xs = { { shape = {}, data = { 2.5 } }, { shape = {}, data = { -1 } } }, dim = 0,
      out = { shape = { 2 }, data = { 2.5, -1 } } },
  },
  backward = { xs = "stack_slice(grad, dim)" },
  bound = "memory",
}

op {
  name = "int_stack",
  id = 333,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "multi",
  doc = "Stacks int tensors of one shape along a new dim at position dim (torch.stack).",
  args = { "ints xs", "dim dim" },
  returns = "int",
  shape = "stack(xs, dim)",
  examples = {
    { xs = { { shape = { 2 }, data = { -1, 2 } }, { shape = { 2 }, data = { 3, -4 } } }, dim = 1,
      out = { shape = { 2, 2 }, data = { -1, 3, 2, -4 } } },
  },
}

op {
  name = "bool_stack",
  id = 334,
  family = "multi",
  doc = "Stacks bool tensors of one shape along a new dim at position dim (torch.stack).",
  args = { "bools xs", "dim dim" },
  returns = "bool",
  shape = "stack(xs, dim)",
  examples = {
    { xs = { { shape = { 2 }, data = { true, false } }, { shape = { 2 }, data = { false, false } } }, dim = 0,
      out = { shape = { 2, 2 }, data = { true, false, false, false } } },
  },
}

op {
  name = "float_unfold",
  id = 335,
  family = "unary_float",
  doc = "Sliding windows of a float tensor along dim (torch.Tensor.unfold): dim becomes the window count (n - size) / step + 1 and a new last dim of length size holds each window. A 0-d a (dim 0 or -1) has one window of size 0 or 1: the result is [size], as in PyTorch.",
  args = { "float a", "dim dim", "i64 size", "i64 step" },
  returns = "float",
  shape = "unfold(a, dim, size, step)",
  examples = {
    { a = { shape = { 5 }, data = { 0.5, 1, 1.5, 2, 2.5 } }, dim = 0, size = 2, step = 1,
      out = { shape = { 4, 2 }, data = { 0.5, 1, 1, 1.5, 1.5, 2, 2, 2.5 } } },
    -- (5 - 2) / 2 + 1 = 2 windows; the last element is in none
    { a = { shape = { 5 }, data = { 0.5, 1, 1.5, 2, 2.5 } }, dim = 0, size = 2, step = 2,
      out = { shape = { 2, 2 }, data = { 0.5, 1, 1.5, 2 } } },
    -- one window of both rows: out[0][j][k] = a[k][j]
    { a = { shape = { 2, 3 }, data = { 0, 0.5, 1, 1.5, 2, 2.5 } }, dim = 0, size = 2, step = 1,
      out = { shape = { 1, 3, 2 }, data = { 0, 1.5, 0.5, 2, 1, 2.5 } } },
    { a = { shape = { 2, 3 }, data = { 0, 0.5, 1, 1.5, 2, 2.5 } }, dim = -1, size = 2, step = 1,
      out = { shape = { 2, 2, 2 }, data = { 0, 0.5, 0.5, 1, 1.5, 2, 2, 2.5 } } },
    -- 0-d a (dim 0 or -1): one window of size 0 or 1, shape [size], as in PyTorch
    { a = { shape = {}, data = { 1.5 } }, dim = 0, size = 1, step = 1,
      out = { shape = { 1 }, data = { 1.5 } } },
    { a = { shape = {}, data = { 1.5 } }, dim = -1, size = 0, step = 2,
      out = { shape = { 0 }, data = {} } },
  },
  backward = { a = "unfold_grad(grad, a, dim, size, step)" },
  bound = "memory",
}

op {
  name = "float_pad",
  id = 336,
  family = "unary_float",
  doc = "Pads a float tensor with value: pads holds (before, after) pairs from the last dim backwards, as torch.nn.functional.pad in constant mode; pads are >= 0 (no cropping).",
  args = { "float a", "dims pads", "f32 value" },
  returns = "float",
  shape = "pad(a, pads)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } }, pads = { 1, 0 }, value = 0,
      out = { shape = { 2, 3 }, data = { 0, 1, 2, 0, 3, 4 } } },
    -- last dim: 0 before, 1 after; first dim: 1 before, 0 after
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } }, pads = { 0, 1, 1, 0 }, value = -1,
      out = { shape = { 3, 3 }, data = { -1, -1, -1, 1, 2, -1, 3, 4, -1 } } },
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } }, pads = {}, value = 5,
      out = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } } },
    { a = { shape = { 3 }, data = { 0.5, 1, 1.5 } }, pads = { 2, 1 }, value = "inf",
      out = { shape = { 6 }, data = { "inf", "inf", 0.5, 1, 1.5, "inf" } } },
  },
  backward = { a = "pad_grad(grad, a, pads)" },
  bound = "memory",
}

op {
  name = "bool_tril_mask",
  id = 337,
  family = "creation",
  doc = "Creates burn's tril_mask: a bool tensor true where an element lies outside the lower triangle of the last two dims, i.e. where column - row > offset (the entries torch.tril(x, offset) zeroes).",
  args = { "device device", "shape shape", "i64 offset" },
  returns = "bool",
  shape = "tri_mask(shape)",
  -- column - row (an [R, C] int tensor from two aranges) compared with offset, expanded to shape
  decompose = {
    "r = int_reshape(int_arange(device, 0, at(shape, -2), 1), array(at(shape, -2), 1))",
    "d = int_arange(device, 0, at(shape, -1), 1) - r",
    "bool_expand(int_greater(d, int_full(device, shape(d), offset)), shape)",
  },
  examples = {
    { shape = { 3, 3 }, offset = 0,
      out = { shape = { 3, 3 }, data = { false, true, true, false, false, true, false, false, false } } },
    { shape = { 2, 3 }, offset = 1,
      out = { shape = { 2, 3 }, data = { false, false, true, false, false, false } } },
    -- column - row > -1: all but (1, 0) of each matrix
    { shape = { 2, 2, 2 }, offset = -1,
      out = { shape = { 2, 2, 2 }, data = { true, true, false, true, true, true, false, true } } },
  },
}

op {
  name = "bool_triu_mask",
  id = 338,
  family = "creation",
  doc = "Creates burn's triu_mask: a bool tensor true where an element lies outside the upper triangle of the last two dims, i.e. where column - row < offset (the entries torch.triu(x, offset) zeroes).",
  args = { "device device", "shape shape", "i64 offset" },
  returns = "bool",
  shape = "tri_mask(shape)",
  -- as bool_tril_mask, true where column - row < offset
  decompose = {
    "r = int_reshape(int_arange(device, 0, at(shape, -2), 1), array(at(shape, -2), 1))",
    "d = int_arange(device, 0, at(shape, -1), 1) - r",
    "bool_expand(int_greater(int_full(device, shape(d), offset), d), shape)",
  },
  examples = {
    { shape = { 3, 3 }, offset = 0,
      out = { shape = { 3, 3 }, data = { false, false, false, true, false, false, true, true, false } } },
    { shape = { 2, 3 }, offset = 1,
      out = { shape = { 2, 3 }, data = { true, false, false, true, true, false } } },
    { shape = { 3, 2 }, offset = -1,
      out = { shape = { 3, 2 }, data = { false, false, false, false, true, false } } },
  },
}

op {
  name = "float_cross",
  id = 339,
  family = "binary_float",
  doc = "Cross product of 3-vectors along dim of two broadcasting float tensors (torch.linalg.cross); both have size 3 in dim.",
  args = { "float a", "float b", "dim dim" },
  returns = "float",
  shape = "cross(a, b, dim)",
  -- Both broadcast to the result's shape (the product's), then the components rotated by
  -- one and two along dim: repeat_dim twice and take 3 from 1 or 2. Component i is
  -- a[i+1] b[i+2] - a[i+2] b[i+1], the kernel's products and difference exactly.
  decompose = {
    "s = shape(a * b)",
    "ra = float_repeat_dim(float_expand(a, s), dim, 2)",
    "rb = float_repeat_dim(float_expand(b, s), dim, 2)",
    "float_narrow(ra, dim, 1, 3) * float_narrow(rb, dim, 2, 3) - float_narrow(ra, dim, 2, 3) * float_narrow(rb, dim, 1, 3)",
  },
  examples = {
    { a = { shape = { 3 }, data = { 1, 0, 0 } }, b = { shape = { 3 }, data = { 0, 1, 0 } }, dim = 0,
      out = { shape = { 3 }, data = { 0, 0, 1 } } },
    -- (2*6 - 3*5, 3*4 - 1*6, 1*5 - 2*4); (0.5*1 - 2*-2, 2*3 - -1*1, -1*-2 - 0.5*3)
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, -1, 0.5, 2 } }, b = { shape = { 2, 3 }, data = { 4, 5, 6, 3, -2, 1 } },
      dim = 1,
      out = { shape = { 2, 3 }, data = { -3, 6, -3, 4.5, 7, 0.5 } } },
    -- the same vectors as columns
    { a = { shape = { 3, 2 }, data = { 1, -1, 2, 0.5, 3, 2 } }, b = { shape = { 3, 2 }, data = { 4, 3, 5, -2, 6, 1 } },
      dim = 0,
      out = { shape = { 3, 2 }, data = { -3, 4.5, 6, 7, -3, 0.5 } } },
    -- x cross y = z, x cross z = -y
    { a = { shape = { 3 }, data = { 1, 0, 0 } }, b = { shape = { 2, 3 }, data = { 0, 1, 0, 0, 0, 1 } }, dim = -1,
      out = { shape = { 2, 3 }, data = { 0, 0, 1, 0, -1, 0 } } },
  },
  backward = { a = "cross(b, grad, dim)", b = "cross(grad, a, dim)" },
  bound = "memory",
}
