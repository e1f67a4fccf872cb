-- Indexing ops (issue 10): gather, scatter_add, select (index_select) and select_add
-- (index_add) on float, int and bool tensors, with PyTorch's semantics.
--
-- Argument order: the tensor first, then dim, then the int indices (then the value), as in
-- PyTorch (torch.gather(input, dim, index)) and burn's select/select_add. burn's
-- float_gather(dim, tensor, indices) and float_scatter_add(dim, tensor, indices, value) put
-- dim first; here the tensor comes first, because a family's first argument is the tensor
-- that selects the backend. Index values must lie in [0, size of dim) (no negative
-- indices, as in PyTorch); any other value is TD_E_RANGE, naming the op, the index and the
-- dim, and no result is returned. The generated entry checks the values (index_range)
-- before any backend runs, so the check holds whatever the result's size (an empty result
-- runs no kernel) and on every backend, composites included.
-- burn's scatter is a sum (its float_scatter_add, formerly float_scatter), so the ops here
-- are named *_scatter_add and *_select_add: there is no assigning scatter.

op {
  name = "float_gather",
  id = 300,
  family = "unary_float",
  doc = "Gathers values of a float tensor along dim: out[i][j][k] = a[indices[i][j][k]][j][k] for dim 0 (torch.gather); indices has a's number of dims, may not be larger than a outside dim, and gives the result's shape. A 0-d a or indices counts as one dim of size 1 (dim 0 or -1), as in PyTorch.",
  args = { "float a", "dim dim", "int indices" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "float",
  shape = "gather(a, dim, indices)",
  examples = {
    -- row 0 takes columns 2, 0; row 1 takes column 1 twice
    { a = { shape = { 2, 3 }, data = { 1.5, -2, 3, 4, 5.5, -6 } }, dim = 1,
      indices = { shape = { 2, 2 }, data = { 2, 0, 1, 1 } },
      out = { shape = { 2, 2 }, data = { 3, 1.5, 5.5, 5.5 } } },
    -- column j takes row indices[0][j]: a[1][0], a[0][1], a[1][2]
    { a = { shape = { 2, 3 }, data = { 1.5, -2, 3, 4, 5.5, -6 } }, dim = 0,
      indices = { shape = { 1, 3 }, data = { 1, 0, 1 } },
      out = { shape = { 1, 3 }, data = { 4, -2, -6 } } },
    { a = { shape = { 2, 2, 2 }, data = { 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5 } }, dim = -1,
      indices = { shape = { 2, 2, 1 }, data = { 1, 0, 0, 1 } },
      out = { shape = { 2, 2, 1 }, data = { 0.5, 1, 2, 3.5 } } },
    -- 0-d a and indices (torch.gather(torch.tensor(5.5), 0, torch.tensor(0))): a 0-d result
    { a = { shape = {}, data = { 5.5 } }, dim = 0, indices = { shape = {}, data = { 0 } },
      out = { shape = {}, data = { 5.5 } } },
    -- 0-d a with 1-d indices: indices' shape, every element a itself
    { a = { shape = {}, data = { 5.5 } }, dim = -1, indices = { shape = { 3 }, data = { 0, 0, 0 } },
      out = { shape = { 3 }, data = { 5.5, 5.5, 5.5 } } },
    -- 0-d indices into a 1-d a: a[2], 0-d
    { a = { shape = { 3 }, data = { 1.5, -2, 3 } }, dim = 0, indices = { shape = {}, data = { 2 } },
      out = { shape = {}, data = { 3 } } },
  },
  backward = { a = "gather_grad(grad, a, dim, indices)" },
  bound = "memory",
}

op {
  name = "float_scatter_add",
  id = 301,
  family = "unary_float",
  doc = "Returns a copy of a float tensor a with value[i][j] added at a[i][indices[i][j]] for dim 1 (torch.scatter_add): repeated indices sum; indices is no larger than value anywhere and than a outside dim; elements of value beyond indices' shape are unused. A 0-d a, indices or value counts as one dim of size 1 (dim 0 or -1), as in PyTorch.",
  args = { "float a", "dim dim", "int indices", "float value" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "float",
  shape = "scatter(a, dim, indices, value)",
  semantics = "sums in row-major order of indices, so results are deterministic",
  examples = {
    -- row 0: a[0][0] += 0.5, a[0][2] += 1.5; row 1: a[1][1] += 2 - 3; the 9s lie beyond indices
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      indices = { shape = { 2, 2 }, data = { 0, 2, 1, 1 } },
      value = { shape = { 2, 3 }, data = { 0.5, 1.5, 9, 2, -3, 9 } },
      out = { shape = { 2, 3 }, data = { 1.5, 2, 4.5, 4, 4, 6 } } },
    -- out[2][0] += 1 + 3, out[0][1] += 2, out[2][1] += 4
    { a = { shape = { 3, 2 }, data = { 1, 1, 1, 1, 1, 1 } }, dim = 0,
      indices = { shape = { 2, 2 }, data = { 2, 0, 2, 2 } },
      value = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } },
      out = { shape = { 3, 2 }, data = { 1, 3, 1, 1, 5, 5 } } },
    { a = { shape = { 2, 2 }, data = { 0, 0, 0, 0 } }, dim = -1,
      indices = { shape = { 1, 1 }, data = { 1 } },
      value = { shape = { 2, 2 }, data = { 7, 8, 9, 10 } },
      out = { shape = { 2, 2 }, data = { 0, 7, 0, 0 } } },
    -- 0-d a: 1 + 2 + 3 (both indices are 0)
    { a = { shape = {}, data = { 1 } }, dim = 0, indices = { shape = { 2 }, data = { 0, 0 } },
      value = { shape = { 2 }, data = { 2, 3 } }, out = { shape = {}, data = { 6 } } },
    -- 0-d indices and value into a 1-d a: a[1] += 10
    { a = { shape = { 3 }, data = { 1, 2, 3 } }, dim = -1, indices = { shape = {}, data = { 1 } },
      value = { shape = {}, data = { 10 } }, out = { shape = { 3 }, data = { 1, 12, 3 } } },
  },
  backward = { a = "grad", value = "scatter_value_grad(grad, value, dim, indices)" },
  bound = "memory",
}

