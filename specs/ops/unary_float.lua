-- Float ops with one float tensor input (plus attributes): unary math, casts, reductions, host read-back.

op {
  name = "float_neg",
  id = 34,
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- a * -1 (via float_mul_scalar): exact, and -0 for +0 as the kernel gives
  decompose = "a * -1.0",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1.5, -2, 0, "inf" } },
      out = { shape = { 2, 2 }, data = { -1.5, 2, 0, "-inf" } } },
  },
  backward = { a = "-grad" },
  bound = "memory",
}

op {
  name = "float_abs",
  id = 35,
  family = "unary_float",
  doc = "Elementwise |a|.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_mask_where(a, float_lower(a, float_zeros(device(a), shape(a))), -a)",
  examples = {
    { a = { shape = { 5 }, data = { -1.5, 2, 0, "-inf", 0.25 } },
      out = { shape = { 5 }, data = { 1.5, 2, 0, "inf", 0.25 } } },
  },
  backward = { a = "grad * sign(a)" },
  bound = "memory",
}

op {
  name = "float_exp",
  autocast = "f32",
  id = 36,
  family = "unary_float",
  doc = "Elementwise e^a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 0, 1, -1, 2.5, -10, 10 } },
      out = { shape = { 2, 3 }, data = { 1, 2.7182817, 0.36787945, 12.182494, 4.539993e-05, 22026.465 } } },
    -- zero-size: an empty result
    { a = { shape = { 0, 2 }, data = {} },
      out = { shape = { 0, 2 }, data = {} } },
  },
  tolerance = 1e-4,
  backward = { a = "grad * result" },
  bound = "memory",
}

