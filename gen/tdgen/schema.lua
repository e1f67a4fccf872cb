-- The vocabulary of the specs: argument types, families, shape rules, fields.
-- Keep the rules in step with runtime/core/td_rules.h.
local M = {}

-- Dtypes come from the dtype table (specs/dtypes.lua, gen/tdgen/dtypes.lua fills these
-- in place): name -> C enumerator, names in id order, rows in id order, name -> row, and
-- the primitive classes with the default dtype of each (what the existing API makes).
M.dtypes = {}
M.dtype_order = {}
M.dtype_rows = {}
M.dtype_by_name = {}
M.classes = {}

-- Argument types. `params` is the C parameter list of the public entry ("%s" is the
-- argument name); `kparams` that of the kernel (nil: same); `tensor`/`list` give the
-- primitive class; `nullable_len` names the length that allows NULL when 0.
M.types = {
  float  = { params = { "const td_tensor *%s" }, tensor = "float" },
  int    = { params = { "const td_tensor *%s" }, tensor = "int" },
  bool   = { params = { "const td_tensor *%s" }, tensor = "bool" },
  floats = { params = { "const td_tensor *const *%s", "int %s_len" }, list = "float" },
  ints   = { params = { "const td_tensor *const *%s", "int %s_len" }, list = "int" },
  bools  = { params = { "const td_tensor *const *%s", "int %s_len" }, list = "bool" },
  f32    = { params = { "float %s" }, scalar = true },
  i32    = { params = { "int32_t %s" }, scalar = true },
  i64    = { params = { "int64_t %s" }, scalar = true },
  u64    = { params = { "uint64_t %s" }, scalar = true },
  dim    = { params = { "int64_t %s" }, scalar = true },
  distribution = { params = { "td_distribution %s" }, scalar = true, enum = { "TD_UNIFORM", "TD_NORMAL" } },
  device = { params = { "td_device *%s" }, device = true },
  group  = { params = { "td_group *%s" }, group = true },
  reduce_op = { params = { "td_reduce_op %s" }, scalar = true,
                 enum = { "TD_REDUCE_SUM", "TD_REDUCE_MEAN", "TD_REDUCE_MAX", "TD_REDUCE_MIN" } },
  dims   = { params = { "const int64_t *%s", "int %s_len" }, array = true },
  shape  = { params = { "const int64_t *%s", "int %s_len" }, array = true },
  f32_data  = { params = { "const float *%s" }, host_in = "f32" },
  i32_data  = { params = { "const int32_t *%s" }, host_in = "i32" },
  bool_data = { params = { "const bool *%s" }, host_in = "bool" },
  f32_out   = { params = { "float *%s", "int64_t %s_len" }, kparams = { "float *%s" }, host_out = "f32" },
  i32_out   = { params = { "int32_t *%s", "int64_t %s_len" }, kparams = { "int32_t *%s" }, host_out = "i32" },
  bool_out  = { params = { "bool *%s", "int64_t %s_len" }, kparams = { "bool *%s" }, host_out = "bool" },
}

M.returns = { float = true, int = true, bool = true, host = true, none = true }

-- Families decide the arm's shape; `check` validates an op's arguments for the family
-- and returns an error message or nil.
local function first(op) return op.args[1] end
local function ntensors(op)
  local n = 0
  for _, a in ipairs(op.args) do if M.types[a.type].tensor then n = n + 1 end end
  return n
end

