-- Neural-network module ops that are composites: normalization layers (layer, group and batch
-- norm), embedding lookup and scaled dot-product attention. Ids 720-749. Every op here is a
-- decomposition into existing ops (docs/composites.md), so it runs on every backend that runs
-- the pieces, and autodiff differentiates it through the pieces (no `backward`), except
-- float_attention: the CPU runs it and its three backward ops (ids 727-729) natively,
-- blockwise, and its gradient is those ops (FlashAttention-2's backward).
-- Semantics follow torch.nn.functional; the differences are in each op's `semantics`.
--
-- Normalizations use the biased variance (mean of squared deviations, as PyTorch normalizes
-- with) computed in two passes, mean first; y = (x - mean) / sqrt(var + eps) * weight + bias.
-- The ops take weight and bias always (PyTorch's None is ones and zeros). Layouts: channels
-- are dim 1 ([N, C, *], as PyTorch) for group and batch norm.
--
-- Hand-computed examples: rows are chosen so that var + eps is a perfect square, e.g.
-- {1, 1, 3, 3}: mean 2, var 1, with eps 3 the std is 2 and the row normalizes to
-- {-0.5, -0.5, 0.5, 0.5}; {-5, 5, -1, 1}: mean 0, var (25 + 25 + 1 + 1) / 4 = 13, with eps 3
-- the std is 4: {-1.25, 1.25, -0.25, 0.25}; {1, 2, 3, 4}: mean 2.5, var (2.25 + 0.25 + 0.25 +
-- 2.25) / 4 = 1.25, with eps 2.75 the std is 2: {-0.75, -0.25, 0.25, 0.75}.

op {
  name = "float_layer_norm",
  autocast = "f32",
  id = 720,
  family = "module",
  doc = "Layer normalization (torch.nn.functional.layer_norm with normalized_shape = weight's shape): x [..., *S] is normalized over its trailing dims S, the shape of weight and bias (S = [D] normalizes over the last dim), with the biased variance: (x - mean) / sqrt(var + eps) * weight + bias.",
  args = { "float x", "float weight", "float bias", "f32 eps" },
  returns = "float",
  shape = "layer_norm(x, weight, bias)",
  semantics = "normalized_shape is implied by weight (at least 1 dim; x's trailing dims must equal it) and bias must have the same shape; PyTorch's weight=None / bias=None are ones / zeros; a row holding NaN or inf gives NaN in the whole row",
  examples = {
    -- rows {1, 1, 3, 3} -> {-0.5, -0.5, 0.5, 0.5} and {-5, 5, -1, 1} -> {-1.25, 1.25, -0.25,
    -- 0.25} (eps 3, see the top); times weight {1, 2, -1, 0.5} plus bias {0, 1, 0, -1}:
    -- {-0.5, -1 + 1, -0.5, 0.25 - 1} and {-1.25, 2.5 + 1, 0.25, 0.125 - 1}.
    { x = { shape = { 2, 4 }, data = { 1, 1, 3, 3, -5, 5, -1, 1 } },
      weight = { shape = { 4 }, data = { 1, 2, -1, 0.5 } },
      bias = { shape = { 4 }, data = { 0, 1, 0, -1 } }, eps = 3,
      out = { shape = { 2, 4 }, data = { -0.5, 0, -0.5, -0.75, -1.25, 3.5, 0.25, -0.875 } } },
    -- over the last two dims (weight [2, 2]): {1, 2, 3, 4} with eps 2.75 -> {-0.75, -0.25,
    -- 0.25, 0.75}; {0, 0, 0, 0} has var 0 and normalizes to 0; plus bias 1.
    { x = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 0, 0, 0, 0 } },
      weight = { shape = { 2, 2 }, data = { 1, 1, 1, 1 } },
      bias = { shape = { 2, 2 }, data = { 1, 1, 1, 1 } }, eps = 2.75,
      out = { shape = { 2, 2, 2 }, data = { 0.25, 0.75, 1.25, 1.75, 1, 1, 1, 1 } } },
    -- PyTorch's default eps 1e-5: {1, 3} has mean 2, var 1: -+1 / sqrt(1.00001) = -+0.999995
    -- (1 - 1e-5 / 2 to 1e-10); a NaN spoils its row only.
    { x = { shape = { 2, 2 }, data = { 1, 3, "nan", 1 } },
      weight = { shape = { 2 }, data = { 1, 1 } },
      bias = { shape = { 2 }, data = { 0, 0 } }, eps = 1e-5,
      out = { shape = { 2, 2 }, data = { -0.999995, 0.999995, "nan", "nan" } } },
  },
  tolerance = 1e-5,
  -- rows: the elements before the normalized dims (m of them each); m + idiv(1, m + 1) is
  -- max(m, 1), so an empty weight (then x is empty too) divides by 1
  decompose = {
    "m = numel(weight)",
    "xr = float_reshape(x, array(idiv(numel(x), m + idiv(1, m + 1)), m))",
    "d = xr - float_mean_dim(xr, 1)",
    "y = d / float_sqrt(float_mean_dim(d * d, 1) + eps)",
    "float_reshape(y, shape(x)) * weight + bias",
  },
  -- two fused ops (one row pass each on the CPU) where autodiff would differentiate the ten
  -- pieces above; bias's gradient is grad summed over the rows (the engine's broadcast sum)
  backward = {
    x = "layer_norm_backward(grad, x, weight, eps)",
    weight = "layer_norm_backward_weight(grad, x, weight, eps)",
    bias = "grad",
  },
  bound = "memory",
  nmse = 1e-6,
}