op {
  name = "float_log",
  autocast = "f32",
  id = 37,
  family = "unary_float",
  doc = "Elementwise natural logarithm of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  examples = {
    { a = { shape = { 5 }, data = { 1, 2.7182817, 0.5, 100, 0.001 } },
      out = { shape = { 5 }, data = { 0, 0.99999994, -0.6931472, 4.6051702, -6.9077554 } } },
    { a = { shape = { 2 }, data = { 0, -1 } },
      out = { shape = { 2 }, data = { "-inf", "nan" } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad / a" },
  bound = "memory",
  gradcheck = { a = "positive" },
  domain = { a = "positive" },
}

op {
  name = "float_sqrt",
  id = 38,
  family = "unary_float",
  doc = "Elementwise square root of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- powf(a, 0.5) away from the cases where it differs from sqrt: a zero keeps its sign,
  -- and every negative (-inf too, where powf gives +inf) is NaN, taken from log
  decompose = {
    "r = float_powf(a, float_full(device(a), shape(a), 0.5))",
    "z = float_full(device(a), shape(a), 0.0)",
    "float_mask_where(float_mask_where(r, float_equal(a, z), a), float_greater(z, a), float_log(a))",
  },
  examples = {
    { a = { shape = { 2, 2 }, data = { 4, 2, 0, 0.25 } },
      out = { shape = { 2, 2 }, data = { 2, 1.4142135, 0, 0.5 } } },
    { a = { shape = { 1 }, data = { -1 } },
      out = { shape = { 1 }, data = { "nan" } } },
  },
  backward = { a = "grad / (2 * result)" },
  bound = "memory",
  gradcheck = { a = "positive" },
  domain = { a = "positive" },
}

op {
  name = "float_sin",
  id = 39,
  family = "unary_float",
  doc = "Elementwise sine of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- cos(a - pi/2), pi/2 subtracted in two parts (1.5703125 exactly, then the rest); below
  -- |a| = 1/16 the odd series to a^7 (next term below 1e-15 of the value), where cos would
  -- lose the relative precision of a tiny sin
  decompose = {
    "s = a * a",
    "small = a * (1.0 - s * (1.0 / 6.0 - s * (1.0 / 120.0 - s * (1.0 / 5040.0))))",
    "big = float_cos((a - 1.5703125) - 0.00048382679489661923)",
    "float_mask_where(big, float_greater(float_full(device(a), shape(a), 0.0625), float_abs(a)), small)",
  },
  examples = {
    { a = { shape = { 5 }, data = { 0, 1.5707964, -1, 3, 0.5 } },
      out = { shape = { 5 }, data = { 0, 1, -0.84147096, 0.14112, 0.47942555 } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad * cos(a)" },
  bound = "memory",
}

op {
  name = "float_cos",
  id = 40,
  family = "unary_float",
  doc = "Elementwise cosine of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  examples = {
    { a = { shape = { 5 }, data = { 0, 3.1415927, -1, 3, 0.5 } },
      out = { shape = { 5 }, data = { 1, -1, 0.5403023, -0.9899925, 0.87758255 } } },
  },
  tolerance = 1e-4,
  backward = { a = "-grad * sin(a)" },
  bound = "memory",
}

op {
  name = "float_tanh",
  id = 41,
  family = "unary_float",
  doc = "Elementwise hyperbolic tangent of a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  -- (1 - e) / (1 + e) with e = exp(-2|a|), signed; below |a| = 0.125, where 1 - e cancels,
  -- the odd series to x^7 (its next term is below 1e-9 of the value)
  decompose = {
    "ax = float_abs(a)",
    "e = float_exp(ax * -2.0)",
    "big = (1.0 - e) / (e + 1.0)",
    "s = a * a",
    "small = a * (1.0 - s * (1.0 / 3.0 - s * (2.0 / 15.0 - s * (17.0 / 315.0))))",
    "signed = float_mask_where(big, float_greater(float_full(device(a), shape(a), 0.0), a), -big)",
    "float_mask_where(signed, float_greater(float_full(device(a), shape(a), 0.125), ax), small)",
  },
  examples = {
    { a = { shape = { 5 }, data = { 0, 0.5, -2, 20, -0.1 } },
      out = { shape = { 5 }, data = { 0, 0.46211717, -0.9640276, 1, -0.099667996 } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad * (1 - result * result)" },
  bound = "memory",
}

op {
  name = "float_sigmoid",
  id = 42,
  family = "unary_float",
  doc = "Elementwise 1 / (1 + e^-a).",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = "1.0 / (float_exp(-a) + 1.0)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 0, 2, -3, 100, -100, 0.5 } },
      out = { shape = { 2, 3 }, data = { 0.5, 0.8807971, 0.047425874, 1, 3.8e-44, 0.62245935 } } },
  },
  tolerance = 1e-4,
  backward = { a = "grad * result * (1 - result)" },
  bound = "memory",
}

op {
  name = "float_relu",
  id = 43,
  family = "unary_float",
  doc = "Elementwise max(a, 0), NaN staying NaN; the gradient is 0 where a <= 0 and passes elsewhere (NaN included), as in PyTorch.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_mask_fill(a, float_lower_equal(a, float_zeros(device(a), shape(a))), 0.0)",
  examples = {
    { a = { shape = { 2, 3 }, data = { -1, 0, 2.5, -0.5, 3, "-inf" } },
      out = { shape = { 2, 3 }, data = { 0, 0, 2.5, 0, 3, 0 } } },
    { a = { shape = { 3 }, data = { "nan", "inf", -0.0 } },
      out = { shape = { 3 }, data = { "nan", "inf", 0 } } },
  },
  -- PyTorch's threshold_backward(grad, result, 0): where(a <= 0, 0, grad).
  backward = { a = "zero_where_le(grad, a, 0)" },
  bound = "memory",
}

op {
  name = "float_gelu",
  id = 44,
  family = "unary_float",
  doc = "Elementwise a * (1 + erf(a / sqrt(2))) / 2 (the exact, erf form).",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  decompose = "a * (float_erf(a * 0.70710678118654752) + 1.0) * 0.5",
  examples = {
    { a = { shape = { 6 }, data = { 0, 1, -1, 2, -3, 0.5 } },
      out = { shape = { 6 }, data = { 0, 0.8413448, -0.15865526, 1.9544997, -0.004049694, 0.34573123 } } },
  },
  tolerance = 1e-4,
  -- one fused op (a single pass on the CPU), not grad times gelu_grad's ten pieces
  backward = { a = "gelu_backward(grad, a)" },
  bound = "memory",
}

-- PyTorch's gelu_backward (approximate='none'): grad * (Phi(a) + a phi(a)), Phi the normal
-- CDF (1 + erf(a / sqrt(2))) / 2 and phi its density e^(-a^2 / 2) / sqrt(2 pi). erf is not an
-- op, so the decomposition recovers Phi(a) as gelu(a) / a (1/2 at a = 0), as gelu_grad does.
-- Examples from the formula: gelu'(1) = 0.84134475 + 0.24197072 = 1.08331547 (times grad 2);
-- gelu'(-3) = 0.0013499 - 3 * 0.00443185 = -0.01194565 (times 3); gelu'(0) = 1/2.
op {
  name = "float_gelu_backward",
  id = 780,
  family = "binary_float",
  doc = "The gradient of float_gelu: grad * (Phi(a) + a phi(a)) with Phi the standard normal CDF and phi its density (PyTorch's gelu_backward), broadcasting grad and a.",
  args = { "float grad", "float a" },
  returns = "float",
  shape = "broadcast(grad, a)",
  semantics = "a = +-inf gives NaN (inf * 0 in a phi(a)), as PyTorch",
  examples = {
    { grad = { shape = { 6 }, data = { 1, 2, -1, 0.5, 3, 1 } }, a = { shape = { 6 }, data = { 0, 1, -1, 2, -3, 0.5 } },
      out = { shape = { 6 }, data = { 0.5, 2.1666309, 0.083315471, 0.5426159, -0.035836942, 0.86749512 } } },
    -- grad broadcast over the rows; gelu'(4) = 1.0005036 (a phi(a) outweighs 1 - Phi(a))
    { grad = { shape = { 2 }, data = { 2, -1 } }, a = { shape = { 2, 2 }, data = { 0, 1.5, -0.5, 4 } },
      out = { shape = { 2, 2 }, data = { 1, -1.1274692, 0.26500975, -1.0005036 } } },
  },
  tolerance = 1e-4,
  decompose = {
    "z = float_equal(a, float_zeros(device(a), shape(a)))",
    "cdf = float_mask_fill(float_gelu(a) / float_mask_fill(a, z, 1.0), z, 0.5)",
    "grad * (cdf + a * float_exp(a * a * -0.5) * 0.3989422804014327)",
  },
  bound = "memory",
}

op {
  name = "float_powf_scalar",
  autocast = "f32",
  id = 45,
  family = "unary_float",
  doc = "Elementwise a raised to the power exponent; with exponent 0 the gradient is 0 everywhere (0 at a = 0 too), as in PyTorch.",
  args = { "float a", "f32 exponent" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_powf(a, float_full(device(a), shape(a), exponent))",
  examples = {
    { a = { shape = { 4 }, data = { 4, 9, 2, 0 } }, exponent = 0.5,
      out = { shape = { 4 }, data = { 2, 3, 1.4142135, 0 } } },
    { a = { shape = { 2, 2 }, data = { 1, -3, 0.5, -2 } }, exponent = 3,
      out = { shape = { 2, 2 }, data = { 1, -27, 0.125, -8 } } },
    { a = { shape = { 2 }, data = { 2, 4 } }, exponent = -1,
      out = { shape = { 2 }, data = { 0.5, 0.25 } } },
    { a = { shape = { 3 }, data = { 0, 2, -3 } }, exponent = 0,
      out = { shape = { 3 }, data = { 1, 1, 1 } } },
  },
  tolerance = 1e-4,
  -- PyTorch's pow_backward: zeros for the exponent 0, else grad * exponent * a^(exponent - 1).
  backward = { a = "zeros_if_zero(grad * exponent * powf_scalar(a, exponent - 1), exponent)" },
  bound = "memory",
  gradcheck = { a = "positive" },
  domain = { a = "positive" },
}

op {
  name = "float_clamp",
  id = 46,
  family = "unary_float",
  zero_sign = true, -- the comparisons check the sign of a zero result (the doc's -0 / +0 rule)
  doc = "Elementwise min(max(a, lo), hi); NaN stays NaN; a bound that ties a leaves a (torch.clamp(-0., 0., 1.) is -0.).",
  args = { "float a", "f32 lo", "f32 hi" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_clamp_max(float_clamp_min(a, lo), hi)",
  examples = {
    { a = { shape = { 5 }, data = { -2, -0.5, 0, 0.5, 3 } }, lo = -1, hi = 1,
      out = { shape = { 5 }, data = { -1, -0.5, 0, 0.5, 1 } } },
    { a = { shape = { 2, 2 }, data = { "-inf", 2.5, 7, "inf" } }, lo = 0, hi = 5,
      out = { shape = { 2, 2 }, data = { 0, 2.5, 5, 5 } } },
  },
  backward = { a = "grad * inside(a, lo, hi)" },
  bound = "memory",
}

op {
  name = "float_add_scalar",
  id = 47,
  family = "unary_float",
  doc = "Elementwise a + value.",
  args = { "float a", "f32 value" },
  returns = "float",
  shape = "same(a)",
  -- exact: a + value broadcast from a float_full of a's shape
  decompose = "float_add(a, float_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, 2, -3, 4 } }, value = 0.5,
      out = { shape = { 2, 2 }, data = { 1.5, 2.5, -2.5, 4.5 } } },
  },
  backward = { a = "grad" },
  bound = "memory",
}

op {
  name = "float_mul_scalar",
  id = 48,
  family = "unary_float",
  doc = "Elementwise a * value.",
  args = { "float a", "f32 value" },
  returns = "float",
  shape = "same(a)",
  decompose = "float_mul(a, float_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1, 2, -3, 0.25 } }, value = -2,
      out = { shape = { 2, 2 }, data = { -2, -4, 6, -0.5 } } },
  },
  backward = { a = "grad * value" },
  bound = "memory",
}

op {
  name = "float_mask_fill",
  id = 49,
  family = "unary_float",
  doc = "Returns a with value where mask is true; mask broadcasts to a's shape.",
  args = { "float a", "bool mask", "f32 value" },
  returns = "float",
  shape = "mask_fill(a, mask)",
  decompose = "float_mask_where(a, mask, float_full(device(a), shape(a), value))",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      mask = { shape = { 2, 1 }, data = { true, false } },
      value = -1.5,
      out = { shape = { 2, 3 }, data = { -1.5, -1.5, -1.5, 4, 5, 6 } } },
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } },
      mask = { shape = { 2, 2 }, data = { false, true, true, false } },
      value = 0,
      out = { shape = { 2, 2 }, data = { 1, 0, 0, 4 } } },
  },
  backward = { a = "mask_fill(grad, mask, 0)" },
  bound = "memory",
}

