-- Reductions (mean, prod, max, min, max_abs, any, all), cumulative ops along a dim (cumsum,
-- cumprod, cummax, cummin) and sort / select (sort, argsort, topk, argtopk), with PyTorch's
-- semantics. Ids 200-299. Dims may be negative (counted from the end).
--
-- Not here: burn's max_dim_with_indices, min_dim_with_indices, sort_with_indices and
-- topk_with_indices return two tensors; an op spec has one result. The values and the
-- indices are each available (float_max_dim + float_argmax, float_sort + float_argsort,
-- float_topk + float_argtopk).

-- ---- float reductions over the whole tensor ----

op {
  name = "float_mean",
  autocast = "f32",
  id = 200,
  family = "unary_float",
  doc = "Mean of all elements, as a 0-dim tensor (NaN for an empty tensor, like PyTorch).",
  args = { "float a" },
  returns = "float",
  shape = "reduce_all(a)",
  examples = {
    -- 21.5 / 6 = 3.58333...
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6.5 } },
      out = { shape = {}, data = { 3.5833333 } } },
    { a = { shape = {}, data = { -3 } },
      out = { shape = {}, data = { -3 } } },
    { a = { shape = { 4 }, data = { 1, "inf", 2, 3 } },
      out = { shape = {}, data = { "inf" } } },
    { a = { shape = { 3 }, data = { 1, "nan", 2 } },
      out = { shape = {}, data = { "nan" } } },
  },
  backward = { a = "mean_all_grad(grad, a)" },
  bound = "memory",
  decompose = "float_sum(a) / numel(a)",
}

op {
  name = "float_prod",
  autocast = "f32",
  id = 201,
  family = "unary_float",
  doc = "Product of all elements, as a 0-dim tensor (1 for an empty tensor).",
  args = { "float a" },
  returns = "float",
  shape = "reduce_all(a)",
  semantics = "accumulates in double precision, then rounds to float once",
  examples = {
    -- 1 * 2 * 3 * 4 * -0.5 * 2 = -24
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, -0.5, 2 } },
      out = { shape = {}, data = { -24 } } },
    -- 0 * inf is NaN
    { a = { shape = { 3 }, data = { 2, 0, "inf" } },
      out = { shape = {}, data = { "nan" } } },
    { a = { shape = {}, data = { -3 } },
      out = { shape = {}, data = { -3 } } },
  },
  -- d prod / d a_i = product of the other elements: computed without dividing, so it is
  -- right when a holds zeros (one zero: only that element gets a gradient).
  backward = { a = "prod_grad(grad, a)" },
  bound = "memory",
}

op {
  name = "float_prod_dim",
  autocast = "f32",
  id = 202,
  family = "unary_float",
  doc = "Product along dim; the reduced dim is kept with size 1.",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True); accumulates in double precision",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 6, 120 } } },
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 4, 10, 18 } } },
    -- [[[1,2],[3,4]],[[5,6],[7,8]]] along dim 1: 1*3, 2*4, 5*7, 6*8
    { a = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 5, 6, 7, 8 } }, dim = 1,
      out = { shape = { 2, 1, 2 }, data = { 3, 8, 35, 48 } } },
    { a = { shape = { 2, 2 }, data = { 0, -2, "nan", 3 } }, dim = 0,
      out = { shape = { 1, 2 }, data = { "nan", -6 } } },
  },
  backward = { a = "prod_dim_grad(grad, a, dim)" },
  bound = "memory",
}

op {
  name = "float_max",
  id = 203,
  family = "unary_float",
  zero_sign = true, -- the comparisons check the sign of a zero result (the doc's -0 / +0 rule)
  doc = "Maximum of all elements, as a 0-dim tensor; NaN if any element is NaN. A tie of -0 and +0 gives the first of the tied zeros in row-major order, as float_max_dim (PyTorch 1.13's torch.max(a) keeps the last one, its amax the first below 33 elements and the last above).",
  args = { "float a" },
  returns = "float",
  shape = "reduce_all_nonempty(a)",
  semantics = "like torch.max(a) / amax: NaN propagates; the gradient is split evenly among the elements equal to the maximum",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } },
      out = { shape = {}, data = { 7 } } },
    { a = { shape = { 3 }, data = { 1, "nan", 2 } },
      out = { shape = {}, data = { "nan" } } },
    { a = { shape = { 2 }, data = { "-inf", -3 } },
      out = { shape = {}, data = { -3 } } },
  },
  backward = { a = "even_grad(grad, a, result)" },
  bound = "memory",
  -- flattened through the shape of a 1-d arange of numel(a) elements, reduced, then made 0-d
  decompose = {
    "flat = float_reshape(a, shape(int_arange(device(a), 0, numel(a), 1)))",
    "m = float_max_dim(flat, 0)",
    "float_reshape(m, shape(float_sum(m)))",
  },
}

