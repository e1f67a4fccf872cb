-- Activations and losses (burn's ActivationOps and loss functions, PyTorch semantics):
-- softmax family along a dim, log-sigmoid, leaky/parametric ReLU, hard sigmoid, SiLU, and
-- cross-entropy. Ids 400-419.

op {
  name = "float_softmax",
  autocast = "f32",
  id = 400,
  family = "unary_float",
  doc = "Softmax along dim: exp(a - max) / sum(exp(a - max)), the max taken along dim (torch.softmax).",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "along_dim(a, dim)",
  semantics = "a row holding NaN, +inf, or only -inf gives NaN in the whole row, as in PyTorch",
  examples = {
    -- rows [1, 2, 3]: e^(x-3) = e^-2, e^-1, 1 over their sum; [0, 0, -1]: 1, 1, e^-1 over 2 + e^-1
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 0, 0, -1 } }, dim = -1,
      out = { shape = { 2, 3 }, data = { 0.09003057, 0.24472847, 0.66524096, 0.42231880, 0.42231880, 0.15536240 } } },
    -- columns (1, 3) and (2, 5): 1 / (1 + e^2), 1 / (1 + e^-2); 1 / (1 + e^3), 1 / (1 + e^-3)
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 5 } }, dim = 0,
      out = { shape = { 2, 2 }, data = { 0.11920292, 0.04742587, 0.88079708, 0.95257413 } } },
    -- large values: the max is subtracted first, so nothing overflows
    { a = { shape = { 3 }, data = { 1000, 1000, -1000 } }, dim = 0,
      out = { shape = { 3 }, data = { 0.5, 0.5, 0 } } },
  },
  tolerance = 1e-5,
  backward = { a = "result * (grad - sum_dim(grad * result, dim))" },
  decompose = {
    "m = float_max_dim(a, dim)",
    "e = float_exp(a - m)",
    "e / float_sum_dim(e, dim)",
  },
  bound = "memory",
}

op {
  name = "float_log_softmax",
  autocast = "f32",
  id = 401,
  family = "unary_float",
  doc = "Log of the softmax along dim, computed as a - max - log(sum(exp(a - max))) (torch.log_softmax).",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "along_dim(a, dim)",
  semantics = "a row holding NaN, +inf, or only -inf gives NaN in the whole row, as in PyTorch",
  examples = {
    -- [1, 2, 3]: x - 3 - log(1 + e^-1 + e^-2) = x - 3.40760596; [0, 0, -1]: x - log(2 + e^-1)
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 0, 0, -1 } }, dim = 1,
      out = { shape = { 2, 3 }, data = { -2.40760596, -1.40760596, -0.40760596, -0.86199480, -0.86199480, -1.86199480 } } },
    -- columns (1, 3) and (2, 5): -log(1 + e^2), -log(1 + e^-2); -log(1 + e^3), -log(1 + e^-3)
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 5 } }, dim = -2,
      out = { shape = { 2, 2 }, data = { -2.12692801, -3.04858735, -0.12692801, -0.04858735 } } },
    { a = { shape = { 3 }, data = { 1000, 1000, -1000 } }, dim = 0,
      out = { shape = { 3 }, data = { -0.69314718, -0.69314718, -2000.6931 } } },
  },
  tolerance = 1e-5,
  backward = { a = "grad - exp(result) * sum_dim(grad, dim)" },
  decompose = {
    "d = a - float_max_dim(a, dim)",
    "d - float_log(float_sum_dim(float_exp(d), dim))",
  },
  bound = "memory",
}

op {
  name = "float_softmin",
  autocast = "f32",
  id = 402,
  family = "unary_float",
  doc = "Softmin along dim: the softmax of -a (torch.nn.functional.softmin).",
  args = { "float a", "dim dim" },
  returns = "float",
  shape = "along_dim(a, dim)",
  semantics = "a row holding NaN, -inf, or only +inf gives NaN in the whole row, as in PyTorch",
  examples = {
    -- softmax of [-1, -2, -3] and of [0, 0, 1]
    { a = { shape = { 2, 3 }, data = { 1, 2, 3, 0, 0, -1 } }, dim = 1,
      out = { shape = { 2, 3 }, data = { 0.66524096, 0.24472847, 0.09003057, 0.21194156, 0.21194156, 0.57611688 } } },
    -- columns (1, 3) and (2, 5): 1 / (1 + e^-2), 1 / (1 + e^2); 1 / (1 + e^-3), 1 / (1 + e^3)
    { a = { shape = { 2, 2 }, data = { 1, 2, 3, 5 } }, dim = 0,
      out = { shape = { 2, 2 }, data = { 0.88079708, 0.95257413, 0.11920292, 0.04742587 } } },
  },
  tolerance = 1e-5,
  backward = { a = "result * (sum_dim(grad * result, dim) - grad)" },
  decompose = "float_softmax(-a, dim)",
  bound = "memory",
}