op {
  name = "float_sum",
  autocast = "f32",
  id = 50,
  family = "unary_float",
  doc = "Sum of all elements, as a 0-dim tensor.",
  args = { "float a" },
  returns = "float",
  shape = "reduce_all(a)",
  -- a flattened (1-d), its sum along dim 0 ([1]), then the 0-d shape (int_sum's result is 0-d)
  decompose = {
    "flat = float_reshape(a, array(-1))",
    "float_reshape(float_sum_dim(flat, 0), shape(int_sum(int_full(device(a), array(1), 0))))",
  },
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6.5 } },
      out = { shape = {}, data = { 21.5 } } },
    { a = { shape = {}, data = { 3 } },
      out = { shape = {}, data = { 3 } } },
    { a = { shape = { 3 }, data = { 1, "inf", 2 } },
      out = { shape = {}, data = { "inf" } } },
    -- zero-size: the sum of nothing is 0
    { a = { shape = { 2, 0 }, data = {} },
      out = { shape = {}, data = { 0 } } },
  },
  backward = { a = "expand_as(grad, a)" },
  bound = "memory",
}

op {
  name = "float_sum_dim",
  autocast = "f32",
  id = 51,
  family = "unary_float",
  doc = "Sum along dim; the reduced dim is kept with size 1 (negative dims count from the end; a 0-d tensor takes dim 0 or -1 and gives a 0-d result).",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "reduce_dim(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 0,
      out = { shape = { 1, 3 }, data = { 5, 7, 9 } } },
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = -1,
      out = { shape = { 2, 1 }, data = { 6, 15 } } },
    { a = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 5, 6, 7, 8 } }, dim = 1,
      out = { shape = { 2, 1, 2 }, data = { 4, 6, 12, 14 } } },
    { a = { shape = {}, data = { 2.5 } }, dim = 0, out = { shape = {}, data = { 2.5 } } },
    { a = { shape = {}, data = { -3 } }, dim = -1, out = { shape = {}, data = { -3 } } },
    -- zero-size: over an empty dim: 0 per slab; over a full dim of an empty tensor: empty
    { a = { shape = { 2, 0 }, data = {} }, dim = 1,
      out = { shape = { 2, 1 }, data = { 0, 0 } } },
    { a = { shape = { 2, 0 }, data = {} }, dim = 0,
      out = { shape = { 1, 0 }, data = {} } },
  },
  backward = { a = "expand_as(grad, a)" },
  bound = "memory",
}