op {
  name = "float_min",
  id = 204,
  family = "unary_float",
  zero_sign = true, -- the comparisons check the sign of a zero result (the doc's -0 / +0 rule)
  doc = "Minimum of all elements, as a 0-dim tensor; NaN if any element is NaN. A tie of -0 and +0 gives the first of the tied zeros in row-major order, as float_min_dim (PyTorch 1.13's torch.min(a) keeps the last one, its amin the first below 33 elements and the last above).",
  args = { "float a" },
  returns = "float",
  shape = "reduce_all_nonempty(a)",
  semantics = "like torch.min(a) / amin: NaN propagates; the gradient is split evenly among the elements equal to the minimum",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } },
      out = { shape = {}, data = { -2 } } },
    { a = { shape = { 3 }, data = { 1, "nan", -5 } },
      out = { shape = {}, data = { "nan" } } },
    { a = { shape = { 2 }, data = { "inf", 4 } },
      out = { shape = {}, data = { 4 } } },
  },
  backward = { a = "even_grad(grad, a, result)" },
  bound = "memory",
  decompose = {
    "flat = float_reshape(a, shape(int_arange(device(a), 0, numel(a), 1)))",
    "m = float_min_dim(flat, 0)",
    "float_reshape(m, shape(float_sum(m)))",
  },
}

op {
  name = "float_max_abs",
  id = 205,
  family = "unary_float",
  doc = "Maximum of |a| over all elements, as a 0-dim tensor; NaN if any element is NaN.",
  args = { "float a" },
  returns = "float",
  shape = "reduce_all_nonempty(a)",
  semantics = "max(abs(a)) in PyTorch terms; the gradient is split evenly among the elements of the largest magnitude",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -8, 3, 4, -5, 6 } },
      out = { shape = {}, data = { 8 } } },
    { a = { shape = { 3 }, data = { 0, -0.5, 0.25 } },
      out = { shape = {}, data = { 0.5 } } },
    { a = { shape = { 2 }, data = { "-inf", 1 } },
      out = { shape = {}, data = { "inf" } } },
  },
  backward = { a = "even_grad(grad, abs(a), result) * sign(a)" },
  bound = "memory",
  decompose = "float_max(float_abs(a))",
}

op {
  name = "float_max_abs_dim",
  id = 206,
  family = "unary_float",
  doc = "Maximum of |a| along dim; the reduced dim is kept with size 1.",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "reduce_dim_nonempty(a, dim)",
  semantics = "amax(abs(a), dim, keepdim=True) in PyTorch terms; the gradient is split evenly among the elements of the largest magnitude",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, -8, 3, 4, -5, 6 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 4, 8, 6 } } },
    { a = { shape = { 2, 3 }, data = { 1, -8, 3, 4, -5, 6 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 8, 6 } } },
    { a = { shape = { 2, 2 }, data = { "nan", -1, 0, "-inf" } }, dim = 1,
      out = { shape = { 2, 1 }, data = { "nan", "inf" } } },
  },
  backward = { a = "even_grad_dim(grad, abs(a), result, dim) * sign(a)" },
  bound = "memory",
  decompose = "float_max_dim(float_abs(a), dim)",
}

op {
  name = "float_any",
  id = 207,
  family = "unary_float",
  doc = "Whether any element is nonzero (NaN counts as nonzero), as a 0-dim bool tensor; false for an empty tensor.",
  args = { "float a" },
  returns = "bool",
  shape = "reduce_all(a)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 0, 0, 0, 0, 0.5, 0 } },
      out = { shape = {}, data = { true } } },
    { a = { shape = { 2 }, data = { 0, -0.0 } },
      out = { shape = {}, data = { false } } },
    { a = { shape = { 2 }, data = { 0, "nan" } },
      out = { shape = {}, data = { true } } },
    { a = { shape = {}, data = { 0 } },
      out = { shape = {}, data = { false } } },
  },
  -- NaN != 0 holds, so NaN counts; the count of nonzero elements (a sum of 0 / 1) is > 0
  decompose = {
    "nz = bool_not(float_equal(a, float_zeros(device(a), shape(a))))",
    "n = float_sum(bool_into_float(nz))",
    "float_greater(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "float_any_dim",
  id = 208,
  family = "unary_float",
  doc = "Whether any element along dim is nonzero (NaN counts as nonzero); the reduced dim is kept with size 1.",
  args = { "float a", "dim dim" },
  returns = "bool",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 0, 0, 0, 0, -1, 0 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { false, true } } },
    { a = { shape = { 2, 3 }, data = { 0, 0, 0, 0, -1, "nan" } }, dim = -2,
      out = { shape = { 1, 3 }, data = { false, true, true } } },
  },
  decompose = {
    "nz = bool_not(float_equal(a, float_zeros(device(a), shape(a))))",
    "n = float_sum_dim(bool_into_float(nz), dim)",
    "float_greater(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "float_all",
  id = 209,
  family = "unary_float",
  doc = "Whether every element is nonzero (NaN counts as nonzero), as a 0-dim bool tensor; true for an empty tensor.",
  args = { "float a" },
  returns = "bool",
  shape = "reduce_all(a)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      out = { shape = {}, data = { true } } },
    { a = { shape = { 3 }, data = { 1, 0, 2 } },
      out = { shape = {}, data = { false } } },
    { a = { shape = { 2 }, data = { "nan", "-inf" } },
      out = { shape = {}, data = { true } } },
    { a = { shape = {}, data = { -0.0 } },
      out = { shape = {}, data = { false } } },
  },
  -- no element equal to 0: the count of zeros (a sum of 0 / 1) is exactly 0
  decompose = {
    "n = float_sum(bool_into_float(float_equal(a, float_zeros(device(a), shape(a)))))",
    "float_equal(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "float_all_dim",
  id = 210,
  family = "unary_float",
  doc = "Whether every element along dim is nonzero (NaN counts as nonzero); the reduced dim is kept with size 1.",
  args = { "float a", "dim dim" },
  returns = "bool",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 0, 3, 4, 5, 6 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { false, true } } },
    { a = { shape = { 2, 3 }, data = { 1, 0, 3, 4, 5, 6 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { true, false, true } } },
  },
  decompose = {
    "n = float_sum_dim(bool_into_float(float_equal(a, float_zeros(device(a), shape(a)))), dim)",
    "float_equal(n, float_zeros(device(a), shape(n)))",
  },
}