op {
  name = "float_select",
  id = 302,
  family = "unary_float",
  doc = "Selects the entries indices (a 0-d or 1-d int tensor) of a float tensor along dim (torch.index_select); dim of the result has the length of indices. A 0-d a (dim 0 or -1) takes exactly one index and gives a 0-d result, as in PyTorch.",
  args = { "float a", "dim dim", "int indices" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "float",
  shape = "select(a, dim, indices)",
  examples = {
    { a = { shape = { 3, 2 }, data = { 1.5, -2, 3, 4, 5.5, -6 } }, dim = 0,
      indices = { shape = { 4 }, data = { 2, 0, 2, 1 } },
      out = { shape = { 4, 2 }, data = { 5.5, -6, 1.5, -2, 5.5, -6, 3, 4 } } },
    { a = { shape = { 2, 3 }, data = { 1.5, -2, 3, 4, 5.5, -6 } }, dim = -1,
      indices = { shape = { 2 }, data = { 2, 2 } },
      out = { shape = { 2, 2 }, data = { 3, 3, -6, -6 } } },
    { a = { shape = { 2, 3 }, data = { 1.5, -2, 3, 4, 5.5, -6 } }, dim = 1,
      indices = { shape = {}, data = { 1 } },
      out = { shape = { 2, 1 }, data = { -2, 5.5 } } },
    -- 0-d a takes one index (0-d or [1]) and gives a 0-d result, as torch.index_select
    { a = { shape = {}, data = { 2.5 } }, dim = 0, indices = { shape = { 1 }, data = { 0 } },
      out = { shape = {}, data = { 2.5 } } },
    { a = { shape = {}, data = { 2.5 } }, dim = -1, indices = { shape = {}, data = { 0 } },
      out = { shape = {}, data = { 2.5 } } },
  },
  backward = { a = "select_grad(grad, a, dim, indices)" },
  bound = "memory",
}

op {
  name = "float_select_add",
  id = 303,
  family = "unary_float",
  doc = "Returns a copy of a float tensor a with the slice k of value along dim added to the slice indices[k] of a (torch.index_add); value is a's shape with dim of the length of indices, and repeated indices sum. A 0-d a or value counts as one dim of size 1 (dim 0 or -1), as in PyTorch.",
  args = { "float a", "dim dim", "int indices", "float value" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "float",
  shape = "select_add(a, dim, indices, value)",
  -- a scatter_add along the last dim: indices broadcast to value's shape there ([..., 1] zeros
  -- plus the indices [n]), a 0-d a or value counting as one dim of size 1 as scatter_add does
  decompose = {
    "t = float_swap_dims(a, dim, -1)",
    "ix = int_full(device(a), shape(float_sum_dim(t, -1)), 0) + int_reshape(indices, array(-1))",
    "v = float_reshape(float_swap_dims(value, dim, -1), shape(ix))",
    "float_swap_dims(float_scatter_add(t, -1, ix, v), dim, -1)",
  },
  semantics = "sums in the order of indices, so results are deterministic",
  examples = {
    -- row 2 += {0.5, 1} + {-1, -2}; row 0 += {10, 20}
    { a = { shape = { 3, 2 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 0,
      indices = { shape = { 3 }, data = { 2, 0, 2 } },
      value = { shape = { 3, 2 }, data = { 0.5, 1, 10, 20, -1, -2 } },
      out = { shape = { 3, 2 }, data = { 11, 22, 3, 4, 4.5, 5 } } },
    { a = { shape = { 2, 3 }, data = { 0, 0, 0, 0, 0, 0 } }, dim = -1,
      indices = { shape = { 1 }, data = { 1 } },
      value = { shape = { 2, 1 }, data = { 2.5, -1 } },
      out = { shape = { 2, 3 }, data = { 0, 2.5, 0, 0, -1, 0 } } },
    -- 0-d a: 1 + 2.5
    { a = { shape = {}, data = { 1 } }, dim = 0, indices = { shape = { 1 }, data = { 0 } },
      value = { shape = {}, data = { 2.5 } }, out = { shape = {}, data = { 3.5 } } },
    -- 0-d a with two indices: 1 + 2 + 3
    { a = { shape = {}, data = { 1 } }, dim = -1, indices = { shape = { 2 }, data = { 0, 0 } },
      value = { shape = { 2 }, data = { 2, 3 } }, out = { shape = {}, data = { 6 } } },
    -- a 0-d value into a 1-d a at one index: a[2] += 4
    { a = { shape = { 3 }, data = { 0, 0, 0 } }, dim = 0, indices = { shape = {}, data = { 2 } },
      value = { shape = {}, data = { 4 } }, out = { shape = { 3 }, data = { 0, 0, 4 } } },
  },
  backward = { a = "grad", value = "select(grad, dim, indices)" },
  bound = "memory",
}

op {
  name = "int_gather",
  id = 304,
  family = "unary",
  doc = "Gathers values of an int tensor along dim (torch.gather); indices has a's number of dims, may not be larger than a outside dim, and gives the result's shape. A 0-d a or indices counts as one dim of size 1, as in PyTorch.",
  args = { "int a", "dim dim", "int indices" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "int",
  shape = "gather(a, dim, indices)",
  -- exact through float_gather, split in two halves as int_select
  decompose = {
    "lo = int_remainder(a, int_full(device(a), shape(a), 65536))",
    "hi = int_into_float((a - lo) / 65536)",
    "h = float_into_int(float_gather(hi, dim, indices))",
    "h * 65536 + float_into_int(float_gather(int_into_float(lo), dim, indices))",
  },
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -2, 3, 4, 2147483647, -2147483648 } }, dim = 1,
      indices = { shape = { 2, 2 }, data = { 2, 0, 1, 1 } },
      out = { shape = { 2, 2 }, data = { 3, 1, 2147483647, 2147483647 } } },
    { a = { shape = { 2, 3 }, data = { 1, -2, 3, 4, 5, -6 } }, dim = -2,
      indices = { shape = { 1, 3 }, data = { 1, 0, 1 } },
      out = { shape = { 1, 3 }, data = { 4, -2, -6 } } },
    { a = { shape = {}, data = { -7 } }, dim = 0, indices = { shape = { 2 }, data = { 0, 0 } },
      out = { shape = { 2 }, data = { -7, -7 } } },
  },
}