op {
  name = "float_mean_dim",
  autocast = "f32",
  id = 52,
  family = "unary_float",
  doc = "Mean along dim; the reduced dim is kept with size 1 (negative dims count from the end; a 0-d tensor takes dim 0 or -1 and gives a 0-d result).",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "reduce_dim(a, dim)",
  decompose = "float_sum_dim(a, dim) / size(a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 2, 5 } } },
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 2.5, 3.5, 4.5 } } },
    { a = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 5, 6, 7, 8 } }, dim = -3,
      out = { shape = { 1, 2, 2 }, data = { 3, 4, 5, 6 } } },
    { a = { shape = {}, data = { 7 } }, dim = -1, out = { shape = {}, data = { 7 } } },
    -- zero-size: the mean of nothing is NaN (0 / 0)
    { a = { shape = { 2, 0, 1 }, data = {} }, dim = 1,
      out = { shape = { 2, 1, 1 }, data = { "nan", "nan" } } },
  },
  backward = { a = "mean_grad(grad, a, dim)" },
  bound = "memory",
}

op {
  name = "float_max_dim",
  id = 53,
  family = "unary_float",
  zero_sign = true, -- the comparisons check the sign of a zero result (the doc's -0 / +0 rule)
  doc = "Maximum along dim; the reduced dim is kept with size 1 (negative dims count from the end; a 0-d tensor takes dim 0 or -1 and gives a 0-d result). The gradient is split evenly among the elements equal to the maximum (torch.amax); float_max_dim_values sends it to the argmax index instead (torch.max(a, dim)). A tie of -0 and +0 gives the first of the tied zeros along the reduction, the element float_argmax picks (PyTorch 1.13's torch.max(a, dim) value, a[index]; its whole-tensor torch.max(a) keeps the last one and amax/amin depend on the size).",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "reduce_dim_nonempty(a, dim)",
  semantics = "torch.amax(a, dim, keepdim=True): keeps the reduced dim; on ties the gradient is split evenly among the tied elements",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 5, 7 } } },
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 7, 5, 3 } } },
    { a = { shape = { 2, 2, 2 }, data = { 1, -8, 3, 4, -5, 6, 0, -7 } }, dim = 2,
      out = { shape = { 2, 2, 1 }, data = { 1, 4, 6, 0 } } },
    { a = { shape = {}, data = { -4 } }, dim = 0, out = { shape = {}, data = { -4 } } },
    -- zero-size: over a full dim of an empty tensor (over the empty dim: an error)
    { a = { shape = { 0, 3 }, data = {} }, dim = 1,
      out = { shape = { 0, 1 }, data = {} } },
  },
  -- as amax / amin: grad / (number of ties) to each element equal to the result
  backward = { a = "even_grad_dim(grad, a, result, dim)" },
  bound = "memory",
}