-- ---- cumulative ops along a dim ----

op {
  name = "float_cumsum",
  autocast = "f32",
  id = 211,
  family = "unary_float",
  doc = "Cumulative sum along dim: out[..., i, ...] = a[..., 0, ...] + ... + a[..., i, ...].",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "along_dim(a, dim)",
  -- blocked, O(128 n + (n / 128)^2) per row of n: dim moved last, a flattened to [M, n] (a 0-d a made [1]
  -- by adding a [1] of -0) and padded to blocks of 128 (float_select of clamped indices; the
  -- padding only follows the real places); within a block, each place sums its row of the
  -- block expanded to [128, 128] with the later places masked to -0 (a sum, not a matmul by a
  -- 0/1 mask: 0 * inf would be NaN); the block sums before each block are added the same way
  decompose = {
    "b = a + float_full(device(a), array(1), -0.0)",
    "t = float_swap_dims(b, dim, -1)",
    "n = size(t, -1)",
    "mm = idiv(numel(t), n + idiv(1, n + 1))",
    "nb = idiv(n + 127, 128)",
    "src = int_arange(device(a), 0, nb * 128, 1)",
    "idx = int_mask_where(int_zeros(device(a), shape(src)), int_greater(int_full(device(a), array(1), n), src), src)",
    "x = float_reshape(float_select(float_reshape(t, array(mm, n)), 1, idx), array(mm, nb, 1, 128))",
    "i = int_arange(device(a), 0, 128, 1)",
    "after = int_greater(i, int_reshape(i, array(128, 1)))",
    "bi = int_arange(device(a), 0, nb, 1)",
    "notbefore = bool_not(int_greater(int_reshape(bi, array(nb, 1)), bi))",
    "nz = float_full(device(a), array(1), -0.0)",
    "w = float_sum_dim(float_mask_where(float_expand(x, array(mm, nb, 128, 128)), after, nz), 3)",
    "tot = float_reshape(float_sum_dim(x, 3), array(mm, 1, nb))",
    "pre = float_sum_dim(float_mask_where(float_expand(tot, array(mm, nb, nb)), notbefore, nz), 2)",
    "r = float_reshape(w, array(mm, nb, 128)) + pre",
    "flat = float_reshape(r, array(mm, nb * 128))",
    "y = float_select(flat, 1, int_arange(device(a), 0, n, 1))",
    "float_reshape(float_swap_dims(float_reshape(y, shape(t)), dim, -1), shape(a))",
  },
  semantics = "accumulates in double precision (as PyTorch does on the CPU); a 0-d tensor takes dim 0 or -1",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      out = { shape = { 2, 3 }, data = { 1, 3, 6, 4, 9, 15 } } },
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = -2,
      out = { shape = { 2, 3 }, data = { 1, 2, 3, 5, 7, 9 } } },
    { a = { shape = { 4 }, data = { 1, "inf", 2, "-inf" } }, dim = 0,
      out = { shape = { 4 }, data = { 1, "inf", "inf", "nan" } } },
    { a = { shape = {}, data = { 2.5 } }, dim = -1,
      out = { shape = {}, data = { 2.5 } } },
  },
  -- out_k = sum_{i <= k} a_i, so d L / d a_i = sum_{k >= i} grad_k: a reversed cumsum.
  backward = { a = "rev_cumsum(grad, dim)" },
  bound = "memory",
}

op {
  name = "float_cumprod",
  autocast = "f32",
  id = 212,
  family = "unary_float",
  doc = "Cumulative product along dim: out[..., i, ...] = a[..., 0, ...] * ... * a[..., i, ...].",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "along_dim(a, dim)",
  semantics = "accumulates in double precision; a 0-d tensor takes dim 0 or -1",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      out = { shape = { 2, 3 }, data = { 1, 2, 6, 4, 20, 120 } } },
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = -2,
      out = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 10, 18 } } },
    { a = { shape = { 4 }, data = { 2, 0, 3, "nan" } }, dim = 0,
      out = { shape = { 4 }, data = { 2, 0, 0, "nan" } } },
  },
  -- d L / d a_i = sum_{k >= i} grad_k * prod_{j <= k, j != i} a_j
  --            = (prod_{j < i} a_j) * S_i with S_i = grad_i + a_{i+1} * S_{i+1}:
  -- no division, so it is right where a holds zeros.
  backward = { a = "cumprod_grad(grad, a, dim)" },
  bound = "memory",
}

