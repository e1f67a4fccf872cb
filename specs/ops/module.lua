-- Module ops: the layers of neural networks (conv, pool, linear) and the backward ops their
-- gradients run. Layout NCHW; weights [out, in / groups, kh, kw]; semantics follow PyTorch's
-- torch.nn.functional (floor mode, no ceil_mode). Ids 700-799.
-- Zero-size tensors as in PyTorch: a batch of 0 is fine everywhere (a conv's weight gradient
-- is then zeros); a conv needs at least `groups` output channels, and a pool non-empty C, H
-- and W ("optional 0 dim batch size"): both are TD_E_SHAPE.
--
-- Hand-computed examples use x = [[1,2,3],[4,5,6],[7,8,9]] (1x1x3x3) and a 2x2 kernel
-- w = [[1,2],[3,4]] unless said otherwise. With stride 2 and padding 1 the four windows over
-- the zero-padded 5x5 input see: (0,0) [0,0;0,1], (0,2) [0,0;2,3], (2,0) [0,4;0,7] and
-- (2,2) [5,6;8,9].

-- ---- decompositions (issue 23): every window place as an index into the input plane, then
-- float_gather (im2col) and float_scatter_add (its adjoint, col2im). window(kh, kw, dh, dw)
-- gives the statements naming N C H W, the kernel kh kw, the output OH OW, L = OH OW and
-- M = L kh kw places; v [OH, OW, kh, kw]: 1 where a place lies inside x (0 in the padding);
-- p [1, 1, M]: its plane index r W + c (0 in the padding, masked after the gather); q: the
-- same with H W (a spare slot, sliced off after the scatter) in the padding; ok [1, 1, M]:
-- v as bool. Padding is IEEE zeros for conv (0 * inf is NaN, as the CPU's im2col path) and
-- -inf for max pooling. Cost: the columns (M C N values), then one matmul or reduction.
local function window(kh, kw, dh, dw)
  return {
    "N = size(x, 0)", "C = size(x, 1)", "H = size(x, 2)", "W = size(x, 3)",
    "kh = " .. kh, "kw = " .. kw,
    "OH = idiv(H + 2 * at(padding, 0) - " .. dh .. " * (kh - 1) - 1, at(stride, 0)) + 1",
    "OW = idiv(W + 2 * at(padding, 1) - " .. dw .. " * (kw - 1) - 1, at(stride, 1)) + 1",
    "L = OH * OW", "M = L * kh * kw",
    "r = int_reshape(int_arange(device(x), 0, OH, 1) * at(stride, 0) - at(padding, 0), array(OH, 1, 1, 1)) + " ..
      "int_reshape(int_arange(device(x), 0, kh, 1) * " .. dh .. ", array(1, 1, kh, 1))",
    "c = int_reshape(int_arange(device(x), 0, OW, 1) * at(stride, 1) - at(padding, 1), array(1, OW, 1, 1)) + " ..
      "int_reshape(int_arange(device(x), 0, kw, 1) * " .. dw .. ", array(1, 1, 1, kw))",
    "v = bool_into_int(int_greater(r, int_full(device(x), shape(r), -1))) * " ..
      "bool_into_int(int_greater(int_full(device(x), shape(r), H), r)) * " ..
      "(bool_into_int(int_greater(c, int_full(device(x), shape(c), -1))) * " ..
      "bool_into_int(int_greater(int_full(device(x), shape(c), W), c)))",
    "ok = int_greater(int_reshape(v, array(1, 1, M)), int_full(device(x), array(1, 1, 1), 0))",
  }
end

-- the gather index p (for the forward ops) or the scatter index q (for the backward ones)
local P = "p = int_reshape((r * W + c) * v, array(1, 1, M))"
local Q = "q = int_reshape((r * W + c) * v + (1 - v) * (H * W), array(1, 1, M))"
-- the columns [N, C, M] of x, `pad` where the place is in the padding
local function columns(pad)
  return "u = float_mask_where(" .. pad .. ", ok, float_gather(float_reshape(x, array(N, C, H * W)), 2, " ..
    "int_expand(p, array(N, C, M))))"
end
-- col2im: the columns named cols [N, C, M] summed into x's shape
local COL2IM = {
  "s = float_scatter_add(float_zeros(device(x), array(N, C, H * W + 1)), 2, int_expand(q, array(N, C, M)), cols)",
  "float_reshape(float_slice(s, array(0, 0, 0), array(N, C, H * W)), shape(x))",
}

-- the statements of the lists given, in order
local function join(lists)
  local out = {}
  for i = 1, #lists do
    for j = 1, #lists[i] do out[#out + 1] = lists[i][j] end
  end
  return out
end

-- conv: the columns as [N, G, L, K] (K = C / G kh kw), the weight as [G, O / G, K]
local CONV_U = "U = float_reshape(float_swap_dims(float_reshape(u, array(N, groups, idiv(C, groups), L, kh * kw)), 2, 3), " ..
  "array(N, groups, L, idiv(C, groups) * kh * kw))"

op {
  name = "float_conv2d",
  autocast = "low",
  id = 700,
  family = "module",
  doc = "2-D convolution (cross-correlation, as torch.nn.functional.conv2d) of x [N, C, H, W] with weight [O, C / groups, kh, kw] plus bias [O]; stride, padding and dilation are {h, w} pairs.",
  args = { "float x", "float weight", "float bias", "dims stride", "dims padding", "dims dilation", "i64 groups" },
  returns = "float",
  shape = "conv2d(x, weight, bias, stride, padding, dilation, groups)",
  decompose = join({ window("size(weight, 2)", "size(weight, 3)", "at(dilation, 0)", "at(dilation, 1)"), { P,
    columns("float_zeros(device(x), array(1, 1, 1))"), CONV_U,
    "O = size(weight, 0)",
    "wm = float_swap_dims(float_reshape(weight, array(groups, idiv(O, groups), idiv(C, groups) * kh * kw)), 1, 2)",
    "y = float_swap_dims(float_matmul(U, wm), 2, 3)",
    "float_reshape(y, array(N, O, OH, OW)) + float_reshape(bias, array(O, 1, 1))" } }),
  semantics = "the bias is required: pass zeros for a convolution without one; zero padding only",
  examples = {
    -- groups 2, stride 2, padding 1: channel 0 with w [[1,2],[3,4]] sees the windows above:
    -- 4*1 = 4, 3*2 + 4*3 = 18, 2*4 + 4*7 = 36, 1*5 + 2*6 + 3*8 + 4*9 = 77, + 0.5;
    -- channel 1 = [[1,0,2],[0,0,0],[3,0,4]] with ones sees 1, 0 + 2, 0 + 3, 4, - 1.
    { x = { shape = { 1, 2, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 0, 2, 0, 0, 0, 3, 0, 4 } },
      weight = { shape = { 2, 1, 2, 2 }, data = { 1, 2, 3, 4, 1, 1, 1, 1 } },
      bias = { shape = { 2 }, data = { 0.5, -1 } },
      stride = { 2, 2 }, padding = { 1, 1 }, dilation = { 1, 1 }, groups = 2,
      out = { shape = { 1, 2, 2, 2 }, data = { 4.5, 18.5, 36.5, 77.5, 0, 1, 2, 3 } } },
    -- stride 1: out[i][j] = sum w[a][b] x[i+a][j+b]: 1+4+12+20 = 37, 47, 67, 77; + 0.5.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
      weight = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      bias = { shape = { 1 }, data = { 0.5 } },
      stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 }, groups = 1,
      out = { shape = { 1, 1, 2, 2 }, data = { 37.5, 47.5, 67.5, 77.5 } } },
    -- dilation 2: the 2x2 kernel touches the corners; two input channels summed (groups 1):
    -- o0 = 1*1 + 1*9 (channel 0) + 2*1 + 2*4 (channel 1) + bias 1 = 21,
    -- o1 = -3 (channel 0's x[0][2]) - 3 (channel 1's x[2][0]) + bias 0 = -6.
    { x = { shape = { 1, 2, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 0, 2, 0, 0, 0, 3, 0, 4 } },
      weight = { shape = { 2, 2, 2, 2 }, data = { 1, 0, 0, 1, 2, 0, 0, 2, 0, -1, 0, 0, 0, 0, -1, 0 } },
      bias = { shape = { 2 }, data = { 1, 0 } },
      stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 2, 2 }, groups = 1,
      out = { shape = { 1, 2, 1, 1 }, data = { 21, -6 } } },
  },
  backward = {
    x = "conv2d_backward_input(grad, weight, x, stride, padding, dilation, groups)",
    weight = "conv2d_backward_weight(grad, x, weight, stride, padding, dilation, groups)",
    bias = "reshape_as(sum_dim(sum_dim(sum_dim(grad, 0), 2), 3), bias)",
  },
  bound = "compute",
  nmse = 1e-6,
}