M.families = {
  creation = function(op)
    if not first(op) or first(op).type ~= "device" then return "the first argument of a creation op is 'device NAME'" end
    if ntensors(op) > 0 then return "a creation op takes no tensor arguments" end
    if not M.classes[op.returns] then return "a creation op returns float, int or bool" end
  end,
  unary = function(op)
    local a = first(op)
    if not a or not (M.types[a.type].tensor == "int" or M.types[a.type].tensor == "bool") then
      return "the first argument of a unary op is an int or bool tensor (float ones are unary_float)"
    end
    if op.returns == "none" then return "a unary op returns a tensor or host data" end
  end,
  unary_float = function(op)
    local a = first(op)
    if not a or M.types[a.type].tensor ~= "float" then return "the first argument of a unary_float op is a float tensor" end
    if op.returns == "none" then return "a unary_float op returns a tensor or host data" end
  end,
  binary = function(op)
    local a, b = op.args[1], op.args[2]
    if not (a and b and M.types[a.type].tensor and M.types[b.type].tensor) then
      return "the first two arguments of a binary op are tensors"
    end
    if M.types[a.type].tensor == "float" then return "a binary op on float tensors is binary_float" end
    if not M.classes[op.returns] then return "a binary op returns a tensor" end
  end,
  binary_float = function(op)
    local a, b = op.args[1], op.args[2]
    if not (a and b and M.types[a.type].tensor == "float" and M.types[b.type].tensor) then
      return "the first two arguments of a binary_float op are tensors, the first a float one"
    end
    if not M.classes[op.returns] then return "a binary_float op returns a tensor" end
  end,
  -- Neural-network modules (conv, pool, linear and their backward ops): the arm shape of
  -- binary_float, over a float input, tensor parameters and attributes.
  module = function(op)
    local a = first(op)
    if not a or M.types[a.type].tensor ~= "float" then return "the first argument of a module op is a float tensor" end
    if op.returns ~= "float" then return "a module op returns a float tensor" end
  end,
  multi = function(op)
    local a = first(op)
    if not a or not M.types[a.type].list then return "the first argument of a multi op is a tensor list (floats, ints, bools)" end
    if not M.classes[op.returns] then return "a multi op returns a tensor" end
  end,
  to_device = function(op)
    local a, d = op.args[1], op.args[2]
    if #op.args ~= 2 or not M.types[a.type].tensor or d.type ~= "device" then
      return "a to_device op takes exactly (tensor, device)"
    end
    if op.returns ~= M.types[a.type].tensor then return "a to_device op returns the class of its input" end
  end,
  distributed = function(op)
    local a = first(op)
    if not a or not M.types[a.type].tensor then return "the first argument of a distributed op is a tensor" end
    local has_group = false
    for _, x in ipairs(op.args) do if x.type == "group" then has_group = true end end
    if not has_group then return "a distributed op takes a 'group NAME' argument" end
    if not M.classes[op.returns] then return "a distributed op returns a tensor" end
  end,
  device = function(op)
    if #op.args ~= 1 or op.args[1].type ~= "device" then return "a device op takes exactly one 'device NAME' argument" end
    if op.returns ~= "none" then return "a device op returns none" end
  end,
}
M.family_order = { "creation", "unary", "unary_float", "binary", "binary_float", "module", "multi", "to_device", "distributed",
  "device" }

