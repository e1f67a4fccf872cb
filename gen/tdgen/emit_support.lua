-- Emits SUPPORT.md: the op x backend matrix.
local util = require("tdgen.util")
local needs = require("tdgen.needs")
local decomp = require("tdgen.decomp")

local M = {}
local model_ops = {} -- name -> op, for the dtype cells of composites

-- A backend's cell for an op, and how it runs it ("native", "composite" or nil).
function M.cell(op, be)
  local how = be.ops[op.name] and "native" or be.composite[op.name] and "composite" or nil
  local g = be.grad[op.name]
  if how and g and #g.missing > 0 then
    return how .. "; no gradient: needs " .. table.concat(g.missing, ", "), how
  elseif how then
    return (how == "native" and op.view) and "native (view)" or how, how
  elseif op.decomp then
    -- Unavailable although the op has a decomposition: say which pieces are missing.
    return "-; composite needs " .. table.concat(decomp.missing(op, be), ", "), nil
  end
  return "-", nil
end

-- How autodiff differentiates an op, in a few words (SUPPORT.md's grad column, API.md).
function M.grad(op)
  if op.backward then
    return "yes, " .. op.fields.bound .. "-bound"
  elseif op.ad_decomp then
    return "yes, through its decomposition"
  elseif op.fields.differentiable == false then
    return "no: " .. op.fields.why
  elseif op.float_in then
    return "no: " .. op.returns .. " result"
  elseif op.is_float then
    return "leaf"
  end
  return "-"
end

-- A backend's cell for an op in one dtype (docs/dtypes.md section 4): "native" (its
-- kernel computes the dtype), "via f32" (the generated arm converts to f32 and back),
-- "composite", "twin" (a creation op's `_dtype` twin makes it) or "-".
function M.dtype_cell(op, be, d)
  local dtypes = require("tdgen.dtypes")
  local schema = require("tdgen.schema")
  if not be.dtypes[d] then return "-" end
  local _, how = M.cell(op, be)
  if not how then return "-" end
  local row = schema.dtype_by_name[d]
  if op.family == "creation" then
    if row.default then return how end
    -- a quantized dtype is made from raw blocks only (td_float_quantize makes the rest)
    if row.quantized and not (op.dtype_twin and op.dtype_twin.kind == "from_data") then return "-" end
    return op.dtype_twin and "twin" or "-"
  end
  -- raw blocks out (float_into_data_dtype)
  if row.quantized and op.dtype_twin and op.dtype_twin.kind == "into_data" then return "twin" end
  if how == "composite" then
    -- f16 / bf16 (a `via` of f32): the generated composite converts the float inputs to f32,
    -- runs the decomposition there and rounds the result once (emit_c.lua's
    -- emit_opmath_wrapper, docs/composites.md), so it runs where the op's f32 composite
    -- does and the backend stores f32 (vkfix)
    if row.class == "float" and row.via == "f32" and not row.quantized and be.dtypes.f32
      and decomp.opmath_args(op) then
      return "composite (f32 inside)"
    end
    return M.composite_cell(op, be, d)
  end
  if op.view or dtypes.kernel_dtypes(op, be)[d] then return "native" end
  -- (a list argument's items are converted one by one: emit_c.lua's emit_dtype_fallback)
  local kd = dtypes.kernel_dtypes(op, be)
  if row.via == "f32" and not row.quantized and kd.f32 then return "via f32" end
  -- a float kernel without the dtype and no via (f64): the decomposition, where it runs there
  -- in d (emit_c.lua's emit_dtype_fallback calls it; the CPU's f64 convs and pools). Not the
  -- int dtypes: int decompositions make int tensors (int_arange, int_full, index results)
  -- in i32, which would meet an i8 input (the per-dtype comparisons: argmax, argsort)
  if row.class == "float" and op.decomp and not row.quantized and #decomp.missing(op, be) == 0 and M.composite_cell(op, be, d) == "composite" then
    return "composite"
  end
  return "-"
end

-- The cell of op's decomposition in a dtype without an f32 inside (f64, the int dtypes):
-- "composite" where every piece of its class runs in d, else "-".
function M.composite_cell(op, be, d)
  local schema = require("tdgen.schema")
  local row = schema.dtype_by_name[d]
  for n in pairs(op.decomp and op.decomp.calls or {}) do
    local piece = model_ops[n]
    if piece and piece ~= op and M.dtype_class(piece) == row.class and M.dtype_cell(piece, be, d) == "-" then
      return "-"
    end
  end
  -- and where no float tensor made from nothing of the op's float inputs meets one derived
  -- from them in the default dtype (gen/tdgen/decomp.lua: such tensors are made through the
  -- pieces' `_dtype` twins in the inputs' dtype; one no twin makes keeps the rule)
  if row.class == "float" and not row.default and op.decomp and op.decomp.mixes_default_float then
    return "-"
  end
  return "composite"
end

-- The ops dtype_cell looks composites' pieces up in (set by SUPPORT.md's tables; the
-- per-dtype comparisons, gen/tdgen/emit_dtype_tests.lua, set it themselves).
function M.use_model(model) model_ops = model.op_by_name end

