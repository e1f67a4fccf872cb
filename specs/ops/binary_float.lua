-- Float ops with two float tensor inputs; shapes broadcast as in PyTorch.

op {
  name = "float_add",
  id = 72,
  family = "binary_float",
  doc = "Elementwise a + b, broadcasting.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, b = { shape = { 3 }, data = { 0.5, -1, 10 } },
      out = { shape = { 2, 3 }, data = { 1.5, 1, 13, 4.5, 4, 16 } } },
    { a = { shape = { 2, 1 }, data = { 1, 2 } }, b = { shape = { 1, 3 }, data = { 0.25, 0.5, 0.75 } },
      out = { shape = { 2, 3 }, data = { 1.25, 1.5, 1.75, 2.25, 2.5, 2.75 } } },
    { a = { shape = { 2 }, data = { "inf", 1 } }, b = { shape = {}, data = { "-inf" } },
      out = { shape = { 2 }, data = { "nan", "-inf" } } },
    -- zero-size: 0 broadcasts with 1 (not with 3)
    { a = { shape = { 0, 1 }, data = {} }, b = { shape = { 1, 4 }, data = { 1, 2, 3, 4 } },
      out = { shape = { 0, 4 }, data = {} } },
  },
  backward = { a = "grad", b = "grad" },
  bound = "memory",
}

op {
  name = "float_sub",
  id = 73,
  family = "binary_float",
  doc = "Elementwise a - b, broadcasting.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  decompose = "a + -b",
  examples = {
    { a = { shape = { 3 }, data = { 1, 2, 3 } }, b = { shape = { 2, 1 }, data = { 0.5, 4 } },
      out = { shape = { 2, 3 }, data = { 0.5, 1.5, 2.5, -3, -2, -1 } } },
    { a = { shape = {}, data = { 1 } }, b = { shape = { 2, 2 }, data = { 0.25, -1, 3, 1 } },
      out = { shape = { 2, 2 }, data = { 0.75, 2, -2, 0 } } },
  },
  backward = { a = "grad", b = "-grad" },
  bound = "memory",
}

op {
  name = "float_mul",
  id = 74,
  family = "binary_float",
  doc = "Elementwise a * b, broadcasting.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, -2, 3, 4 } }, b = { shape = {}, data = { 2.5 } },
      out = { shape = { 2, 2 }, data = { 2.5, -5, 7.5, 10 } } },
    { a = { shape = { 2, 1, 2 }, data = { 1, 2, 3, 4 } }, b = { shape = { 3, 1 }, data = { 1, 10, -100 } },
      out = { shape = { 2, 3, 2 }, data = { 1, 2, 10, 20, -100, -200, 3, 4, 30, 40, -300, -400 } } },
  },
  backward = { a = "grad * b", b = "grad * a" },
  bound = "memory",
}

op {
  name = "float_div",
  id = 75,
  family = "binary_float",
  doc = "Elementwise a / b, broadcasting.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, b = { shape = { 3 }, data = { 2, 4, -8 } },
      out = { shape = { 2, 3 }, data = { 0.5, 0.5, -0.375, 2, 1.25, -0.75 } } },
    { a = { shape = { 3 }, data = { 1, -1, 0 } }, b = { shape = { 1 }, data = { 0 } },
      out = { shape = { 3 }, data = { "inf", "-inf", "nan" } } },
    { a = { shape = { 2, 1 }, data = { 1, 3 } }, b = { shape = { 2 }, data = { 3, -0.5 } },
      out = { shape = { 2, 2 }, data = { 0.33333334, -2, 1, -6 } } },
  },
  backward = { a = "grad / b", b = "-grad * result / b" },
  bound = "memory",
}