-- The backward ops of float_layer_norm. Per row (the m = numel(weight) trailing elements),
-- with xhat = (x - mean) / s, s = sqrt(var + eps) and gw = grad * weight:
-- dx = (gw - mean(gw) - xhat * mean(gw * xhat)) / s, and the weight's gradient is
-- grad * xhat summed over the rows (PyTorch's native_layer_norm_backward).
--
-- Hand-computed examples (checked against torch.nn.functional.layer_norm's autograd in
-- float64). Rows {1, 1, 3, 3} (eps 3: mean 2, s 2, xhat {-1/2, -1/2, 1/2, 1/2}) and
-- {-5, 5, -1, 1} (s 4, xhat {-5/4, 5/4, -1/4, 1/4}), weight {1, 2, -1, 1/2}: grad row 0
-- {1, 0, 0, 0} gives gw {1, 0, 0, 0}, mean(gw) 1/4, mean(gw xhat) -1/8, so dx = ({3/4, -1/4,
-- -1/4, -1/4} + {-1/16, -1/16, 1/16, 1/16}) / 2 = {0.34375, -0.15625, -0.09375, -0.09375};
-- grad row 1 {1/2, -1, 2, 1}: gw {1/2, -2, -2, 1/2}, mean -3/4, gw xhat {-5/8, -5/2, 1/2,
-- 1/8}, mean -5/8: dx = ({5/4, -5/4, -5/4, 5/4} + 5/8 xhat) / 4 = {0.1171875, -0.1171875,
-- -0.3515625, 0.3515625}. The weight's gradient: {-1/2, 0, 0, 0} + {-5/8, -5/4, -1/2, 1/4}.
-- Over two trailing dims, eps 2.75: {1, 2, 3, 4} (s 2, xhat {-3/4, -1/4, 1/4, 3/4}) with
-- grad {1, 2, 3, 4}, weight ones: gw - mean = xhat * 2, mean(gw xhat) = 5/8, dx = (2 xhat -
-- 5/8 xhat) / 2 = 11/16 xhat; the zero row has xhat 0: dx = (gw - mean(gw)) / sqrt(2.75) for
-- grad {1, -1, 2, 0}, i.e. {1/2, -3/2, 3/2, -1/2} * 0.60302269.
local LN_BWD_ARGS = { "float grad", "float x", "float weight", "f32 eps" }
local function ln_bwd_decompose(last)
  return {
    "m = numel(weight)",
    "r = idiv(numel(x), m + idiv(1, m + 1))",
    "xr = float_reshape(x, array(r, m))",
    "d = xr - float_mean_dim(xr, 1)",
    "s = float_sqrt(float_mean_dim(d * d, 1) + eps)",
    "xhat = d / s",
    last[1],
    last[2],
  }
end

op {
  name = "float_layer_norm_backward",
  id = 730,
  family = "module",
  doc = "The gradient of float_layer_norm with respect to x: per row of the normalized dims, (gw - mean(gw) - xhat * mean(gw * xhat)) / sqrt(var + eps) with gw = grad * weight and xhat the normalized row (PyTorch's native_layer_norm_backward); x's shape.",
  args = LN_BWD_ARGS,
  returns = "float",
  shape = "layer_norm_backward(grad, x, weight)",
  semantics = "grad has x's shape and weight gives the normalized shape, as in float_layer_norm; a row holding NaN or inf gives NaN in the whole row",
  examples = {
    { grad = { shape = { 2, 4 }, data = { 1, 0, 0, 0, 0.5, -1, 2, 1 } },
      x = { shape = { 2, 4 }, data = { 1, 1, 3, 3, -5, 5, -1, 1 } },
      weight = { shape = { 4 }, data = { 1, 2, -1, 0.5 } }, eps = 3,
      out = { shape = { 2, 4 }, data = { 0.34375, -0.15625, -0.09375, -0.09375, 0.1171875, -0.1171875, -0.3515625, 0.3515625 } } },
    { grad = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 1, -1, 2, 0 } },
      x = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 0, 0, 0, 0 } },
      weight = { shape = { 2, 2 }, data = { 1, 1, 1, 1 } }, eps = 2.75,
      out = { shape = { 2, 2, 2 }, data = { -0.515625, -0.171875, 0.171875, 0.515625, 0.301511345, -0.904534034, 0.904534034, -0.301511345 } } },
  },
  tolerance = 1e-5,
  decompose = ln_bwd_decompose({
    "gw = float_reshape(grad * weight, array(r, m))",
    "float_reshape((gw - float_mean_dim(gw, 1) - xhat * float_mean_dim(gw * xhat, 1)) / s, shape(x))",
  }),
  differentiable = false,
  why = "a backward op: second derivatives of layer_norm are not supported",
  bound = "memory",
  nmse = 1e-6,
}