op {
  name = "float_min_dim",
  id = 54,
  family = "unary_float",
  zero_sign = true, -- the comparisons check the sign of a zero result (the doc's -0 / +0 rule)
  doc = "Minimum along dim; the reduced dim is kept with size 1 (negative dims count from the end; a 0-d tensor takes dim 0 or -1 and gives a 0-d result). The gradient is split evenly among the elements equal to the minimum (torch.amin); float_min_dim_values sends it to the argmin index instead (torch.min(a, dim)). A tie of -0 and +0 gives the first of the tied zeros along the reduction, the element float_argmin picks (PyTorch 1.13's torch.min(a, dim) value, a[index]; its whole-tensor torch.min(a) keeps the last one and amax/amin depend on the size).",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "reduce_dim_nonempty(a, dim)",
  decompose = "-float_max_dim(-a, dim)",
  semantics = "torch.amin(a, dim, keepdim=True): keeps the reduced dim; on ties the gradient is split evenly among the tied elements",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { -2, 0 } } },
    { a = { shape = { 2, 3 }, data = { 1, 5, -2, 7, 0, 3 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 1, 0, -2 } } },
    { a = { shape = { 2, 2, 2 }, data = { 1, -8, 3, 4, -5, 6, 0, -7 } }, dim = 2,
      out = { shape = { 2, 2, 1 }, data = { -8, 3, -5, -7 } } },
    { a = { shape = {}, data = { 1.5 } }, dim = -1, out = { shape = {}, data = { 1.5 } } },
    -- zero-size: over a full dim of an empty tensor (over the empty dim: an error)
    { a = { shape = { 0, 3 }, data = {} }, dim = 1,
      out = { shape = { 0, 1 }, data = {} } },
  },
  -- as amax / amin: grad / (number of ties) to each element equal to the result
  backward = { a = "even_grad_dim(grad, a, result, dim)" },
  bound = "memory",
}