op {
  name = "float_powf",
  autocast = "f32",
  id = 76,
  family = "binary_float",
  doc = "Elementwise a raised to the power b, broadcasting; as in PyTorch, a's gradient is 0 where b = 0 and b's is 0 where a = 0 and b >= 0 (so powf(0, 0) and powf(0, 2) have gradients 0, not NaN).",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  examples = {
    { a = { shape = { 3 }, data = { -2, 9, 4 } }, b = { shape = { 3 }, data = { 3, 0.5, -1 } },
      out = { shape = { 3 }, data = { -8, 3, 0.25 } } },
    { a = { shape = { 2, 1 }, data = { 2, 3 } }, b = { shape = { 3 }, data = { 2, 0, 1.5 } },
      out = { shape = { 2, 3 }, data = { 4, 1, 2.828427, 9, 1, 5.196152 } } },
    { a = { shape = { 3 }, data = { 0, 0, 0 } }, b = { shape = { 3 }, data = { 0, 2, 0.5 } },
      out = { shape = { 3 }, data = { 1, 0, 0 } } },
  },
  tolerance = 1e-4,
  -- PyTorch's pow_backward_self and pow_backward_exponent.
  backward = { a = "zero_where_eq(grad * b * powf(a, b - 1), b, 0)", b = "grad * zero_where_zero_base(result * log(a), a, b)" },
  bound = "memory",
  gradcheck = { a = "positive" },
  domain = { a = "positive" },
}

op {
  name = "float_maximum",
  id = 77,
  family = "binary_float",
  zero_sign = true, -- the comparisons check the sign of a zero result (the doc's -0 / +0 rule)
  doc = "Elementwise max(a, b) (NaN wins), broadcasting; a tie of -0 and +0 gives b (PyTorch 1.13's vectorized CPU loop; its scalar one gives a). The gradient goes to the larger input, is split equally between a and b on a tie, and goes whole to both where either is NaN, as torch.maximum's.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  -- b where b >= a (a tie: b, the -0 / +0 rule) or b is NaN, else a (a NaN a stays)
  decompose = "float_mask_where(a, bool_or(float_greater_equal(b, a), float_is_nan(b)), b)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 0, "nan", 4 } }, b = { shape = { 3 }, data = { 2, "nan", -3 } },
      out = { shape = { 2, 3 }, data = { 2, "nan", -2, 2, "nan", 4 } } },
    { a = { shape = { 2, 1 }, data = { -1, 1 } }, b = { shape = { 1, 2 }, data = { 0, "-inf" } },
      out = { shape = { 2, 2 }, data = { 0, -1, 1, 1 } } },
  },
  -- PyTorch's where(a == b, grad / 2, grad).masked_fill_(a < b, 0) for a (a > b for b):
  -- ge(b, a) + gt(b, a) is 2 where a loses, 1 on a tie, 0 where a wins and where either is
  -- NaN (every comparison with NaN is false), so 1 - half of it is 0, 1/2, 1 and 1.
  backward = { a = "grad * (1 - (ge(b, a) + gt(b, a)) * 0.5)", b = "grad * (1 - (ge(a, b) + gt(a, b)) * 0.5)" },
  bound = "memory",
}

op {
  name = "float_minimum",
  id = 78,
  family = "binary_float",
  zero_sign = true, -- the comparisons check the sign of a zero result (the doc's -0 / +0 rule)
  doc = "Elementwise min(a, b) (NaN wins), broadcasting; a tie of -0 and +0 gives b (PyTorch 1.13's vectorized CPU loop; its scalar one gives a). The gradient goes to the smaller input, is split equally between a and b on a tie, and goes whole to both where either is NaN, as torch.minimum's.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  decompose = "float_mask_where(a, bool_or(float_lower_equal(b, a), float_is_nan(b)), b)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 0, "nan", 4 } }, b = { shape = { 3 }, data = { 2, "nan", -3 } },
      out = { shape = { 2, 3 }, data = { 1, "nan", -3, 0, "nan", -3 } } },
    { a = { shape = { 2, 1 }, data = { -1, 1 } }, b = { shape = { 1, 2 }, data = { 0, "inf" } },
      out = { shape = { 2, 2 }, data = { -1, -1, 0, 1 } } },
  },
  -- as float_maximum's, the comparisons swapped: where(a == b, grad / 2, grad).masked_fill_(a > b, 0)
  backward = { a = "grad * (1 - (ge(a, b) + gt(a, b)) * 0.5)", b = "grad * (1 - (ge(b, a) + gt(b, a)) * 0.5)" },
  bound = "memory",
}