op {
  name = "float_layer_norm_backward_weight",
  id = 731,
  family = "module",
  doc = "The gradient of float_layer_norm with respect to weight: grad * xhat summed over the rows (every element before the normalized dims), xhat = (x - mean) / sqrt(var + eps) per row; weight's shape.",
  args = LN_BWD_ARGS,
  returns = "float",
  shape = "layer_norm_backward_weight(grad, x, weight)",
  semantics = "grad has x's shape and weight gives the normalized shape, as in float_layer_norm (weight's values are not read); no rows (x empty) give zeros",
  examples = {
    { grad = { shape = { 2, 4 }, data = { 1, 0, 0, 0, 0.5, -1, 2, 1 } },
      x = { shape = { 2, 4 }, data = { 1, 1, 3, 3, -5, 5, -1, 1 } },
      weight = { shape = { 4 }, data = { 1, 2, -1, 0.5 } }, eps = 3,
      out = { shape = { 4 }, data = { -1.125, -1.25, -0.5, 0.25 } } },
    -- grad {1, 2, 3, 4} times xhat {-3/4, -1/4, 1/4, 3/4}; the zero row adds 0
    { grad = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 1, -1, 2, 0 } },
      x = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, 0, 0, 0, 0 } },
      weight = { shape = { 2, 2 }, data = { 1, 1, 1, 1 } }, eps = 2.75,
      out = { shape = { 2, 2 }, data = { -0.75, -0.5, 0.75, 3 } } },
  },
  tolerance = 1e-5,
  decompose = ln_bwd_decompose({
    "gr = float_reshape(grad, array(r, m))",
    "float_reshape(float_sum_dim(gr * xhat, 0), shape(weight))",
  }),
  differentiable = false,
  why = "a backward op: second derivatives of layer_norm are not supported",
  bound = "memory",
  nmse = 1e-6,
}

op {
  name = "float_group_norm",
  autocast = "f32",
  id = 721,
  family = "module",
  doc = "Group normalization (torch.nn.functional.group_norm): x [N, C, *] with its C channels split into num_groups groups of C / num_groups consecutive channels; each sample's group is normalized over its channels and spatial dims with the biased variance, then scaled and shifted per channel by weight [C] and bias [C].",
  args = { "float x", "i64 num_groups", "float weight", "float bias", "f32 eps" },
  returns = "float",
  shape = "group_norm(x, num_groups, weight, bias)",
  semantics = "num_groups must be at least 1 and divide C (TD_E_INVALID, TD_E_SHAPE); weight and bias are required (PyTorch's None: ones and zeros)",
  examples = {
    -- 2 groups of 2 channels: group 0 = {1, 1 | 3, 3} -> {-0.5, -0.5 | 0.5, 0.5}, group 1 =
    -- {-5, 5 | -1, 1} -> {-1.25, 1.25 | -0.25, 0.25} (eps 3); per channel times weight
    -- {1, 2, -1, 0.5} plus bias {0, 1, 0, -1}: {-0.5, -0.5}, {1 + 1, 1 + 1}, {1.25, -1.25},
    -- {-0.125 - 1, 0.125 - 1}.
    { x = { shape = { 1, 4, 2 }, data = { 1, 1, 3, 3, -5, 5, -1, 1 } }, num_groups = 2,
      weight = { shape = { 4 }, data = { 1, 2, -1, 0.5 } },
      bias = { shape = { 4 }, data = { 0, 1, 0, -1 } }, eps = 3,
      out = { shape = { 1, 4, 2 }, data = { -0.5, -0.5, 2, 2, 1.25, -1.25, -1.125, -0.875 } } },
    -- one group ([N, C] input): the samples {1, 3} and {7, 5} (mean 2 and 6, var 1, eps 3)
    -- -> {-0.5, 0.5} and {0.5, -0.5}; times weight {2, 1}.
    { x = { shape = { 2, 2 }, data = { 1, 3, 7, 5 } }, num_groups = 1,
      weight = { shape = { 2 }, data = { 2, 1 } },
      bias = { shape = { 2 }, data = { 0, 0 } }, eps = 3,
      out = { shape = { 2, 2 }, data = { -1, 0.5, 1, -0.5 } } },
    -- a group per channel (instance norm) of [1, 2, 2, 2]: {1, 2, 3, 4} with eps 2.75 ->
    -- {-0.75, -0.25, 0.25, 0.75}; the constant channel -> 0, plus its bias 1.
    { x = { shape = { 1, 2, 2, 2 }, data = { 1, 2, 3, 4, 5, 5, 5, 5 } }, num_groups = 2,
      weight = { shape = { 2 }, data = { 1, 1 } },
      bias = { shape = { 2 }, data = { 0, 1 } }, eps = 2.75,
      out = { shape = { 1, 2, 2, 2 }, data = { -0.75, -0.25, 0.25, 0.75, 1, 1, 1, 1 } } },
  },
  tolerance = 1e-5,
  -- s: the spatial elements per channel (numel / (N C), dividing by max(N C, 1): with N C = 0
  -- any s gives the right, empty, reshapes)
  decompose = {
    "n = size(x, 0)",
    "c = size(x, 1)",
    "s = idiv(numel(x), n * c + idiv(1, n * c + 1))",
    "xr = float_reshape(x, array(n, num_groups, idiv(c, num_groups) * s))",
    "d = xr - float_mean_dim(xr, 2)",
    "y = float_reshape(d / float_sqrt(float_mean_dim(d * d, 2) + eps), array(n, c, s))",
    "w = float_reshape(weight, array(1, c, 1))",
    "float_reshape(y * w + float_reshape(bias, array(1, c, 1)), shape(x))",
  },
  bound = "memory",
  nmse = 1e-6,
}