op {
  name = "float_cummax",
  id = 213,
  family = "unary_float",
  doc = "Running maximum along dim: out[..., i, ...] = max(a[..., 0, ...], ..., a[..., i, ...]); NaN propagates.",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "along_dim(a, dim)",
  -- blocked as float_cumsum (O(128 n + (n / 128)^2) per row of n), with maxima and -inf masks: the running
  -- maximum within a block, then the larger of it and the maximum of the blocks before (NaN
  -- propagates through float_max_dim and float_maximum)
  decompose = {
    "b = a + float_full(device(a), array(1), -0.0)",
    "t = float_swap_dims(b, dim, -1)",
    "n = size(t, -1)",
    "mm = idiv(numel(t), n + idiv(1, n + 1))",
    "nb = idiv(n + 127, 128)",
    "src = int_arange(device(a), 0, nb * 128, 1)",
    "idx = int_mask_where(int_zeros(device(a), shape(src)), int_greater(int_full(device(a), array(1), n), src), src)",
    "x = float_reshape(float_select(float_reshape(t, array(mm, n)), 1, idx), array(mm, nb, 1, 128))",
    "i = int_arange(device(a), 0, 128, 1)",
    "after = int_greater(i, int_reshape(i, array(128, 1)))",
    "bi = int_arange(device(a), 0, nb, 1)",
    "notbefore = bool_not(int_greater(int_reshape(bi, array(nb, 1)), bi))",
    "ninf = float_log(float_zeros(device(a), array(1)))",
    "w = float_max_dim(float_mask_where(float_expand(x, array(mm, nb, 128, 128)), after, ninf), 3)",
    "tot = float_reshape(float_max_dim(x, 3), array(mm, 1, nb))",
    "pre = float_max_dim(float_mask_where(float_expand(tot, array(mm, nb, nb)), notbefore, ninf), 2)",
    "r = float_maximum(float_reshape(w, array(mm, nb, 128)), pre)",
    "flat = float_reshape(r, array(mm, nb * 128))",
    "y = float_select(flat, 1, int_arange(device(a), 0, n, 1))",
    "float_reshape(float_swap_dims(float_reshape(y, shape(t)), dim, -1), shape(a))",
  },
  semantics = "values of torch.cummax; the gradient goes to the index PyTorch reports (the last of equal maxima)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 3, 2, -1, -5, 0 } }, dim = 1,
      out = { shape = { 2, 3 }, data = { 1, 3, 3, -1, -1, 0 } } },
    { a = { shape = { 2, 3 }, data = { 1, 3, 2, -1, -5, 0 } }, dim = 0,
      out = { shape = { 2, 3 }, data = { 1, 3, 2, 1, 3, 2 } } },
    { a = { shape = { 4 }, data = { 1, "nan", 5, 2 } }, dim = -1,
      out = { shape = { 4 }, data = { 1, "nan", "nan", "nan" } } },
  },
  backward = { a = "cummax_grad(grad, a, dim)" },
  bound = "memory",
}

op {
  name = "float_cummin",
  id = 214,
  family = "unary_float",
  doc = "Running minimum along dim: out[..., i, ...] = min(a[..., 0, ...], ..., a[..., i, ...]); NaN propagates.",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "along_dim(a, dim)",
  decompose = "-float_cummax(-a, dim)",
  semantics = "values of torch.cummin; the gradient goes to the index PyTorch reports (the last of equal minima)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 3, 2, -1, -5, 0 } }, dim = 1,
      out = { shape = { 2, 3 }, data = { 1, 1, 1, -1, -5, -5 } } },
    { a = { shape = { 2, 3 }, data = { 1, 3, 2, -1, -5, 0 } }, dim = -2,
      out = { shape = { 2, 3 }, data = { 1, 3, 2, -1, -5, 0 } } },
    { a = { shape = { 4 }, data = { 1, "-inf", "nan", -9 } }, dim = 0,
      out = { shape = { 4 }, data = { 1, "-inf", "nan", "nan" } } },
  },
  backward = { a = "cummin_grad(grad, a, dim)" },
  bound = "memory",
}

op {
  name = "int_cumsum",
  id = 215,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Cumulative sum along dim (wraps around on int32 overflow).",
  args = { "int a", "dim dim" },
  returns = "int",
  shape = "along_dim(a, dim)",
  semantics = "int32 result (PyTorch would promote to int64); a 0-d tensor takes dim 0 or -1",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      out = { shape = { 2, 3 }, data = { 1, 3, 6, 4, 9, 15 } } },
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = -2,
      out = { shape = { 2, 3 }, data = { 1, 2, 3, 5, 7, 9 } } },
    { a = { shape = { 3 }, data = { 2147483647, 1, -5 } }, dim = 0,
      out = { shape = { 3 }, data = { 2147483647, -2147483648, 2147483643 } } },
  },
}

op {
  name = "int_cumprod",
  id = 216,
  family = "unary",
  doc = "Cumulative product along dim (wraps around on int32 overflow).",
  args = { "int a", "dim dim" },
  returns = "int",
  shape = "along_dim(a, dim)",
  semantics = "int32 result (PyTorch would promote to int64); a 0-d tensor takes dim 0 or -1",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      out = { shape = { 2, 3 }, data = { 1, 2, 6, 4, 20, 120 } } },
    { a = { shape = { 3 }, data = { -2, 3, -4 } }, dim = -1,
      out = { shape = { 3 }, data = { -2, -6, 24 } } },
    -- 65536 * 65536 = 2^32 wraps to 0
    { a = { shape = { 3 }, data = { 65536, 65536, 3 } }, dim = 0,
      out = { shape = { 3 }, data = { 65536, 0, 0 } } },
  },
}