op {
  name = "float_equal",
  id = 79,
  family = "binary_float",
  doc = "Elementwise a == b as bool, broadcasting.",
  args = { "float a", "float b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  -- through float_greater: neither is greater and neither is NaN (x is not NaN when
  -- x > -inf or inf > x: the count u is 0 for NaN only), so u(a) u(b) > 4 (g_ab + g_ba)
  decompose = {
    "ia = -float_log(float_zeros(device(a), shape(a)))",
    "ib = -float_log(float_zeros(device(b), shape(b)))",
    "ua = bool_into_int(float_greater(a, -ia)) + bool_into_int(float_greater(ia, a))",
    "ub = bool_into_int(float_greater(b, -ib)) + bool_into_int(float_greater(ib, b))",
    "g = bool_into_int(float_greater(a, b)) + bool_into_int(float_greater(b, a))",
    "s = ua * ub - g * 4",
    "int_greater(s, int_full(device(a), shape(s), 0))",
  },
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, "nan", 5, 6 } }, b = { shape = { 3 }, data = { 1, 5, 6 } },
      out = { shape = { 2, 3 }, data = { true, false, false, false, true, true } } },
    { a = { shape = { 2 }, data = { "nan", 0 } }, b = { shape = { 2 }, data = { "nan", 0 } },
      out = { shape = { 2 }, data = { false, true } } },
  },
}

op {
  name = "float_greater",
  id = 80,
  family = "binary_float",
  doc = "Elementwise a > b as bool, broadcasting.",
  args = { "float a", "float b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  examples = {
    { a = { shape = { 2, 1 }, data = { 1, 2 } }, b = { shape = { 3 }, data = { 0.5, 1, 3 } },
      out = { shape = { 2, 3 }, data = { true, false, false, true, true, false } } },
    { a = { shape = { 3 }, data = { "nan", 1, "nan" } }, b = { shape = { 3 }, data = { 1, "nan", "nan" } },
      out = { shape = { 3 }, data = { false, false, false } } },
  },
}

op {
  name = "float_greater_equal",
  id = 81,
  family = "binary_float",
  doc = "Elementwise a >= b as bool, broadcasting.",
  args = { "float a", "float b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  -- exact, NaN included (both are false there)
  decompose = "bool_or(float_greater(a, b), float_equal(a, b))",
  examples = {
    { a = { shape = { 2, 1 }, data = { 1, 2 } }, b = { shape = { 3 }, data = { 0.5, 1, 3 } },
      out = { shape = { 2, 3 }, data = { true, true, false, true, true, false } } },
    { a = { shape = { 3 }, data = { "nan", 1, "nan" } }, b = { shape = { 3 }, data = { 1, "nan", "nan" } },
      out = { shape = { 3 }, data = { false, false, false } } },
  },
}

op {
  name = "float_lower",
  id = 82,
  family = "binary_float",
  doc = "Elementwise a < b as bool, broadcasting.",
  args = { "float a", "float b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  decompose = "float_greater(b, a)",
  examples = {
    { a = { shape = { 2, 1 }, data = { 1, 2 } }, b = { shape = { 3 }, data = { 0.5, 1, 3 } },
      out = { shape = { 2, 3 }, data = { false, false, true, false, false, true } } },
    { a = { shape = { 3 }, data = { "nan", 1, "nan" } }, b = { shape = { 3 }, data = { 1, "nan", "nan" } },
      out = { shape = { 3 }, data = { false, false, false } } },
  },
}

op {
  name = "float_lower_equal",
  id = 83,
  family = "binary_float",
  doc = "Elementwise a <= b as bool, broadcasting.",
  args = { "float a", "float b" },
  returns = "bool",
  shape = "broadcast(a, b)",
  decompose = "float_greater_equal(b, a)",
  examples = {
    { a = { shape = { 2, 1 }, data = { 1, 2 } }, b = { shape = { 3 }, data = { 0.5, 1, 3 } },
      out = { shape = { 2, 3 }, data = { false, true, true, false, false, true } } },
    { a = { shape = { 3 }, data = { "nan", 1, "nan" } }, b = { shape = { 3 }, data = { 1, "nan", "nan" } },
      out = { shape = { 3 }, data = { false, false, false } } },
  },
}

op {
  name = "float_mask_where",
  id = 84,
  family = "binary_float",
  doc = "Elementwise mask ? value : a, broadcasting all three.",
  args = { "float a", "bool mask", "float value" },
  returns = "float",
  shape = "broadcast3(a, mask, value)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      mask = { shape = { 2, 1 }, data = { true, false } },
      value = { shape = { 3 }, data = { 10, 20, 30 } },
      out = { shape = { 2, 3 }, data = { 10, 20, 30, 4, 5, 6 } } },
    { a = { shape = { 3 }, data = { 1.5, 2, 3 } },
      mask = { shape = { 2, 3 }, data = { true, false, false, false, true, false } },
      value = { shape = {}, data = { -1 } },
      out = { shape = { 2, 3 }, data = { -1, 2, 3, 1.5, -1, 3 } } },
  },
  backward = { a = "mask_fill(grad, mask, 0)", value = "grad - mask_fill(grad, mask, 0)" },
  bound = "memory",
}