-- The values of torch.max(a, dim) / torch.min(a, dim), whose gradient goes only to the
-- index they return (the tuples float_max_dim_with_indices / _min_ take their values from
-- these). Hand-worked: rows {1, 3, 3} -> 3 (argmax 1), {7, -2, 7} -> 7 (argmax 0).
op {
  name = "float_max_dim_values",
  id = 761,
  family = "unary_float",
  doc = "Maximum along dim, as float_max_dim, with the gradient sent only to the index float_argmax returns (the first maximum), as for the values of torch.max(a, dim, keepdim=True); float_max_dim splits it among ties.",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "reduce_dim_nonempty(a, dim)",
  semantics = "the values of torch.max(a, dim, keepdim=True): the whole gradient to the returned index, none to the other ties",
  decompose = "float_max_dim(a, dim)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 1, 3, 3, 7, -2, 7 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 3, 7 } } },
    { a = { shape = {}, data = { -4 } }, dim = 0, out = { shape = {}, data = { -4 } } },
    { a = { shape = { 0, 3 }, data = {} }, dim = 1, out = { shape = { 0, 1 }, data = {} } },
  },
  backward = { a = "argmax_grad(grad, a, dim)" },
  bound = "memory",
}

op {
  name = "float_min_dim_values",
  id = 762,
  family = "unary_float",
  doc = "Minimum along dim, as float_min_dim, with the gradient sent only to the index float_argmin returns (the first minimum), as for the values of torch.min(a, dim, keepdim=True); float_min_dim splits it among ties.",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "reduce_dim_nonempty(a, dim)",
  semantics = "the values of torch.min(a, dim, keepdim=True): the whole gradient to the returned index, none to the other ties",
  decompose = "float_min_dim(a, dim)",
  examples = {
    -- rows {1, -3, -3} -> -3 (argmin 1), {-7, 2, -7} -> -7 (argmin 0)
    { a = { shape = { 2, 3 }, data = { 1, -3, -3, -7, 2, -7 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { -3, -7 } } },
    { a = { shape = {}, data = { 1.5 } }, dim = -1, out = { shape = {}, data = { 1.5 } } },
  },
  backward = { a = "argmin_grad(grad, a, dim)" },
  bound = "memory",
}

op {
  name = "float_argmax",
  id = 55,
  family = "unary_float",
  doc = "Index of the maximum along dim (first one on ties); the reduced dim is kept with size 1 (negative dims count from the end; a 0-d tensor takes dim 0 or -1 and gives a 0-d result).",
  args = { "float a", "dim dim" },
  returns = "int",
  shape = "reduce_dim_nonempty(a, dim)",
  -- dim moved last and a flattened to [M, n]; the positions equal to the row maximum (or NaN,
  -- which torch.argmax takes as the maximum) keep their index (as floats, exact below 2^24),
  -- the others n; the row minimum is the first such index; back to a's layout through the
  -- shape of the row maximum of the moved tensor
  decompose = {
    "t = float_swap_dims(a, dim, -1)",
    "n = size(a, dim)",
    "m = float_reshape(t, array(-1, n))",
    "hit = bool_or(float_equal(m, float_max_dim(m, 1)), float_is_nan(m))",
    "idx = int_into_float(int_arange(device(a), 0, n, 1))",
    "first = -float_max_dim(-float_mask_where(float_full(device(a), shape(m), n), hit, idx), 1)",
    "float_into_int(float_swap_dims(float_reshape(first, shape(float_max_dim(t, -1))), dim, -1))",
  },
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 4 }, data = { 1, 3, 3, 2, 5, 5, 1, 5 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 1, 0 } } },
    { a = { shape = { 2, 3 }, data = { 1, 4, 2, 1, 0, 7 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 0, 0, 1 } } },
    { a = { shape = {}, data = { 9 } }, dim = 0, out = { shape = {}, data = { 0 } } },
    -- zero-size: over a full dim of an empty tensor (over the empty dim: an error)
    { a = { shape = { 3, 0 }, data = {} }, dim = 0,
      out = { shape = { 1, 0 }, data = {} } },
  },
}