op {
  name = "float_conv2d_backward_input",
  id = 701,
  family = "module",
  doc = "The gradient of float_conv2d with respect to its input: grad [N, O, OH, OW] through weight into the shape of x (whose values are not read).",
  args = { "float grad", "float weight", "float x", "dims stride", "dims padding", "dims dilation", "i64 groups" },
  returns = "float",
  shape = "conv2d_backward_input(grad, weight, x, stride, padding, dilation, groups)",
  -- the columns' gradient grad^T weight [N, G, L, K], back in x's places (col2im)
  decompose = join({ window("size(weight, 2)", "size(weight, 3)", "at(dilation, 0)", "at(dilation, 1)"), { Q,
    "O = size(weight, 0)",
    "g = float_swap_dims(float_reshape(grad, array(N, groups, idiv(O, groups), L)), 2, 3)",
    "du = float_matmul(g, float_reshape(weight, array(groups, idiv(O, groups), idiv(C, groups) * kh * kw)))",
    "cols = float_reshape(float_swap_dims(float_reshape(du, array(N, groups, L, idiv(C, groups), kh * kw)), 2, 3), " ..
      "array(N, C, M))" }, COL2IM }),
  examples = {
    -- stride 1: dx[p][q] = sum g[i][j] w[p-i][q-j] (a full correlation) with g = w = [[1,2],[3,4]].
    { grad = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      weight = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      x = { shape = { 1, 1, 3, 3 }, data = { 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
      stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 }, groups = 1,
      out = { shape = { 1, 1, 3, 3 }, data = { 1, 4, 4, 6, 20, 16, 9, 24, 16 } } },
    -- stride 2, padding 1, grad ones: each x element gets the weight at its place in its one
    -- window (see the top of this file).
    { grad = { shape = { 1, 1, 2, 2 }, data = { 1, 1, 1, 1 } },
      weight = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      x = { shape = { 1, 1, 3, 3 }, data = { 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
      stride = { 2, 2 }, padding = { 1, 1 }, dilation = { 1, 1 }, groups = 1,
      out = { shape = { 1, 1, 3, 3 }, data = { 4, 3, 4, 2, 1, 2, 4, 3, 4 } } },
    -- groups 2 with 1x1 kernels: channel c gets grad channel c times weight c.
    { grad = { shape = { 1, 2, 1, 2 }, data = { 1, 2, 3, 4 } },
      weight = { shape = { 2, 1, 1, 1 }, data = { 2, -1 } },
      x = { shape = { 1, 2, 1, 2 }, data = { 0, 0, 0, 0 } },
      stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 }, groups = 2,
      out = { shape = { 1, 2, 1, 2 }, data = { 2, 4, -3, -4 } } },
  },
  differentiable = false,
  why = "a backward op: second derivatives of conv2d are not supported",
}

op {
  name = "float_conv2d_backward_weight",
  id = 702,
  family = "module",
  doc = "The gradient of float_conv2d with respect to its weight: grad [N, O, OH, OW] correlated with x, in the shape of weight (whose values are not read).",
  args = { "float grad", "float x", "float weight", "dims stride", "dims padding", "dims dilation", "i64 groups" },
  returns = "float",
  shape = "conv2d_backward_weight(grad, x, weight, stride, padding, dilation, groups)",
  -- the grad [N, G, O / G, L] times the columns, summed over the batch
  decompose = join({ window("size(weight, 2)", "size(weight, 3)", "at(dilation, 0)", "at(dilation, 1)"), { P,
    columns("float_zeros(device(x), array(1, 1, 1))"), CONV_U,
    "O = size(weight, 0)",
    "g = float_reshape(grad, array(N, groups, idiv(O, groups), L))",
    "float_reshape(float_sum_dim(float_matmul(g, U), 0), shape(weight))" } }),
  examples = {
    -- stride 1: dw[a][b] = sum g[i][j] x[i+a][j+b] with g = [[1,2],[3,4]]: 37, 47, 67, 77.
    { grad = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      x = { shape = { 1, 1, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
      weight = { shape = { 1, 1, 2, 2 }, data = { 0, 0, 0, 0 } },
      stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 }, groups = 1,
      out = { shape = { 1, 1, 2, 2 }, data = { 37, 47, 67, 77 } } },
    -- stride 2, padding 1, grad ones: dw[a][b] sums place (a, b) of the four windows:
    -- 0+0+0+5, 0+0+4+6, 0+2+0+8, 1+3+7+9.
    { grad = { shape = { 1, 1, 2, 2 }, data = { 1, 1, 1, 1 } },
      x = { shape = { 1, 1, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
      weight = { shape = { 1, 1, 2, 2 }, data = { 0, 0, 0, 0 } },
      stride = { 2, 2 }, padding = { 1, 1 }, dilation = { 1, 1 }, groups = 1,
      out = { shape = { 1, 1, 2, 2 }, data = { 5, 10, 10, 20 } } },
    -- two samples, groups 2, 1x1 kernels: dw[c] = sum over samples and pixels of g x in
    -- channel c; g = [1,2 | 3,4 || 5,6 | 7,8], x = [1,2 | 3,4 || -1,0 | 1,1]:
    -- c0: 1*1 + 2*2 + 5*-1 + 6*0 = 0, c1: 3*3 + 4*4 + 7*1 + 8*1 = 40.
    { grad = { shape = { 2, 2, 1, 2 }, data = { 1, 2, 3, 4, 5, 6, 7, 8 } },
      x = { shape = { 2, 2, 1, 2 }, data = { 1, 2, 3, 4, -1, 0, 1, 1 } },
      weight = { shape = { 2, 1, 1, 1 }, data = { 0, 0 } },
      stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 }, groups = 2,
      out = { shape = { 2, 1, 1, 1 }, data = { 0, 40 } } },
  },
  differentiable = false,
  why = "a backward op: second derivatives of conv2d are not supported",
}

op {
  name = "float_max_pool2d",
  id = 703,
  family = "module",
  doc = "2-D max pooling of x [N, C, H, W] over kernel {kh, kw} windows with stride, padding (at most half the kernel) and dilation; padding never wins.",
  args = { "float x", "dims kernel", "dims stride", "dims padding", "dims dilation" },
  returns = "float",
  shape = "max_pool2d(x, kernel, stride, padding, dilation)",
  decompose = join({ window("at(kernel, 0)", "at(kernel, 1)", "at(dilation, 0)", "at(dilation, 1)"), { P,
    columns("float_log(float_zeros(device(x), array(1, 1, 1)))"),
    "float_reshape(float_max_dim(float_reshape(u, array(N, C, L, kh * kw)), 3), array(N, C, OH, OW))" } }),
  semantics = "a window holding NaN gives NaN (as PyTorch); a window wholly in the padding (dilation can make one) gives -inf, its index (float_max_pool2d_indices) is -1 and it takes no gradient; floor mode only: no ceil_mode, so a last partial window is dropped (PyTorch's ceil_mode=True keeps it)",
  examples = {
    -- x = [[1,5,3],[4,2,6],[9,8,7]], windows {1,5,4,2} {5,3,2,6} {4,2,9,8} {2,6,8,7}.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 5, 3, 4, 2, 6, 9, 8, 7 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 },
      out = { shape = { 1, 1, 2, 2 }, data = { 5, 6, 9, 8 } } },
    -- stride 2, padding 1: windows {1} {5,3} {4,9} {2,6,8,7}.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 5, 3, 4, 2, 6, 9, 8, 7 } },
      kernel = { 2, 2 }, stride = { 2, 2 }, padding = { 1, 1 }, dilation = { 1, 1 },
      out = { shape = { 1, 1, 2, 2 }, data = { 1, 5, 9, 8 } } },
    -- dilation 2: the corners 1, 3, 9, 7; two channels (the second negated: -1 is its max).
    { x = { shape = { 1, 2, 3, 3 }, data = { 1, 5, 3, 4, 2, 6, 9, 8, 7, -1, -5, -3, -4, -2, -6, -9, -8, -7 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 2, 2 },
      out = { shape = { 1, 2, 1, 1 }, data = { 9, -1 } } },
    -- a NaN in the window wins.
    { x = { shape = { 1, 1, 2, 2 }, data = { 1, "nan", 3, 4 } },
      kernel = { 2, 2 }, stride = { 2, 2 }, padding = { 0, 0 }, dilation = { 1, 1 },
      out = { shape = { 1, 1, 1, 1 }, data = { "nan" } } },
  },
  backward = { x = "max_pool2d_backward(x, grad, kernel, stride, padding, dilation)" },
  bound = "memory",
}

