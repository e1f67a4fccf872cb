-- The CPU backend: portable C11, OpenMP where it pays, CBLAS sgemm when found.
--
-- Schema of a backend spec (one `backend { ... }` per file):
--   name         string   required  lower-case identifier; kernels are td_<name>_<op>
--   id           integer  required  the value of TD_BACKEND_<NAME>, stable forever: 0-31 for
--                                   backends in this repository, 32-62 for backends built
--                                   from outside it (TD_EXTRA_SPECS); never reuse one
--   doc          string   required  one line, shown in SUPPORT.md and --list
--   option       string   required  CMake option that enables the backend (TD_BACKEND_<NAME>)
--   default      boolean  required  the option's default
--   dtypes       array    required  the dtypes it stores (allocates, reads, writes, casts,
--                                   moves): names of specs/dtypes.lua
--   computes     table    optional  class -> the dtypes its kernels compute (default: every
--                                   dtype it stores); stored float dtypes with via = "f32"
--                                   run the f32 kernel on converted copies ("via f32"),
--                                   others are TD_E_UNSUPPORTED (docs/dtypes.md section 4)
--   op_dtypes    table    optional  op name -> the dtypes its kernel computes, overriding
--                                   `computes` for the classes it names
--   kernels      string   required  kernel folder, relative to this spec directory (the
--                                   folder holding backends/); it holds backend.cmake,
--                                   which adds the sources
--   collectives  boolean  optional  the backend implements the distributed family
--   accelerated  boolean  optional  the backend provides td_<name>_dtype_accelerated(device,
--                                   index): the dtypes a device runs on dedicated units
--                                   (docs/dtypes.md section 3; tdinfo's "accelerated")
--   ops          array    required  names of the ops this backend implements; every
--                                   other op gets an arm returning TD_E_UNSUPPORTED
-- the float dtypes of the float elementwise kernels (runtime/cpu/cpu_float_ew.h)
local FP4 = { "f32", "f64", "f16", "bf16" }
local F64 = { "f32", "f64" }

backend {
  name = "cpu",
  id = 0,
  doc = "Portable C11 kernels; OpenMP threads for large tensors; CBLAS sgemm when found; MPI collectives",
  option = "TD_BACKEND_CPU",
  default = true,
  dtypes = { "f32", "i32", "bool", "f16", "bf16", "f64", "i64", "i8", "u8", "q8_0", "q4_0" },
  computes = { float = { "f32" }, int = { "i32" }, bool = { "bool" } },
  op_dtypes = {
    -- f32 (and bf16, widened) activations by quantized weights [n, k] (runtime/cpu/cpu_quant.c;
    -- docs/dtypes.md section 8); bf16 by bf16 through oneDNN's bf16 matmul where it has one and
    -- the inputs are finite without subnormals, else widened to f32 (runtime/cpu/cpu_matmul.c's
    -- matmul_bf16; docs/kernels.md "bf16 / f16 matmul")
    float_matmul_nt = { "f32", "f64", "bf16", "q8_0", "q4_0" },
    -- f64 sums along a dim, max_dim, argmax and the matmuls (runtime/cpu/cpu_f64.c); the matmuls'
    -- bf16 as float_matmul_nt's
    float_sum_dim = { "f32", "f64" },
    float_max_dim = { "f32", "f64" }, float_argmax = { "f32", "f64" }, float_matmul = { "f32", "f64", "bf16" },
    float_matmul_tn = { "f32", "f64", "bf16" },
    -- layout kernels move element bytes of any size (cpu_layout.c: TD_CPU_LAYOUT_OPS)
    float_swap_dims = { "f32", "f64", "f16", "bf16" }, float_permute = { "f32", "f64", "f16", "bf16" },
    float_expand = { "f32", "f64", "f16", "bf16" }, float_slice = { "f32", "f64", "f16", "bf16" },
    float_slice_assign = { "f32", "f64", "f16", "bf16" }, float_cat = { "f32", "f64", "f16", "bf16" },
    -- ---- float elementwise in every float dtype (issue 21 step 5, branch cpuflt) ----
    -- one expression per op, instantiated for f32 and f64; f16 / bf16 in blocks of 256
    -- widened to f32 (td_convert.c's F16C / AVX-512 / portable rows), the f32 code, one
    -- rounding back: runtime/cpu/cpu_float_ew.h, cpu_half.c
    float_neg = FP4, float_abs = FP4, float_exp = FP4, float_log = FP4, float_sqrt = FP4,
    float_sin = FP4, float_cos = FP4, float_tanh = FP4, float_sigmoid = FP4, float_relu = FP4,
    float_gelu = FP4, float_powf_scalar = FP4, float_clamp = FP4,
    float_add = FP4, float_sub = FP4, float_mul = FP4, float_div = FP4, float_powf = FP4,
    float_maximum = FP4, float_minimum = FP4, float_add_scalar = FP4, float_mul_scalar = FP4,
    float_equal = FP4, float_greater = FP4, float_greater_equal = FP4, float_lower = FP4,
    float_lower_equal = FP4, float_mask_where = FP4, float_mask_fill = FP4,
    float_acos = FP4, float_asin = FP4, float_atan = FP4, float_atan2 = FP4, float_cosh = FP4,
    float_sinh = FP4, float_tan = FP4, float_asinh = FP4, float_acosh = FP4, float_atanh = FP4,
    float_ceil = FP4, float_floor = FP4, float_round = FP4, float_trunc = FP4, float_sign = FP4,
    float_erf = FP4, float_log1p = FP4, float_recip = FP4, float_square = FP4, float_hypot = FP4,
    float_powi_scalar = FP4, float_remainder = FP4, float_remainder_scalar = FP4,
    float_sub_scalar = FP4, float_div_scalar = FP4, float_clamp_min = FP4, float_clamp_max = FP4,
    float_is_nan = FP4, float_is_inf = FP4, float_not_equal = FP4, float_equal_elem = FP4,
    float_not_equal_elem = FP4, float_greater_elem = FP4, float_greater_equal_elem = FP4,
    float_lower_elem = FP4, float_lower_equal_elem = FP4,
    float_powi = F64, -- an int exponent tensor: f16 / bf16 via f32
    -- activations: the elementwise ones as above (cpu_activation.c); the softmax family,
    -- cross_entropy and gelu_backward in f32 and f64 (f16 / bf16 via f32: whole columns
    -- in f32; gelu_backward's broadcast and flat f32 paths round differently)
    float_log_sigmoid = FP4, float_silu = FP4, float_leaky_relu = FP4, float_hard_sigmoid = FP4,
    float_prelu = FP4, float_softmax = F64, float_log_softmax = F64, float_softmin = F64,
    float_cross_entropy = F64, float_gelu_backward = F64,
    -- reductions, scans, sorts in f64 (cpu_f64.c's lines in double; cpu_reduce_sort.c's macros);
    -- f16 / bf16 via f32 (sums accumulate in f32 or wider, one rounding)
    -- float_sum / float_mean of f16 / bf16: td_cpu_sum_f32's chunks widened one at a time
    -- (cpu_reduce.c, td_cpu_sum_half): the via-f32 result bit for bit without the copy
    float_sum = FP4, float_mean = FP4,
    float_mean_dim = F64, float_min_dim = F64, float_argmin = F64, float_prod = F64,
    float_prod_dim = F64, float_max = F64, float_min = F64, float_max_abs = F64, float_max_abs_dim = F64,
    float_any = F64, float_any_dim = F64, float_all = F64, float_all_dim = F64,
    float_cumsum = F64, float_cumprod = F64, float_cummax = F64, float_cummin = F64,
    float_sort = F64, float_argsort = F64, float_topk = F64, float_argtopk = F64,
    -- indexing: element moves of any size (cpu_indexing.c), so every float dtype; the adding
    -- ones and cross in f32 and f64 (a 16-bit destination would round after every add)
    float_gather = FP4, float_select = FP4, float_flip = FP4, float_repeat_dim = FP4,
    float_transpose = FP4, float_narrow = FP4, float_stack = FP4, float_unfold = FP4, float_pad = FP4,
    float_mask_select = FP4, float_scatter_assign = FP4,
    float_scatter_add = F64, float_select_add = F64, float_select_assign = F64, float_cross = F64,
    float_into_int = F64,
    -- layer norm and its backward ops in f32 and f64: one source, cpu_norm_t.h included per type
    float_layer_norm = F64, float_layer_norm_backward = F64, float_layer_norm_backward_weight = F64,

    -- ---- the int class: i64, i8, u8 natively (issue 21 step 5) ----
    -- One body per op for every int dtype (TD_CPU_INT_CASES, runtime/cpu/cpu_internal.h):
    -- cpu_int.c, the int parts of cpu_elementwise.c, cpu_reduce.c and cpu_reduce_sort.c;
    -- arithmetic wraps modulo 2^n, host scalars are converted to the dtype modulo 2^n
    -- (docs/dtypes.md section 7). The moves only copy element bytes (cpu_layout.c,
    -- cpu_indexing.c). The int ops' index tensors have the data's dtype (the mixing rule):
    -- the kernels and td_check_index_range read indices of any int dtype. Left out:
    -- random; argmax / argmin / argsort in i8 / u8 (their indices would be i8 / u8).
    int_add = { "i32", "i64", "i8", "u8" }, int_sub = { "i32", "i64", "i8", "u8" },
    int_mul = { "i32", "i64", "i8", "u8" }, int_div = { "i32", "i64", "i8", "u8" },
    int_remainder = { "i32", "i64", "i8", "u8" }, int_neg = { "i32", "i64", "i8", "u8" },
    int_add_scalar = { "i32", "i64", "i8", "u8" }, int_sub_scalar = { "i32", "i64", "i8", "u8" },
    int_mul_scalar = { "i32", "i64", "i8", "u8" }, int_div_scalar = { "i32", "i64", "i8", "u8" },
    int_remainder_scalar = { "i32", "i64", "i8", "u8" }, int_abs = { "i32", "i64", "i8", "u8" },
    int_sign = { "i32", "i64", "i8", "u8" }, int_square = { "i32", "i64", "i8", "u8" },
    int_powi = { "i32", "i64", "i8", "u8" }, int_powi_scalar = { "i32", "i64", "i8", "u8" },
    int_maximum = { "i32", "i64", "i8", "u8" }, int_minimum = { "i32", "i64", "i8", "u8" },
    int_clamp = { "i32", "i64", "i8", "u8" }, int_clamp_min = { "i32", "i64", "i8", "u8" },
    int_clamp_max = { "i32", "i64", "i8", "u8" },
    int_equal = { "i32", "i64", "i8", "u8" }, int_greater = { "i32", "i64", "i8", "u8" },
    int_lower = { "i32", "i64", "i8", "u8" }, int_not_equal = { "i32", "i64", "i8", "u8" },
    int_greater_equal = { "i32", "i64", "i8", "u8" }, int_lower_equal = { "i32", "i64", "i8", "u8" },
    int_equal_elem = { "i32", "i64", "i8", "u8" }, int_not_equal_elem = { "i32", "i64", "i8", "u8" },
    int_greater_elem = { "i32", "i64", "i8", "u8" }, int_greater_equal_elem = { "i32", "i64", "i8", "u8" },
    int_lower_elem = { "i32", "i64", "i8", "u8" }, int_lower_equal_elem = { "i32", "i64", "i8", "u8" },
    int_mask_where = { "i32", "i64", "i8", "u8" }, int_mask_fill = { "i32", "i64", "i8", "u8" },
    int_mask_select = { "i32", "i64", "i8", "u8" },
    int_bitwise_and = { "i32", "i64", "i8", "u8" }, int_bitwise_or = { "i32", "i64", "i8", "u8" },
    int_bitwise_xor = { "i32", "i64", "i8", "u8" }, int_bitwise_not = { "i32", "i64", "i8", "u8" },
    int_bitwise_left_shift = { "i32", "i64", "i8", "u8" }, int_bitwise_right_shift = { "i32", "i64", "i8", "u8" },
    int_bitwise_and_scalar = { "i32", "i64", "i8", "u8" }, int_bitwise_or_scalar = { "i32", "i64", "i8", "u8" },
    int_bitwise_xor_scalar = { "i32", "i64", "i8", "u8" },
    int_bitwise_left_shift_scalar = { "i32", "i64", "i8", "u8" },
    int_bitwise_right_shift_scalar = { "i32", "i64", "i8", "u8" },
    int_sum = { "i32", "i64", "i8", "u8" }, int_sum_dim = { "i32", "i64", "i8", "u8" },
    int_cumsum = { "i32", "i64", "i8", "u8" }, int_cumprod = { "i32", "i64", "i8", "u8" },
    int_prod = { "i32", "i64", "i8", "u8" }, int_prod_dim = { "i32", "i64", "i8", "u8" },
    int_mean = { "i32", "i64", "i8", "u8" }, int_mean_dim = { "i32", "i64", "i8", "u8" },
    int_max = { "i32", "i64", "i8", "u8" }, int_min = { "i32", "i64", "i8", "u8" },
    int_max_dim = { "i32", "i64", "i8", "u8" }, int_min_dim = { "i32", "i64", "i8", "u8" },
    int_argmax = { "i32", "i64" }, int_argmin = { "i32", "i64" },
    int_matmul = { "i32", "i64", "i8", "u8" }, int_into_float = { "i32", "i64", "i8", "u8" },
    int_swap_dims = { "i32", "i64", "i8", "u8" }, int_permute = { "i32", "i64", "i8", "u8" },
    int_expand = { "i32", "i64", "i8", "u8" }, int_slice = { "i32", "i64", "i8", "u8" },
    int_slice_assign = { "i32", "i64", "i8", "u8" }, int_cat = { "i32", "i64", "i8", "u8" },
    int_flip = { "i32", "i64", "i8", "u8" }, int_repeat_dim = { "i32", "i64", "i8", "u8" },
    int_transpose = { "i32", "i64", "i8", "u8" }, int_narrow = { "i32", "i64", "i8", "u8" },
    int_stack = { "i32", "i64", "i8", "u8" },
    int_any = { "i32", "i64", "i8", "u8" }, int_any_dim = { "i32", "i64", "i8", "u8" },
    int_all = { "i32", "i64", "i8", "u8" }, int_all_dim = { "i32", "i64", "i8", "u8" },
    int_sort = { "i32", "i64", "i8", "u8" }, int_topk = { "i32", "i64", "i8", "u8" },
    int_argsort = { "i32", "i64" },
    int_gather = { "i32", "i64", "i8", "u8" }, int_select = { "i32", "i64", "i8", "u8" },
    int_scatter_add = { "i32", "i64", "i8", "u8" }, int_scatter_assign = { "i32", "i64", "i8", "u8" },
    int_select_add = { "i32", "i64", "i8", "u8" }, int_select_assign = { "i32", "i64", "i8", "u8" },
    int_one_hot = { "i32", "i64", "i8", "u8" },
  },
  kernels = "../runtime/cpu",
  collectives = true,
  accelerated = true, -- runtime/cpu/cpu_dtypes.c: bf16 / f16 dot-product units with oneDNN, VNNI
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
    "float_cos", "float_tanh", "float_sigmoid", "float_relu", "float_gelu", "float_gelu_backward",
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
    "float_matmul",
    "float_matmul_nt",
    "float_matmul_tn",
    -- casts
    "float_into_int", "int_into_float", "bool_into_float", "bool_into_int",
    -- int and bool arithmetic
    "int_add", "int_sub", "int_mul", "int_div", "int_remainder",
    "bool_not", "bool_and", "bool_or",
    -- collectives (over MPI; TD_E_UNSUPPORTED in a build without it)
    "float_all_reduce", "float_broadcast", "float_all_gather", "int_all_reduce",
    -- indexing and layout (issue 10): runtime/cpu/cpu_indexing.c
    "float_gather", "float_scatter_add", "float_select", "float_select_add",
    "int_gather", "int_scatter_add", "int_select", "int_select_add", "bool_gather", "bool_select", "bool_argwhere",
    "float_one_hot", "float_select_assign", "int_select_assign", "float_mask_select", "int_mask_select", "bool_mask_select",
    "float_flip", "int_flip", "bool_flip", "float_repeat_dim", "int_repeat_dim", "bool_repeat_dim",
    "float_transpose", "int_transpose", "bool_transpose", "float_narrow", "int_narrow", "bool_narrow",
    "float_stack", "int_stack", "bool_stack", "float_unfold", "float_pad",
    "bool_tril_mask", "bool_triu_mask", "float_cross",
    "float_scatter_assign", "int_scatter_assign", "int_one_hot",
    -- activations and bool logic (specs/ops/activation.lua, specs/ops/bool_ops.lua)
    "float_softmax", "float_log_softmax", "float_softmin", "float_log_sigmoid", "float_leaky_relu",
    "float_prelu", "float_hard_sigmoid", "float_silu", "float_cross_entropy",
    "bool_xor", "bool_equal", "bool_not_equal", "bool_mask_where", "bool_mask_fill",
    -- float math (issue 10)
    "float_acos", "float_asin", "float_atan", "float_atan2", "float_cosh", "float_sinh", "float_tan",
    "float_asinh", "float_acosh", "float_atanh", "float_ceil", "float_floor", "float_round", "float_trunc",
    "float_sign", "float_erf", "float_log1p", "float_recip", "float_square", "float_hypot", "float_powi", "float_powi_scalar",
    "float_remainder", "float_remainder_scalar", "float_sub_scalar", "float_div_scalar", "float_clamp_min",
    "float_clamp_max", "float_is_nan", "float_is_inf", "float_not_equal", "float_equal_elem",
    "float_not_equal_elem", "float_greater_elem", "float_greater_equal_elem", "float_lower_elem",
    "float_lower_equal_elem",
    -- reduce / cumulative / sort group (specs/ops/reduce_sort.lua)
    "float_mean", "float_prod", "float_prod_dim", "float_max", "float_min", "float_max_abs",
    "float_max_abs_dim", "float_any", "float_any_dim", "float_all", "float_all_dim",
    "float_cumsum", "float_cumprod", "float_cummax", "float_cummin", "int_cumsum", "int_cumprod",
    "float_sort", "float_argsort", "float_topk", "float_argtopk", "int_sort", "int_argsort", "int_topk",
    "int_any", "int_any_dim", "int_all", "int_all_dim", "bool_any", "bool_any_dim", "bool_all", "bool_all_dim",
    -- int ops of issue 10 (specs/ops/int_ops.lua; kernels in cpu_int.c)
    "int_neg", "int_add_scalar", "int_sub_scalar", "int_mul_scalar", "int_div_scalar",
    "int_remainder_scalar", "int_abs", "int_square", "int_sign", "int_powi", "int_powi_scalar",
    "int_maximum", "int_minimum", "int_clamp", "int_clamp_min", "int_clamp_max",
    "int_not_equal", "int_greater_equal", "int_lower_equal",
    "int_equal_elem", "int_not_equal_elem", "int_greater_elem", "int_greater_equal_elem",
    "int_lower_elem", "int_lower_equal_elem",
    "int_sum_dim", "int_mean_dim", "int_prod", "int_prod_dim", "int_max", "int_min",
    "int_max_dim", "int_min_dim", "int_argmax", "int_argmin", "int_mean",
    "int_matmul", "int_random",
    "int_bitwise_and", "int_bitwise_or", "int_bitwise_xor", "int_bitwise_not",
    "int_bitwise_left_shift", "int_bitwise_right_shift",
    "int_bitwise_and_scalar", "int_bitwise_or_scalar", "int_bitwise_xor_scalar",
    "int_bitwise_left_shift_scalar", "int_bitwise_right_shift_scalar",
    -- module ops: conv, pool, linear and their backward ops (runtime/cpu/cpu_module.c)
    "float_conv2d", "float_conv2d_backward_input", "float_conv2d_backward_weight",
    "float_max_pool2d", "float_max_pool2d_backward", "float_avg_pool2d", "float_avg_pool2d_backward",
    "float_max_pool2d_indices",
    "float_linear",
    -- scaled dot-product attention, blocked with an online softmax, and its backward ops
    -- (runtime/cpu/cpu_attention.c)
    "float_attention", "float_attention_backward", "float_attention_backward_query", "float_attention_backward_key",
    "float_attention_backward_value",
    -- layer norm and its backward ops, one pass per row (runtime/cpu/cpu_norm.c)
    "float_layer_norm", "float_layer_norm_backward", "float_layer_norm_backward_weight",
    -- device
    "sync",
  },
}
