-- Decompositions (composite ops): an op spec's `decompose` says how the op is computed from
-- other ops. compile() type-checks one against the model and lowers it to C statements
-- that call public entries; availability() decides, per backend, which ops are native,
-- composite (every piece available there) or unavailable; check_cycles() rejects ops that
-- reach themselves through their pieces.
--
-- The language is the gradient formulas' (gen/tdgen/formula.lua) with statements:
--   decompose = { "m = float_max_dim(a, dim)", "e = float_exp(a - m)", "e / float_sum_dim(e, dim)" }
-- Every entry but the last is `name = expr`; the last is the result. Calls name any op in
-- full, with its arguments in spec order; builtins: device(x), shape(x), size(x, d),
-- ndim(x), numel(x), array(i, ...) (int scalars as an array), at(arr, i) (an element of
-- an array), idiv(a, b) (floor division of int scalars). `+ - * /` and unary `-` work on float and int tensors and scalars.
local formula = require("tdgen.formula")
local schema = require("tdgen.schema")

local M = {}

M.MAX_STATEMENTS = 32

-- Value kinds: tensor (cls float|int|bool), scalar (C float), iscalar (C int64_t),
-- array (pointer + length), device, and enums by their type name (distribution).
local ARG_KIND = { f32 = "scalar", i32 = "iscalar", i64 = "iscalar", u64 = "iscalar", dim = "iscalar",
  dims = "array", shape = "array", device = "device", distribution = "distribution" }

local BUILTINS = { device = true, shape = true, size = true, ndim = true, numel = true,
  array = true, at = true, idiv = true }
local BUILTIN_LIST = "device, shape, size, ndim, numel, array, at, idiv"

local OPNAME = { ["+"] = "add", ["-"] = "sub", ["*"] = "mul", ["/"] = "div" }

-- Statements of a `decompose` field: a string or an array of strings.
local function statements(src)
  if type(src) == "string" then return { src } end
  return src
end