-- ---- sort and select ----

op {
  name = "float_sort",
  id = 217,
  family = "unary_float",
  doc = "Sorts along dim, ascending, or descending where descending is nonzero; stable, NaN sorts as the largest value.",
  args = { "float a", "dim dim", "i32 descending" },
  returns = "float",
  shape = "along_dim(a, dim)",
  -- the values at the stable sorting indices
  decompose = "float_gather(a, dim, float_argsort(a, dim, descending))",
  semantics = "torch.sort(a, dim, descending, stable=True) values; -0 and +0 are equal (their order is kept)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 3, 1, 2, 0, -1, 5 } }, dim = 1, descending = 0,
      out = { shape = { 2, 3 }, data = { 1, 2, 3, -1, 0, 5 } } },
    { a = { shape = { 2, 3 }, data = { 3, 1, 2, 0, -1, 5 } }, dim = -1, descending = 1,
      out = { shape = { 2, 3 }, data = { 3, 2, 1, 5, 0, -1 } } },
    { a = { shape = { 5 }, data = { 2, "nan", "-inf", 1, "inf" } }, dim = 0, descending = 0,
      out = { shape = { 5 }, data = { "-inf", 1, 2, "inf", "nan" } } },
    { a = { shape = { 5 }, data = { 2, "nan", "-inf", 1, "inf" } }, dim = 0, descending = 1,
      out = { shape = { 5 }, data = { "nan", "inf", 2, 1, "-inf" } } },
    { a = { shape = { 2, 2 }, data = { 4, 1, 2, 3 } }, dim = 0, descending = 0,
      out = { shape = { 2, 2 }, data = { 2, 1, 4, 3 } } },
  },
  -- A permutation along dim: the gradient goes back through the sorting indices.
  backward = { a = "sort_grad(grad, a, dim, descending)" },
  bound = "compute",
}

op {
  name = "float_argsort",
  id = 218,
  family = "unary_float",
  doc = "Indices that sort a along dim (ascending, or descending where descending is nonzero); stable, NaN sorts as the largest value.",
  args = { "float a", "dim dim", "i32 descending" },
  returns = "int",
  shape = "along_dim(a, dim)",
  semantics = "torch.argsort(a, dim, descending, stable=True)",
  examples = {
    -- ascending: 1 (at 1), 1 (at 4), 3 (at 0), 3 (at 2), NaN (at 3)
    { a = { shape = { 5 }, data = { 3, 1, 3, "nan", 1 } }, dim = 0, descending = 0,
      out = { shape = { 5 }, data = { 1, 4, 0, 2, 3 } } },
    -- descending: NaN (at 3), 3 (at 0), 3 (at 2), 1 (at 1), 1 (at 4)
    { a = { shape = { 5 }, data = { 3, 1, 3, "nan", 1 } }, dim = -1, descending = 1,
      out = { shape = { 5 }, data = { 3, 0, 2, 1, 4 } } },
    -- columns (3, 0), (1, -1), (2, 5)
    { a = { shape = { 2, 3 }, data = { 3, 1, 2, 0, -1, 5 } }, dim = 0, descending = 0,
      out = { shape = { 2, 3 }, data = { 1, 1, 0, 0, 0, 1 } } },
    { a = { shape = { 3 }, data = { 0, -0.0, 0 } }, dim = 0, descending = 1,
      out = { shape = { 3 }, data = { 0, 1, 2 } } },
  },
}

op {
  name = "float_topk",
  id = 219,
  family = "unary_float",
  doc = "The count largest values along dim, in descending order (NaN counts as the largest value).",
  args = { "float a", "i64 count", "dim dim" },
  returns = "float",
  shape = "topk(a, count, dim)",
  -- the first count of the stable descending sort (by select, so that a 0-d a works)
  decompose = "float_select(float_sort(a, dim, 1), dim, int_arange(device(a), 0, count, 1))",
  semantics = "torch.topk(a, count, dim, largest=True, sorted=True) values; of equal values the first ones are taken",
  examples = {
    { a = { shape = { 2, 4 }, data = { 1, 4, 2, 3, 8, 5, 7, 6 } }, count = 2, dim = 1,
      out = { shape = { 2, 2 }, data = { 4, 3, 8, 7 } } },
    { a = { shape = { 5 }, data = { 1, "nan", 3, "inf", 3 } }, count = 3, dim = -1,
      out = { shape = { 3 }, data = { "nan", "inf", 3 } } },
    { a = { shape = { 2, 3 }, data = { 1, 5, 2, 4, 0, 6 } }, count = 1, dim = 0,
      out = { shape = { 1, 3 }, data = { 4, 5, 6 } } },
  },
  backward = { a = "topk_grad(grad, a, count, dim)" },
  bound = "compute",
}