op {
  name = "int_scatter_add",
  id = 305,
  family = "unary",
  doc = "Returns a copy of an int tensor a with value added at the positions indices gives along dim (torch.scatter_add); repeated indices sum, wrapping around in int32. A 0-d a, indices or value counts as one dim of size 1, as in PyTorch.",
  args = { "int a", "dim dim", "int indices", "int value" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "int",
  shape = "scatter(a, dim, indices, value)",
  examples = {
    -- row 0: [0] += 10, [2] -= 20; row 1: [1] += 7 + 8
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      indices = { shape = { 2, 2 }, data = { 0, 2, 1, 1 } },
      value = { shape = { 2, 2 }, data = { 10, -20, 7, 8 } },
      out = { shape = { 2, 3 }, data = { 11, 2, -17, 4, 20, 6 } } },
    -- int32 wraps: 2147483647 + 1
    { a = { shape = { 1 }, data = { 2147483647 } }, dim = 0,
      indices = { shape = { 1 }, data = { 0 } },
      value = { shape = { 1 }, data = { 1 } },
      out = { shape = { 1 }, data = { -2147483648 } } },
    { a = { shape = {}, data = { 5 } }, dim = -1, indices = { shape = {}, data = { 0 } },
      value = { shape = {}, data = { -8 } }, out = { shape = {}, data = { -3 } } },
  },
}