op {
  name = "float_matmul",
  autocast = "low",
  id = 85,
  family = "binary_float",
  doc = "Matrix product over the last two dims; leading (batch) dims broadcast. As torch.matmul, a 1-d a [k] is taken as [1, k] and a 1-d b [k] as [k, 1], and the dim each adds is removed from the result (vector-matrix, matrix-vector, and a 0-d dot of two vectors).",
  args = { "float a", "float b" },
  returns = "float",
  shape = "matmul(a, b)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, b = { shape = { 3, 2 }, data = { 7, 8, 9, 10, 11, 12 } },
      out = { shape = { 2, 2 }, data = { 58, 64, 139, 154 } } },
    { a = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 5, 6, 7, 8 } },
      b = { shape = { 1, 2, 3 }, data = { 1, 0, 2, 0, 1, -1 } },
      out = { shape = { 2, 2, 3 }, data = { 1, 2, 0, 3, 4, 2, 5, 6, 4, 7, 8, 6 } } },
    { a = { shape = { 1, 3 }, data = { 1, -1, 0.5 } }, b = { shape = { 2, 3, 1 }, data = { 2, 4, 6, -1, 0, 1 } },
      out = { shape = { 2, 1, 1 }, data = { 1, -0.5 } } },
    -- zero-size: an empty inner dim: zeros of shape [m, n]; an empty m: an empty result
    { a = { shape = { 2, 0 }, data = {} }, b = { shape = { 0, 3 }, data = {} },
      out = { shape = { 2, 3 }, data = { 0, 0, 0, 0, 0, 0 } } },
    { a = { shape = { 0, 2 }, data = {} }, b = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      out = { shape = { 0, 3 }, data = {} } },
    -- 1-d operands as torch.matmul: [1, 2] @ [[1, 2, 3], [4, 5, 6]] = [9, 12, 15]
    { a = { shape = { 2 }, data = { 1, 2 } }, b = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      out = { shape = { 3 }, data = { 9, 12, 15 } } },
    -- [[1, 2], [3, 4], [5, 6]] @ [1, -1] = [-1, -1, -1]
    { a = { shape = { 3, 2 }, data = { 1, 2, 3, 4, 5, 6 } }, b = { shape = { 2 }, data = { 1, -1 } },
      out = { shape = { 3 }, data = { -1, -1, -1 } } },
    -- dot: 1 * 4 + 2 * 5 + 3 * 6 = 32, 0-d
    { a = { shape = { 3 }, data = { 1, 2, 3 } }, b = { shape = { 3 }, data = { 4, 5, 6 } },
      out = { shape = {}, data = { 32 } } },
    -- a vector against a batch of 2 matrices: [1, 2] @ [[1, 0], [0, 1]] = [1, 2]; @ [[2, 1], [1, -1]] = [4, -1]
    { a = { shape = { 2 }, data = { 1, 2 } }, b = { shape = { 2, 2, 2 }, data = { 1, 0, 0, 1, 2, 1, 1, -1 } },
      out = { shape = { 2, 2 }, data = { 1, 2, 4, -1 } } },
    -- a batch of 2 [1, 2] matrices @ a vector [3, 1]: 1 * 3 + 2 = 5, -3 + 4 = 1
    { a = { shape = { 2, 1, 2 }, data = { 1, 2, -1, 4 } }, b = { shape = { 2 }, data = { 3, 1 } },
      out = { shape = { 2, 1 }, data = { 5, 1 } } },
  },
  backward = { a = "matmul_grad_a(grad, a, b)", b = "matmul_grad_b(grad, a, b)" },
  bound = "compute",
}