op {
  name = "float_max_pool2d_backward",
  id = 704,
  family = "module",
  doc = "The gradient of float_max_pool2d: each element of grad goes to the first maximum of its window in x (summed where windows overlap).",
  args = { "float x", "float grad", "dims kernel", "dims stride", "dims padding", "dims dilation" },
  returns = "float",
  shape = "max_pool2d_backward(x, grad, kernel, stride, padding, dilation)",
  -- each grad element scatter-added at its window's max_pool2d index (-1: the spare slot)
  decompose = {
    "N = size(x, 0)", "C = size(x, 1)", "HW = size(x, 2) * size(x, 3)", "L = size(grad, 2) * size(grad, 3)",
    "ii = int_reshape(float_max_pool2d_indices(x, kernel, stride, padding, dilation), array(N, C, L))",
    "jj = ii + bool_into_int(int_greater(int_full(device(x), array(1), 0), ii)) * (HW + 1)",
    "s = float_scatter_add(float_zeros(device(x), array(N, C, HW + 1)), 2, jj, float_reshape(grad, array(N, C, L)))",
    "float_reshape(float_slice(s, array(0, 0, 0), array(N, C, HW)), shape(x))",
  },
  examples = {
    -- the maxima 5, 6, 9, 8 of the first float_max_pool2d example get 1, 2, 3, 4.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 5, 3, 4, 2, 6, 9, 8, 7 } },
      grad = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 },
      out = { shape = { 1, 1, 3, 3 }, data = { 0, 1, 0, 0, 0, 2, 3, 4, 0 } } },
    -- 9 in the middle is the maximum of all four windows: it gets 1 + 2 + 3 + 4.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 2, 3, 4, 9, 5, 6, 7, 8 } },
      grad = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 },
      out = { shape = { 1, 1, 3, 3 }, data = { 0, 0, 0, 0, 10, 0, 0, 0, 0 } } },
    -- a tie (all 2): the first element of each window in row-major order wins.
    { x = { shape = { 1, 1, 2, 3 }, data = { 2, 2, 2, 2, 2, 2 } },
      grad = { shape = { 1, 1, 1, 2 }, data = { 1, 10 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 },
      out = { shape = { 1, 1, 2, 3 }, data = { 1, 10, 0, 0, 0, 0 } } },
    -- NaNs win, the last one (as PyTorch's CPU kernel): 1 after the -inf start, then each NaN.
    { x = { shape = { 1, 1, 2, 2 }, data = { 1, "nan", "nan", 4 } },
      grad = { shape = { 1, 1, 1, 1 }, data = { 5 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 },
      out = { shape = { 1, 1, 2, 2 }, data = { 0, 0, 5, 0 } } },
  },
  differentiable = false,
  why = "a backward op: second derivatives of max_pool2d are not supported",
}

op {
  name = "float_avg_pool2d",
  id = 705,
  family = "module",
  doc = "2-D average pooling of x [N, C, H, W] over kernel {kh, kw} windows with stride and padding (at most half the kernel); count_include_pad (0 or 1) says whether padded places count in the divisor.",
  args = { "float x", "dims kernel", "dims stride", "dims padding", "i64 count_include_pad" },
  returns = "float",
  shape = "avg_pool2d(x, kernel, stride, padding, count_include_pad)",
  -- the window sums over the count of places inside x (or kh kw with count_include_pad)
  decompose = join({ window("at(kernel, 0)", "at(kernel, 1)", "1", "1"), { P,
    columns("float_zeros(device(x), array(1, 1, 1))"),
    "dv = int_sum_dim(int_reshape(v, array(1, 1, L, kh * kw)), 3)",
    "d = int_into_float(dv + (kh * kw - dv) * count_include_pad)",
    "float_reshape(float_sum_dim(float_reshape(u, array(N, C, L, kh * kw)), 3) / d, array(N, C, OH, OW))" } }),
  semantics = "floor mode only: no ceil_mode, so a last partial window is dropped (PyTorch's ceil_mode=True keeps it)",
  examples = {
    -- (1+2+4+5)/4 = 3, (2+3+5+6)/4 = 4, (4+5+7+8)/4 = 6, (5+6+8+9)/4 = 7.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, count_include_pad = 1,
      out = { shape = { 1, 1, 2, 2 }, data = { 3, 4, 6, 7 } } },
    -- stride 2, padding 1, padding counted: 1/4, (2+3)/4, (4+7)/4, (5+6+8+9)/4.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
      kernel = { 2, 2 }, stride = { 2, 2 }, padding = { 1, 1 }, count_include_pad = 1,
      out = { shape = { 1, 1, 2, 2 }, data = { 0.25, 1.25, 2.75, 7 } } },
    -- the same without the padding: 1/1, 5/2, 11/2, 28/4.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
      kernel = { 2, 2 }, stride = { 2, 2 }, padding = { 1, 1 }, count_include_pad = 0,
      out = { shape = { 1, 1, 2, 2 }, data = { 1, 2.5, 5.5, 7 } } },
  },
  backward = { x = "avg_pool2d_backward(x, grad, kernel, stride, padding, count_include_pad)" },
  bound = "memory",
}

