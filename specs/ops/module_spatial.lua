-- Spatial module ops (issue 11): 1-d convolution and pools, adaptive average pools,
-- interpolation (nearest, bilinear) and the transposed 2-d convolution. Ids 750-789.
-- Each is a decomposition into the ops of module.lua, indexing and elementwise ops, so it
-- runs on every backend that runs those (docs/composites.md); autodiff differentiates the
-- pieces, except float_conv_transpose2d, which has its own backward (its piece
-- float_conv2d_backward_input has none).
-- Layouts as PyTorch: [N, C, L] for 1-d ops, NCHW for 2-d ones; the batch dim is required
-- (no unbatched [C, L] / [C, H, W] inputs). As the 2-d ops, a batch of 0 is fine and pools
-- and interpolation need non-empty C and spatial dims (TD_E_SHAPE).
-- Attributes of the 1-d ops are i64 scalars (PyTorch's ints or 1-tuples); strides are
-- always given (PyTorch's pools default stride to the kernel: pass the kernel for that).

op {
  name = "float_conv1d",
  autocast = "low",
  id = 750,
  family = "module",
  doc = "1-D convolution (cross-correlation, as torch.nn.functional.conv1d) of x [N, C, L] with weight [O, C / groups, k] plus bias [O] -> [N, O, floor((L + 2 padding - dilation (k - 1) - 1) / stride) + 1].",
  args = { "float x", "float weight", "float bias", "i64 stride", "i64 padding", "i64 dilation", "i64 groups" },
  returns = "float",
  shape = "conv1d(x, weight, bias, stride, padding, dilation, groups)",
  semantics = "the bias is required: pass zeros for a convolution without one; zero padding only",
  examples = {
    -- stride 2, padding 1: the padded input [0,1,2,3,4,5,0] gives 3 windows at 0, 2, 4:
    -- [0,1] [2,3] [4,5] with w = [2,1]: 0+1 = 1, 4+3 = 7, 8+5 = 13; + 0.5.
    { x = { shape = { 1, 1, 5 }, data = { 1, 2, 3, 4, 5 } },
      weight = { shape = { 1, 1, 2 }, data = { 2, 1 } },
      bias = { shape = { 1 }, data = { 0.5 } },
      stride = 2, padding = 1, dilation = 1, groups = 1,
      out = { shape = { 1, 1, 3 }, data = { 1.5, 7.5, 13.5 } } },
    -- groups 2, dilation 2 (taps i and i + 2, 2 outputs of 4): channel 0 [1,2,3,4] with
    -- [1,1]: 1+3 = 4, 2+4 = 6; channel 1 [1,0,-1,2] with [1,-2]: 1+2 = 3, 0-4 = -4; + 0, + 1.
    { x = { shape = { 1, 2, 4 }, data = { 1, 2, 3, 4, 1, 0, -1, 2 } },
      weight = { shape = { 2, 1, 2 }, data = { 1, 1, 1, -2 } },
      bias = { shape = { 2 }, data = { 0, 1 } },
      stride = 1, padding = 0, dilation = 2, groups = 2,
      out = { shape = { 1, 2, 2 }, data = { 4, 6, 4, -3 } } },
    -- two samples, two channels summed (groups 1), kernel 1 with w = [2, -1]:
    -- sample 0: 2*1 - 3 = -1, 2*2 - 4 = 0; sample 1: 2*-1 - 0 = -2, 2*0 - 1 = -1.
    { x = { shape = { 2, 2, 2 }, data = { 1, 2, 3, 4, -1, 0, 0, 1 } },
      weight = { shape = { 1, 2, 1 }, data = { 2, -1 } },
      bias = { shape = { 1 }, data = { 0 } },
      stride = 1, padding = 0, dilation = 1, groups = 1,
      out = { shape = { 2, 1, 2 }, data = { -1, 0, -2, -1 } } },
  },
  -- conv2d over [N, C, 1, L] with a [O, C / groups, 1, k] weight.
  decompose = {
    "y = float_conv2d(float_reshape(x, array(size(x, 0), size(x, 1), 1, size(x, 2))), " ..
      "float_reshape(weight, array(size(weight, 0), size(weight, 1), 1, size(weight, 2))), bias, " ..
      "array(1, stride), array(0, padding), array(1, dilation), groups)",
    "float_reshape(y, array(size(y, 0), size(y, 1), size(y, 3)))",
  },
  nmse = 1e-6,
}

op {
  name = "float_max_pool1d",
  id = 751,
  family = "module",
  doc = "1-D max pooling of x [N, C, L] over windows of kernel elements with stride, padding (at most half the kernel) and dilation, as torch.nn.functional.max_pool1d; padding never wins.",
  args = { "float x", "i64 kernel", "i64 stride", "i64 padding", "i64 dilation" },
  returns = "float",
  shape = "max_pool1d(x, kernel, stride, padding, dilation)",
  semantics = "a window holding NaN gives NaN (as PyTorch); floor mode only: no ceil_mode, so a last partial window is dropped (PyTorch's ceil_mode=True keeps it)",
  examples = {
    -- windows [1,5] [5,3] [3,4] [4,2].
    { x = { shape = { 1, 1, 5 }, data = { 1, 5, 3, 4, 2 } },
      kernel = 2, stride = 1, padding = 0, dilation = 1,
      out = { shape = { 1, 1, 4 }, data = { 5, 5, 4, 4 } } },
    -- kernel 3, stride 2, padding 1: floor((5 + 2 - 3) / 2) + 1 = 3 windows over
    -- [pad,1,5,3,4,2,pad]: {1,5} {5,3,4} {4,2}.
    { x = { shape = { 1, 1, 5 }, data = { 1, 5, 3, 4, 2 } },
      kernel = 3, stride = 2, padding = 1, dilation = 1,
      out = { shape = { 1, 1, 3 }, data = { 5, 5, 4 } } },
    -- dilation 2 (taps i and i + 2), two channels: max(1,3), max(5,4); max(-1,-3), max(-5,-4).
    { x = { shape = { 1, 2, 4 }, data = { 1, 5, 3, 4, -1, -5, -3, -4 } },
      kernel = 2, stride = 1, padding = 0, dilation = 2,
      out = { shape = { 1, 2, 2 }, data = { 3, 5, -1, -4 } } },
    -- a NaN in the window wins.
    { x = { shape = { 1, 1, 2 }, data = { 1, "nan" } },
      kernel = 2, stride = 2, padding = 0, dilation = 1,
      out = { shape = { 1, 1, 1 }, data = { "nan" } } },
  },
  -- max_pool2d over [N, C, 1, L] with 1 x kernel windows.
  decompose = {
    "y = float_max_pool2d(float_reshape(x, array(size(x, 0), size(x, 1), 1, size(x, 2))), array(1, kernel), " ..
      "array(1, stride), array(0, padding), array(1, dilation))",
    "float_reshape(y, array(size(y, 0), size(y, 1), size(y, 3)))",
  },
}

op {
  name = "float_avg_pool1d",
  id = 752,
  family = "module",
  doc = "1-D average pooling of x [N, C, L] over windows of kernel elements with stride and padding (at most half the kernel), as torch.nn.functional.avg_pool1d; count_include_pad (0 or 1) says whether padded places count in the divisor.",
  args = { "float x", "i64 kernel", "i64 stride", "i64 padding", "i64 count_include_pad" },
  returns = "float",
  shape = "avg_pool1d(x, kernel, stride, padding, count_include_pad)",
  semantics = "floor mode only: no ceil_mode, so a last partial window is dropped (PyTorch's ceil_mode=True keeps it)",
  examples = {
    -- (1+2)/2, (2+3)/2, (3+4)/2.
    { x = { shape = { 1, 1, 4 }, data = { 1, 2, 3, 4 } },
      kernel = 2, stride = 1, padding = 0, count_include_pad = 1,
      out = { shape = { 1, 1, 3 }, data = { 1.5, 2.5, 3.5 } } },
    -- kernel 2, stride 2, padding 1: floor((4 + 2 - 2) / 2) + 1 = 3 windows over
    -- [pad,1,2,3,4,pad]: {pad,1} {2,3} {4,pad}; padding counted: 1/2, 5/2, 4/2.
    { x = { shape = { 1, 1, 4 }, data = { 1, 2, 3, 4 } },
      kernel = 2, stride = 2, padding = 1, count_include_pad = 1,
      out = { shape = { 1, 1, 3 }, data = { 0.5, 2.5, 2 } } },
    -- the same without the padding: 1/1, 5/2, 4/1.
    { x = { shape = { 1, 1, 4 }, data = { 1, 2, 3, 4 } },
      kernel = 2, stride = 2, padding = 1, count_include_pad = 0,
      out = { shape = { 1, 1, 3 }, data = { 1, 2.5, 4 } } },
  },
  -- avg_pool2d over [N, C, 1, L] with 1 x kernel windows.
  decompose = {
    "y = float_avg_pool2d(float_reshape(x, array(size(x, 0), size(x, 1), 1, size(x, 2))), array(1, kernel), " ..
      "array(1, stride), array(0, padding), count_include_pad)",
    "float_reshape(y, array(size(y, 0), size(y, 1), size(y, 3)))",
  },
}

-- Adaptive average pools (torch.nn.functional.adaptive_avg_pool1d/2d): output i of a dim of
-- n inputs and m outputs averages inputs floor(i n / m) to ceil((i + 1) n / m) (exclusive),
-- windows of at most ceil(n / m) + 1 elements. The decomposition gathers k = ceil(n / m) + 1
-- places per output (the window's first element on, clamped to n - 1) with float_select,
-- puts 0 where a place lies past the window's end (float_mask_fill, so an inf or NaN there
-- does not leak in), sums the k places and divides by the window's length: exact where
-- sizes do not divide, and with no prefix sums (which would give inf - inf). Bounds are
-- computed in int32 tensors, so m (n + 1) must stay below 2^31 (TD_E_INVALID).

op {
  name = "float_adaptive_avg_pool1d",
  id = 753,
  family = "module",
  doc = "1-D adaptive average pooling of x [N, C, L] to [N, C, output_size], as torch.nn.functional.adaptive_avg_pool1d: output i averages x[floor(i L / output_size) .. ceil((i + 1) L / output_size) - 1].",
  args = { "float x", "i64 output_size" },
  returns = "float",
  shape = "adaptive_avg_pool1d(x, output_size)",
  semantics = "output_size at least 1; output_size (L + 1) below 2^31",
  examples = {
    -- L = 5 to 3: windows [0, ceil(5/3) = 2), [floor(5/3) = 1, ceil(10/3) = 4),
    -- [floor(10/3) = 3, 5): (1+2)/2, (2+3+4)/3, (4+5)/2.
    { x = { shape = { 1, 1, 5 }, data = { 1, 2, 3, 4, 5 } }, output_size = 3,
      out = { shape = { 1, 1, 3 }, data = { 1.5, 3, 4.5 } } },
    -- L = 2 to 3 (more outputs than inputs): [0, 1), [0, 2), [1, 2): 2, (2+6)/2, 6.
    { x = { shape = { 1, 1, 2 }, data = { 2, 6 } }, output_size = 3,
      out = { shape = { 1, 1, 3 }, data = { 2, 4, 6 } } },
    -- L = 4 to 2: windows [0, 2) and [2, 4) (3 places gathered per window, the last one
    -- past the end): channel 0's inf at place 2 stays out of the first window, (1+2)/2,
    -- and makes the second inf; channel 1: (1+2)/2, (3+4)/2.
    { x = { shape = { 1, 2, 4 }, data = { 1, 2, "inf", 5, 1, 2, 3, 4 } }, output_size = 2,
      out = { shape = { 1, 2, 2 }, data = { 1.5, "inf", 1.5, 3.5 } } },
  },
  decompose = {
    "n = size(x, 2)",
    "m = output_size",
    "st = int_div_scalar(int_mul_scalar(int_arange(device(x), 0, m, 1), n), m)",
    "en = int_div_scalar(int_add_scalar(int_mul_scalar(int_arange(device(x), 1, m + 1, 1), n), m - 1), m)",
    "k = idiv(n + m - 1, m) + 1",
    "pos = int_add(int_reshape(st, array(m, 1)), int_arange(device(x), 0, k, 1))",
    "past = bool_not(int_lower(pos, int_reshape(en, array(m, 1))))",
    "v = float_select(x, 2, int_reshape(int_clamp_max(pos, n - 1), array(m * k)))",
    "s = float_sum_dim(float_mask_fill(float_reshape(v, array(size(x, 0), size(x, 1), m, k)), past, 0.0), 3)",
    "y = s / int_into_float(int_reshape(en - st, array(m, 1)))",
    "float_reshape(y, array(size(x, 0), size(x, 1), m))",
  },
  nmse = 1e-6,
}

op {
  name = "float_adaptive_avg_pool2d",
  id = 754,
  family = "module",
  doc = "2-D adaptive average pooling of x [N, C, H, W] to [N, C, output_size[0], output_size[1]], as torch.nn.functional.adaptive_avg_pool2d: each dim's windows as float_adaptive_avg_pool1d's.",
  args = { "float x", "dims output_size" },
  returns = "float",
  shape = "adaptive_avg_pool2d(x, output_size)",
  semantics = "output sizes at least 1; output_size[d] (in + 1) below 2^31",
  examples = {
    -- 3x3 to 2x2: rows and columns [0, 2) and [1, 3): means of {1,2,4,5}, {2,3,5,6},
    -- {4,5,7,8}, {5,6,8,9}.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } }, output_size = { 2, 2 },
      out = { shape = { 1, 1, 2, 2 }, data = { 3, 4, 6, 7 } } },
    -- 2x3 to 1x3: both rows, one column each: (1+4)/2, (2+5)/2, (3+6)/2.
    { x = { shape = { 1, 1, 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }, output_size = { 1, 3 },
      out = { shape = { 1, 1, 1, 3 }, data = { 2.5, 3.5, 4.5 } } },
    -- 2x4 to 3x2: rows [0, 1), [0, 2), [1, 2); columns [0, 2), [2, 4). Row 0 = [1,2,3,4]
    -- gives 1.5, 3.5; row 1 = [5,6,7,8] 5.5, 7.5; both rows 3.5, 5.5.
    { x = { shape = { 1, 1, 2, 4 }, data = { 1, 2, 3, 4, 5, 6, 7, 8 } }, output_size = { 3, 2 },
      out = { shape = { 1, 1, 3, 2 }, data = { 1.5, 3.5, 3.5, 5.5, 5.5, 7.5 } } },
  },
  -- float_adaptive_avg_pool1d's steps along dim 2, then along dim 3.
  decompose = {
    "h = size(x, 2)",
    "w = size(x, 3)",
    "mh = at(output_size, 0)",
    "mw = at(output_size, 1)",
    "sh = int_div_scalar(int_mul_scalar(int_arange(device(x), 0, mh, 1), h), mh)",
    "eh = int_div_scalar(int_add_scalar(int_mul_scalar(int_arange(device(x), 1, mh + 1, 1), h), mh - 1), mh)",
    "kh = idiv(h + mh - 1, mh) + 1",
    "ph = int_add(int_reshape(sh, array(mh, 1)), int_arange(device(x), 0, kh, 1))",
    "vh = float_select(x, 2, int_reshape(int_clamp_max(ph, h - 1), array(mh * kh)))",
    "mask_h = bool_reshape(bool_not(int_lower(ph, int_reshape(eh, array(mh, 1)))), array(mh, kh, 1))",
    "rh = float_sum_dim(float_mask_fill(float_reshape(vh, array(size(x, 0), size(x, 1), mh, kh, w)), mask_h, 0.0), 3)",
    "yh = float_reshape(rh / int_into_float(int_reshape(eh - sh, array(mh, 1, 1))), array(size(x, 0), size(x, 1), mh, w))",
    "sw = int_div_scalar(int_mul_scalar(int_arange(device(x), 0, mw, 1), w), mw)",
    "ew = int_div_scalar(int_add_scalar(int_mul_scalar(int_arange(device(x), 1, mw + 1, 1), w), mw - 1), mw)",
    "kw = idiv(w + mw - 1, mw) + 1",
    "pw = int_add(int_reshape(sw, array(mw, 1)), int_arange(device(x), 0, kw, 1))",
    "vw = float_select(yh, 3, int_reshape(int_clamp_max(pw, w - 1), array(mw * kw)))",
    "mask_w = bool_not(int_lower(pw, int_reshape(ew, array(mw, 1))))",
    "rw = float_sum_dim(float_mask_fill(float_reshape(vw, array(size(x, 0), size(x, 1), mh, mw, kw)), mask_w, 0.0), 4)",
    "yw = rw / int_into_float(int_reshape(ew - sw, array(mw, 1)))",
    "float_reshape(yw, array(size(x, 0), size(x, 1), mh, mw))",
  },
  nmse = 1e-6,
}