op {
  name = "float_batch_norm_infer",
  autocast = "f32",
  id = 722,
  family = "module",
  doc = "Batch normalization in inference form (torch.nn.functional.batch_norm with training=False): x [N, C, *] normalized per channel with the given running statistics, (x - running_mean) / sqrt(running_var + eps) * weight + bias, all four [C].",
  args = { "float x", "float running_mean", "float running_var", "float weight", "float bias", "f32 eps" },
  returns = "float",
  shape = "batch_norm_infer(x, running_mean, running_var, weight, bias)",
  semantics = "x needs at least 2 dims; weight and bias are required (PyTorch's None: ones and zeros); the running statistics are inputs only, and differentiable like the others (PyTorch treats them as buffers)",
  examples = {
    -- [N 2, C 2]: channel 0 has mean 1 and std sqrt(3 + 1) = 2, channel 1 mean 0 and std
    -- sqrt(15 + 1) = 4: (1 - 1) / 2 * 1 + 0.5, (2 - 0) / 4 * 2 - 1, (3 - 1) / 2 + 0.5,
    -- 4 / 4 * 2 - 1.
    { x = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } },
      running_mean = { shape = { 2 }, data = { 1, 0 } },
      running_var = { shape = { 2 }, data = { 3, 15 } },
      weight = { shape = { 2 }, data = { 1, 2 } },
      bias = { shape = { 2 }, data = { 0.5, -1 } }, eps = 1,
      out = { shape = { 2, 2 }, data = { 0.5, 0, 1.5, 1 } } },
    -- [1, 2, 3], eps 0: channel 0 {0, 2, 4} - 2 over 2, channel 1 {1, -1, 3} - 1 over 0.5.
    { x = { shape = { 1, 2, 3 }, data = { 0, 2, 4, 1, -1, 3 } },
      running_mean = { shape = { 2 }, data = { 2, 1 } },
      running_var = { shape = { 2 }, data = { 4, 0.25 } },
      weight = { shape = { 2 }, data = { 1, 1 } },
      bias = { shape = { 2 }, data = { 0, 0 } }, eps = 0,
      out = { shape = { 1, 2, 3 }, data = { -1, 0, 1, 0, -4, 4 } } },
    -- [1, 1, 2, 2]: ({1, 2, 3, 4} - 2.5) / sqrt(1 + 3) = {-0.75, -0.25, 0.25, 0.75}, times 2 plus 1.
    { x = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      running_mean = { shape = { 1 }, data = { 2.5 } },
      running_var = { shape = { 1 }, data = { 1 } },
      weight = { shape = { 1 }, data = { 2 } },
      bias = { shape = { 1 }, data = { 1 } }, eps = 3,
      out = { shape = { 1, 1, 2, 2 }, data = { -0.5, 0.5, 1.5, 2.5 } } },
  },
  tolerance = 1e-5,
  domain = { running_var = "positive" },
  gradcheck = { running_var = "positive" },
  -- x as [N, C, S] (S as in float_group_norm), the statistics as [1, C, 1]
  decompose = {
    "n = size(x, 0)",
    "c = size(x, 1)",
    "r = array(1, c, 1)",
    "xr = float_reshape(x, array(n, c, idiv(numel(x), n * c + idiv(1, n * c + 1))))",
    "y = (xr - float_reshape(running_mean, r)) / float_sqrt(float_reshape(running_var, r) + eps)",
    "float_reshape(y * float_reshape(weight, r) + float_reshape(bias, r), shape(x))",
  },
  bound = "memory",
  nmse = 1e-6,
}