op {
  name = "float_argtopk",
  id = 220,
  family = "unary_float",
  doc = "Indices of the count largest values along dim, in descending order of value (NaN counts as the largest value).",
  args = { "float a", "i64 count", "dim dim" },
  returns = "int",
  shape = "topk(a, count, dim)",
  decompose = "int_select(float_argsort(a, dim, 1), dim, int_arange(device(a), 0, count, 1))",
  semantics = "torch.topk(a, count, dim).indices; of equal values the first ones (lowest indices) come first",
  examples = {
    { a = { shape = { 2, 4 }, data = { 1, 4, 2, 3, 8, 5, 7, 6 } }, count = 2, dim = 1,
      out = { shape = { 2, 2 }, data = { 1, 3, 0, 2 } } },
    -- 7 (at 1), 7 (at 3), 2 (at 0)
    { a = { shape = { 5 }, data = { 2, 7, 2, 7, 1 } }, count = 3, dim = -1,
      out = { shape = { 3 }, data = { 1, 3, 0 } } },
  },
}

op {
  name = "int_sort",
  id = 221,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Sorts along dim, ascending, or descending where descending is nonzero.",
  args = { "int a", "dim dim", "i32 descending" },
  returns = "int",
  shape = "along_dim(a, dim)",
  decompose = "int_gather(a, dim, int_argsort(a, dim, descending))",
  examples = {
    { a = { shape = { 2, 3 }, data = { 3, -1, 2, 0, 2147483647, -2147483648 } }, dim = 1, descending = 0,
      out = { shape = { 2, 3 }, data = { -1, 2, 3, -2147483648, 0, 2147483647 } } },
    { a = { shape = { 2, 3 }, data = { 3, -1, 2, 0, 2147483647, -2147483648 } }, dim = -1, descending = 1,
      out = { shape = { 2, 3 }, data = { 3, 2, -1, 2147483647, 0, -2147483648 } } },
    { a = { shape = { 2, 2 }, data = { 4, 1, 2, 3 } }, dim = 0, descending = 0,
      out = { shape = { 2, 2 }, data = { 2, 1, 4, 3 } } },
  },
}

op {
  name = "int_argsort",
  id = 222,
  family = "unary",
  doc = "Indices that sort a along dim (ascending, or descending where descending is nonzero); stable.",
  args = { "int a", "dim dim", "i32 descending" },
  returns = "int",
  shape = "along_dim(a, dim)",
  -- exact through two stable float sorts, a = 65536 hi + lo with lo in [0, 2^16) and hi in
  -- [-2^15, 2^15) both exact in f32: sort by lo, then stably by hi (a radix sort of two digits)
  decompose = {
    "lo = int_remainder(a, int_full(device(a), shape(a), 65536))",
    "hi = int_into_float((a - lo) / 65536)",
    "p = float_argsort(int_into_float(lo), dim, descending)",
    "q = float_argsort(float_gather(hi, dim, p), dim, descending)",
    "int_gather(p, dim, q)",
  },
  semantics = "torch.argsort(a, dim, descending, stable=True)",
  examples = {
    -- ascending: 0 (at 3), 1 (at 1), 1 (at 4), 3 (at 0), 3 (at 2)
    { a = { shape = { 5 }, data = { 3, 1, 3, 0, 1 } }, dim = 0, descending = 0,
      out = { shape = { 5 }, data = { 3, 1, 4, 0, 2 } } },
    { a = { shape = { 5 }, data = { 3, 1, 3, 0, 1 } }, dim = -1, descending = 1,
      out = { shape = { 5 }, data = { 0, 2, 1, 4, 3 } } },
  },
}

op {
  name = "int_topk",
  id = 223,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "The count largest values along dim, in descending order.",
  args = { "int a", "i64 count", "dim dim" },
  returns = "int",
  shape = "topk(a, count, dim)",
  decompose = "int_select(int_sort(a, dim, 1), dim, int_arange(device(a), 0, count, 1))",
  semantics = "torch.topk(a, count, dim, largest=True, sorted=True) values",
  examples = {
    { a = { shape = { 2, 3 }, data = { 3, -1, 2, 0, 9, -9 } }, count = 2, dim = 1,
      out = { shape = { 2, 2 }, data = { 3, 2, 9, 0 } } },
    { a = { shape = { 2, 3 }, data = { 3, -1, 2, 0, 9, -9 } }, count = 1, dim = -2,
      out = { shape = { 1, 3 }, data = { 3, 9, 2 } } },
  },
}

-- ---- topk of the smallest (largest=False) and int topk indices: composites of the stable
-- sorts (the first count entries, by select so that a 0-d a works as for topk), so ties
-- and NaN follow sort's rules (NaN the largest: taken last by the smallest)