op {
  name = "float_avg_pool2d_backward",
  id = 706,
  family = "module",
  doc = "The gradient of float_avg_pool2d: each element of grad is spread evenly over its window, into the shape of x (whose values are not read).",
  args = { "float x", "float grad", "dims kernel", "dims stride", "dims padding", "i64 count_include_pad" },
  returns = "float",
  shape = "avg_pool2d_backward(x, grad, kernel, stride, padding, count_include_pad)",
  -- each grad element over its window's divisor, spread on the window's places (col2im)
  decompose = join({ window("at(kernel, 0)", "at(kernel, 1)", "1", "1"), { Q,
    "dv = int_sum_dim(int_reshape(v, array(1, 1, L, kh * kw)), 3)",
    "d = int_into_float(dv + (kh * kw - dv) * count_include_pad)",
    "gv = float_reshape(grad, array(N, C, L, 1)) / d",
    "cols = float_reshape(float_expand(gv, array(N, C, L, kh * kw)), array(N, C, M))" }, COL2IM }),
  examples = {
    -- stride 1, g = [[1,2],[3,4]] / 4 summed over the windows holding each element.
    { x = { shape = { 1, 1, 3, 3 }, data = { 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
      grad = { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, count_include_pad = 1,
      out = { shape = { 1, 1, 3, 3 }, data = { 0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1 } } },
    -- stride 2, padding 1 not counted, grad ones: windows of 1, 2, 2 and 4 real elements.
    { x = { shape = { 1, 1, 3, 3 }, data = { 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
      grad = { shape = { 1, 1, 2, 2 }, data = { 1, 1, 1, 1 } },
      kernel = { 2, 2 }, stride = { 2, 2 }, padding = { 1, 1 }, count_include_pad = 0,
      out = { shape = { 1, 1, 3, 3 }, data = { 1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.5, 0.25, 0.25 } } },
  },
  differentiable = false,
  why = "a backward op: it is linear in grad, and second derivatives of avg_pool2d are not supported",
}

op {
  name = "float_linear",
  autocast = "low",
  id = 707,
  family = "module",
  doc = "x @ w + b in one op: x [..., in], w [in, out], b [out] -> [..., out]; a 1-d x [in] gives [out], as F.linear.",
  args = { "float x", "float w", "float b" },
  returns = "float",
  shape = "linear(x, w, b)",
  semantics = "w is [in, out] (PyTorch's F.linear takes its transpose) and must be 2-d, b 1-d",
  examples = {
    -- [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]], + [1,-1].
    { x = { shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } },
      w = { shape = { 3, 2 }, data = { 7, 8, 9, 10, 11, 12 } },
      b = { shape = { 2 }, data = { 1, -1 } },
      out = { shape = { 2, 2 }, data = { 59, 63, 140, 153 } } },
    -- batched: [2, 1, 2] @ [2, 1] + [0.5].
    { x = { shape = { 2, 1, 2 }, data = { 1, 2, -3, 4 } },
      w = { shape = { 2, 1 }, data = { 2, 0.5 } },
      b = { shape = { 1 }, data = { 0.5 } },
      out = { shape = { 2, 1, 1 }, data = { 3.5, -3.5 } } },
    -- a 1-d x: [1, 2] @ [[1, 0, 2], [3, 1, -1]] + [0.5, 0, -1] = [7.5, 2, -1]
    { x = { shape = { 2 }, data = { 1, 2 } }, w = { shape = { 2, 3 }, data = { 1, 0, 2, 3, 1, -1 } },
      b = { shape = { 3 }, data = { 0.5, 0, -1 } }, out = { shape = { 3 }, data = { 7.5, 2, -1 } } },
  },
  decompose = "float_matmul(x, w) + b",
  backward = { x = "matmul_grad_a(grad, x, w)", w = "matmul_grad_b(grad, x, w)", b = "grad" },
  bound = "compute",
}

op {
  name = "float_max_pool2d_indices",
  id = 708,
  family = "unary_float",
  doc = "The place of each window's maximum in float_max_pool2d, as an index into its input plane (ih * W + iw), PyTorch's return_indices: the first maximum in row-major order, a NaN wins (the last one). With float_max_pool2d it is the tuple float_max_pool2d_with_indices.",
  args = { "float x", "dims kernel", "dims stride", "dims padding", "dims dilation" },
  returns = "int",
  shape = "max_pool2d(x, kernel, stride, padding, dilation)",
  -- the window's place: its last NaN if it has one, else its first maximum inside x; then
  -- that place's plane index, -1 for a window wholly in the padding. Places as floats
  -- (exact: a window holds fewer than 2^24 places).
  decompose = join({ window("at(kernel, 0)", "at(kernel, 1)", "at(dilation, 0)", "at(dilation, 1)"), { P,
    columns("float_log(float_zeros(device(x), array(1, 1, 1)))"),
    "u4 = float_reshape(u, array(N, C, L, kh * kw))",
    "k = int_into_float(int_arange(device(x), 0, kh * kw, 1))",
    "ninf = float_log(float_zeros(device(x), array(1)))",
    "ln = float_max_dim(float_mask_where(ninf, float_is_nan(u4), k), 3)",
    "hit = bool_and(float_equal(u4, float_max_dim(u4, 3)), bool_reshape(ok, array(1, 1, L, kh * kw)))",
    "fm = -float_max_dim(float_mask_where(ninf, hit, -k), 3)",
    "pos = float_mask_where(fm, float_greater(ln, ninf), ln)",
    "none = float_is_inf(pos)",
    "pi = float_into_int(float_mask_where(pos, none, float_zeros(device(x), array(1))))",
    "pl = int_expand(int_reshape(p, array(1, 1, L, kh * kw)), array(N, C, L, kh * kw))",
    "idx = int_mask_where(int_gather(pl, 3, pi), none, int_full(device(x), array(1), -1))",
    "int_reshape(idx, array(N, C, OH, OW))" } }),
  examples = {
    -- x = [[1,5,3],[4,2,6],[9,8,7]]: 5 at (0,1) = 1, 6 at (1,2) = 5, 9 at (2,0) = 6, 8 at (2,1) = 7.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 5, 3, 4, 2, 6, 9, 8, 7 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 },
      out = { shape = { 1, 1, 2, 2 }, data = { 1, 5, 6, 7 } } },
    -- stride 2, padding 1: {1} at 0, {5,3}: 5 at 1, {4,9}: 9 at 6, {2,6,8,7}: 8 at 7.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 5, 3, 4, 2, 6, 9, 8, 7 } },
      kernel = { 2, 2 }, stride = { 2, 2 }, padding = { 1, 1 }, dilation = { 1, 1 },
      out = { shape = { 1, 1, 2, 2 }, data = { 0, 1, 6, 7 } } },
    -- dilation 2: the corners; channel 0: 9 at (2,0) = 6; channel 1 (negated): -1 at 0.
    { x = { shape = { 1, 2, 3, 3 }, data = { 1, 5, 3, 4, 2, 6, 9, 8, 7, -1, -5, -3, -4, -2, -6, -9, -8, -7 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 2, 2 },
      out = { shape = { 1, 2, 1, 1 }, data = { 6, 0 } } },
    -- all equal: the first; then a NaN at 1 beats 7 at 3.
    { x = { shape = { 1, 2, 2, 2 }, data = { 3, 3, 3, 3, 1, "nan", 2, 7 } },
      kernel = { 2, 2 }, stride = { 2, 2 }, padding = { 0, 0 }, dilation = { 1, 1 },
      out = { shape = { 1, 2, 1, 1 }, data = { 0, 1 } } },
  },
}