op {
  name = "float_log_sigmoid",
  autocast = "f32",
  id = 403,
  family = "unary_float",
  doc = "Elementwise log(1 / (1 + e^-a)), computed stably as min(a, 0) - log1p(e^-|a|).",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  examples = {
    -- log(1/2); -log(1 + e^-1); -1 - log(1 + e^-1); -log1p(e^-20) = -2.0611536e-9; -20 - log1p(e^-20)
    { a = { shape = { 2, 3 }, data = { 0, 1, -1, 20, -20, 0.5 } },
      out = { shape = { 2, 3 }, data = { -0.69314718, -0.31326169, -1.31326169, -2.0611536e-09, -20, -0.47407698 } } },
    { a = { shape = { 4 }, data = { "inf", "-inf", "nan", -100 } },
      out = { shape = { 4 }, data = { 0, "-inf", "nan", -100 } } },
  },
  tolerance = 1e-5,
  backward = { a = "grad * sigmoid(-a)" },
  -- log1p(z) for z = e^-|a| in (0, 1]: log(1 + z), or its series where 1 + z would round
  -- away most of z (z < 0.01; the first omitted term is z^5 / 5, 2e-9 of z)
  decompose = {
    "z = float_exp(-float_abs(a))",
    "series = z * (1.0 - z * (0.5 - z * (0.33333334 - z * 0.25)))",
    "small = float_lower(z, float_full(device(a), shape(a), 0.01))",
    "l = float_mask_where(float_log(z + 1.0), small, series)",
    "float_minimum(a, float_full(device(a), shape(a), 0.0)) - l",
  },
  bound = "memory",
}

op {
  name = "float_leaky_relu",
  id = 404,
  family = "unary_float",
  doc = "Elementwise a > 0 ? a : negative_slope * a (torch.nn.functional.leaky_relu).",
  args = { "float a", "f32 negative_slope" },
  returns = "float",
  shape = "same(a)",
  examples = {
    { a = { shape = { 6 }, data = { -2, -0.5, 0, 3, "-inf", "inf" } }, negative_slope = 0.01,
      out = { shape = { 6 }, data = { -0.02, -0.005, 0, 3, "-inf", "inf" } } },
    { a = { shape = { 2, 2 }, data = { -1, 1, -10, 0.5 } }, negative_slope = 0.2,
      out = { shape = { 2, 2 }, data = { -0.2, 1, -2, 0.5 } } },
  },
  backward = { a = "grad * (positive(a) + (1 - positive(a)) * negative_slope)" },
  decompose = "float_mask_where(a * negative_slope, float_greater(a, float_full(device(a), shape(a), 0.0)), a)",
  bound = "memory",
}

op {
  name = "float_prelu",
  id = 405,
  family = "binary_float",
  doc = "Elementwise a > 0 ? a : weight * a, where weight broadcasts to a's shape (for PyTorch's per-channel weight of shape [C] on an [N, C, ...] input, pass it reshaped to [C, 1, ..., 1]).",
  args = { "float a", "float weight" },
  returns = "float",
  shape = "mask_fill(a, weight)",
  semantics = "torch.nn.functional.prelu takes a weight of shape [C] (or [1]) that applies along dim 1; here the weight is any tensor that broadcasts to a's shape, which covers that case once it is reshaped to [C, 1, ..., 1] (burn reshapes it the same way)",
  examples = {
    -- a is [N=2, C=2, L=2], weight [C, 1] = (0.25, 2): negative values of channel 0 are
    -- scaled by 0.25, of channel 1 by 2
    { a = { shape = { 2, 2, 2 }, data = { -1, 2, -3, 4, -5, 6, 0, -8 } },
      weight = { shape = { 2, 1 }, data = { 0.25, 2 } },
      out = { shape = { 2, 2, 2 }, data = { -0.25, 2, -6, 4, -1.25, 6, 0, -16 } } },
    { a = { shape = { 4 }, data = { -2, 3, "-inf", "nan" } },
      weight = { shape = {}, data = { 0.5 } },
      out = { shape = { 4 }, data = { -1, 3, "-inf", "nan" } } },
  },
  backward = { a = "grad * (positive(a) + (1 - positive(a)) * weight)", weight = "-grad * relu(-a)" },
  decompose = "float_mask_where(a * weight, float_greater(a, float_full(device(a), shape(a), 0.0)), a)",
  bound = "memory",
}