-- Interpolation (torch.nn.functional.interpolate with `size`, no scale_factor) of NCHW
-- inputs, by PyTorch's CPU index formulas, in float32 as PyTorch computes them: for a dim
-- of n inputs and m outputs, scale = n / m.
-- nearest: output i reads input min(floor(i * scale), n - 1).
-- bilinear: src = max(scale (i + 0.5) - 0.5, 0) (align_corners 0), or src = i (n - 1) / (m - 1)
-- (align_corners 1; 0 when m = 1); i0 = floor(src), i1 = min(i0 + 1, n - 1), l1 = src - i0,
-- l0 = 1 - l1, and the output l0 x[i0] + l1 x[i1] along H, then along W.

op {
  name = "float_interpolate2d_nearest",
  id = 755,
  family = "module",
  doc = "Nearest-neighbour resize of x [N, C, H, W] to [N, C, output_size[0], output_size[1]], as torch.nn.functional.interpolate(x, size, mode='nearest'): output (i, j) reads x[min(floor(i H / OH), H - 1)][min(floor(j W / OW), W - 1)], the scales in float32.",
  args = { "float x", "dims output_size" },
  returns = "float",
  shape = "interpolate2d(x, output_size)",
  semantics = "mode 'nearest' (not 'nearest-exact'); output sizes at least 1",
  examples = {
    -- 2x2 to 3x4: rows floor(i * 2/3) = 0, 0, 1; columns floor(j / 2) = 0, 0, 1, 1.
    { x = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } }, output_size = { 3, 4 },
      out = { shape = { 1, 1, 3, 4 }, data = { 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4 } } },
    -- 3x3 to 2x2: floor(i * 1.5) = 0, 1 in both dims: x[0][0], x[0][1], x[1][0], x[1][1].
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } }, output_size = { 2, 2 },
      out = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 4, 5 } } },
    -- 1x5 to 1x2, two channels: floor(j * 2.5) = 0, 2.
    { x = { shape = { 1, 2, 1, 5 }, data = { 1, 2, 3, 4, 5, -1, -2, -3, -4, -5 } }, output_size = { 1, 2 },
      out = { shape = { 1, 2, 1, 2 }, data = { 1, 3, -1, -3 } } },
  },
  decompose = {
    "h = size(x, 2)",
    "w = size(x, 3)",
    "ih = int_clamp_max(float_into_int(float_floor(int_into_float(int_arange(device(x), 0, at(output_size, 0), 1)) * " ..
      "(h / at(output_size, 0)))), h - 1)",
    "iw = int_clamp_max(float_into_int(float_floor(int_into_float(int_arange(device(x), 0, at(output_size, 1), 1)) * " ..
      "(w / at(output_size, 1)))), w - 1)",
    "float_select(float_select(x, 2, ih), 3, iw)",
  },
}