op {
  name = "float_batch_norm_train",
  autocast = "f32",
  id = 723,
  family = "module",
  doc = "Batch normalization in training form (torch.nn.functional.batch_norm with training=True): x [N, C, *] normalized per channel with the batch statistics over every dim but 1 (biased variance), times weight [C] plus bias [C]. Updating running statistics is the caller's business: the batch mean is float_mean_dim over the same dims, and PyTorch's running_var takes the unbiased variance (times n / (n - 1)).",
  args = { "float x", "float weight", "float bias", "f32 eps" },
  returns = "float",
  shape = "batch_norm_train(x, weight, bias)",
  semantics = "one value per channel (N times the spatial size is 1) is TD_E_SHAPE, as PyTorch refuses it in training; the op neither reads nor updates running statistics (no momentum)",
  examples = {
    -- [N 2, C 2]: channel 0 {1, 3} -> {-0.5, 0.5}, channel 1 {7, 5} -> {0.5, -0.5} (mean 2
    -- and 6, var 1, eps 3); times weight {2, 1} plus bias {0, 1}.
    { x = { shape = { 2, 2 }, data = { 1, 7, 3, 5 } },
      weight = { shape = { 2 }, data = { 2, 1 } },
      bias = { shape = { 2 }, data = { 0, 1 } }, eps = 3,
      out = { shape = { 2, 2 }, data = { -1, 1.5, 1, 0.5 } } },
    -- [2, 1, 2]: the one channel holds {-5, 5} and {-1, 1} across the batch (var 13, eps 3).
    { x = { shape = { 2, 1, 2 }, data = { -5, 5, -1, 1 } },
      weight = { shape = { 1 }, data = { 1 } },
      bias = { shape = { 1 }, data = { 0 } }, eps = 3,
      out = { shape = { 2, 1, 2 }, data = { -1.25, 1.25, -0.25, 0.25 } } },
    -- [1, 2, 2, 2]: {1, 2, 3, 4} with eps 2.75; the constant channel gives its bias -2.
    { x = { shape = { 1, 2, 2, 2 }, data = { 1, 2, 3, 4, 5, 5, 5, 5 } },
      weight = { shape = { 2 }, data = { 1, 3 } },
      bias = { shape = { 2 }, data = { 0, -2 } }, eps = 2.75,
      out = { shape = { 1, 2, 2, 2 }, data = { -0.75, -0.25, 0.25, 0.75, -2, -2, -2, -2 } } },
  },
  tolerance = 1e-5,
  -- x as [N, C, S]; the statistics are means over S then over N (equal counts: the mean)
  decompose = {
    "n = size(x, 0)",
    "c = size(x, 1)",
    "r = array(1, c, 1)",
    "xr = float_reshape(x, array(n, c, idiv(numel(x), n * c + idiv(1, n * c + 1))))",
    "d = xr - float_mean_dim(float_mean_dim(xr, 2), 0)",
    "v = float_mean_dim(float_mean_dim(d * d, 2), 0)",
    "y = d / float_sqrt(v + eps) * float_reshape(weight, r) + float_reshape(bias, r)",
    "float_reshape(y, shape(x))",
  },
  bound = "memory",
  nmse = 1e-6,
}

op {
  name = "float_embedding",
  id = 724,
  family = "module",
  doc = "Embedding lookup (torch.nn.functional.embedding): the rows of weight [V, D] at indices (ints of any shape), a [..., D] tensor; an index outside [0, V) is TD_E_RANGE, checked before any backend runs (also when D = 0 makes the result empty). Its gradient scatter-adds grad's rows into weight (float_select's backward, select_add).",
  args = { "float weight", "int indices" },
  returns = "float",
  shape = "embedding(weight, indices)",
  semantics = "the arguments are in PyTorch's module order (weight first, as burn's embedding); no padding_idx, max_norm or scale_grad_by_freq; negative indices are out of range, as in PyTorch",
  examples = {
    -- rows 0, 1, 2 of weight are {0, 1}, {10, 11}, {20, 21}: indices {{2, 0}, {1, 2}}.
    { weight = { shape = { 3, 2 }, data = { 0, 1, 10, 11, 20, 21 } },
      indices = { shape = { 2, 2 }, data = { 2, 0, 1, 2 } },
      out = { shape = { 2, 2, 2 }, data = { 20, 21, 0, 1, 10, 11, 20, 21 } } },
    -- a 0-d index gives one row, [D].
    { weight = { shape = { 3, 2 }, data = { 0, 1, 10, 11, 20, 21 } },
      indices = { shape = {}, data = { 1 } },
      out = { shape = { 2 }, data = { 10, 11 } } },
    -- rows {0.5, -1, 2} and {3, 4, 5} of a [2, 3] table at {1, 1, 0, 1}.
    { weight = { shape = { 2, 3 }, data = { 0.5, -1, 2, 3, 4, 5 } },
      indices = { shape = { 4 }, data = { 1, 1, 0, 1 } },
      out = { shape = { 4, 3 }, data = { 3, 4, 5, 3, 4, 5, 0.5, -1, 2, 3, 4, 5 } } },
  },
  domain = { indices = "index" },
  index_range = { indices = "size(weight, 0)" },
  -- the rows at the flattened indices, reshaped to [..., D]: `like` is an int tensor of that
  -- shape (a one-hot of width 1, [..., 1], repeated D times along its last dim), as the
  -- language cannot append D to shape(indices)
  decompose = {
    "rows = float_select(weight, 0, int_reshape(indices, array(numel(indices))))",
    "like = int_repeat_dim(int_one_hot(indices * 0, 1), -1, size(weight, 1))",
    "float_reshape(rows, shape(like))",
  },
  bound = "memory",
}