op {
  name = "float_matmul_nt",
  autocast = "low",
  id = 759,
  family = "binary_float",
  doc = "a @ b^T, b transposed over its last two dims: float_matmul(a, float_swap_dims(b, -1, -2)) without the copy of the transpose (matmul's backward uses it for a's gradient). Leading (batch) dims broadcast.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "matmul_nt(a, b)",
  semantics = "both inputs need at least 2 dims; a [..., m, k], b [..., n, k] -> [..., m, n]",
  examples = {
    -- [[1,2,3],[4,5,6]] @ [[7,9,11],[8,10,12]]^T = [[58,64],[139,154]] (float_matmul's first example)
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, b = { shape = { 2, 3 }, data = { 7, 9, 11, 8, 10, 12 } },
      out = { shape = { 2, 2 }, data = { 58, 64, 139, 154 } } },
    -- a batch of 2 against one b: [1,2] . [1,0] = 1, [1,2] . [0,1] = 2, [1,2] . [1,1] = 3; [3,-1]: 3, -1, 2
    { a = { shape = { 2, 1, 2 }, data = { 1, 2, 3, -1 } }, b = { shape = { 3, 2 }, data = { 1, 0, 0, 1, 1, 1 } },
      out = { shape = { 2, 1, 3 }, data = { 1, 2, 3, 3, -1, 2 } } },
    -- zero-size: an empty inner dim gives zeros
    { a = { shape = { 2, 0 }, data = {} }, b = { shape = { 3, 0 }, data = {} },
      out = { shape = { 2, 3 }, data = { 0, 0, 0, 0, 0, 0 } } },
  },
  decompose = "float_matmul(a, float_swap_dims(b, -1, -2))",
  -- b may be q8_0 / q4_0 weights [n, k] (ggml's layout) beside f32 a: docs/dtypes.md section 8
  quantized_arg = "b",
  backward = { a = "matmul(grad, b)", b = "matmul_tn(grad, a)" },
  bound = "compute",
}

op {
  name = "float_matmul_tn",
  autocast = "low",
  id = 760,
  family = "binary_float",
  doc = "a^T @ b, a transposed over its last two dims: float_matmul(float_swap_dims(a, -1, -2), b) without the copy of the transpose (matmul's backward uses it for b's gradient). Leading (batch) dims broadcast.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "matmul_tn(a, b)",
  semantics = "both inputs need at least 2 dims; a [..., k, m], b [..., k, n] -> [..., m, n]",
  examples = {
    -- [[1,4],[2,5],[3,6]]^T @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] (float_matmul's first example)
    { a = { shape = { 3, 2 }, data = { 1, 4, 2, 5, 3, 6 } }, b = { shape = { 3, 2 }, data = { 7, 8, 9, 10, 11, 12 } },
      out = { shape = { 2, 2 }, data = { 58, 64, 139, 154 } } },
    -- one a against a batch of 2: a^T = [[1,2]] (a is [2,1]); b0 = [[1,0],[0,1]] -> [1,2], b1 = [[2,1],[1,-1]] -> [4,-1]
    { a = { shape = { 2, 1 }, data = { 1, 2 } }, b = { shape = { 2, 2, 2 }, data = { 1, 0, 0, 1, 2, 1, 1, -1 } },
      out = { shape = { 2, 1, 2 }, data = { 1, 2, 4, -1 } } },
    -- zero-size: an empty inner dim gives zeros
    { a = { shape = { 0, 2 }, data = {} }, b = { shape = { 0, 3 }, data = {} },
      out = { shape = { 2, 3 }, data = { 0, 0, 0, 0, 0, 0 } } },
  },
  decompose = "float_matmul(float_swap_dims(a, -1, -2), b)",
  backward = { a = "matmul_nt(b, grad)", b = "matmul(a, grad)" },
  bound = "compute",
}