op {
  name = "float_interpolate2d_bilinear",
  id = 756,
  family = "module",
  doc = "Bilinear resize of x [N, C, H, W] to [N, C, output_size[0], output_size[1]], as torch.nn.functional.interpolate(x, size, mode='bilinear', align_corners): align_corners 1 maps the corner pixels' centres onto each other, 0 their outer edges (sources clamped at 0).",
  args = { "float x", "dims output_size", "i64 align_corners" },
  returns = "float",
  shape = "interpolate2d_bilinear(x, output_size, align_corners)",
  semantics = "align_corners is 0 or 1; no antialias; output sizes at least 1; a weight of 0 times an inf is NaN, as in PyTorch's formula",
  examples = {
    -- 1x2 to 1x4, align_corners 0: scale 0.5, src = 0.5 (j + 0.5) - 0.5 = -0.25 -> 0, 0.25,
    -- 0.75, 1.25 (i0 = i1 = 1); of [0, 4]: 0, 0.75*0 + 0.25*4 = 1, 3, 4. The single row: src 0.
    { x = { shape = { 1, 1, 1, 2 }, data = { 0, 4 } }, output_size = { 1, 4 }, align_corners = 0,
      out = { shape = { 1, 1, 1, 4 }, data = { 0, 1, 3, 4 } } },
    -- 2x2 to 4x4, align_corners 0: sources 0, 0.25, 0.75, 1 in both dims; x = 1 + c + 2 r is
    -- linear, so out = 1 + c + 2 r at those places: rows r = 0: 1, 1.25, 1.75, 2;
    -- r = 0.25: + 0.5; r = 0.75: + 1.5; r = 1: + 2.
    { x = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } }, output_size = { 4, 4 }, align_corners = 0,
      out = { shape = { 1, 1, 4, 4 }, data = { 1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5,
        2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4 } } },
    -- 1x3 to 1x5, align_corners 1: scale (3 - 1) / (5 - 1) = 0.5, src 0, 0.5, 1, 1.5, 2
    -- of [0, 2, 8]: 0, 1, 2, 5, 8. The single row: m = 1, scale 0.
    { x = { shape = { 1, 1, 1, 3 }, data = { 0, 2, 8 } }, output_size = { 1, 5 }, align_corners = 1,
      out = { shape = { 1, 1, 1, 5 }, data = { 0, 1, 2, 5, 8 } } },
    -- 1x4 to 1x2 of [0, 4, 8, 12], align_corners 0: scale 2, src 2 (j + 0.5) - 0.5 = 0.5,
    -- 2.5: 2, 10.
    { x = { shape = { 1, 1, 1, 4 }, data = { 0, 4, 8, 12 } }, output_size = { 1, 2 }, align_corners = 0,
      out = { shape = { 1, 1, 1, 2 }, data = { 2, 10 } } },
    -- the same with align_corners 1: scale 3 / 1, src 0, 3: 0, 12.
    { x = { shape = { 1, 1, 1, 4 }, data = { 0, 4, 8, 12 } }, output_size = { 1, 2 }, align_corners = 1,
      out = { shape = { 1, 1, 1, 2 }, data = { 0, 12 } } },
  },
  -- The source position of output j is an exact integer over an exact integer, (A j + B) / D,
  -- rounded once by float_div_scalar in the input's dtype (`/` would multiply by
  -- a rounded reciprocal): align_corners 1: j (h - 1) /
  -- max(mh - 1, 1) (m - 1 + idiv(1, m) is max(m - 1, 1)); 0: (j + 0.5) h / mh - 0.5 =
  -- ((2 j + 1) h - mh) / (2 mh), clamped at 0. A quotient floors alike in every dtype (an
  -- exact integer stays one; any other is at least 1 / D from one), so f64 and f32 pick the
  -- same pixels and f64 gets its own precision (a float scale times j rounded differently
  -- per dtype: the per-dtype comparisons' edge fill caught an inf picked up in f64 only).
  decompose = {
    "h = size(x, 2)",
    "w = size(x, 3)",
    "mh = at(output_size, 0)",
    "mw = at(output_size, 1)",
    "ah = align_corners * (h - 1) + (1 - align_corners) * 2 * h",
    "aw = align_corners * (w - 1) + (1 - align_corners) * 2 * w",
    "dh = align_corners * (mh - 1 + idiv(1, mh)) + (1 - align_corners) * 2 * mh",
    "dw = align_corners * (mw - 1 + idiv(1, mw)) + (1 - align_corners) * 2 * mw",
    "srch = float_relu(float_div_scalar(int_into_float(int_arange(device(x), 0, mh, 1) * ah + (1 - align_corners) * (h - mh)), dh))",
    "srcw = float_relu(float_div_scalar(int_into_float(int_arange(device(x), 0, mw, 1) * aw + (1 - align_corners) * (w - mw)), dw))",
    "h0 = float_into_int(srch)",
    "w0 = float_into_int(srcw)",
    "lh = float_reshape(srch - int_into_float(h0), array(mh, 1))",
    "lw = srcw - int_into_float(w0)",
    "rows = float_select(x, 2, h0) * (1.0 - lh) + float_select(x, 2, int_clamp_max(h0 + 1, h - 1)) * lh",
    "float_select(rows, 3, w0) * (1.0 - lw) + float_select(rows, 3, int_clamp_max(w0 + 1, w - 1)) * lw",
  },
  nmse = 1e-6,
}

