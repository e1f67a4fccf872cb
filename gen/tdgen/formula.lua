-- Derivative formulas: a small expression language over `grad`, the op's inputs, its
-- `result` and its attributes. parse() builds a tree; compile() checks it against the op
-- and lowers it to C statements calling public ops and the engine's helpers.
local schema = require("tdgen.schema")
local util = require("tdgen.util")

local M = {}

-- Formulas are short; these bounds keep hostile ones from costing time or stack.
local MAX_LENGTH = 1000
local MAX_DEPTH = 50

-- The number at position i: digits, an optional fraction, an optional exponent ("12",
-- "1.5", ".5", "2e-3"); nil when there is none. Scanned piece by piece, so its cost is
-- linear in the length of the number.
local function number_at(s, i)
  local int = s:match("^%d*", i)
  local frac = s:sub(i + #int, i + #int) == "." and s:match("^%d*", i + #int + 1) or ""
  local mant
  if #frac > 0 then mant = int .. "." .. frac elseif #int > 0 then mant = int else return nil end
  return mant .. (s:match("^[eE][%+%-]?%d+", i + #mant) or "")
end

local function tokenize(s)
  local toks, i = {}, 1
  while i <= #s do
    local c = s:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif c:match("[%d%.]") then
      local num = number_at(s, i)
      if not num then return nil, "malformed number at '" .. util.show(s:sub(i, i + 19), 19) .. "'" end
      local v = tonumber(num)
      if v ~= v or v == math.huge then return nil, "number out of range: " .. util.show(num, 40) end
      toks[#toks + 1] = { k = "num", v = v }
      i = i + #num
    elseif c:match("[%a_]") then
      local name = s:match("^[%a_][%w_]*", i)
      toks[#toks + 1] = { k = "name", v = name }
      i = i + #name
    elseif c:match("[%+%-%*/%(%),]") then
      toks[#toks + 1] = { k = c }
      i = i + 1
    else
      return nil, "unexpected character '" .. util.show(c) .. "'"
    end
  end
  toks[#toks + 1] = { k = "eof" }
  return toks
end

function M.parse(s)
  if #s > MAX_LENGTH then return nil, string.format("the formula is too long (%d characters; at most %d)", #s, MAX_LENGTH) end
  local toks, err = tokenize(s)
  if not toks then return nil, err end
  local pos = 1
  local depth = 0
  -- Runs f one level deeper in the expression (parentheses, arguments, unary minus).
  local function deeper(f)
    depth = depth + 1
    if depth > MAX_DEPTH then return nil, string.format("the formula nests too deeply (at most %d levels)", MAX_DEPTH) end
    local e, derr = f()
    depth = depth - 1
    return e, derr
  end
  local function peek() return toks[pos].k end
  local function take() pos = pos + 1; return toks[pos - 1] end
  local expr
  local function primary()
    local t = take()
    if t.k == "num" then return { k = "num", v = t.v } end
    if t.k == "(" then
      local e, perr = deeper(expr)
      if not e then return nil, perr end
      if take().k ~= ")" then return nil, "missing ')'" end
      return e
    end
    if t.k == "name" then
      if peek() == "(" then
        take()
        local args = {}
        if peek() ~= ")" then
          repeat
            local a, aerr = deeper(expr)
            if not a then return nil, aerr end
            args[#args + 1] = a
          until not (peek() == "," and take())
        end
        if take().k ~= ")" then return nil, "missing ')' after the arguments of " .. t.v end
        return { k = "call", f = t.v, args = args }
      end
      return { k = "name", v = t.v }
    end
    return nil, "unexpected '" .. (t.v or t.k) .. "'"
  end
  local function unary()
    if peek() == "-" then
      take()
      local e, uerr = deeper(unary)
      if not e then return nil, uerr end
      return { k = "neg", e = e }
    end
    return primary()
  end
  local function binary(next_level, ops)
    return function()
      local l, lerr = next_level()
      if not l then return nil, lerr end
      while ops[peek()] do
        local o = take().k
        local r, rerr = next_level()
        if not r then return nil, rerr end
        l = { k = "bin", op = o, l = l, r = r }
      end
      return l
    end
  end
  local term = binary(unary, { ["*"] = true, ["/"] = true })
  expr = binary(term, { ["+"] = true, ["-"] = true })
  local e, perr = expr()
  if not e then return nil, perr end
  if peek() ~= "eof" then return nil, "unexpected '" .. (toks[pos].v or toks[pos].k) .. "' after the expression" end
  return e
end

-- Engine helpers: name -> C function, parameter kinds and the ops they run (a backend
-- needs them for the gradient). `node` helpers also take the node and the input index.
M.helpers = {
  positive = { c = "td_ad_positive", params = { "tensor" }, uses = { "float_full", "float_greater", "bool_into_float" } },
  sign = { c = "td_ad_sign", params = { "tensor" }, uses = { "float_full", "float_greater", "float_lower", "bool_into_float", "float_sub" } },
  ge = { c = "td_ad_ge", params = { "tensor", "tensor" }, uses = { "float_greater_equal", "bool_into_float" } },
  gt = { c = "td_ad_gt", params = { "tensor", "tensor" }, uses = { "float_greater", "bool_into_float" } },
  inside = { c = "td_ad_inside", params = { "tensor", "scalar", "scalar" }, uses = { "float_full", "float_greater_equal", "float_lower_equal", "bool_into_float", "float_mul" } },
  -- t with 0 where x <= v (relu), where x == v (powf's base), where the base a is 0 and the
  -- exponent b >= 0 (powf's exponent); t, or its zeros when the scalar s is 0 (powf_scalar).
  zero_where_le = { c = "td_ad_zero_where_le", params = { "tensor", "tensor", "scalar" },
    uses = { "float_full", "float_lower_equal", "float_mask_fill" } },
  zero_where_eq = { c = "td_ad_zero_where_eq", params = { "tensor", "tensor", "scalar" },
    uses = { "float_full", "float_equal", "float_mask_fill" } },
  zero_where_zero_base = { c = "td_ad_zero_where_zero_base", params = { "tensor", "tensor", "tensor" },
    uses = { "float_full", "float_equal", "float_greater_equal", "bool_and", "float_mask_fill" } },
  zeros_if_zero = { c = "td_ad_zeros_if_zero", params = { "tensor", "scalar" }, uses = { "float_zeros" } },
  gelu_grad = { c = "td_ad_gelu_grad", params = { "tensor" }, uses = { "float_gelu", "float_full", "float_equal", "float_mask_fill", "float_div", "float_mul", "float_mul_scalar", "float_exp", "float_add" } },
  zeros_as = { c = "td_ad_zeros_as", params = { "tensor", "shape_of" }, uses = { "float_zeros" } },
  mean_grad = { c = "td_ad_mean_grad", params = { "tensor", "shape_of", "iscalar" }, uses = { "float_expand", "float_mul_scalar" } },
  expand_as = { c = "td_ad_expand_as", params = { "tensor", "shape_of" }, uses = { "float_expand" } },
  reshape_as = { c = "td_ad_reshape_as", params = { "tensor", "shape_of" }, uses = { "float_reshape" } },
  inverse_permute = { c = "td_ad_inverse_permute", params = { "tensor", "array" }, uses = { "float_permute" } },
  slice_grad = { c = "td_ad_slice_grad", params = { "tensor", "shape_of", "array", "array" }, uses = { "float_zeros", "float_slice_assign" } },
  extreme_grad = { c = "td_ad_extreme_grad", params = { "tensor", "tensor", "tensor" }, uses = { "float_equal", "bool_into_float", "float_mul" } },
  cat_slice = { c = "td_ad_cat_slice", params = { "tensor", "iscalar" }, node = true, uses = { "float_slice", "float_zeros" } },
  all_reduce_grad = { c = "td_ad_all_reduce_grad", params = { "tensor", "tensor", "tensor", "group", "reduce" },
    uses = { "float_all_reduce", "float_equal", "bool_into_float", "float_mul" } },
  broadcast_grad = { c = "td_ad_broadcast_grad", params = { "tensor", "group", "iscalar" },
    uses = { "float_all_reduce", "float_mul_scalar" } },
  all_gather_grad = { c = "td_ad_all_gather_grad", params = { "tensor", "group" },
    uses = { "float_all_reduce", "float_slice" } },
  to_input_device = { c = "td_ad_to_input_device", params = { "tensor" }, node = true, devices = true, uses = { "float_to_device" } },
  -- indexing and layout (issue 10); "itensor" is an int tensor argument (indices)
  gather_grad = { c = "td_ad_gather_grad", params = { "tensor", "shape_of", "iscalar", "itensor" },
    uses = { "float_zeros", "float_scatter_add" } },
  scatter_value_grad = { c = "td_ad_scatter_value_grad", params = { "tensor", "shape_of", "iscalar", "itensor" },
    uses = { "float_gather", "float_zeros", "float_slice_assign" } },
  select_grad = { c = "td_ad_select_grad", params = { "tensor", "shape_of", "iscalar", "itensor" },
    uses = { "float_zeros", "float_select_add" } },
  repeat_dim_grad = { c = "td_ad_repeat_dim_grad", params = { "tensor", "shape_of", "iscalar", "iscalar" },
    uses = { "float_reshape", "float_sum_dim" } },
  narrow_grad = { c = "td_ad_narrow_grad", params = { "tensor", "shape_of", "iscalar", "iscalar" },
    uses = { "float_zeros", "float_slice_assign" } },
  stack_slice = { c = "td_ad_stack_slice", params = { "tensor", "iscalar" }, node = true,
    uses = { "float_slice", "float_reshape" } },
  unfold_grad = { c = "td_ad_unfold_grad", params = { "tensor", "shape_of", "iscalar", "iscalar", "iscalar" },
    uses = { "float_permute", "float_reshape", "int_from_data", "float_zeros", "float_select_add" } },
  pad_grad = { c = "td_ad_pad_grad", params = { "tensor", "shape_of", "array" }, uses = { "float_slice" } },
  scatter_assign_grad = { c = "td_ad_scatter_assign_grad", params = { "tensor", "iscalar", "itensor" },
    uses = { "float_zeros", "float_scatter_assign" } },
  -- matmul with torch.matmul's 1-d operands: the transposed matmuls of the promoted shapes,
  -- summed over the batch a 1-d operand was broadcast across (both >= 2-d: just the matmul)
  matmul_grad_a = { c = "td_ad_matmul_grad_a", params = { "tensor", "tensor", "tensor" },
    uses = { "float_matmul_nt", "float_reshape", "float_sum_dim" } },
  matmul_grad_b = { c = "td_ad_matmul_grad_b", params = { "tensor", "tensor", "tensor" },
    uses = { "float_matmul_tn", "float_reshape", "float_sum_dim" } },
  -- conv_transpose2d: the adjoint of its crop and pad, then conv2d's (any output_padding)
  conv_transpose2d_grad_x = { c = "td_ad_conv_transpose2d_grad_x",
    params = { "tensor", "tensor", "tensor", "array", "array", "array", "array", "iscalar" },
    uses = { "float_pad", "float_slice", "float_zeros", "float_conv2d" } },
  conv_transpose2d_grad_weight = { c = "td_ad_conv_transpose2d_grad_weight",
    params = { "tensor", "tensor", "tensor", "array", "array", "array", "array", "iscalar" },
    uses = { "float_pad", "float_slice", "float_conv2d_backward_weight" } },
  -- activations (specs/ops/activation.lua)
  cross_entropy_grad = { c = "td_ad_cross_entropy_grad", params = { "tensor", "tensor", "itensor" },
    uses = { "float_max_dim", "float_sub", "float_exp", "float_sum_dim", "float_div", "int_reshape", "int_arange",
      "int_equal", "bool_into_float", "float_mul", "float_mul_scalar" } },
  -- float math (issue 10)
  at_least = { c = "td_ad_at_least", params = { "tensor", "scalar" }, uses = { "float_full", "float_greater_equal", "bool_into_float" } },
  at_most = { c = "td_ad_at_most", params = { "tensor", "scalar" }, uses = { "float_full", "float_lower_equal", "bool_into_float" } },
  powi_grad = { c = "td_ad_powi_grad", params = { "tensor", "itensor" },
    uses = { "int_into_float", "float_add_scalar", "float_powf", "float_mul", "float_full", "float_equal", "float_mask_fill" } },
  powi_scalar_grad = { c = "td_ad_powi_scalar_grad", params = { "tensor", "iscalar" },
    uses = { "float_zeros", "float_powi_scalar", "float_mul_scalar" } },
  -- reduce / cumulative / sort group (specs/ops/reduce_sort.lua). The *_grad helpers of
  -- products, scans and permutations run on the host (into_data, C loops, from_data).
  -- the values of max / min along a dim with their index: the whole gradient to the index
  -- argmax / argmin returns (torch.max(a, dim)), none to the other ties
  argmax_grad = { c = "td_ad_argmax_grad", params = { "tensor", "tensor", "iscalar" },
    uses = { "float_argmax", "float_zeros", "float_scatter_add" } },
  argmin_grad = { c = "td_ad_argmin_grad", params = { "tensor", "tensor", "iscalar" },
    uses = { "float_argmin", "float_zeros", "float_scatter_add" } },
  mean_all_grad = { c = "td_ad_mean_all_grad", params = { "tensor", "shape_of" }, uses = { "float_expand", "float_mul_scalar" } },
  even_grad = { c = "td_ad_even_grad", params = { "tensor", "tensor", "tensor" },
    uses = { "float_equal", "bool_not", "bool_and", "bool_or", "bool_into_float", "float_sum", "float_div", "float_mul" } },
  even_grad_dim = { c = "td_ad_even_grad_dim", params = { "tensor", "tensor", "tensor", "iscalar" },
    uses = { "float_equal", "bool_not", "bool_and", "bool_or", "bool_into_float", "float_sum_dim", "float_div", "float_mul" } },
  prod_grad = { c = "td_ad_prod_grad", params = { "tensor", "tensor" }, uses = { "float_into_data", "float_from_data" } },
  prod_dim_grad = { c = "td_ad_prod_dim_grad", params = { "tensor", "tensor", "iscalar" },
    uses = { "float_into_data", "float_from_data" } },
  rev_cumsum = { c = "td_ad_rev_cumsum", params = { "tensor", "iscalar" }, uses = { "float_into_data", "float_from_data" } },
  cumprod_grad = { c = "td_ad_cumprod_grad", params = { "tensor", "tensor", "iscalar" },
    uses = { "float_into_data", "float_from_data" } },
  cummax_grad = { c = "td_ad_cummax_grad", params = { "tensor", "tensor", "iscalar" },
    uses = { "float_into_data", "float_from_data" } },
  cummin_grad = { c = "td_ad_cummin_grad", params = { "tensor", "tensor", "iscalar" },
    uses = { "float_into_data", "float_from_data" } },
  sort_grad = { c = "td_ad_sort_grad", params = { "tensor", "tensor", "iscalar", "iscalar" },
    uses = { "float_argsort", "int_into_data", "float_into_data", "float_from_data" } },
  topk_grad = { c = "td_ad_topk_grad", params = { "tensor", "tensor", "iscalar", "iscalar" },
    uses = { "float_argtopk", "int_into_data", "float_into_data", "float_from_data" } },
  -- spatial module ops (specs/ops/module_spatial.lua): zeros [size of t's dim 0] on t's
  -- device (the zero bias of conv_transpose2d's input gradient, a conv2d by its weight)
  zeros_dim0 = { c = "td_ad_zeros_dim0", params = { "tensor" }, uses = { "float_zeros" } },
  -- a `shared` value holding every input's gradient flattened one after the other (in the
  -- order of the op's float inputs): the part of input i, in its shape
  unpacked = { c = "td_ad_unpacked", params = { "tensor" }, node = true, uses = { "float_narrow", "float_reshape" } },
}

local ARG_KIND = { f32 = "scalar", dim = "iscalar", i64 = "iscalar", i32 = "iscalar", dims = "array", shape = "array",
  group = "group", reduce_op = "reduce" }

-- Parameter kinds of a float op used as a formula function (nil when it cannot be one).
local function op_params(op)
  if op.returns ~= "float" or not op.float_in or op.args[1].t.list then return nil end
  local ps = {}
  for _, a in ipairs(op.args) do
    if a.t.tensor == "float" then ps[#ps + 1] = "tensor"
    elseif a.t.tensor == "bool" then ps[#ps + 1] = "mask"
    elseif a.t.tensor == "int" then ps[#ps + 1] = "itensor"
    elseif ARG_KIND[a.type] then ps[#ps + 1] = ARG_KIND[a.type]
    else return nil end
  end
  return ps
end

-- Compiles the formulas of one op. Returns a plan { inputs, saves, attrs, bodies } or
-- nil and a list of messages.
function M.compile(op, model)
  local errs = {}
  -- Slots: every tensor argument gets a saved-value slot and every attribute an attribute
  -- slot, in argument order, so a node can also re-run its forward op (checkpointing).
  local plan = { inputs = {}, input_index = {}, tensor_slot = {}, tensor_args = {}, used_slot = {},
    attr = {}, attrs = {}, uses_result = false, bodies = {}, ops = {} }
  local nf, ni, na = 0, 0, 0
  for _, a in ipairs(op.args) do
    if a.t.tensor == "float" or a.t.list == "float" then
      plan.inputs[#plan.inputs + 1] = a
      plan.input_index[a.name] = #plan.inputs - 1
    end
    if a.t.tensor then
      plan.tensor_args[#plan.tensor_args + 1] = a
      plan.tensor_slot[a.name] = #plan.tensor_args - 1
    elseif ARG_KIND[a.type] then
      local kind, expr, slot = ARG_KIND[a.type]
      if kind == "scalar" then slot = nf; expr = string.format("n->fattrs[%d]", nf); nf = nf + 1
      elseif kind == "iscalar" then
        slot = ni
        expr = string.format(a.type == "i32" and "(int32_t)n->iattrs[%d]" or "n->iattrs[%d]", ni)
        ni = ni + 1
      elseif kind == "reduce" then slot = ni; expr = string.format("(td_reduce_op)n->iattrs[%d]", ni); ni = ni + 1
      elseif kind == "group" then slot = 0; expr = "n->group"
      else slot = na; expr = string.format("n->arrs[%d], n->arr_lens[%d]", na, na); na = na + 1 end
      plan.attr[a.name] = expr
      plan.attrs[#plan.attrs + 1] = { arg = a, kind = kind, expr = expr, slot = slot }
    end
  end
  if #plan.tensor_args > 4 or nf > 4 or ni > 4 or na > 4 then
    errs[#errs + 1] = "too many tensors or attributes for a tape node (4 tensors, 4 floats, 4 ints, 4 arrays)"
    return nil, errs
  end
  local function save(name)
    local slot = plan.tensor_slot[name]
    plan.used_slot[slot] = true
    return string.format("vals[%d]", slot)
  end
  local function attr(a) return plan.attr[a.name] end

  -- `shared`: values computed once per node, before the inputs' formulas, which name them
  -- (e.g. one op that makes every gradient); each line is "name = expression"
  local shared_vals = {}
  plan.shared = nil
  local function compile_one(input_name, src, prefix, in_shared)
    local lines, temps, ntemp = {}, {}, 0
    local result
    local err_here = function(msg) errs[#errs + 1] = string.format("'%s': %s", tostring(input_name), msg) end
    local ast, perr = M.parse(src)
    if not ast then err_here(perr) else
      local ok = true
      local function fail(msg) if ok then err_here(msg) end; ok = false; return { kind = "bad" } end
      local function temp()
        ntemp = ntemp + 1
        temps[#temps + 1] = prefix .. ntemp
        return prefix .. ntemp
      end
      local function call(fn, args)
        local t = temp()
        if fn:match("^td_float_") then plan.ops[fn:sub(4)] = true end
        args[#args + 1] = "&" .. t
        lines[#lines + 1] = string.format("if (st == TD_OK)\n        st = %s(%s);", fn, table.concat(args, ", "))
        return { kind = "tensor", c = t }
      end
      local lower
      local function as(v, want)
        if v.kind == "bad" then return nil end
        if want == "tensor" and v.kind == "tensor" then return v.c end
        if want == "mask" and v.kind == "mask" then return v.c end
        if want == "itensor" and v.kind == "itensor" then return v.c end
        if want == "scalar" and (v.kind == "scalar" or v.kind == "num" or v.kind == "iscalar") then return "(float)(" .. v.c .. ")" end
        if want == "iscalar" and (v.kind == "iscalar" or (v.kind == "num" and math.type(v.v) == "integer")) then return v.c end
        if want == "array" and v.kind == "array" then return v.c end
        if (want == "group" or want == "reduce") and v.kind == want then return v.c end
        if want == "shape_of" and v.kind == "tensor" and v.input then return v.shape end
        return nil
      end
      lower = function(e)
        if e.k == "num" then
          local c = math.type(e.v) == "integer" and string.format("%d", e.v) or string.format("%.9g", e.v)
          return { kind = "num", v = e.v, c = c }
        elseif e.k == "name" then
          if e.v == "grad" then return { kind = "tensor", c = "grad" } end
          if e.v == "result" then
            if op.returns ~= "float" then return fail("'result' is not a float tensor here") end
            plan.uses_result = true
            return { kind = "tensor", c = "res" }
          end
          if e.v == "i" then
            if in_shared then return fail("'i' (the input index) is not defined in a shared line") end
            return { kind = "iscalar", c = "i" }
          end
          if shared_vals[e.v] then return shared_vals[e.v] end
          local a = op.arg_by_name[e.v]
          if not a then return fail(string.format("'%s' is not an input, attribute, grad or result of %s", e.v, op.name)) end
          if a.t.tensor == "float" then
            return { kind = "tensor", c = save(e.v), input = true,
              shape = string.format("&n->in_shapes[%d]", plan.input_index[e.v]) }
          end
          if a.t.tensor == "bool" then return { kind = "mask", c = save(e.v) } end
          if a.t.tensor == "int" then return { kind = "itensor", c = save(e.v) } end
          local k = ARG_KIND[a.type]
          if not k then return fail(string.format("'%s' (a %s) cannot be used in a formula", e.v, a.type)) end
          return { kind = k, c = attr(a) }
        elseif e.k == "neg" then
          local v = lower(e.e)
          if v.kind == "tensor" then return call("td_float_neg", { v.c }) end
          if v.kind == "bad" then return v end
          if v.kind == "num" then return { kind = "num", v = -v.v, c = "(-" .. v.c .. ")" } end
          return { kind = v.kind, c = "(-(" .. v.c .. "))" }
        elseif e.k == "bin" then
          local l, r = lower(e.l), lower(e.r)
          if l.kind == "bad" or r.kind == "bad" then return { kind = "bad" } end
          local lt, rt = l.kind == "tensor", r.kind == "tensor"
          local names = { ["+"] = "add", ["-"] = "sub", ["*"] = "mul", ["/"] = "div" }
          if lt and rt then return call("td_float_" .. names[e.op], { l.c, r.c }) end
          if lt then
            local s = as(r, "scalar")
            if not s then return fail("cannot combine a tensor with a " .. r.kind) end
            if e.op == "+" then return call("td_float_add_scalar", { l.c, s }) end
            if e.op == "-" then return call("td_float_add_scalar", { l.c, "-" .. s }) end
            if e.op == "*" then return call("td_float_mul_scalar", { l.c, s }) end
            return call("td_float_mul_scalar", { l.c, "1.0f / " .. s })
          end
          if rt then
            local s = as(l, "scalar")
            if not s then return fail("cannot combine a " .. l.kind .. " with a tensor") end
            if e.op == "+" then return call("td_float_add_scalar", { r.c, s }) end
            if e.op == "*" then return call("td_float_mul_scalar", { r.c, s }) end
            if e.op == "-" then
              local nt = call("td_float_neg", { r.c })
              return call("td_float_add_scalar", { nt.c, s })
            end
            local inv = call("td_float_powf_scalar", { r.c, "-1.0f" })
            return call("td_float_mul_scalar", { inv.c, s })
          end
          local kind = (l.kind == "iscalar" and r.kind ~= "scalar") and "iscalar" or "scalar"
          if l.kind == "num" and r.kind == "num" then kind = "scalar" end
          return { kind = kind, c = "(" .. l.c .. " " .. e.op .. " " .. r.c .. ")" }
        elseif e.k == "call" then
          local h = M.helpers[e.f]
          local params, cname
          if h then
            params, cname = h.params, h.c
            for _, u in ipairs(h.uses) do plan.ops[u] = true end
          else
            local target = model.op_by_name["float_" .. e.f]
            params = target and not target.broken and op_params(target)
            if not params then
              return fail(string.format("unknown function '%s' (neither a float op float_%s nor a helper)", e.f, e.f))
            end
            cname = "td_float_" .. e.f
          end
          if #e.args ~= #params then
            return fail(string.format("%s takes %d arguments, got %d", e.f, #params, #e.args))
          end
          local cargs = {}
          if h and h.node then
            if in_shared then return fail(string.format("%s needs the input index: not in a shared line", e.f)) end
            cargs[1] = "n"; cargs[2] = "i"; plan.keeps_devices = plan.keeps_devices or h.devices
          end
          for j, p in ipairs(params) do
            local arg = e.args[j]
            local v
            if p == "shape_of" and arg.k == "name" and plan.input_index[arg.v] then
              -- Only the input's shape is needed: nothing is saved for it.
              v = { kind = "tensor", input = true, c = "", shape = string.format("&n->in_shapes[%d]", plan.input_index[arg.v]) }
            else
              v = lower(arg)
            end
            local c = as(v, p)
            if not c then
              if v.kind ~= "bad" then fail(string.format("argument %d of %s must be a %s, got a %s", j, e.f, p, v.kind)) end
              return { kind = "bad" }
            end
            cargs[#cargs + 1] = c
          end
          return call(cname, cargs)
        end
      end
      local v = lower(ast)
      if ok and v.kind ~= "tensor" then fail("the gradient must be a tensor, not a " .. v.kind) end
      if ok then
        result = { lines = lines, temps = temps, value = v.c, owned = v.c:match("^" .. prefix .. "%d+$") ~= nil }
      end
    end
    return result
  end
  local shared = op.fields.backward.shared
  if shared ~= nil then
    if plan.inputs[1] and plan.inputs[1].t.list then
      errs[#errs + 1] = "'shared': not for an op whose float input is a list"
      return nil, errs
    end
    plan.shared = { lines = {}, temps = {} }
    for k, line in ipairs(shared) do
      local name, src = line:match("^%s*([%a_][%w_]*)%s*=%s*(.+)$")
      if not name then
        errs[#errs + 1] = string.format("'shared' line %d: expected \"name = expression\", got \"%s\"", k, line)
      elseif shared_vals[name] or op.arg_by_name[name] or name == "grad" or name == "result" or name == "i" then
        errs[#errs + 1] = string.format("'shared' line %d: '%s' is already a name", k, name)
      else
        local body = compile_one("shared " .. name, src, "s" .. k .. "_", true)
        if body then
          for _, l in ipairs(body.lines) do plan.shared.lines[#plan.shared.lines + 1] = l end
          for _, t in ipairs(body.temps) do plan.shared.temps[#plan.shared.temps + 1] = t end
          shared_vals[name] = { kind = "tensor", c = body.value }
        end
      end
    end
  end
  for _, input in ipairs(plan.inputs) do
    local body = compile_one(input.name, op.fields.backward[input.name], "t", false)
    if body then plan.bodies[input.name] = body end
  end
  if #errs > 0 then return nil, errs end
  return plan
end

return M