-- Compiles op.fields.decompose. Returns { lines, temps, locals_decl, result, calls } or
-- nil and a list of messages.
function M.compile(op, model)
  local errs = {}
  local src = statements(op.fields.decompose)
  if type(src) ~= "table" or #src == 0 then
    return nil, { "expected a formula string or a non-empty array of statement strings" }
  end
  if #src > M.MAX_STATEMENTS then
    return nil, { string.format("%d statements; at most %d", #src, M.MAX_STATEMENTS) }
  end
  for k in pairs(src) do
    if math.type(k) ~= "integer" or k < 1 or k > #src then return nil, { "expected an array of statement strings" } end
  end
  if op.family == "distributed" or op.family == "to_device" or op.family == "device" then
    return nil, { "a " .. op.family .. " op cannot be a composite" }
  end
  for _, a in ipairs(op.args) do
    if not (a.t.tensor or ARG_KIND[a.type]) then
      return nil, { string.format("argument '%s' (a %s) cannot be used in a decomposition; only tensors, scalars, " ..
        "dims, arrays and devices can", a.name, a.type) }
    end
  end
  if not schema.classes[op.returns] then return nil, { "only an op that returns a tensor can be a composite" } end

  local plan = { lines = {}, decls = {}, calls = {}, temps = {} }
  -- the op's first float tensor: the dtype its decomposition makes fresh float tensors in
  local anchor
  for _, a in ipairs(op.args) do
    if a.t.tensor == "float" then anchor = a.name; break end
  end
  local ntemp, nscalar = 0, 0
  local locals = {}
  local ok = true
  local cur = 0
  local function fail(msg)
    if ok then errs[#errs + 1] = string.format("statement %d: %s", cur, msg) end
    ok = false
    return { kind = "bad" }
  end
  local function temp()
    ntemp = ntemp + 1
    local t = "td_t" .. ntemp
    plan.temps[#plan.temps + 1] = t
    return t
  end
  local function emit(line) plan.lines[#plan.lines + 1] = line end
  local function describe(v)
    if v.kind == "tensor" then return (v.cls == "int" and "an " or "a ") .. v.cls .. " tensor" end
    if v.kind == "iscalar" or v.kind == "num" and math.type(v.v) == "integer" then return "an int scalar" end
    if v.kind == "scalar" or v.kind == "num" then return "a float scalar" end
    return "a " .. v.kind
  end
  -- C expression of v for a parameter of type ty, or nil when v does not fit.
  local function as_param(v, ty)
    local kind = ARG_KIND[ty]
    if kind == "scalar" then
      if v.kind == "scalar" or v.kind == "iscalar" or v.kind == "num" then return { "(float)(" .. v.c .. ")" } end
    elseif kind == "iscalar" then
      local int = v.kind == "iscalar" or (v.kind == "num" and math.type(v.v) == "integer")
      if int then
        local ct = ({ i32 = "int32_t", i64 = "int64_t", u64 = "uint64_t", dim = "int64_t" })[ty]
        return { "(" .. ct .. ")(" .. v.c .. ")" }
      end
    elseif kind == "array" then
      if v.kind == "array" then return { v.c, v.len } end
    elseif kind then
      if v.kind == kind then return { v.c } end
    end
    return nil
  end
  -- A call of the public entry of op `name` with lowered argument values; a new tensor.
  local function call_op(name, vals)
    local target = model.op_by_name[name]
    if not target or target.broken then return fail(string.format("unknown op '%s'", name)) end
    if target == op then return fail(string.format("%s cannot call itself", name)) end
    if not schema.classes[target.returns] then
      return fail(string.format("%s returns %s, not a tensor", name, target.returns))
    end
    if #vals ~= #target.args then
      return fail(string.format("%s takes %d arguments, got %d", name, #target.args, #vals))
    end
    local cargs = {}
    for j, a in ipairs(target.args) do
      local v = vals[j]
      if v.kind == "bad" then return v end
      if a.t.tensor then
        if v.kind ~= "tensor" or v.cls ~= a.t.tensor then
          return fail(string.format("argument %d of %s ('%s') must be a %s tensor, got %s", j, name, a.name,
            a.t.tensor, describe(v)))
        end
        cargs[#cargs + 1] = v.c
      elseif ARG_KIND[a.type] then
        local c = as_param(v, a.type)
        if not c then
          return fail(string.format("argument %d of %s ('%s', a %s) cannot take %s", j, name, a.name, a.type,
            describe(v)))
        end
        for _, x in ipairs(c) do cargs[#cargs + 1] = x end
      else
        return fail(string.format("%s takes a %s ('%s'), which a decomposition cannot pass", name, a.type, a.name))
      end
    end
    plan.calls[name] = true
    -- Dtypes (emit_support.dtype_cell): a float tensor made from no float input of the op
    -- has the default dtype unless a `_dtype` twin makes it (below: every such piece of the
    -- specs today has one); one that meets a tensor derived from the op's float inputs in a
    -- call would make the op fail in any other float dtype that runs piecewise (TD_E_DTYPE in
    -- f64: f16 / bf16 run in f32 inside, opmath_args below), and a result made only of such
    -- tensors would be f32: mixes_default_float marks those decompositions `-` there.
    local fresh_in, own_in = false, false
    for j, a in ipairs(target.args) do
      if a.t.tensor == "float" then
        if vals[j].fresh then fresh_in = true else own_in = true end
      end
    end
    if fresh_in and own_in then plan.mixes_default_float = true end
    local fresh = target.returns == "float" and not own_in
    local t = temp()
    cargs[#cargs + 1] = "&" .. t
    local call = string.format("td_%s(%s)", name, table.concat(cargs, ", "))
    -- A float tensor made from nothing of the op's float inputs (float_full, int_into_float)
    -- is made in the dtype of the op's first float tensor through the piece's `_dtype` twin
    -- (docs/dtypes.md section 5), so that an f64 op runs its decomposition in f64; the f32
    -- case (and f16 / bf16, whose decompositions run on f32 copies) calls the op itself.
    local tw = target.dtype_twin
    if fresh and anchor and tw and (tw.kind == "zeros" or tw.kind == "ones" or tw.kind == "full"
        or tw.kind == "convert") then
      local targs = {}
      for j, a in ipairs(target.args) do
        local c = a.type == "f32" and { "(double)(" .. vals[j].c .. ")" }
          or (a.t.tensor and { vals[j].c }) or as_param(vals[j], a.type)
        for _, x in ipairs(c) do targs[#targs + 1] = x end
        if j == 1 then targs[#targs + 1] = anchor .. "->dtype" end
      end
      targs[#targs + 1] = "&" .. t
      call = string.format("(%s->dtype == TD_F32 ? %s : td_%s_dtype(%s))", anchor, call, name,
        table.concat(targs, ", "))
      fresh = false
    end
    emit(string.format("if (td_st == TD_OK)\n        td_st = %s;", call))
    return { kind = "tensor", cls = schema.classes[target.returns] and target.returns, c = t, fresh = fresh }
  end
  local function exists(name) local o = model.op_by_name[name]; return o ~= nil and not o.broken end

  local lower
  local function scalar_of(v)
    if v.kind == "scalar" or v.kind == "iscalar" or v.kind == "num" then return v end
  end
  lower = function(e)
    if e.k == "num" then
      local c = math.type(e.v) == "integer" and string.format("%d", e.v) or string.format("%.9g", e.v)
      if math.type(e.v) == "float" and not c:find("[%.eEn]") then c = c .. ".0" end
      return { kind = "num", v = e.v, c = c }
    elseif e.k == "name" then
      local l = locals[e.v]
      if l then return l end
      local a = op.arg_by_name[e.v]
      if not a then
        return fail(string.format("'%s' is neither an argument of %s nor a name defined before", e.v, op.name))
      end
      if a.t.tensor then return { kind = "tensor", cls = a.t.tensor, c = a.name, arg = true } end
      local k = ARG_KIND[a.type]
      if k == "array" then return { kind = "array", c = a.name, len = a.name .. "_len" } end
      return { kind = k, c = a.name }
    elseif e.k == "neg" then
      local v = lower(e.e)
      if v.kind == "bad" then return v end
      if v.kind == "tensor" then
        if v.cls == "bool" then return fail("a bool tensor has no '-'; use bool_not") end
        return call_op(v.cls .. "_neg", { v })
      end
      if v.kind == "num" then return { kind = "num", v = -v.v, c = "(-" .. v.c .. ")" } end
      if v.kind == "scalar" or v.kind == "iscalar" then return { kind = v.kind, c = "(-(" .. v.c .. "))" } end
      return fail("cannot negate " .. describe(v))
    elseif e.k == "bin" then
      local l = lower(e.l)
      if l.kind == "bad" then return l end
      local r = lower(e.r)
      if r.kind == "bad" then return r end
      local lt, rt = l.kind == "tensor", r.kind == "tensor"
      local o = e.op
      if lt and rt then
        if l.cls ~= r.cls then
          return fail(string.format("'%s' of a %s tensor and a %s tensor; cast one first", o, l.cls, r.cls))
        end
        if l.cls == "bool" then return fail("bool tensors have no '" .. o .. "'; use bool_and, bool_or, bool_not") end
        return call_op(l.cls .. "_" .. OPNAME[o], { l, r })
      end
      if lt or rt then
        local t, s = lt and l or r, scalar_of(lt and r or l)
        if not s then return fail(string.format("cannot combine %s with %s", describe(l), describe(r))) end
        if t.cls == "bool" then return fail("bool tensors have no '" .. o .. "'") end
        if t.cls == "float" then
          local sc = "(float)(" .. s.c .. ")"
          local fs = { kind = "scalar", c = sc }
          if lt then
            if o == "+" then return call_op("float_add_scalar", { t, fs }) end
            if o == "-" then return call_op("float_add_scalar", { t, { kind = "scalar", c = "-" .. sc } }) end
            if o == "*" then return call_op("float_mul_scalar", { t, fs }) end
            return call_op("float_mul_scalar", { t, { kind = "scalar", c = "1.0f / " .. sc } })
          end
          if o == "+" then return call_op("float_add_scalar", { t, fs }) end
          if o == "*" then return call_op("float_mul_scalar", { t, fs }) end
          if o == "-" then return call_op("float_add_scalar", { call_op("float_neg", { t }), fs }) end
          local full = call_op("float_full", { { kind = "device", c = t.c .. "->device" },
            { kind = "array", c = t.c .. "->shape.dims", len = t.c .. "->shape.ndim" }, fs })
          return call_op("float_div", { full, t })
        end
        -- int tensor with an int scalar
        local int = s.kind == "iscalar" or (s.kind == "num" and math.type(s.v) == "integer")
        if not int then return fail("an int tensor combines with int scalars only, got " .. describe(s)) end
        local is = { kind = "iscalar", c = s.c }
        if lt then return call_op("int_" .. OPNAME[o] .. "_scalar", { t, is }) end
        if o == "+" or o == "*" then return call_op("int_" .. OPNAME[o] .. "_scalar", { t, is }) end
        if o == "-" then return call_op("int_add_scalar", { call_op("int_neg", { t }), is }) end
        local full = call_op("int_full", { { kind = "device", c = t.c .. "->device" },
          { kind = "array", c = t.c .. "->shape.dims", len = t.c .. "->shape.ndim" }, is })
        return call_op("int_div", { full, t })
      end
      local ls, rs = scalar_of(l), scalar_of(r)
      if not ls or not rs then return fail(string.format("cannot combine %s with %s", describe(l), describe(r))) end
      if l.kind == "num" and r.kind == "num" then
        local v = o == "+" and l.v + r.v or o == "-" and l.v - r.v or o == "*" and l.v * r.v or nil
        if v and math.type(v) == math.type(l.v) and math.type(l.v) == math.type(r.v) then
          return { kind = "num", v = v, c = "(" .. l.c .. " " .. o .. " " .. r.c .. ")" }
        end
      end
      local both_int = (l.kind == "iscalar" or l.kind == "num" and math.type(l.v) == "integer")
        and (r.kind == "iscalar" or r.kind == "num" and math.type(r.v) == "integer")
      if both_int and o ~= "/" then
        return { kind = "iscalar", c = "((int64_t)(" .. l.c .. ") " .. o .. " (int64_t)(" .. r.c .. "))" }
      end
      return { kind = "scalar", c = "((double)(" .. l.c .. ") " .. o .. " (double)(" .. r.c .. "))" }
    elseif e.k == "call" then
      if e.f == "array" then
        -- array(e1, ..., ek): int scalars as a shape or dims argument
        if #e.args < 1 or #e.args > 8 then
          return fail(string.format("array takes 1 to 8 int scalars, got %d", #e.args))
        end
        local cs = {}
        for j, a in ipairs(e.args) do
          local v = lower(a)
          if v.kind == "bad" then return v end
          local c = as_param(v, "i64")
          if not c then return fail(string.format("element %d of array() must be an int scalar, got %s", j, describe(v))) end
          cs[j] = c[1]
        end
        nscalar = nscalar + 1
        local s = "td_a" .. nscalar
        plan.decls[#plan.decls + 1] = string.format("int64_t %s[%d] = { 0 };", s, #cs)
        for j, c in ipairs(cs) do
          emit(string.format("if (td_st == TD_OK)\n        %s[%d] = %s;", s, j - 1, c))
        end
        return { kind = "array", c = s, len = tostring(#cs) }
      elseif e.f == "at" or e.f == "idiv" then
        if #e.args ~= 2 then return fail(string.format("%s takes 2 arguments, got %d", e.f, #e.args)) end
        local x, i = lower(e.args[1]), nil
        if x.kind == "bad" then return x end
        i = lower(e.args[2])
        if i.kind == "bad" then return i end
        local ic = as_param(i, "i64")
        nscalar = nscalar + 1
        local s = "td_s" .. nscalar
        if e.f == "at" then
          -- at(arr, i): element i of an array (negative counts from the end), range-checked
          if x.kind ~= "array" then return fail("at takes an array first, got " .. describe(x)) end
          if not ic then return fail("the index of at() must be an int scalar, got " .. describe(i)) end
          plan.decls[#plan.decls + 1] = "int64_t " .. s .. " = 0;"
          emit(string.format("if (td_st == TD_OK)\n        td_st = td_array_at(td_opname, %s, %s, %s, &%s);",
            x.c, x.len, ic[1], s))
        else
          -- idiv(a, b): floor division of int scalars; b must not be 0
          local xc = as_param(x, "i64")
          if not xc or not ic then
            return fail(string.format("idiv takes two int scalars, got %s and %s", describe(x), describe(i)))
          end
          plan.decls[#plan.decls + 1] = "int64_t " .. s .. " = 0;"
          emit(string.format("if (td_st == TD_OK)\n        td_st = td_idiv(td_opname, %s, %s, &%s);", xc[1], ic[1], s))
        end
        return { kind = "iscalar", c = s }
      end
      if BUILTINS[e.f] then
        local want = e.f == "size" and 2 or 1
        if #e.args ~= want then return fail(string.format("%s takes %d argument%s, got %d", e.f, want,
          want > 1 and "s" or "", #e.args)) end
        local x = lower(e.args[1])
        if x.kind == "bad" then return x end
        if x.kind ~= "tensor" then return fail(string.format("%s takes a tensor, got %s", e.f, describe(x))) end
        if e.f == "device" then return { kind = "device", c = x.c .. "->device" } end
        if e.f == "shape" then return { kind = "array", c = x.c .. "->shape.dims", len = x.c .. "->shape.ndim" } end
        if e.f == "ndim" then return { kind = "iscalar", c = "(int64_t)" .. x.c .. "->shape.ndim" } end
        if e.f == "numel" then return { kind = "iscalar", c = x.c .. "->shape.numel" } end
        local d = lower(e.args[2])
        if d.kind == "bad" then return d end
        local dc = as_param(d, "dim")
        if not dc then return fail("the dim of size() must be an int scalar, got " .. describe(d)) end
        nscalar = nscalar + 1
        local s = "td_s" .. nscalar
        plan.decls[#plan.decls + 1] = "int64_t " .. s .. " = 0;"
        emit(string.format("if (td_st == TD_OK)\n        td_st = td_dim_size(td_opname, &%s->shape, %s, &%s);", x.c,
          dc[1], s))
        return { kind = "iscalar", c = s }
      end
      if not exists(e.f) then
        if model.op_by_name["float_" .. e.f] or BUILTINS[e.f] then
          return fail(string.format("unknown function '%s'; call ops by their full name (float_%s)", e.f, e.f))
        end
        return fail(string.format("unknown function '%s' (not an op, nor one of %s)", e.f, BUILTIN_LIST))
      end
      local vals = {}
      for j, a in ipairs(e.args) do
        vals[j] = lower(a)
        if vals[j].kind == "bad" then return vals[j] end
      end
      return call_op(e.f, vals)
    end
    return fail("unexpected expression")
  end

  local result
  for i, s in ipairs(src) do
    cur = i
    if type(s) ~= "string" then
      errs[#errs + 1] = string.format("statement %d: expected a string, got a %s", i, type(s))
      return nil, errs
    end
    local name, rhs = s:match("^%s*([%a_][%w_]*)%s*=%s*(.-)%s*$")
    if i < #src and not name then
      errs[#errs + 1] = string.format("statement %d: expected 'name = expression' (only the last one is the result)", i)
      return nil, errs
    end
    if i == #src and name and not s:match("==") then
      errs[#errs + 1] = string.format("statement %d: the last statement is the result, an expression, not an " ..
        "assignment", i)
      return nil, errs
    end
    if i < #src then
      if op.arg_by_name[name] or locals[name] or BUILTINS[name] then
        errs[#errs + 1] = string.format("statement %d: '%s' is already a name (an argument, a builtin or an " ..
          "earlier statement)", i, name)
        return nil, errs
      end
    else
      rhs = s
    end
    local ast, perr = formula.parse(rhs)
    if not ast then
      errs[#errs + 1] = string.format("statement %d: %s", i, perr)
      return nil, errs
    end
    local v = lower(ast)
    if not ok then return nil, errs end
    if i < #src then
      if v.kind == "tensor" or v.kind == "array" or v.kind == "device" then
        locals[name] = v
      elseif v.kind == "scalar" or v.kind == "iscalar" or v.kind == "num" then
        nscalar = nscalar + 1
        local c = "td_s" .. nscalar
        local kind = (v.kind == "iscalar" or v.kind == "num" and math.type(v.v) == "integer") and "iscalar" or "scalar"
        plan.decls[#plan.decls + 1] = (kind == "iscalar" and "int64_t " or "double ") .. c .. " = 0;"
        emit(string.format("if (td_st == TD_OK)\n        %s = %s;", c, v.c))
        locals[name] = { kind = kind, c = c }
      else
        locals[name] = v
      end
    else
      result = v
    end
  end
  if result.kind ~= "tensor" then
    errs[#errs + 1] = string.format("statement %d: the result must be a tensor, got %s", #src, describe(result))
    return nil, errs
  end
  if result.cls ~= op.returns then
    errs[#errs + 1] = string.format("statement %d: the result is %s, but %s returns %s", #src, describe(result),
      op.name, op.returns)
    return nil, errs
  end
  plan.result = result
  if result.fresh then
    for _, a in ipairs(op.args) do
      if a.t.tensor == "float" then plan.mixes_default_float = true end
    end
  end
  return plan
end

-- Rejects decompositions that reach their own op through other composites; returns
-- messages keyed by op.
function M.check_cycles(model)
  local state, out = {}, {}
  local function visit(op, path)
    if state[op.name] == "done" then return end
    if state[op.name] == "open" then
      local from
      for i, n in ipairs(path) do if n == op.name then from = i end end
      local cyc = {}
      for i = from, #path do cyc[#cyc + 1] = path[i] end
      cyc[#cyc + 1] = op.name
      out[#out + 1] = { op = op, msg = "the decomposition is circular: " .. table.concat(cyc, " -> ") }
      return true
    end
    state[op.name] = "open"
    path[#path + 1] = op.name
    local names = {}
    for n in pairs(op.decomp and op.decomp.calls or {}) do names[#names + 1] = n end
    table.sort(names)
    for _, n in ipairs(names) do
      local t = model.op_by_name[n]
      if t and t.decomp then
        if visit(t, path) then
          op.decomp = nil -- broken: keep it from being used
          break
        end
      end
    end
    path[#path] = nil
    state[op.name] = "done"
  end
  for _, op in ipairs(model.ops) do
    if op.decomp and state[op.name] == nil then visit(op, {}) end
  end
  return out
end

-- "f32 inside" (opmath, docs/composites.md): a composite whose float inputs are f16 / bf16
-- (a dtype whose `via` is f32, not quantized) runs its decomposition on f32 copies of them
-- and rounds a float result once to their dtype, as the CPU's "via f32" kernels do, instead
-- of rounding after every piece (vkfix: the per-dtype comparisons found softmax, silu, atanh,
-- ... on Vulkan up to 2.7x over f16's bound that way, and the decompositions that make f32
-- tensors failed in f16 with TD_E_DTYPE). The op's float tensor arguments, or nil when it
-- has none, or a float list (not converted: those ops keep running piecewise).
function M.opmath_args(op)
  local ts = {}
  for _, a in ipairs(op.args) do
    if a.t.list == "float" then return nil end
    if a.t.tensor == "float" then ts[#ts + 1] = a.name end
  end
  return #ts > 0 and ts or nil
end

-- Per backend: be.runs[name] = true for ops it runs, be.composite[name] = true for those
-- it runs by decomposition (native kernels win).
function M.availability(model)
  for _, be in ipairs(model.backends) do
    be.runs, be.composite = {}, {}
    for n in pairs(be.ops) do be.runs[n] = true end
    local changed = true
    while changed do
      changed = false
      for _, op in ipairs(model.ops) do
        if op.decomp and not be.runs[op.name] then
          local all = true
          for n in pairs(op.decomp.calls) do
            if not be.runs[n] then all = false; break end
          end
          if all then
            be.runs[op.name] = true
            be.composite[op.name] = true
            changed = true
          end
        end
      end
    end
  end
  for _, op in ipairs(model.ops) do
    op.composite_on = {}
    for _, be in ipairs(model.backends) do
      if be.composite[op.name] then op.composite_on[#op.composite_on + 1] = be.name end
    end
  end
end

-- The pieces of op that are missing on be, one level down (for messages).
function M.missing(op, be)
  local out = {}
  for n in pairs(op.decomp and op.decomp.calls or {}) do
    if not be.runs[n] then out[#out + 1] = n end
  end
  table.sort(out)
  return out
end

return M