op {
  name = "float_attention",
  autocast = "low",
  id = 725,
  family = "module",
  doc = "Scaled dot-product attention (torch.nn.functional.scaled_dot_product_attention without a mask): softmax(query @ key^T / sqrt(E)) @ value over query [B, H, L, E], key [B, H, S, E], value [B, H, S, Ev], a [B, H, L, Ev] result; causal (0 or 1) masks key j for query i when j > i (the top-left aligned lower triangle, as PyTorch's is_causal).",
  args = { "float query", "float key", "float value", "i64 causal" },
  returns = "float",
  shape = "attention(query, key, value, causal)",
  semantics = "no dropout and no custom scale (always 1 / sqrt(E)); batch and head dims must match exactly (no broadcasting); E = 0 gives NaN (0 * inf, as PyTorch's math path); S = 0 gives zeros",
  examples = {
    -- E 1 (scale 1): scores q_i k_j: row 0 {0, 0} -> weights {1/2, 1/2}, out 3; row 1 {0, 1}
    -- -> {1, e} / (1 + e) = {0.26894142, 0.73105858}, out 2 * 0.26894142 + 4 * 0.73105858.
    { query = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      key = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      value = { shape = { 1, 1, 2, 1 }, data = { 2, 4 } }, causal = 0,
      out = { shape = { 1, 1, 2, 1 }, data = { 3, 3.46211716 } } },
    -- causal: query 0 sees key 0 only (out 2); query 1 both, as above.
    { query = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      key = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      value = { shape = { 1, 1, 2, 1 }, data = { 2, 4 } }, causal = 1,
      out = { shape = { 1, 1, 2, 1 }, data = { 2, 3.46211716 } } },
    -- E 4 (scale 1/2): query . key = {4, 0} -> {2, 0} -> {e^2, 1} / (1 + e^2) = {0.88079708,
    -- 0.11920292} (unscaled it would be {0.98201379, 0.01798621}); value rows {1, 0}, {0, 1}.
    { query = { shape = { 1, 1, 1, 4 }, data = { 1, 1, 1, 1 } },
      key = { shape = { 1, 1, 2, 4 }, data = { 1, 1, 1, 1, 0, 0, 0, 0 } },
      value = { shape = { 1, 1, 2, 2 }, data = { 1, 0, 0, 1 } }, causal = 0,
      out = { shape = { 1, 1, 1, 2 }, data = { 0.88079708, 0.11920292 } } },
    -- one key per batch: its weight is 1 whatever the score, so out = value.
    { query = { shape = { 2, 1, 1, 1 }, data = { 5, -3 } },
      key = { shape = { 2, 1, 1, 1 }, data = { 2, 7 } },
      value = { shape = { 2, 1, 1, 1 }, data = { 1.5, -2 } }, causal = 1,
      out = { shape = { 2, 1, 1, 1 }, data = { 1.5, -2 } } },
  },
  tolerance = 1e-5,
  -- the causal mask is true where column - row > offset: offset 0 for causal, S (never) else;
  -- masked scores are -inf (-1.0 / 0.0) before the softmax
  decompose = {
    "s = float_matmul(query, float_swap_dims(key, -1, -2)) / float_sqrt(float_full(device(query), array(1), size(query, -1)))",
    "m = bool_tril_mask(device(query), array(size(query, 2), size(key, 2)), (1 - causal) * size(key, 2))",
    "float_matmul(float_softmax(float_mask_fill(s, m, -1.0 / 0.0), -1), value)",
  },
  -- the fused gradients (FlashAttention-2's backward): a backend with their kernels never
  -- builds the [B, H, L, S] scores; elsewhere the backward ops run their decompositions
  backward = {
    shared = { "all = attention_backward(query, key, value, result, grad, causal)" },
    query = "unpacked(all)",
    key = "unpacked(all)",
    value = "unpacked(all)",
  },
  bound = "compute",
  nmse = 1e-6,
}

-- The backward ops of float_attention. With P = softmax(masked(q k^T / sqrt(E))) (the
-- forward's weights), dP = grad v^T and D = rowsum(grad * output) (output the forward's
-- result, which makes D = rowsum(P * dP)), dS = P * (dP - D): dq = dS k / sqrt(E),
-- dk = dS^T q / sqrt(E), dv = P^T grad. Each is its own op (an op has one result); the CPU
-- kernels recompute P block by block from q, k and each row's logsumexp, never the whole
-- [L, S] (docs/kernels.md).
--
-- Hand-computed examples: q = k = {0, 1} (E 1, scale 1), v = {2, 4}, grad {1, 1}.
-- Non-causal: P row 0 {1/2, 1/2}, row 1 {a, b} = {1, e} / (1 + e) = {0.26894142,
-- 0.73105858}; output {3, 2a + 4b = 3.46211716}; dP row i = grad_i v^T = {2, 4}, D_i =
-- output_i; dS row 0 = {1/2 (2 - 3), 1/2 (4 - 3)} = {-1/2, 1/2}, row 1 = {a (2 -
-- 3.46211716), b (4 - 3.46211716)} = {-0.39322387, 0.39322387}. dq_i = dS_i0 k_0 + dS_i1 k_1
-- = {1/2, 0.39322387}; dk_j = dS_0j q_0 + dS_1j q_1 = {-0.39322387, 0.39322387}; dv_j =
-- P_0j + P_1j = {0.76894142, 1.23105858}.
-- Causal: row 0 sees key 0 only (P {1, 0}, output 2, dS row 0 = {1 (2 - 2), 0} = {0, 0});
-- row 1 as above: dq {0, 0.39322387}, dk {-0.39322387, 0.39322387}, dv {1.26894142,
-- 0.73105858}.
local function attn_bwd_decompose(last)
  return {
    "s = float_matmul(query, float_swap_dims(key, -1, -2)) / float_sqrt(float_full(device(query), array(1), size(query, -1)))",
    "m = bool_tril_mask(device(query), array(size(query, 2), size(key, 2)), (1 - causal) * size(key, 2))",
    "p = float_softmax(float_mask_fill(s, m, -1.0 / 0.0), -1)",
    "dp = float_matmul(grad, float_swap_dims(value, -1, -2))",
    "ds = p * (dp - float_sum_dim(grad * output, -1))",
    last,
  }
end
local function attn_bwd_examples(want_nc, want_c)
  local function ex(causal, want)
    return { query = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      key = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      value = { shape = { 1, 1, 2, 1 }, data = { 2, 4 } },
      output = { shape = { 1, 1, 2, 1 }, data = { causal == 1 and 2 or 3, 3.46211716 } },
      grad = { shape = { 1, 1, 2, 1 }, data = { 1, 1 } }, causal = causal,
      out = { shape = { 1, 1, 2, 1 }, data = want } }
  end
  return { ex(0, want_nc), ex(1, want_c) }
end
local ATTN_BWD_ARGS = { "float query", "float key", "float value", "float output", "float grad", "i64 causal" }
local ATTN_BWD_SEMANTICS = "output must be float_attention(query, key, value, causal) and grad has its shape [B, H, L, Ev]; defined for finite inputs (the many-shape comparisons feed no NaN or inf: which masked products are 0 * inf differs between a blocked kernel and the decomposition); S = 0 or L = 0 give zeros where the result is not empty; E = 0 gives NaN in the value gradient (L, S > 0), as the forward"

op {
  name = "float_attention_backward_query",
  id = 727,
  family = "module",
  doc = "The gradient of float_attention with respect to query: dS key / sqrt(E), dS = P * (grad value^T - rowsum(grad * output)) with P the attention weights and output the forward's result; a [B, H, L, E] tensor.",
  args = ATTN_BWD_ARGS,
  returns = "float",
  shape = "attention_backward_query(query, key, value, output, grad, causal)",
  semantics = ATTN_BWD_SEMANTICS,
  examples = attn_bwd_examples({ 0.5, 0.39322387 }, { 0, 0.39322387 }),
  tolerance = 1e-5,
  decompose = attn_bwd_decompose("float_matmul(ds, key) / float_sqrt(float_full(device(query), array(1), size(query, -1)))"),
  differentiable = false,
  why = "a backward op: second derivatives of attention are not supported",
  nmse = 1e-6,
}

op {
  name = "float_attention_backward_key",
  id = 728,
  family = "module",
  doc = "The gradient of float_attention with respect to key: dS^T query / sqrt(E), dS as in float_attention_backward_query; a [B, H, S, E] tensor.",
  args = ATTN_BWD_ARGS,
  returns = "float",
  shape = "attention_backward_key(query, key, value, output, grad, causal)",
  semantics = ATTN_BWD_SEMANTICS,
  examples = attn_bwd_examples({ -0.39322387, 0.39322387 }, { -0.39322387, 0.39322387 }),
  tolerance = 1e-5,
  decompose = attn_bwd_decompose("float_matmul(float_swap_dims(ds, -1, -2), query) / float_sqrt(float_full(device(query), array(1), size(query, -1)))"),
  differentiable = false,
  why = "a backward op: second derivatives of attention are not supported",
  nmse = 1e-6,
}

op {
  name = "float_attention_backward_value",
  id = 729,
  family = "module",
  doc = "The gradient of float_attention with respect to value: P^T grad, P the attention weights; a [B, H, S, Ev] tensor.",
  args = ATTN_BWD_ARGS,
  returns = "float",
  shape = "attention_backward_value(query, key, value, output, grad, causal)",
  semantics = ATTN_BWD_SEMANTICS,
  examples = attn_bwd_examples({ 0.76894142, 1.23105858 }, { 1.26894142, 0.73105858 }),
  tolerance = 1e-5,
  decompose = {
    "s = float_matmul(query, float_swap_dims(key, -1, -2)) / float_sqrt(float_full(device(query), array(1), size(query, -1)))",
    "m = bool_tril_mask(device(query), array(size(query, 2), size(key, 2)), (1 - causal) * size(key, 2))",
    "p = float_softmax(float_mask_fill(s, m, -1.0 / 0.0), -1)",
    "float_matmul(float_swap_dims(p, -1, -2), grad)",
  },
  differentiable = false,
  why = "a backward op: second derivatives of attention are not supported",
  nmse = 1e-6,
}

-- All three at once (the gradient of float_attention calls this one, once per node: the
-- formulas' `shared` line): the weights, dP and dS are computed once for the three
-- products. The result is flat, dq then dk then dv, each row-major in its input's shape
-- (the engine's `unpacked` hands each input its part). The examples are those of the
-- three ops above, one after the other.
op {
  name = "float_attention_backward",
  id = 732,
  family = "module",
  doc = "The three gradients of float_attention at once, flattened one after the other: float_attention_backward_query's, then _key's, then _value's, each row-major; a 1-D tensor of numel(query) + numel(key) + numel(value) elements.",
  args = ATTN_BWD_ARGS,
  returns = "float",
  shape = "attention_backward(query, key, value, output, grad, causal)",
  semantics = ATTN_BWD_SEMANTICS,
  examples = {
    { query = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      key = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      value = { shape = { 1, 1, 2, 1 }, data = { 2, 4 } },
      output = { shape = { 1, 1, 2, 1 }, data = { 3, 3.46211716 } },
      grad = { shape = { 1, 1, 2, 1 }, data = { 1, 1 } }, causal = 0,
      out = { shape = { 6 }, data = { 0.5, 0.39322387, -0.39322387, 0.39322387, 0.76894142, 1.23105858 } } },
    { query = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      key = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      value = { shape = { 1, 1, 2, 1 }, data = { 2, 4 } },
      output = { shape = { 1, 1, 2, 1 }, data = { 2, 3.46211716 } },
      grad = { shape = { 1, 1, 2, 1 }, data = { 1, 1 } }, causal = 1,
      out = { shape = { 6 }, data = { 0, 0.39322387, -0.39322387, 0.39322387, 1.26894142, 0.73105858 } } },
  },
  tolerance = 1e-5,
  decompose = {
    "nq = numel(query)",
    "nk = numel(key)",
    "nv = numel(value)",
    "z = float_zeros(device(query), array(nq + nk + nv))",
    "dq = float_reshape(float_attention_backward_query(query, key, value, output, grad, causal), array(nq))",
    "dk = float_reshape(float_attention_backward_key(query, key, value, output, grad, causal), array(nk))",
    "dv = float_reshape(float_attention_backward_value(query, key, value, output, grad, causal), array(nv))",
    "a = float_slice_assign(z, dq, array(0), array(nq))",
    "b = float_slice_assign(a, dk, array(nq), array(nq + nk))",
    "float_slice_assign(b, dv, array(nq + nk), array(nq + nk + nv))",
  },
  differentiable = false,
  why = "a backward op: second derivatives of attention are not supported",
  nmse = 1e-6,
}

op {
  name = "float_attention_masked",
  autocast = "low",
  id = 726,
  family = "module",
  doc = "Scaled dot-product attention with an additive float mask (torch.nn.functional.scaled_dot_product_attention with a float attn_mask): softmax(query @ key^T / sqrt(E) + mask) @ value, mask broadcasting to [B, H, L, S] (-inf masks a key out); causal as in float_attention.",
  args = { "float query", "float key", "float value", "float mask", "i64 causal" },
  returns = "float",
  shape = "attention_masked(query, key, value, mask, causal)",
  semantics = "float masks only (for PyTorch's bool mask pass 0 where True and -inf where False); a mask and causal = 1 apply together, where PyTorch refuses both; a row masked out entirely gives NaN, as in PyTorch",
  examples = {
    -- the first float_attention example plus mask {{0, -inf}, {1, 0}}: row 0 sees key 0
    -- only (out 2; causal masks the same key); row 1 scores {0 + 1, 1 + 0} -> {1/2, 1/2}, out 3.
    { query = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      key = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      value = { shape = { 1, 1, 2, 1 }, data = { 2, 4 } },
      mask = { shape = { 2, 2 }, data = { 0, "-inf", 1, 0 } }, causal = 1,
      out = { shape = { 1, 1, 2, 1 }, data = { 2, 3 } } },
    -- a constant mask (0-d, 5) changes no softmax; causal as in float_attention's second example.
    { query = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      key = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      value = { shape = { 1, 1, 2, 1 }, data = { 2, 4 } },
      mask = { shape = {}, data = { 5 } }, causal = 1,
      out = { shape = { 1, 1, 2, 1 }, data = { 2, 3.46211716 } } },
    -- mask [1, 1, 2, 2] {{0, 0}, {0, -1}} evens row 1's scores {0, 1} out: both rows give 3.
    { query = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      key = { shape = { 1, 1, 2, 1 }, data = { 0, 1 } },
      value = { shape = { 1, 1, 2, 1 }, data = { 2, 4 } },
      mask = { shape = { 1, 1, 2, 2 }, data = { 0, 0, 0, -1 } }, causal = 0,
      out = { shape = { 1, 1, 2, 1 }, data = { 3, 3 } } },
  },
  tolerance = 1e-5,
  decompose = {
    "s = float_matmul(query, float_swap_dims(key, -1, -2)) / float_sqrt(float_full(device(query), array(1), size(query, -1))) + mask",
    "m = bool_tril_mask(device(query), array(size(query, 2), size(key, 2)), (1 - causal) * size(key, 2))",
    "float_matmul(float_softmax(float_mask_fill(s, m, -1.0 / 0.0), -1), value)",
  },
  bound = "compute",
  nmse = 1e-6,
}