-- Shape rules: name -> parameter kinds. The generated call passes a tensor as its
-- shape, a list as (array, count), dims/shape as (array, count), a dim by address
-- (normalized in place), an i64 by value and a host output by its capacity. A "dims"
-- parameter (a `dims` argument the rule normalizes: negative dims or bounds count from the
-- end) is passed as (array, count, a TD_MAX_DIMS array the rule fills), and the entry passes
-- the filled array on to the arms in place of the caller's.
M.rules = {
  same = { "tensor" },
  broadcast = { "tensor", "tensor" },
  broadcast3 = { "tensor", "tensor", "tensor" },
  from_shape = { "array" },
  random = { "array", "distribution", "f32", "f32" },
  arange = { "i64", "i64", "i64" },
  reshape = { "tensor", "array" },
  swap_dims = { "tensor", "dim", "dim" },
  permute = { "tensor", "dims" },
  expand = { "tensor", "array" },
  slice = { "tensor", "dims", "dims" },
  slice_assign = { "tensor", "tensor", "dims", "dims" },
  cat = { "list", "dim" },
  reduce_all = { "tensor" },
  reduce_dim = { "tensor", "dim" },
  reduce_all_nonempty = { "tensor" },   -- reductions without an identity: empty input is an error
  reduce_dim_nonempty = { "tensor", "dim" },
  matmul = { "tensor", "tensor" },
  matmul_nt = { "tensor", "tensor" },   -- a @ b^T (transposes of the last two dims)
  matmul_tn = { "tensor", "tensor" },   -- a^T @ b
  mask_fill = { "tensor", "tensor" },
  host_out = { "tensor", "host_out" },
  all_gather = { "tensor", "group" },
  -- indexing and layout (issue 10): runtime/core/td_rules_index.c
  gather = { "tensor", "dim", "tensor" },
  scatter = { "tensor", "dim", "tensor", "tensor" },
  select = { "tensor", "dim", "tensor" },
  select_add = { "tensor", "dim", "tensor", "tensor" },
  flip = { "tensor", "array" },
  repeat_dim = { "tensor", "dim", "i64" },
  transpose = { "tensor" },
  narrow = { "tensor", "dim", "i64", "i64" },
  stack = { "list", "dim" },
  unfold = { "tensor", "dim", "i64", "i64" },
  pad = { "tensor", "array" },
  tri_mask = { "array" },
  cross = { "tensor", "tensor", "dim" },
  one_hot = { "tensor", "i64" },
  -- rules that read data (M.data_rules): the result's size is a count of true elements
  argwhere = { "tensor" },
  mask_select = { "tensor", "tensor" },
  -- activations (specs/ops/activation.lua; along_dim is shared with the reduce group)
  cross_entropy = { "tensor", "tensor" },
  -- reduce / cumulative / sort group (runtime/core/td_rules_reduce.c; the nonempty ones
  -- serve the int reductions too)
  reduce_all_nonempty = { "tensor" },
  reduce_dim_nonempty = { "tensor", "dim" },
  along_dim = { "tensor", "dim" },
  topk = { "tensor", "i64", "dim" },
  -- int ops (issue 10; runtime/core/td_rules_int.c)
  random_int = { "array", "i32", "i32" },
  -- module ops (runtime/core/td_rules_module.c)
  conv2d = { "tensor", "tensor", "tensor", "array", "array", "array", "i64" },
  conv2d_backward_input = { "tensor", "tensor", "tensor", "array", "array", "array", "i64" },
  conv2d_backward_weight = { "tensor", "tensor", "tensor", "array", "array", "array", "i64" },
  max_pool2d = { "tensor", "array", "array", "array", "array" },
  max_pool2d_backward = { "tensor", "tensor", "array", "array", "array", "array" },
  avg_pool2d = { "tensor", "array", "array", "array", "i64" },
  avg_pool2d_backward = { "tensor", "tensor", "array", "array", "array", "i64" },
  linear = { "tensor", "tensor", "tensor" },
  -- nn module composites: norms, embedding, attention (specs/ops/module_nn.lua;
  -- runtime/core/td_rules_nn.c)
  layer_norm = { "tensor", "tensor", "tensor" },
  layer_norm_backward = { "tensor", "tensor", "tensor" },
  layer_norm_backward_weight = { "tensor", "tensor", "tensor" },
  group_norm = { "tensor", "i64", "tensor", "tensor" },
  batch_norm_infer = { "tensor", "tensor", "tensor", "tensor", "tensor" },
  batch_norm_train = { "tensor", "tensor", "tensor" },
  embedding = { "tensor", "tensor" },
  attention = { "tensor", "tensor", "tensor", "i64" },
  attention_masked = { "tensor", "tensor", "tensor", "tensor", "i64" },
  attention_backward = { "tensor", "tensor", "tensor", "tensor", "tensor", "i64" },
  attention_backward_query = { "tensor", "tensor", "tensor", "tensor", "tensor", "i64" },
  attention_backward_key = { "tensor", "tensor", "tensor", "tensor", "tensor", "i64" },
  attention_backward_value = { "tensor", "tensor", "tensor", "tensor", "tensor", "i64" },
  -- spatial module ops (specs/ops/module_spatial.lua; runtime/core/td_rules_spatial.c)
  conv1d = { "tensor", "tensor", "tensor", "i64", "i64", "i64", "i64" },
  max_pool1d = { "tensor", "i64", "i64", "i64", "i64" },
  avg_pool1d = { "tensor", "i64", "i64", "i64", "i64" },
  adaptive_avg_pool1d = { "tensor", "i64" },
  adaptive_avg_pool2d = { "tensor", "array" },
  interpolate2d = { "tensor", "array" },
  interpolate2d_bilinear = { "tensor", "array", "i64" },
  conv_transpose2d = { "tensor", "tensor", "tensor", "array", "array", "array", "array", "i64" },
}

-- Rules whose C function takes the tensors themselves, not their shapes: the result's
-- shape depends on the data (runtime/core/td_rules_index.c reads it through the public
-- entries, so on every backend).
M.data_rules = { argwhere = true, mask_select = true }

function M.param_kind(t)
  local ty = M.types[t]
  if ty.tensor then return "tensor" end
  if ty.list then return "list" end
  if ty.array then return "array" end
  if ty.host_out then return "host_out" end
  return t -- dim, i64, ...
end

-- Stable ids: the public values of td_op and td_backend come from the specs, so adding
-- an op or a backend never renumbers another. Backend ids 0-31 are for backends in this
-- repository, 32-62 for backends added from outside it; 63 is autodiff.
M.max_op_id = 4095
M.max_backend_id = 62
M.autodiff_id = 63
M.first_external_backend_id = 32