op {
  name = "float_topk_smallest",
  id = 763,
  family = "unary_float",
  doc = "The count smallest values along dim, in ascending order (NaN counts as the largest value, so it comes last).",
  args = { "float a", "i64 count", "dim dim" },
  returns = "float",
  shape = "topk(a, count, dim)",
  semantics = "torch.topk(a, count, dim, largest=False, sorted=True) values",
  decompose = "float_select(float_sort(a, dim, 0), dim, int_arange(device(a), 0, count, 1))",
  examples = {
    -- rows {1, 4, 2, 3} -> 1, 2; {8, 5, 7, 6} -> 5, 6
    { a = { shape = { 2, 4 }, data = { 1, 4, 2, 3, 8, 5, 7, 6 } }, count = 2, dim = 1,
      out = { shape = { 2, 2 }, data = { 1, 2, 5, 6 } } },
    -- NaN is the largest: -inf, 1, 3 before it
    { a = { shape = { 5 }, data = { 1, "nan", 3, "-inf", 3 } }, count = 3, dim = -1,
      out = { shape = { 3 }, data = { "-inf", 1, 3 } } },
    -- columns {1, 4}, {5, 0}, {2, 6} -> 1, 0, 2
    { a = { shape = { 2, 3 }, data = { 1, 5, 2, 4, 0, 6 } }, count = 1, dim = 0,
      out = { shape = { 1, 3 }, data = { 1, 0, 2 } } },
  },
}

op {
  name = "float_argtopk_smallest",
  id = 764,
  family = "unary_float",
  doc = "Indices of the count smallest values along dim, in ascending order of value (NaN counts as the largest value).",
  args = { "float a", "i64 count", "dim dim" },
  returns = "int",
  shape = "topk(a, count, dim)",
  semantics = "torch.topk(a, count, dim, largest=False).indices; of equal values the first ones (lowest indices) come first",
  decompose = "int_select(float_argsort(a, dim, 0), dim, int_arange(device(a), 0, count, 1))",
  examples = {
    -- 1 (at 0), 2 (at 2); 5 (at 1), 6 (at 3)
    { a = { shape = { 2, 4 }, data = { 1, 4, 2, 3, 8, 5, 7, 6 } }, count = 2, dim = 1,
      out = { shape = { 2, 2 }, data = { 0, 2, 1, 3 } } },
    -- 1 (at 4), 2 (at 0), 2 (at 2)
    { a = { shape = { 5 }, data = { 2, 7, 2, 7, 1 } }, count = 3, dim = -1,
      out = { shape = { 3 }, data = { 4, 0, 2 } } },
  },
}

op {
  name = "int_argtopk",
  id = 765,
  family = "unary",
  doc = "Indices of the count largest values of an int tensor along dim, in descending order of value.",
  args = { "int a", "i64 count", "dim dim" },
  returns = "int",
  shape = "topk(a, count, dim)",
  semantics = "torch.topk(a, count, dim).indices; of equal values the first ones (lowest indices) come first",
  decompose = "int_select(int_argsort(a, dim, 1), dim, int_arange(device(a), 0, count, 1))",
  examples = {
    -- rows {3, -1, 2} -> 3 (0), 2 (2); {0, 9, -9} -> 9 (1), 0 (0)
    { a = { shape = { 2, 3 }, data = { 3, -1, 2, 0, 9, -9 } }, count = 2, dim = 1,
      out = { shape = { 2, 2 }, data = { 0, 2, 1, 0 } } },
    -- 7 (at 1), 7 (at 3), 2 (at 0)
    { a = { shape = { 5 }, data = { 2, 7, 2, 7, 1 } }, count = 3, dim = -1,
      out = { shape = { 3 }, data = { 1, 3, 0 } } },
  },
}

op {
  name = "int_topk_smallest",
  id = 766,
  family = "unary",
  doc = "The count smallest values of an int tensor along dim, in ascending order.",
  args = { "int a", "i64 count", "dim dim" },
  returns = "int",
  shape = "topk(a, count, dim)",
  semantics = "torch.topk(a, count, dim, largest=False, sorted=True) values",
  decompose = "int_select(int_sort(a, dim, 0), dim, int_arange(device(a), 0, count, 1))",
  examples = {
    -- rows {3, -1, 2} -> -1, 2; {0, 9, -9} -> -9, 0
    { a = { shape = { 2, 3 }, data = { 3, -1, 2, 0, 9, -9 } }, count = 2, dim = 1,
      out = { shape = { 2, 2 }, data = { -1, 2, -9, 0 } } },
    -- columns {3, 0}, {-1, 9}, {2, -9} -> 0, -1, -9
    { a = { shape = { 2, 3 }, data = { 3, -1, 2, 0, 9, -9 } }, count = 1, dim = -2,
      out = { shape = { 1, 3 }, data = { 0, -1, -9 } } },
  },
}

op {
  name = "int_argtopk_smallest",
  id = 767,
  family = "unary",
  doc = "Indices of the count smallest values of an int tensor along dim, in ascending order of value.",
  args = { "int a", "i64 count", "dim dim" },
  returns = "int",
  shape = "topk(a, count, dim)",
  semantics = "torch.topk(a, count, dim, largest=False).indices; of equal values the first ones (lowest indices) come first",
  decompose = "int_select(int_argsort(a, dim, 0), dim, int_arange(device(a), 0, count, 1))",
  examples = {
    -- -1 (at 1), 2 (at 2); -9 (at 2), 0 (at 0)
    { a = { shape = { 2, 3 }, data = { 3, -1, 2, 0, 9, -9 } }, count = 2, dim = 1,
      out = { shape = { 2, 2 }, data = { 1, 2, 2, 0 } } },
    -- 1 (at 4), 2 (at 0), 2 (at 2)
    { a = { shape = { 5 }, data = { 2, 7, 2, 7, 1 } }, count = 3, dim = 0,
      out = { shape = { 3 }, data = { 4, 0, 2 } } },
  },
}