op {
  name = "float_hard_sigmoid",
  id = 406,
  family = "unary_float",
  doc = "Elementwise max(0, min(1, alpha * a + beta)) (burn's hard_sigmoid; alpha = 1/6, beta = 0.5 is torch.nn.functional.hardsigmoid).",
  args = { "float a", "f32 alpha", "f32 beta" },
  returns = "float",
  shape = "same(a)",
  semantics = "NaN stays NaN (like float_clamp)",
  examples = {
    -- 0.2 x + 0.5: -0.1, 0, 0.5, 0.7, 1, 1.1, clamped to [0, 1]
    { a = { shape = { 8 }, data = { -3, -2.5, 0, 1, 2.5, 3, "nan", "inf" } }, alpha = 0.2, beta = 0.5,
      out = { shape = { 8 }, data = { 0, 0, 0.5, 0.7, 1, 1, "nan", 1 } } },
    { a = { shape = { 3 }, data = { -4, 1.5, 4 } }, alpha = 0.16666667, beta = 0.5,
      out = { shape = { 3 }, data = { 0, 0.75, 1 } } },
  },
  tolerance = 1e-5,
  backward = { a = "grad * alpha * inside(a * alpha + beta, 0, 1)" },
  decompose = "float_clamp(a * alpha + beta, 0.0, 1.0)",
  bound = "memory",
}

op {
  name = "float_silu",
  id = 407,
  family = "unary_float",
  doc = "Elementwise a * sigmoid(a) (SiLU, also called swish).",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  semantics = "-inf gives NaN (-inf * 0), as PyTorch's a / (1 + e^-a) does",
  examples = {
    -- x / (1 + e^-x)
    { a = { shape = { 2, 3 }, data = { 0, 1, -1, 2, -3, 0.5 } },
      out = { shape = { 2, 3 }, data = { 0, 0.73105858, -0.26894142, 1.76159416, -0.14227762, 0.31122967 } } },
    { a = { shape = { 3 }, data = { "inf", "nan", -1000 } },
      out = { shape = { 3 }, data = { "inf", "nan", 0 } } },
  },
  tolerance = 1e-5,
  backward = { a = "grad * sigmoid(a) * (1 + a * (1 - sigmoid(a)))" },
  decompose = "a * float_sigmoid(a)",
  bound = "memory",
}

op {
  name = "float_cross_entropy",
  autocast = "f32",
  id = 408,
  family = "binary_float",
  doc = "Cross-entropy loss of logits [N, C] against class indices targets [N], averaged over N: mean_i(-log_softmax(logits, 1)[i, targets[i]]), a 0-dim tensor; a target outside [0, C) is TD_E_RANGE, on every backend and whatever N.",
  args = { "float logits", "int targets" },
  returns = "float",
  shape = "cross_entropy(logits, targets)",
  semantics = "torch.nn.functional.cross_entropy with reduction='mean', no weights, no ignore_index and no label smoothing, for 2-D logits only; N = 0 gives NaN; backends that run the decomposition do not check the range of targets (an out-of-range target adds 0 to the sum there)",
  examples = {
    -- -(log_softmax([1, 2, 3])[2] + log_softmax([0, 0, -1])[0]) / 2 = (0.40760596 + 0.86199480) / 2
    { logits = { shape = { 2, 3 }, data = { 1, 2, 3, 0, 0, -1 } },
      targets = { shape = { 2 }, data = { 2, 0 } },
      out = { shape = {}, data = { 0.63480038 } } },
    -- (log(1 + e^1.5) + log(1 + e^-1) + log(2)) / 3
    { logits = { shape = { 3, 2 }, data = { 0.5, -1, 2, 1, 0, 0 } },
      targets = { shape = { 3 }, data = { 1, 0, 1 } },
      out = { shape = {}, data = { 0.90260738 } } },
    -- a -inf logit off the target costs nothing
    { logits = { shape = { 1, 2 }, data = { 0, "-inf" } },
      targets = { shape = { 1 }, data = { 0 } },
      out = { shape = {}, data = { 0 } } },
  },
  tolerance = 1e-5,
  domain = { targets = "index" },
  index_range = { targets = "size(logits, 1)" },
  backward = { logits = "cross_entropy_grad(grad, logits, targets)" },
  -- the one-hot mask compares each row's target with the class index: targets [N] is
  -- expanded to [C, N] and transposed, arange(C) expanded to [N, C]; mask_where (not a
  -- product with the mask) keeps a -inf log-probability off the target out of the sum
  decompose = {
    "t = int_swap_dims(int_expand(targets, shape(float_swap_dims(logits, 0, 1))), 0, 1)",
    "cls = int_expand(int_arange(device(logits), 0, size(logits, 1), 1), shape(logits))",
    "picked = float_mask_where(float_zeros(device(logits), shape(logits)), int_equal(t, cls), float_log_softmax(logits, 1))",
    "-float_sum(picked) / size(logits, 0)",
  },
  bound = "memory",
}