op {
  name = "float_conv_transpose2d",
  autocast = "low",
  id = 757,
  family = "module",
  doc = "2-D transposed convolution (torch.nn.functional.conv_transpose2d) of x [N, C, H, W] with weight [C, O / groups, kh, kw] plus bias [O] -> [N, O, (H - 1) stride - 2 padding + dilation (kh - 1) + output_padding + 1, ...]: the gradient of float_conv2d by its input, with the same stride, padding, dilation and groups.",
  args = { "float x", "float weight", "float bias", "dims stride", "dims padding", "dims output_padding", "dims dilation", "i64 groups" },
  returns = "float",
  shape = "conv_transpose2d(x, weight, bias, stride, padding, output_padding, dilation, groups)",
  semantics = "the bias is required (zeros for none); non-empty H and W",
  examples = {
    -- stride 1: out[p][q] = sum x[i][j] w[p-i][q-j] with x = w = [[1,2],[3,4]]:
    -- 1, 2+2, 4; 3+3, 4+6+6+4, 8+8; 9, 12+12, 16; + 0.5.
    { x = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      weight = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      bias = { shape = { 1 }, data = { 0.5 } },
      stride = { 1, 1 }, padding = { 0, 0 }, output_padding = { 0, 0 }, dilation = { 1, 1 }, groups = 1,
      out = { shape = { 1, 1, 3, 3 }, data = { 1.5, 4.5, 4.5, 6.5, 20.5, 16.5, 9.5, 24.5, 16.5 } } },
    -- stride 2, output_padding 1: (2 - 1) 2 + 1 + 1 + 1 = 5; x[i][j] w lands at (2i, 2j)
    -- without overlap: blocks 1w, 2w / 3w, 4w, then a row and a column of output padding
    -- (bias only); bias -1.
    { x = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      weight = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      bias = { shape = { 1 }, data = { -1 } },
      stride = { 2, 2 }, padding = { 0, 0 }, output_padding = { 1, 1 }, dilation = { 1, 1 }, groups = 1,
      out = { shape = { 1, 1, 5, 5 }, data = { 0, 1, 1, 3, -1, 2, 3, 5, 7, -1, 2, 5, 3, 7, -1,
        8, 11, 11, 15, -1, -1, -1, -1, -1, -1 } } },
    -- groups 2, padding 1: (2 - 1) - 2 + 1 + 1 = 1, the centre of each full 3x3 result:
    -- channel 0 [1,2,3,4] with [[1,0],[0,1]]: x00 w11 + x11 w00 = 1 + 4 = 5; channel 1
    -- [1,0,0,1] with ones: 2, + bias 10.
    { x = { shape = { 1, 2, 2, 2 }, data = { 1, 2, 3, 4, 1, 0, 0, 1 } },
      weight = { shape = { 2, 1, 2, 2 }, data = { 1, 0, 0, 1, 1, 1, 1, 1 } },
      bias = { shape = { 2 }, data = { 0, 10 } },
      stride = { 1, 1 }, padding = { 1, 1 }, output_padding = { 0, 0 }, dilation = { 1, 1 }, groups = 2,
      out = { shape = { 1, 2, 1, 1 }, data = { 5, 12 } } },
    -- dilation 2, two input channels into one output: the single pixels 2 and 3 spread
    -- 2 w0 + 3 w1 = [[2, 4 + 3], [6, 8 - 3]] onto the corners of a 3x3 result.
    { x = { shape = { 1, 2, 1, 1 }, data = { 2, 3 } },
      weight = { shape = { 2, 1, 2, 2 }, data = { 1, 2, 3, 4, 0, 1, 0, -1 } },
      bias = { shape = { 1 }, data = { 0 } },
      stride = { 1, 1 }, padding = { 0, 0 }, output_padding = { 0, 0 }, dilation = { 2, 2 }, groups = 1,
      out = { shape = { 1, 1, 3, 3 }, data = { 2, 0, 7, 0, 0, 0, 6, 0, 5 } } },
    -- output_padding 1 with stride 1 and dilation 2 (PyTorch allows up to max(stride, dilation) - 1):
    -- x = [[1, 2], [3, 4]], w = [[1, 2], [3, 4]] dilated: x[i][j] w[a][b] lands at (i + 2a, j + 2b)
    -- of a 4 x 4 F: row 0 = 1, 2, 2, 4; row 1 = 3, 4, 6, 8; row 2 = 3, 6, 4, 8; row 3 = 9, 12, 12, 16;
    -- a last row and column of output padding (bias only); bias 1.
    { x = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      weight = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      bias = { shape = { 1 }, data = { 1 } },
      stride = { 1, 1 }, padding = { 0, 0 }, output_padding = { 1, 1 }, dilation = { 2, 2 }, groups = 1,
      out = { shape = { 1, 1, 5, 5 }, data = { 2, 3, 3, 5, 1, 4, 5, 7, 9, 1, 4, 7, 5, 9, 1, 10, 13, 13, 17, 1,
        1, 1, 1, 1, 1 } } },
    -- the same with padding 1: F cut to rows and columns 1..4 of F padded to 5 x 5, so the
    -- output padding now holds F's last row and column: [[4, 6, 8], [6, 4, 8], [12, 12, 16]] + 1
    { x = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      weight = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      bias = { shape = { 1 }, data = { 1 } },
      stride = { 1, 1 }, padding = { 1, 1 }, output_padding = { 1, 1 }, dilation = { 2, 2 }, groups = 1,
      out = { shape = { 1, 1, 3, 3 }, data = { 5, 7, 9, 7, 5, 9, 13, 13, 17 } } },
  },
  -- F, conv2d's input gradient without padding into a template of its full shape (whose
  -- values are not read), padded with output_padding zeros at the end and cut to
  -- [padding, padding + out): output_padding may reach max(stride, dilation) - 1 as in
  -- PyTorch (past stride - 1 the template would not fit conv2d's shape rule), plus the bias.
  decompose = {
    "co = size(weight, 1) * groups",
    "fh = (size(x, 2) - 1) * at(stride, 0) + at(dilation, 0) * (size(weight, 2) - 1) + 1",
    "fw = (size(x, 3) - 1) * at(stride, 1) + at(dilation, 1) * (size(weight, 3) - 1) + 1",
    "f = float_conv2d_backward_input(x, weight, float_zeros(device(x), array(size(x, 0), co, fh, fw)), stride, " ..
      "array(0, 0), dilation, groups)",
    "g = float_pad(f, array(0, at(output_padding, 1), 0, at(output_padding, 0)), 0.0)",
    "y = float_slice(g, array(0, 0, at(padding, 0), at(padding, 1)), array(size(x, 0), co, " ..
      "fh - at(padding, 0) + at(output_padding, 0), fw - at(padding, 1) + at(output_padding, 1)))",
    "y + float_reshape(bias, array(1, co, 1, 1))",
  },
  -- the adjoints: grad back into F's shape, then conv2d by the same weight (x) and conv2d's
  -- weight gradient with the roles of x and grad swapped (weight); the sum over all but the
  -- channels (bias).
  backward = {
    x = "conv_transpose2d_grad_x(grad, x, weight, stride, padding, output_padding, dilation, groups)",
    weight = "conv_transpose2d_grad_weight(grad, x, weight, stride, padding, output_padding, dilation, groups)",
    bias = "reshape_as(sum_dim(sum_dim(sum_dim(grad, 0), 2), 3), bias)",
  },
  bound = "compute",
  nmse = 1e-6,
}