-- ---- any / all of int and bool tensors ----

op {
  name = "int_any",
  id = 224,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Whether any element is nonzero, as a 0-dim bool tensor; false for an empty tensor.",
  args = { "int a" },
  returns = "bool",
  shape = "reduce_all(a)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 0, 0, 0, 3 } },
      out = { shape = {}, data = { true } } },
    { a = { shape = { 2 }, data = { 0, 0 } },
      out = { shape = {}, data = { false } } },
  },
  decompose = {
    "nz = bool_not(int_equal(a, int_zeros(device(a), shape(a))))",
    "n = float_sum(bool_into_float(nz))",
    "float_greater(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "int_any_dim",
  id = 225,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Whether any element along dim is nonzero; the reduced dim is kept with size 1.",
  args = { "int a", "dim dim" },
  returns = "bool",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 0, 0, 0, 0, -1, 0 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { false, true } } },
    { a = { shape = { 2, 3 }, data = { 0, 0, 0, 0, -1, 0 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { false, true, false } } },
  },
  decompose = {
    "nz = bool_not(int_equal(a, int_zeros(device(a), shape(a))))",
    "n = float_sum_dim(bool_into_float(nz), dim)",
    "float_greater(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "int_all",
  id = 226,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Whether every element is nonzero, as a 0-dim bool tensor; true for an empty tensor.",
  args = { "int a" },
  returns = "bool",
  shape = "reduce_all(a)",
  examples = {
    { a = { shape = { 3 }, data = { 1, -2, -2147483648 } },
      out = { shape = {}, data = { true } } },
    { a = { shape = { 2, 2 }, data = { 1, 0, 2, 3 } },
      out = { shape = {}, data = { false } } },
  },
  decompose = {
    "n = float_sum(bool_into_float(int_equal(a, int_zeros(device(a), shape(a)))))",
    "float_equal(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "int_all_dim",
  id = 227,
  int_degree = 1, -- homogeneous of degree 1: i64 comparisons scale the inputs past 2^31 (docs/comparisons.md)
  family = "unary",
  doc = "Whether every element along dim is nonzero; the reduced dim is kept with size 1.",
  args = { "int a", "dim dim" },
  returns = "bool",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 0, 3, 4, 5, 6 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { false, true } } },
    { a = { shape = { 2, 3 }, data = { 1, 0, 3, 4, 5, 6 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { true, false, true } } },
  },
  decompose = {
    "n = float_sum_dim(bool_into_float(int_equal(a, int_zeros(device(a), shape(a)))), dim)",
    "float_equal(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "bool_any",
  id = 228,
  family = "unary",
  doc = "Whether any element is true, as a 0-dim bool tensor; false for an empty tensor.",
  args = { "bool a" },
  returns = "bool",
  shape = "reduce_all(a)",
  examples = {
    { a = { shape = { 2, 2 }, data = { false, false, true, false } },
      out = { shape = {}, data = { true } } },
    { a = { shape = { 3 }, data = { false, false, false } },
      out = { shape = {}, data = { false } } },
  },
  decompose = {
    "n = float_sum(bool_into_float(a))",
    "float_greater(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "bool_any_dim",
  id = 229,
  family = "unary",
  doc = "Whether any element along dim is true; the reduced dim is kept with size 1.",
  args = { "bool a", "dim dim" },
  returns = "bool",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 3 }, data = { false, false, false, false, true, false } }, dim = 1,
      out = { shape = { 2, 1 }, data = { false, true } } },
    { a = { shape = { 2, 3 }, data = { false, false, false, false, true, false } }, dim = -2,
      out = { shape = { 1, 3 }, data = { false, true, false } } },
  },
  decompose = {
    "n = float_sum_dim(bool_into_float(a), dim)",
    "float_greater(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "bool_all",
  id = 230,
  family = "unary",
  doc = "Whether every element is true, as a 0-dim bool tensor; true for an empty tensor.",
  args = { "bool a" },
  returns = "bool",
  shape = "reduce_all(a)",
  examples = {
    { a = { shape = { 3 }, data = { true, true, true } },
      out = { shape = {}, data = { true } } },
    { a = { shape = { 2, 2 }, data = { true, false, true, true } },
      out = { shape = {}, data = { false } } },
  },
  decompose = {
    "n = float_sum(bool_into_float(bool_not(a)))",
    "float_equal(n, float_zeros(device(a), shape(n)))",
  },
}

op {
  name = "bool_all_dim",
  id = 231,
  family = "unary",
  doc = "Whether every element along dim is true; the reduced dim is kept with size 1.",
  args = { "bool a", "dim dim" },
  returns = "bool",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 3 }, data = { true, false, true, true, true, true } }, dim = 1,
      out = { shape = { 2, 1 }, data = { false, true } } },
    { a = { shape = { 2, 3 }, data = { true, false, true, true, true, true } }, dim = -2,
      out = { shape = { 1, 3 }, data = { true, false, true } } },
  },
  decompose = {
    "n = float_sum_dim(bool_into_float(bool_not(a)), dim)",
    "float_equal(n, float_zeros(device(a), shape(n)))",
  },
}