op {
  name = "float_argmin",
  id = 56,
  family = "unary_float",
  doc = "Index of the minimum along dim (first one on ties); the reduced dim is kept with size 1 (negative dims count from the end; a 0-d tensor takes dim 0 or -1 and gives a 0-d result).",
  args = { "float a", "dim dim" },
  returns = "int",
  shape = "reduce_dim_nonempty(a, dim)",
  decompose = "float_argmax(-a, dim)",
  semantics = "keeps the reduced dim (PyTorch keepdim=True)",
  examples = {
    { a = { shape = { 2, 4 }, data = { 2, 0, 0, 1, 4, 4, 4, 4 } }, dim = 1,
      out = { shape = { 2, 1 }, data = { 1, 0 } } },
    { a = { shape = { 2, 3 }, data = { 1, 4, 2, 1, 0, 7 } }, dim = -2,
      out = { shape = { 1, 3 }, data = { 0, 1, 0 } } },
    { a = { shape = {}, data = { -9 } }, dim = -1, out = { shape = {}, data = { 0 } } },
    -- zero-size: over a full dim of an empty tensor (over the empty dim: an error)
    { a = { shape = { 3, 0 }, data = {} }, dim = 0,
      out = { shape = { 1, 0 }, data = {} } },
  },
}

op {
  name = "float_into_int",
  id = 57,
  family = "unary_float",
  doc = "Converts to int, truncating toward zero.",
  args = { "float a" },
  returns = "int",
  dtype_twin = "convert",
  shape = "same(a)",
  semantics = "NaN becomes 0 and values outside the int32 range saturate (C leaves them undefined)",
  examples = {
    { a = { shape = { 2, 3 }, data = { 2.7, -2.7, 0.5, -0.5, 3, -100.99 } },
      out = { shape = { 2, 3 }, data = { 2, -2, 0, 0, 3, -100 } } },
    { a = { shape = { 3 }, data = { "nan", 10000000000, -10000000000 } },
      out = { shape = { 3 }, data = { 0, 2147483647, -2147483648 } } },
  },
}

op {
  name = "float_into_data",
  id = 58,
  family = "unary_float",
  doc = "Copies the elements, row-major, into dst, which holds at least numel floats.",
  args = { "float a", "f32_out dst" },
  returns = "host",
  dtype_twin = "into_data",
  shape = "host_out(a, dst)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1.5, -2, "inf", 0 } },
      out = { data = { 1.5, -2, "inf", 0 } } },
    { a = { shape = {}, data = { 0.25 } },
      out = { data = { 0.25 } } },
    -- zero-size: nothing to copy
    { a = { shape = { 0, 4 }, data = {} },
      out = { data = {} } },
  },
}