M.op_fields = {
  name = "string", id = "number", family = "string", doc = "string", args = "table", returns = "string",
  shape = "string", examples = "table", tolerance = "number", semantics = "string",
  -- a `_dtype` twin taking a td_dtype (docs/dtypes.md section 5): "from_data", "into_data",
  -- "zeros", "ones", "full" (its scalar argument widened to double / int64_t) or "convert"
  dtype_twin = "string",
  -- the name of a float tensor argument (not the first) that may be block-quantized (q8_0,
  -- q4_0) while the first is f32: the one deliberate dtype mix (docs/dtypes.md section 6),
  -- checked by td_check_same_dtype_or_quantized instead of td_check_same_dtype
  quantized_arg = "string",
  -- the result is its first argument's storage seen in another shape (a reshape): every
  -- backend that lists the op shares the storage (td_tensor_share) instead of a kernel
  view = "boolean",
  -- autodiff (differentiable float ops only)
  backward = "table", bound = "string", differentiable = "boolean", why = "string",
  -- autocast (docs/dtypes.md section 9): "low" | "f32" | "keep" (the default), what an
  -- autodiff device with autocast on casts this op's float tensor inputs to
  autocast = "string",
  gradcheck = "table", -- input name -> "positive" | "above_one": the generated gradient check's domain
  -- the generated many-shape comparisons with the CPU (gen/tdgen/emit_compare.lua)
  decompose = "table|string", -- a formula, or statements, in terms of other ops (gen/tdgen/decomp.lua)
  nmse = "number",     -- float results: the largest normalized mean squared error accepted
  zero_sign = "boolean", -- float results: a zero's sign must match too (ops whose doc pins -0 / +0 ties)
  domain = "table",    -- input name -> "positive" | "nonzero" | "index": where its random values lie
  -- the per-dtype comparisons (gen/tdgen/emit_dtype_tests.lua): float dtype name -> the NMSE
  -- bound for that dtype, replacing specs/dtypes.lua's (ops that amplify rounding; say why)
  dtype_nmse = "table",
  -- 1 or 2: the result is homogeneous of that degree in the op's int inputs (sums and
  -- comparisons 1, products 2), so i64 cases scale the inputs by 2^32 / 2^16 (past 2^31)
  int_degree = "number",
  -- int input name -> its values' exclusive upper bound, "size(tensor, dim)" or an i64
  -- argument's name: the entry checks every value lies in [0, bound) before any backend
  -- runs, whatever the result's size and on every backend (TD_E_RANGE otherwise)
  index_range = "table",
}
-- Domains of the comparisons' inputs, and the primitive classes each one applies to.
M.domains = { positive = { float = true }, nonzero = { float = true, int = true },
  index = { int = true } } -- index: class indices in [0, 7), no edge values (cross-entropy targets)
M.op_required = { "name", "id", "family", "doc", "args", "returns" }
M.differentiable_fields = { "backward", "bound", "differentiable", "why", "gradcheck" }

M.backend_fields = {
  name = "string", id = "number", doc = "string", option = "string", default = "boolean", dtypes = "table",
  kernels = "string", collectives = "boolean", ops = "table",
  -- the dtypes its kernels compute, per class (default: every dtype it stores), and per-op
  -- overrides (docs/dtypes.md section 3)
  computes = "table", op_dtypes = "table",
  -- the backend has a td_<name>_convert hook: float dtype conversions on the device, which
  -- the core's casts and "via f32" copies try before converting through host memory
  convert = "boolean",
  -- the backend has td_<name>_dtype_accelerated(device, index): the bit mask of the dtypes a
  -- device runs on dedicated units (docs/dtypes.md section 3; the vtable's dtype_accelerated)
  accelerated = "boolean",
}
M.backend_required = { "name", "id", "doc", "option", "default", "dtypes", "kernels", "ops" }

-- A tuple: several ops called with the same arguments, their results returned together
-- (max_dim with its indices). gen/tdgen/tuple.lua.
M.tuple_fields = { name = "string", doc = "string", parts = "table", examples = "table", tolerance = "number" }
M.tuple_required = { "name", "doc", "parts" }

M.reserved_names = { out = true, autodiff = true }

-- The repository's table, so a module used on its own (the tests, the fuzzers' corpus
-- makers) sees the dtypes; tdgen.lua loads the table its --specs name and reports errors.
do
  local dtypes = require("tdgen.dtypes")
  local rows = dtypes.load(dtypes.default_path())
  if rows then dtypes.install(M, rows) end
end

return M