op {
  name = "int_select",
  id = 306,
  family = "unary",
  doc = "Selects the entries indices (a 0-d or 1-d int tensor) of an int tensor along dim (torch.index_select). A 0-d a takes exactly one index and gives a 0-d result, as in PyTorch.",
  args = { "int a", "dim dim", "int indices" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "int",
  shape = "select(a, dim, indices)",
  -- exact through float_select, split in two halves as int_swap_dims
  decompose = {
    "lo = int_remainder(a, int_full(device(a), shape(a), 65536))",
    "hi = int_into_float((a - lo) / 65536)",
    "h = float_into_int(float_select(hi, dim, indices))",
    "h * 65536 + float_into_int(float_select(int_into_float(lo), dim, indices))",
  },
  examples = {
    { a = { shape = { 3, 2 }, data = { 1, -2, 3, 4, 5, -6 } }, dim = 0,
      indices = { shape = { 2 }, data = { 2, 0 } },
      out = { shape = { 2, 2 }, data = { 5, -6, 1, -2 } } },
    { a = { shape = { 3, 2 }, data = { 1, -2, 3, 4, 5, -6 } }, dim = -1,
      indices = { shape = { 3 }, data = { 1, 1, 0 } },
      out = { shape = { 3, 3 }, data = { -2, -2, 1, 4, 4, 3, -6, -6, 5 } } },
    { a = { shape = {}, data = { 9 } }, dim = 0, indices = { shape = { 1 }, data = { 0 } },
      out = { shape = {}, data = { 9 } } },
  },
}

op {
  name = "int_select_add",
  id = 307,
  family = "unary",
  doc = "Returns a copy of an int tensor a with the slice k of value along dim added to the slice indices[k] of a (torch.index_add); repeated indices sum, wrapping around in int32.",
  args = { "int a", "dim dim", "int indices", "int value" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "int",
  shape = "select_add(a, dim, indices, value)",
  examples = {
    -- row 2 += {1, 1} + {-1, -2}; row 0 += {10, 20}
    { a = { shape = { 3, 2 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 0,
      indices = { shape = { 3 }, data = { 2, 0, 2 } },
      value = { shape = { 3, 2 }, data = { 1, 1, 10, 20, -1, -2 } },
      out = { shape = { 3, 2 }, data = { 11, 22, 3, 4, 5, 5 } } },
  },
}

op {
  name = "bool_gather",
  id = 308,
  family = "unary",
  doc = "Gathers values of a bool tensor along dim (torch.gather); indices has a's number of dims, may not be larger than a outside dim, and gives the result's shape. A 0-d a or indices counts as one dim of size 1, as in PyTorch.",
  args = { "bool a", "dim dim", "int indices" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "bool",
  shape = "gather(a, dim, indices)",
  decompose = "int_greater_elem(int_gather(bool_into_int(a), dim, indices), 0)",
  examples = {
    { a = { shape = { 2, 3 }, data = { true, false, false, false, true, true } }, dim = 1,
      indices = { shape = { 2, 2 }, data = { 2, 0, 1, 1 } },
      out = { shape = { 2, 2 }, data = { false, true, true, true } } },
    { a = { shape = {}, data = { true } }, dim = 0, indices = { shape = { 2 }, data = { 0, 0 } },
      out = { shape = { 2 }, data = { true, true } } },
  },
}

op {
  name = "bool_select",
  id = 309,
  family = "unary",
  doc = "Selects the entries indices (a 0-d or 1-d int tensor) of a bool tensor along dim (torch.index_select). A 0-d a takes exactly one index and gives a 0-d result, as in PyTorch.",
  args = { "bool a", "dim dim", "int indices" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "bool",
  shape = "select(a, dim, indices)",
  decompose = "int_greater_elem(int_select(bool_into_int(a), dim, indices), 0)",
  examples = {
    { a = { shape = { 3, 2 }, data = { true, false, false, false, true, true } }, dim = 0,
      indices = { shape = { 2 }, data = { 2, 0 } },
      out = { shape = { 2, 2 }, data = { true, true, true, false } } },
    { a = { shape = {}, data = { true } }, dim = -1, indices = { shape = {}, data = { 0 } },
      out = { shape = {}, data = { true } } },
  },
}

op {
  name = "float_scatter_assign",
  id = 310,
  family = "unary_float",
  doc = "Returns a copy of a float tensor a with value[i][j] written at a[i][indices[i][j]] for dim 1 (torch.scatter with a src tensor); where indices repeat, the last in row-major order of indices wins; shapes as for float_scatter_add. A 0-d a, indices or value counts as one dim of size 1, as in PyTorch.",
  args = { "float a", "dim dim", "int indices", "float value" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "float",
  shape = "scatter(a, dim, indices, value)",
  semantics = "PyTorch leaves the winner of repeated indices unspecified; here the last one wins. As in PyTorch, value's gradient gathers grad at every index, so with repeated indices the overwritten elements get a gradient too",
  examples = {
    -- row 0: [0] = 0.5, [2] = 1.5; row 1: [1] = 2, [0] = -3; the 9s lie beyond indices
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      indices = { shape = { 2, 2 }, data = { 0, 2, 1, 0 } },
      value = { shape = { 2, 3 }, data = { 0.5, 1.5, 9, 2, -3, 9 } },
      out = { shape = { 2, 3 }, data = { 0.5, 2, 1.5, -3, 2, 6 } } },
    -- [1] = 7, then [1] = 8, [0] = 9
    { a = { shape = { 3 }, data = { 1, 2, 3 } }, dim = 0,
      indices = { shape = { 3 }, data = { 1, 1, 0 } },
      value = { shape = { 3 }, data = { 7, 8, 9 } },
      out = { shape = { 3 }, data = { 9, 8, 3 } } },
    -- 0-d a: value[0] is written; value is larger than indices
    { a = { shape = {}, data = { 1 } }, dim = 0, indices = { shape = {}, data = { 0 } },
      value = { shape = { 2 }, data = { 7, 8 } }, out = { shape = {}, data = { 7 } } },
  },
  backward = { a = "scatter_assign_grad(grad, dim, indices)", value = "scatter_value_grad(grad, value, dim, indices)" },
  bound = "memory",
}

op {
  name = "int_scatter_assign",
  id = 311,
  family = "unary",
  doc = "Returns a copy of an int tensor a with value written at the positions indices gives along dim (torch.scatter with a src tensor); where indices repeat, the last in row-major order of indices wins. A 0-d a, indices or value counts as one dim of size 1, as in PyTorch.",
  args = { "int a", "dim dim", "int indices", "int value" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "int",
  shape = "scatter(a, dim, indices, value)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 0,
      indices = { shape = { 1, 3 }, data = { 1, 0, 1 } },
      value = { shape = { 1, 3 }, data = { -7, 8, -9 } },
      out = { shape = { 2, 3 }, data = { 1, 8, 3, -7, 5, -9 } } },
    { a = { shape = { 2 }, data = { 1, 2 } }, dim = 0, indices = { shape = {}, data = { 1 } },
      value = { shape = {}, data = { -5 } }, out = { shape = { 2 }, data = { 1, -5 } } },
  },
}

op {
  name = "int_one_hot",
  id = 312,
  family = "unary",
  doc = "One-hot encodes an int tensor of class indices in [0, num_classes): the result adds a last dim of num_classes holding 1 at the index and 0 elsewhere (torch.nn.functional.one_hot with num_classes given).",
  args = { "int indices", "i64 num_classes" },
  domain = { indices = "index" },
  index_range = { indices = "num_classes" },
  returns = "int",
  shape = "one_hot(indices, num_classes)",
  -- indices with a last dim of 1 appended (the shape of a width-1 unfold along the last dim)
  -- compared with 0 .. num_classes - 1
  decompose = {
    "u = float_unfold(float_zeros(device(indices), shape(indices)), -1, 1, 1)",
    "bool_into_int(int_equal(int_reshape(indices, shape(u)), int_arange(device(indices), 0, num_classes, 1)))",
  },
  semantics = "num_classes must be given (>= 1): PyTorch's -1 (infer from the largest index) would make the shape depend on the data",
  examples = {
    { indices = { shape = { 3 }, data = { 0, 2, 1 } }, num_classes = 3,
      out = { shape = { 3, 3 }, data = { 1, 0, 0, 0, 0, 1, 0, 1, 0 } } },
    { indices = { shape = { 2, 1 }, data = { 1, 0 } }, num_classes = 2,
      out = { shape = { 2, 1, 2 }, data = { 0, 1, 1, 0 } } },
    { indices = { shape = {}, data = { 3 } }, num_classes = 4,
      out = { shape = { 4 }, data = { 0, 0, 0, 1 } } },
  },
}

-- ---- data-dependent sizes: the rule reads the mask to count the result (schema.lua's
-- data_rules), on any backend. Examples worked by hand.

op {
  name = "bool_argwhere",
  id = 340,
  family = "unary",
  doc = "The coordinates of the true elements of a, one row of ndim(a) ints each, in row-major order: shape [count, ndim(a)] (torch.argwhere; burn's bool_argwhere). The count is read from the data, which waits for the device.",
  args = { "bool a" },
  returns = "int",
  shape = "argwhere(a)",
  examples = {
    -- trues at (0,0), (0,2), (1,2)
    { a = { shape = { 2, 3 }, data = { true, false, true, false, false, true } },
      out = { shape = { 3, 2 }, data = { 0, 0, 0, 2, 1, 2 } } },
    -- none true: no rows of 1 coordinate
    { a = { shape = { 3 }, data = { false, false, false } }, out = { shape = { 0, 1 }, data = {} } },
    -- 1-d: the positions 1 and 3
    { a = { shape = { 4 }, data = { false, true, false, true } }, out = { shape = { 2, 1 }, data = { 1, 3 } } },
    -- a true 0-d tensor: one row of no coordinates
    { a = { shape = {}, data = { true } }, out = { shape = { 1, 0 }, data = {} } },
  },
}

op {
  name = "float_mask_select",
  id = 341,
  family = "binary_float",
  doc = "The elements of a where mask is true, in row-major order of a and mask broadcast against each other, as a 1-d tensor (torch.masked_select). The count is read from the data, which waits for the device; the gradient scatters back into a's positions (summed where a was broadcast).",
  args = { "float a", "bool mask" },
  returns = "float",
  shape = "mask_select(a, mask)",
  decompose = {
    "t = bool_or(mask, float_is_nan(a))",
    "m = bool_expand(mask, shape(t))",
    "w = bool_argwhere(bool_reshape(m, array(numel(t))))",
    "idx = int_reshape(w, array(size(w, 0)))",
    "float_select(float_reshape(float_expand(a, shape(t)), array(numel(t))), 0, idx)",
  },
  examples = {
    -- a = [[1, 2, 3], [4, 5, 6]], mask [[T, F, T], [F, F, T]] -> 1, 3, 6
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      mask = { shape = { 2, 3 }, data = { true, false, true, false, false, true } },
      out = { shape = { 3 }, data = { 1, 3, 6 } } },
    -- mask [F, T, T] broadcast over both rows -> 2, 3, 5, 6
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, mask = { shape = { 3 }, data = { false, true, true } },
      out = { shape = { 4 }, data = { 2, 3, 5, 6 } } },
    -- nothing selected
    { a = { shape = { 2 }, data = { 1, 2 } }, mask = { shape = { 2 }, data = { false, false } },
      out = { shape = { 0 }, data = {} } },
    -- a broadcast against the mask, as torch.masked_select: a [3, 1] = [[1], [2], [3]] with mask [F, T]
    -- gives the [3, 2] pairs (1, 1), (2, 2), (3, 3) masked to their second elements: 1, 2, 3
    { a = { shape = { 3, 1 }, data = { 1, 2, 3 } }, mask = { shape = { 2 }, data = { false, true } },
      out = { shape = { 3 }, data = { 1, 2, 3 } } },
    -- a 0-d a against a [2, 2] mask [[T, F], [T, T]]: 7.5 three times
    { a = { shape = {}, data = { 7.5 } }, mask = { shape = { 2, 2 }, data = { true, false, true, true } },
      out = { shape = { 3 }, data = { 7.5, 7.5, 7.5 } } },
  },
}

op {
  name = "int_mask_select",
  id = 342,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "binary",
  doc = "The elements of a where mask is true, in row-major order of a and mask broadcast against each other, as a 1-d tensor (torch.masked_select). The count is read from the data, which waits for the device.",
  args = { "int a", "bool mask" },
  returns = "int",
  shape = "mask_select(a, mask)",
  decompose = {
    "t = bool_or(mask, int_greater_elem(a, 0))",
    "m = bool_expand(mask, shape(t))",
    "w = bool_argwhere(bool_reshape(m, array(numel(t))))",
    "idx = int_reshape(w, array(size(w, 0)))",
    "int_select(int_reshape(int_expand(a, shape(t)), array(numel(t))), 0, idx)",
  },
  examples = {
    -- [[7, -1], [0, 9]] with mask [[F, T], [T, T]] -> -1, 0, 9
    { a = { shape = { 2, 2 }, data = { 7, -1, 0, 9 } }, mask = { shape = { 2, 2 }, data = { false, true, true, true } },
      out = { shape = { 3 }, data = { -1, 0, 9 } } },
    -- a [2] = [4, -5] broadcast to a [2, 2] mask [[T, T], [F, T]] -> 4, -5, -5
    { a = { shape = { 2 }, data = { 4, -5 } }, mask = { shape = { 2, 2 }, data = { true, true, false, true } },
      out = { shape = { 3 }, data = { 4, -5, -5 } } },
  },
}

op {
  name = "bool_mask_select",
  id = 343,
  family = "binary",
  doc = "The elements of a where mask is true, in row-major order of a and mask broadcast against each other, as a 1-d tensor (torch.masked_select). The count is read from the data, which waits for the device.",
  args = { "bool a", "bool mask" },
  returns = "bool",
  shape = "mask_select(a, mask)",
  decompose = {
    "t = bool_or(mask, a)",
    "m = bool_expand(mask, shape(t))",
    "w = bool_argwhere(bool_reshape(m, array(numel(t))))",
    "idx = int_reshape(w, array(size(w, 0)))",
    "bool_select(bool_reshape(bool_expand(a, shape(t)), array(numel(t))), 0, idx)",
  },
  examples = {
    -- [T, F, F] at mask [T, T, F] -> T, F
    { a = { shape = { 3 }, data = { true, false, false } }, mask = { shape = { 3 }, data = { true, true, false } },
      out = { shape = { 2 }, data = { true, false } } },
    -- a [2, 1] = [[T], [F]] against mask [T, F, T]: rows broadcast to [[T, T, T], [F, F, F]] -> T, T, F, F
    { a = { shape = { 2, 1 }, data = { true, false } }, mask = { shape = { 3 }, data = { true, false, true } },
      out = { shape = { 4 }, data = { true, true, false, false } } },
  },
}

op {
  name = "float_select_assign",
  id = 344,
  family = "unary_float",
  doc = "a with its slices at indices along dim replaced by the slices of value (torch.index_copy). An index given more than once gets the sum of its values, as in select_add; burn's float_select_assign adds to the slices instead: that is float_select_add here. A 0-d a or value counts as one dim of size 1, as in PyTorch.",
  args = { "float a", "dim dim", "int indices", "float value" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "float",
  shape = "select_add(a, dim, indices, value)",
  decompose = {
    "hit = float_select_add(float_zeros(device(a), shape(a)), dim, indices, float_ones(device(value), shape(value)))",
    "put = float_select_add(float_zeros(device(a), shape(a)), dim, indices, value)",
    "float_mask_where(a, float_greater_elem(hit, 0.5), put)",
  },
  examples = {
    -- rows 2 and 0 of [[1, 2], [3, 4], [5, 6]] become [10, 20] and [30, 40]
    { a = { shape = { 3, 2 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 0, indices = { shape = { 2 }, data = { 2, 0 } },
      value = { shape = { 2, 2 }, data = { 10, 20, 30, 40 } }, out = { shape = { 3, 2 }, data = { 30, 40, 3, 4, 10, 20 } } },
    -- column 1 of [[1, 2, 3], [4, 5, 6]] becomes [7, 8]
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1, indices = { shape = { 1 }, data = { 1 } },
      value = { shape = { 2, 1 }, data = { 7, 8 } }, out = { shape = { 2, 3 }, data = { 1, 7, 3, 4, 8, 6 } } },
    -- index 1 twice: 5 + 6 replaces the 2
    { a = { shape = { 3 }, data = { 1, 2, 3 } }, dim = 0, indices = { shape = { 2 }, data = { 1, 1 } },
      value = { shape = { 2 }, data = { 5, 6 } }, out = { shape = { 3 }, data = { 1, 11, 3 } } },
    -- 0-d a: replaced by the one value
    { a = { shape = {}, data = { 1 } }, dim = 0, indices = { shape = { 1 }, data = { 0 } },
      value = { shape = { 1 }, data = { 9 } }, out = { shape = {}, data = { 9 } } },
  },
}

op {
  name = "int_select_assign",
  id = 345,
  family = "unary",
  doc = "a with its slices at indices along dim replaced by the slices of value (torch.index_copy). An index given more than once gets the sum of its values, as in int_select_add. A 0-d a or value counts as one dim of size 1, as in PyTorch.",
  args = { "int a", "dim dim", "int indices", "int value" },
  domain = { indices = "index" },
  index_range = { indices = "size(a, dim)" },
  returns = "int",
  shape = "select_add(a, dim, indices, value)",
  decompose = {
    "hit = int_select_add(int_zeros(device(a), shape(a)), dim, indices, int_ones(device(value), shape(value)))",
    "put = int_select_add(int_zeros(device(a), shape(a)), dim, indices, value)",
    "int_mask_where(a, int_greater_elem(hit, 0), put)",
  },
  examples = {
    -- rows 2 and 0 of [[1, 2], [3, 4], [5, 6]] become [10, 20] and [30, 40]
    { a = { shape = { 3, 2 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 0, indices = { shape = { 2 }, data = { 2, 0 } },
      value = { shape = { 2, 2 }, data = { 10, 20, 30, 40 } }, out = { shape = { 3, 2 }, data = { 30, 40, 3, 4, 10, 20 } } },
    { a = { shape = {}, data = { 1 } }, dim = -1, indices = { shape = {}, data = { 0 } },
      value = { shape = {}, data = { -9 } }, out = { shape = {}, data = { -9 } } },
  },
}

op {
  name = "float_one_hot",
  id = 346,
  family = "unary",
  doc = "One-hot encodes an int tensor of class indices in [0, num_classes) as floats: a last dim of num_classes holding 1 at the index and 0 elsewhere (burn's float one_hot; torch.nn.functional.one_hot(...).float()).",
  args = { "int indices", "i64 num_classes" },
  domain = { indices = "index" },
  index_range = { indices = "num_classes" },
  returns = "float",
  shape = "one_hot(indices, num_classes)",
  semantics = "num_classes must be given (>= 1), as for int_one_hot",
  decompose = "int_into_float(int_one_hot(indices, num_classes))",
  examples = {
    { indices = { shape = { 3 }, data = { 0, 2, 1 } }, num_classes = 3,
      out = { shape = { 3, 3 }, data = { 1, 0, 0, 0, 0, 1, 0, 1, 0 } } },
  },
}