-- The class an op's dtype cells are about: its first tensor's, or a creation op's result.
function M.dtype_class(op)
  local a = op.args[1]
  if a and (a.t.tensor or a.t.list) then return a.t.tensor or a.t.list end
  if op.family == "creation" then return op.returns end
end

local function dtype_tables(b, model)
  local schema = require("tdgen.schema")
  model_ops = model.op_by_name
  b:put("")
  b:put("## Dtypes")
  b:put("")
  b:put("Per class with more than one dtype, each op by the class of its first tensor (a creation")
  b:put("op by its result): a cell per backend and dtype it stores (docs/dtypes.md). `native`: the")
  b:put("kernel computes the dtype (moves and views copy or share bytes, any dtype); `via f32`: the")
  b:put("generated arm converts the inputs to f32, runs the f32 kernel and converts a float result")
  b:put("back; `composite (f32 inside)`: the decomposition runs on f32 copies of the f16 / bf16")
  b:put("inputs and a float result is rounded once (docs/composites.md); `composite`: it runs in")
  b:put("the inputs' dtype (each piece by its own cell); `twin`: the op's `_dtype` twin makes the")
  b:put("dtype; `-`: `TD_E_UNSUPPORTED`, naming the cast to call. f64 has no \"via f32\" (it")
  b:put("would lose precision).")
  -- Ops whose spec lets a later argument be block-quantized: their quantized cells are about it.
  local qops = {}
  for _, op in ipairs(model.ops) do
    if op.quantized_arg then qops[#qops + 1] = string.format("`%s`'s %s", op.name, op.quantized_arg) end
  end
  if #qops > 0 then
    b:put("A block-quantized dtype's cell of " .. table.concat(qops, ", ") .. " is about that argument in the")
    b:put("dtype beside an f32 first one (the op's `quantized_arg`; an f16 or bf16 first one runs via f32, as")
    b:put("that column says); its `-` cells name `td_float_dequantize`.")
  end
  local total = {}
  for _, cls in ipairs({ "float", "int" }) do
    local cols = {}
    for _, be in ipairs(model.backends) do
      for _, r in ipairs(schema.dtype_rows) do
        if r.class == cls and be.dtypes[r.name] then cols[#cols + 1] = { be = be, d = r.name } end
      end
    end
    b:put("")
    b:put("### %s", cls)
    b:put("")
    local head, rule = { "op" }, { "---" }
    for _, c in ipairs(cols) do head[#head + 1] = c.be.name .. " " .. c.d; rule[#rule + 1] = ":-:" end
    b:put("| %s |", table.concat(head, " | "))
    b:put("| %s |", table.concat(rule, " | "))
    for _, op in ipairs(model.ops) do
      if M.dtype_class(op) == cls then
        local row = { "`" .. op.name .. "`" }
        for _, c in ipairs(cols) do
          local cell = M.dtype_cell(op, c.be, c.d)
          row[#row + 1] = cell
          local k = c.be.name .. " " .. c.d
          total[k] = total[k] or { n = 0, via = 0, inside = 0, order = #total + 1 }
          if cell ~= "-" then total[k].n = total[k].n + 1 end
          if cell == "via f32" then total[k].via = total[k].via + 1 end
          if cell == "composite (f32 inside)" then total[k].inside = total[k].inside + 1 end
        end
        b:put("| %s |", table.concat(row, " | "))
      end
    end
  end
  b:put("")
  local parts = {}
  for _, be in ipairs(model.backends) do
    for _, r in ipairs(schema.dtype_rows) do
      local t = total[be.name .. " " .. r.name]
      if t then
        parts[#parts + 1] = string.format("%s %s %d (%d via f32%s)", be.name, r.name, t.n, t.via,
          t.inside > 0 and string.format(", %d composite f32 inside", t.inside) or "")
      end
    end
  end
  b:put("Ops run per backend and dtype: %s.", table.concat(parts, ", "))
end

function M.support(model, specs_note)
  local b = util.buffer()
  b:put("# Op x backend support")
  b:put("")
  b:put("Generated by gen/tdgen.lua from %s; do not edit. `native`: the backend has a kernel", specs_note)
  b:put("for the op; `composite`: it runs the op by the decomposition in the op's spec, through")
  b:put("other ops it runs; `-`: the generated arm returns `TD_E_UNSUPPORTED` (or runs it on the")
  b:put("CPU under a fallback policy). The autodiff column is the wrapping backend: it runs an op")
  b:put("on any inner backend that runs it. `grad`: how autodiff differentiates the op (by its")
  b:put("formulas, or through the pieces of its decomposition; memory-bound ops are recomputed")
  b:put("in backward under BALANCED checkpointing), or why it does not. A backend cell")
  b:put("`-; composite needs X`: the op has a decomposition, but the backend does not run X, its pieces.")
  b:put("`native; no gradient: needs X` means the backend runs the op but not its backward,")
  b:put("which calls X on that backend (its generated gradient check is reported as skipped).")
  b:put("`native (view)`: the op is a view (its spec says `view = true`): the backend lists it and")
  b:put("the result shares the input's storage, with no kernel and no copy.")
  b:put("")
  local head, rule = { "op", "family" }, { "---", "---" }
  for _, be in ipairs(model.backends) do head[#head + 1] = be.name; rule[#rule + 1] = ":-:" end
  head[#head + 1] = "autodiff"; rule[#rule + 1] = ":-:"
  head[#head + 1] = "grad"; rule[#rule + 1] = "---"
  b:put("| %s |", table.concat(head, " | "))
  b:put("| %s |", table.concat(rule, " | "))
  local counts = {}
  for _, op in ipairs(model.ops) do
    local row = { "`" .. op.name .. "`", op.family }
    local any = false
    for _, be in ipairs(model.backends) do
      local cell, how = M.cell(op, be)
      row[#row + 1] = cell
      if how then
        local c = counts[be.name] or { native = 0, composite = 0 }
        c[how] = c[how] + 1
        counts[be.name] = c
        any = true
      end
    end
    row[#row + 1] = any and "yes" or "-"
    row[#row + 1] = M.grad(op)
    b:put("| %s |", table.concat(row, " | "))
  end
  local tuple = require("tdgen.tuple")
  if #(model.tuples or {}) > 0 then
    b:put("")
    b:put("Tuples: several ops called with the same arguments, their results returned together.")
    b:put("A backend runs a tuple where it runs every part (`native` where every part is native).")
    b:put("")
    local th, tr = { "tuple", "parts" }, { "---", "---" }
    for _, be in ipairs(model.backends) do th[#th + 1] = be.name; tr[#tr + 1] = ":-:" end
    th[#th + 1] = "autodiff"; tr[#tr + 1] = ":-:"
    b:put("| %s |", table.concat(th, " | "))
    b:put("| %s |", table.concat(tr, " | "))
    for _, t in ipairs(model.tuples) do
      local ps = {}
      for _, p in ipairs(t.parts) do ps[#ps + 1] = "`" .. p.op.name .. "`" end
      local row = { "`" .. t.name .. "`", table.concat(ps, ", ") }
      local any = false
      for _, be in ipairs(model.backends) do
        local how, missing = tuple.how(t, be)
        row[#row + 1] = how or ("-; needs " .. table.concat(missing, ", "))
        any = any or how ~= nil
      end
      row[#row + 1] = any and "yes" or "-"
      b:put("| %s |", table.concat(row, " | "))
    end
  end
  b:put("")
  local tot = {}
  for _, be in ipairs(model.backends) do
    local c = counts[be.name] or { native = 0, composite = 0 }
    tot[#tot + 1] = string.format("%s %d (%d native, %d composite)", be.name, c.native + c.composite, c.native,
      c.composite)
  end
  b:put("%d ops%s; run by: %s.", #model.ops, #(model.tuples or {}) > 0 and
    string.format(" and %d tuples", #model.tuples) or "", table.concat(tot, ", "))
  b:put("")
  b:put("Gradients per backend (differentiable ops the backend runs, and how many of")
  b:put("them can run backward there):")
  b:put("")
  for _, be in ipairs(model.backends) do
    local n, bad, lack = needs.tally(model, be)
    local names = {}
    for i, k in ipairs(lack) do names[i] = "`" .. k .. "`" end
    b:put("- %s: %d of %d%s", be.name, n - bad, n, #names > 0 and ("; the rest need " .. table.concat(names, ", ")) or "")
  end
  dtype_tables(b, model)
  -- The autocast policy of the op specs (docs/dtypes.md section 9), as lists.
  b:put("")
  b:put("## Autocast")
  b:put("")
  b:put("What an autodiff device with autocast on (`td_autodiff_set_autocast`) casts each op's")
  b:put("f32 / f16 / bf16 float inputs to (the op spec's `autocast`); every other op is `keep`: it")
  b:put("runs in its inputs' dtype, mixed ones promoted to the widest.")
  b:put("")
  for _, pol in ipairs({ { "low", "the autocast dtype (bf16 or f16)" }, { "f32", "f32" } }) do
    local names = {}
    for _, op in ipairs(model.ops) do
      if op.autocast == pol[1] then names[#names + 1] = "`" .. op.name .. "`" end
    end
    b:put("- `%s` (to %s): %s.", pol[1], pol[2], table.concat(names, ", "))
  end
  return b:text()
end

return M