op {
  name = "float_max_pool1d_indices",
  id = 758,
  family = "unary_float",
  doc = "The place of each window's maximum in float_max_pool1d, as an index into its row of L (PyTorch's return_indices): the first maximum, a NaN wins (the last one). With float_max_pool1d it is the tuple float_max_pool1d_with_indices.",
  args = { "float x", "i64 kernel", "i64 stride", "i64 padding", "i64 dilation" },
  returns = "int",
  shape = "max_pool1d(x, kernel, stride, padding, dilation)",
  examples = {
    -- windows [1,5] [5,3] [3,4] [4,2]: 5 at 1, 5 at 1, 4 at 3, 4 at 3.
    { x = { shape = { 1, 1, 5 }, data = { 1, 5, 3, 4, 2 } },
      kernel = 2, stride = 1, padding = 0, dilation = 1,
      out = { shape = { 1, 1, 4 }, data = { 1, 1, 3, 3 } } },
    -- kernel 3, stride 2, padding 1: {1,5} -> 1, {5,3,4} -> 1, {4,2} -> 3.
    { x = { shape = { 1, 1, 5 }, data = { 1, 5, 3, 4, 2 } },
      kernel = 3, stride = 2, padding = 1, dilation = 1,
      out = { shape = { 1, 1, 3 }, data = { 1, 1, 3 } } },
    -- ties go to the first: [2, 2, 2] -> 0 for both windows of 2.
    { x = { shape = { 1, 1, 3 }, data = { 2, 2, 2 } },
      kernel = 2, stride = 1, padding = 0, dilation = 1,
      out = { shape = { 1, 1, 2 }, data = { 0, 1 } } },
  },
  -- the 2-d indices over [N, C, 1, L] with 1 x kernel windows: the row is 0, so ih * L + iw = iw.
  decompose = {
    "y = float_max_pool2d_indices(float_reshape(x, array(size(x, 0), size(x, 1), 1, size(x, 2))), array(1, kernel), " ..
      "array(1, stride), array(0, padding), array(1, dilation))",
    "int_reshape(y, array(size(y, 0), size(y, 1), size(y, 3)))",
  },
}
