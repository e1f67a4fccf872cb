-- The Vulkan-compute backend: GLSL compute shaders (SPIR-V embedded), batched command buffers.
backend {
  name = "vulkan",
  id = 1,
  doc = "Vulkan compute through the loader; GLSL shaders compiled by glslc and embedded; dispatches batched until readback",
  option = "TD_BACKEND_VULKAN",
  default = true,
  -- f16 / bf16 are 2 bytes an element (16-bit storage, or packed two to a 32-bit word where
  -- the device lacks it), f64 / i64 8, i8 / u8 1; bool stays a 32-bit word; q8_0 / q4_0 blocks
  -- packed into words (runtime/vulkan/README.md)
  dtypes = { "f32", "i32", "bool", "f16", "bf16", "f64", "i64", "i8", "u8", "q8_0", "q4_0" },
  computes = { float = { "f32" }, int = { "i32" }, bool = { "bool" } },
  convert = true, -- td_vulkan_convert: f32 <-> f16 <-> bf16 on the device (shaders/cvt.comp)
  -- native f16 / bf16: ewv.comp's, unary.comp's and reduce.comp's TD_HALF forms (computed in
  -- f32, one rounding); f64: ewd.comp (double arithmetic, mathd.glsl), only where the device
  -- has shaderFloat64 (elsewhere TD_E_UNSUPPORTED naming the feature, as float_matmul's below)
  op_dtypes = {
    float_neg = { "f32", "f16", "bf16", "f64" }, float_abs = { "f32", "f16", "bf16", "f64" },
    float_exp = { "f32", "f16", "bf16", "f64" }, float_log = { "f32", "f16", "bf16", "f64" },
    float_sqrt = { "f32", "f16", "bf16", "f64" }, float_sin = { "f32", "f16", "bf16", "f64" },
    float_cos = { "f32", "f16", "bf16", "f64" }, float_tanh = { "f32", "f16", "bf16", "f64" },
    float_sigmoid = { "f32", "f16", "bf16", "f64" }, float_relu = { "f32", "f16", "bf16", "f64" },
    float_gelu = { "f32", "f16", "bf16", "f64" }, float_powf_scalar = { "f32", "f16", "bf16", "f64" },
    float_clamp = { "f32", "f16", "bf16", "f64" }, float_add_scalar = { "f32", "f16", "bf16", "f64" },
    float_mul_scalar = { "f32", "f16", "bf16", "f64" },
    float_add = { "f32", "f16", "bf16", "f64" }, float_sub = { "f32", "f16", "bf16", "f64" },
    float_mul = { "f32", "f16", "bf16", "f64" }, float_div = { "f32", "f16", "bf16", "f64" },
    float_powf = { "f32", "f16", "bf16", "f64" }, float_maximum = { "f32", "f16", "bf16", "f64" },
    float_minimum = { "f32", "f16", "bf16", "f64" }, float_equal = { "f32", "f16", "bf16", "f64" },
    float_greater = { "f32", "f16", "bf16", "f64" }, float_greater_equal = { "f32", "f16", "bf16", "f64" },
    float_lower = { "f32", "f16", "bf16", "f64" }, float_lower_equal = { "f32", "f16", "bf16", "f64" },
    -- reduce.comp's TD_HALF forms (the first pass reads 16-bit values, f32 partials, one rounding)
    -- and its TD_F64 form (every pass in double, double partials; shaderFloat64)
    float_sum = { "f32", "f16", "bf16", "f64" }, float_sum_dim = { "f32", "f16", "bf16", "f64" },
    float_mean_dim = { "f32", "f16", "bf16", "f64" }, float_max_dim = { "f32", "f16", "bf16", "f64" },
    float_min_dim = { "f32", "f16", "bf16", "f64" }, float_argmax = { "f32", "f16", "bf16", "f64" },
    float_argmin = { "f32", "f16", "bf16", "f64" },
    -- the matmul shaders' TD_HALF forms (widened loads, f32 sums, one rounding) and TD_F64
    -- builds; f64 only where the device has shaderFloat64, which a spec cannot say per device:
    -- elsewhere the kernel returns TD_E_UNSUPPORTED naming the feature (runtime/vulkan/README.md)
    float_matmul = { "f32", "f16", "bf16", "f64" },
    -- moves of 2, 4 or 8 bytes an element: copy.comp and index.comp specialized to the element size
    -- (16-bit storage or packed words for f16 / bf16; f64 as word pairs, no shaderFloat64 needed);
    -- masks, fills and reads likewise (runtime/vulkan/README.md)
    float_swap_dims = { "f32", "f16", "bf16", "f64" }, float_permute = { "f32", "f16", "bf16", "f64" },
    float_expand = { "f32", "f16", "bf16", "f64" }, float_slice = { "f32", "f16", "bf16", "f64" },
    float_slice_assign = { "f32", "f16", "bf16", "f64" }, float_cat = { "f32", "f16", "bf16", "f64" },
    float_stack = { "f32", "f16", "bf16", "f64" }, float_flip = { "f32", "f16", "bf16", "f64" },
    float_repeat_dim = { "f32", "f16", "bf16", "f64" }, float_transpose = { "f32", "f16", "bf16", "f64" },
    float_narrow = { "f32", "f16", "bf16", "f64" }, float_unfold = { "f32", "f16", "bf16", "f64" },
    float_pad = { "f32", "f16", "bf16", "f64" }, float_gather = { "f32", "f16", "bf16", "f64" },
    float_select = { "f32", "f16", "bf16", "f64" }, float_scatter_assign = { "f32", "f16", "bf16", "f64" },
    float_mask_fill = { "f32", "f16", "bf16", "f64" }, float_mask_where = { "f32", "f16", "bf16", "f64" },
    float_into_data = { "f32", "f16", "bf16", "f64" },
    -- index.comp's TD_F64 form: the float adds on doubles (f16 / bf16 stay via f32: their
    -- destination would round after every add, the CPU adds in f32 and rounds once)
    float_scatter_add = { "f32", "f64" }, float_select_add = { "f32", "f64" },
    -- fmath.comp's TD_HALF form: f16 / bf16 widened exactly, computed in f32, rounded once; f64:
    -- ewd.comp (mathd.glsl) for the rounding, erf, log1p, tan and the classification
    float_ceil = { "f32", "f16", "bf16", "f64" }, float_floor = { "f32", "f16", "bf16", "f64" },
    float_round = { "f32", "f16", "bf16", "f64" }, float_trunc = { "f32", "f16", "bf16", "f64" },
    float_erf = { "f32", "f16", "bf16", "f64" }, float_log1p = { "f32", "f16", "bf16", "f64" },
    float_is_nan = { "f32", "f16", "bf16", "f64" }, float_is_inf = { "f32", "f16", "bf16", "f64" },
    float_tan = { "f32", "f16", "bf16", "f64" },
    -- vkgap (issue 21): f64 inverse trigonometry and remainders on ewd.comp (mathd.glsl:
    -- acos / asin / atan / atan2 through one table-reduced atan series in double, fmod exact by
    -- Sterbenz subtractions); f16 / bf16 on fmath.comp's TD_HALF form as above
    float_acos = { "f32", "f16", "bf16", "f64" }, float_asin = { "f32", "f16", "bf16", "f64" },
    float_atan = { "f32", "f16", "bf16", "f64" }, float_atan2 = { "f32", "f16", "bf16", "f64" },
    float_remainder = { "f32", "f16", "bf16", "f64" }, float_remainder_scalar = { "f32", "f16", "bf16", "f64" },
    -- vkgap (issue 21): the cast to int32 (saturating, NaN to 0, truncated) of doubles on ewd.comp and
    -- of f16 / bf16 on unary.comp's TD_HALF form (the values widened exactly: the f32 cast's result)
    float_into_int = { "f32", "f16", "bf16", "f64" },
    -- vkgap (issue 21): float_matmul_nt by float weights of the activations' dtype as a transposed
    -- copy (copy.comp, any element size) and float_matmul in that dtype (f16 / bf16: f32 sums, one
    -- rounding; f64 where the device has shaderFloat64); f32, f16 and bf16 activations by q8_0 /
    -- q4_0 weights [n, k] on qmv.comp (its TD_HALF forms widen 16-bit activations as they load them,
    -- f32 sums rounded once into the result); f64 activations by quantized weights: TD_E_UNSUPPORTED
    float_matmul_nt = { "f32", "f16", "bf16", "f64", "q8_0", "q4_0" },
    -- vkgap (issue 21): the f64 cells left `-` in SUPPORT.md are the collectives (none on
    -- Vulkan). f16 / bf16 scatter_add / select_add stay via f32 on purpose (above).
    -- conv.comp, pool.comp and scan.comp in the operands' dtype (shaders/xload.glsl,
    -- vk_dispatch_dt): f16 / bf16 widened exactly, computed in f32, rounded once; f64 in double
    -- where the device has shaderFloat64 (TD_E_UNSUPPORTED naming the feature elsewhere)
    float_conv2d = { "f32", "f16", "bf16", "f64" },
    float_conv2d_backward_input = { "f32", "f16", "bf16", "f64" },
    float_conv2d_backward_weight = { "f32", "f16", "bf16", "f64" },
    float_max_pool2d = { "f32", "f16", "bf16", "f64" }, float_max_pool2d_indices = { "f32", "f16", "bf16", "f64" },
    float_max_pool2d_backward = { "f32", "f16", "bf16", "f64" },
    float_avg_pool2d = { "f32", "f16", "bf16", "f64" }, float_avg_pool2d_backward = { "f32", "f16", "bf16", "f64" },
    float_cumsum = { "f32", "f16", "bf16", "f64" }, float_cumprod = { "f32", "f16", "bf16", "f64" },
    float_cummax = { "f32", "f16", "bf16", "f64" }, float_cummin = { "f32", "f16", "bf16", "f64" },
    -- sort.comp's TD_HALF form: f16 / bf16 keys widened exactly in its first pass; its TD_F64
    -- form: double keys in every pass (shaderFloat64)
    float_sort = { "f32", "f16", "bf16", "f64" }, float_argsort = { "f32", "f16", "bf16", "f64" },
    float_topk = { "f32", "f16", "bf16", "f64" }, float_argtopk = { "f32", "f16", "bf16", "f64" },
    -- the float product's first pass on reduce.comp's TD_HALF form (m * 2^e partials as for f32);
    -- f64: a plain product of doubles on its TD_F64 form
    float_prod = { "f32", "f16", "bf16", "f64" }, float_prod_dim = { "f32", "f16", "bf16", "f64" },
  },
  kernels = "../runtime/vulkan",
  collectives = false,
  accelerated = true, -- runtime/vulkan/vk_info.c: from the device's features
  ops = {
    -- creation
    "float_from_data", "int_from_data", "bool_from_data",
    "float_zeros", "int_zeros", "float_ones", "int_ones", "float_full", "int_full",
    "float_random", "int_arange",
    -- host
    "float_into_data", "int_into_data", "bool_into_data",
    -- layout
    "float_to_device", "int_to_device", "bool_to_device",
    "float_reshape", "int_reshape", "bool_reshape",
    "float_swap_dims", "int_swap_dims", "bool_swap_dims",
    "float_permute", "int_permute", "bool_permute",
    "float_expand", "int_expand", "bool_expand",
    "float_slice", "int_slice", "bool_slice",
    "float_slice_assign", "int_slice_assign", "bool_slice_assign",
    "float_cat", "int_cat", "bool_cat",
    -- float unary
    "float_neg", "float_abs", "float_exp", "float_log", "float_sqrt", "float_sin",
    "float_cos", "float_tanh", "float_sigmoid", "float_relu", "float_gelu",
    "float_powf_scalar", "float_clamp",
    -- float binary
    "float_add", "float_sub", "float_mul", "float_div", "float_powf",
    "float_maximum", "float_minimum", "float_add_scalar", "float_mul_scalar",
    -- comparisons
    "float_equal", "float_greater", "float_greater_equal", "float_lower",
    "float_lower_equal", "int_equal", "int_greater", "int_lower",
    -- mask
    "float_mask_where", "float_mask_fill", "int_mask_where", "int_mask_fill",
    -- reductions
    "float_sum", "float_sum_dim", "float_mean_dim", "float_max_dim", "float_min_dim",
    "float_argmax", "float_argmin", "int_sum",
    -- matmul
    "float_matmul", "float_matmul_nt",
    -- casts
    "float_into_int", "int_into_float", "bool_into_float", "bool_into_int",
    -- int and bool arithmetic
    "int_add", "int_sub", "int_mul", "int_div", "int_remainder",
    "bool_not", "bool_and", "bool_or",
    -- float math (issue 10): the ops without a sound decomposition (shaders/fmath.comp)
    "float_acos", "float_asin", "float_atan", "float_atan2", "float_ceil", "float_floor", "float_round",
    "float_trunc", "float_erf", "float_log1p", "float_is_nan", "float_is_inf", "float_remainder",
    "float_remainder_scalar", "float_tan",
    -- reduce / cumulative / sort group (specs/ops/reduce_sort.lua): scans (scan.comp)
    "float_cumsum", "float_cummax", "float_cummin", "int_cumsum", "int_cumprod",
    -- layout ops of issue 10 that are strided copies: runtime/vulkan/vk_kernels_index.c
    "float_flip", "int_flip", "bool_flip", "float_repeat_dim", "int_repeat_dim", "bool_repeat_dim",
    "float_transpose", "int_transpose", "bool_transpose", "float_narrow", "int_narrow", "bool_narrow",
    "float_stack", "int_stack", "bool_stack", "float_pad",
    -- indexing of issue 10: runtime/vulkan/vk_kernels_index.c, shaders/index.comp
    "float_gather", "int_gather", "bool_gather", "float_select", "int_select", "bool_select", "bool_argwhere",
    "float_scatter_add", "int_scatter_add", "float_scatter_assign", "int_scatter_assign",
    "float_select_add", "int_select_add", "int_one_hot",
    -- ops of the vk2 branch, native on Vulkan (were unsupported there before):
    -- int_random: host splitmix64 as the CPU's, uploaded (vk_kernels_create.c)
    "int_random",
    -- int bitwise / shifts / powi, triangular masks (shaders/iops.comp), unfold (copy.comp):
    -- runtime/vulkan/vk_kernels_int.c
    "int_bitwise_and", "int_bitwise_or", "int_bitwise_xor", "int_bitwise_and_scalar",
    "int_bitwise_or_scalar", "int_bitwise_xor_scalar", "int_bitwise_left_shift",
    "int_bitwise_right_shift", "int_bitwise_left_shift_scalar", "int_bitwise_right_shift_scalar",
    "int_powi", "int_powi_scalar", "bool_tril_mask", "bool_triu_mask", "float_unfold",
    -- int reductions (reduce.comp: wrapping sums and products; the exact mean with int64 partial
    -- sums as word pairs)
    "int_sum_dim", "int_prod", "int_prod_dim", "int_mean", "int_mean_dim",
    -- float products with a double's range (m * 2^e partials in reduce.comp), as the CPU's double
    "float_prod", "float_prod_dim", "float_cumprod",
    -- int_matmul: shaders/imatmul.comp (wrapping)
    "int_matmul",
    -- stable sort / argsort / topk: a merge sort in passes (shaders/sort.comp, runtime/vulkan/vk_kernels_int.c)
    "float_sort", "float_argsort", "float_topk", "float_argtopk", "int_sort", "int_argsort", "int_topk",
    -- pooling and convolution (shaders/pool.comp, conv.comp; runtime/vulkan/vk_kernels_module.c)
    "float_max_pool2d", "float_max_pool2d_backward", "float_avg_pool2d", "float_avg_pool2d_backward",
    "float_max_pool2d_indices",
    "float_conv2d", "float_conv2d_backward_input", "float_conv2d_backward_weight",
    -- device
    "sync",
  },
}
