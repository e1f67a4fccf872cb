-- Emits API.md: the op reference, one section per family, built from the specs. The
-- signatures are td_ops.h's prototypes (emit_c), the backend and gradient text SUPPORT.md's
-- (emit_support), so the three never disagree.
local util = require("tdgen.util")
local schema = require("tdgen.schema")
local emit_c = require("tdgen.emit_c")
local emit_support = require("tdgen.emit_support")

local M = {}

local show_list

-- A spec value (an example's input or output) as compact text.
local function show(v)
  if type(v) == "table" then
    if v.shape ~= nil and v.data ~= nil then
      return "shape [" .. show_list(v.shape) .. "], data [" .. show_list(v.data) .. "]"
    elseif v.data ~= nil then
      return "data [" .. show_list(v.data) .. "]"
    end
    return "[" .. show_list(v) .. "]"
  end
  return tostring(v)
end
show_list = function(t)
  local s = {}
  for i, x in ipairs(t) do s[i] = show(x) end
  return table.concat(s, ", ")
end

-- GitHub's heading anchors keep underscores; op names are lower case already.
local function anchor(name) return name end

-- What an argument type means, in words (the types are gen/tdgen/schema.lua's).
local WORDS = {
  f32 = "a float scalar", i32 = "an int32 scalar", i64 = "an int64 scalar", u64 = "a uint64 scalar",
  dim = "a dim; a negative one counts from the end",
  group = "the collective group the op runs over",
  dims = "an int64 array and its length (`%s_len`); where it holds dims, negative ones count from the end",
  shape = "a shape: an array of sizes and its length (`%s_len`)",
}

-- Some shape rules in words (the rest are named only; runtime/core/td_rules*.c define them).
local RULES = {
  same = "the first argument's shape",
  broadcast = "the two inputs' shapes broadcast together (NumPy rules)",
  broadcast3 = "the three inputs' shapes broadcast together (NumPy rules)",
  from_shape = "the given shape",
  reduce_all = "a 0-d scalar",
  reduce_all_nonempty = "a 0-d scalar; an empty input is an error",
  reduce_dim = "the input's shape with the dim reduced to size 1",
  reduce_dim_nonempty = "the input's shape with the dim reduced to size 1; an empty dim is an error",
  along_dim = "the input's shape (the op works along the dim)",
  matmul = "as torch.matmul: [..., m, k] @ [..., k, n] -> [..., m, n], batch dims broadcast, 1-d operands promoted",
  reshape = "the given shape, with as many elements as the input",
  transpose = "the input's shape with the last two dims swapped",
}

local function arg_text(op, a)
  local t = a.t
  if t.device and op.family == "device" then return "the device" end
  if t.tensor then return "a " .. t.tensor .. " tensor (" .. schema.classes[t.tensor] .. ")" end
  if t.list then return "an array of " .. t.list .. " tensors and its length (`" .. a.name .. "_len`)" end
  if t.device then return "the device the result is made on" end
  if t.host_in then return "host data (" .. t.host_in .. "), as many elements as the shape holds" end
  if t.host_out then return "a host buffer (" .. t.host_out .. ") the result is written to, and its capacity (`" ..
    a.name .. "_len`)" end
  if t.enum then return "one of " .. table.concat(t.enum, ", ") end
  local w = WORDS[a.type]
  if w then return (w:gsub("%%s", a.name)) end
  return a.type
end

local function example_lines(b, ex, inputs, outputs)
  for _, n in ipairs(inputs) do
    if ex[n] ~= nil then b:put("  - `%s` = %s", n, show(ex[n])) end
  end
  for _, n in ipairs(outputs) do
    if ex[n] ~= nil then b:put("  - result `%s` = %s", n, show(ex[n])) end
  end
end

local function op_section(b, model, op)
  b:put("")
  b:put("### %s", op.name)
  b:put("")
  b:put("```c")
  b:put(emit_c.prototype(op))
  b:put("```")
  b:put("")
  b:put("%s", op.doc)
  b:put("")
  b:put("- Arguments:")
  local inputs = {}
  for _, a in ipairs(op.args) do
    inputs[#inputs + 1] = a.name
    b:put("  - `%s` (`%s`): %s", a.name, a.type, arg_text(op, a))
  end
  if schema.classes[op.returns] then
    b:put("  - `out`: the result, a new %s tensor (%s)", op.returns, schema.classes[op.returns])
  end
  b:put("- Result: %s", schema.classes[op.returns] and (op.returns .. " tensor") or op.returns)
  if op.fields.shape then
    local rule = op.fields.shape:match("^([%w_]+)")
    b:put("- Shape rule: `%s`%s", op.fields.shape, RULES[rule] and (": " .. RULES[rule]) or "")
  end
  if op.semantics then b:put("- Semantics: %s", op.semantics) end
  local grad = emit_support.grad(op)
  b:put("- Gradient: %s", grad)
  if op.fields.backward then
    for _, l in ipairs(op.fields.backward.shared or {}) do b:put("  - once per node: `%s`", l) end
    for _, a in ipairs(op.args) do
      local f = op.fields.backward[a.name]
      if f ~= nil then b:put("  - d/d`%s`: `%s`", a.name, tostring(f)) end
    end
  end
  local cells = {}
  for _, be in ipairs(model.backends) do cells[#cells + 1] = be.name .. ": " .. (emit_support.cell(op, be)) end
  b:put("- Backends: %s", table.concat(cells, "; "))
  if op.examples and op.examples[1] then
    b:put("- Example:")
    example_lines(b, op.examples[1], inputs, { "out" })
  end
  if op.dtype_twin then
    local tw = op.dtype_twin
    local what = {
      from_data = "`data` holds the elements in the dtype's storage format (the C type of docs/dtypes.md section 2)",
      into_data = "the elements are converted to `dtype` on the way out (section 7) and written in its storage format",
      zeros = "zeros of the dtype", ones = "ones of the dtype",
      full = "`value` is rounded once to the dtype (section 7)",
      convert = "the conversion rules of docs/dtypes.md section 7 (round to nearest even, saturate, wrap)",
      random = "f32 is the op itself (`p0`, `p1` rounded to f32), f16 / bf16 its values rounded once, f64 "
        .. "the same counter-based stream with 53-bit uniforms (the f32 one's 24 bits followed by 29 more; "
        .. "Box-Muller in double for normal), made on the host",
    }
    b:put("")
    b:put("#### %s_dtype", op.name)
    b:put("")
    b:put("```c")
    b:put(emit_c.twin_prototype(op))
    b:put("```")
    b:put("")
    b:put("`%s` with `dtype`, any %s dtype (docs/dtypes.md section 5); with the class default it is `td_%s`. %s.",
      op.name, tw.kind == "convert" and op.returns or tw.class, op.name, what[tw.kind]:gsub("^%l", string.upper))
  end
end

local function tuple_section(b, model, t)
  local tuple = require("tdgen.tuple")
  b:put("")
  b:put("### %s", t.name)
  b:put("")
  b:put("```c")
  b:put(emit_c.tuple_prototype(t))
  b:put("```")
  b:put("")
  b:put("%s", t.doc)
  b:put("")
  local inputs, outs, parts = {}, {}, {}
  for _, a in ipairs(t.args) do inputs[#inputs + 1] = a.name end
  for _, p in ipairs(t.parts) do
    outs[#outs + 1] = p.result
    parts[#parts + 1] = "`" .. p.result .. "` from [`" .. p.op.name .. "`](#" .. anchor(p.op.name) .. ")"
  end
  b:put("- Parts (called in order with the same arguments): %s", table.concat(parts, ", "))
  local cells = {}
  for _, be in ipairs(model.backends) do
    local how, missing = tuple.how(t, be)
    cells[#cells + 1] = be.name .. ": " .. (how or ("-; needs " .. table.concat(missing, ", ")))
  end
  b:put("- Backends: %s", table.concat(cells, "; "))
  if t.examples and t.examples[1] then
    b:put("- Example:")
    example_lines(b, t.examples[1], inputs, outs)
  end
end

function M.api(model, specs_note)
  local b = util.buffer()
  b:put("# Op API reference")
  b:put("")
  b:put("Generated by gen/tdgen.lua from %s; do not edit. Every op of td_ops.h, grouped by", specs_note)
  b:put("family, with its C signature (the prototype in td_ops.h), arguments, shape rule, gradient,")
  b:put("backends (as in SUPPORT.md) and an example from its spec. Every entry returns a")
  b:put("`td_status`; a tensor result is written to `*out`, which owns a new tensor on success and is")
  b:put("NULL on error. The hand-written runtime API is in docs/api-runtime.md.")
  local fams, by = {}, {}
  for _, op in ipairs(model.ops) do
    if not by[op.family] then by[op.family] = {}; fams[#fams + 1] = op.family end
    table.insert(by[op.family], op)
  end
  local tuples = model.tuples or {}
  b:put("")
  b:put("## Contents")
  b:put("")
  for _, f in ipairs(fams) do
    local names = {}
    for i, op in ipairs(by[f]) do names[i] = "[`" .. op.name .. "`](#" .. anchor(op.name) .. ")" end
    b:put("- **%s** (%d): %s", f, #by[f], table.concat(names, ", "))
  end
  if #tuples > 0 then
    local names = {}
    for i, t in ipairs(tuples) do names[i] = "[`" .. t.name .. "`](#" .. anchor(t.name) .. ")" end
    b:put("- **tuples** (%d): %s", #tuples, table.concat(names, ", "))
  end
  for _, f in ipairs(fams) do
    b:put("")
    b:put("## %s", f)
    for _, op in ipairs(by[f]) do op_section(b, model, op) end
  end
  if #tuples > 0 then
    b:put("")
    b:put("## tuples")
    b:put("")
    b:put("Several ops called with the same arguments, their results returned together; on error")
    b:put("every result is NULL.")
    for _, t in ipairs(tuples) do tuple_section(b, model, t) end
  end
  b:put("")
  b:put("%d ops%s.", #model.ops, #tuples > 0 and string.format(" and %d tuples", #tuples) or "")
  return b:text()
end

return M
