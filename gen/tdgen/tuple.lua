-- Tuples: several ops called with the same arguments, their results returned together.
-- This file validates them and says where they run; gen/tdgen/emit_c.lua emits them.
--
--   tuple {
--     name = "float_max_dim_with_indices",
--     doc = "...",
--     parts = { "values = float_max_dim", "indices = float_argmax" },
--     examples = { { a = { shape = { 2, 2 }, data = { 1, 3, 4, 2 } }, dim = 1,
--                    values = { shape = { 2 }, data = { 3, 4 } }, indices = { shape = { 2 }, data = { 1, 0 } } } },
--   }
--
-- The public function takes the parts' arguments (every part must take the same ones)
-- and one `td_tensor **` per result, in the order of `parts`. It calls the parts' public
-- entries in that order, so a tuple runs wherever its parts run (natively where every
-- part is native, else as a composite), on autodiff too, where each float part records
-- its own node. A failing part's status is the tuple's, its message prefixed with the
-- tuple's name, and every result is then NULL.
local schema = require("tdgen.schema")

local M = {}

local is_array = require("tdgen.util").is_array

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

local function same_args(a, b)
  if #a.args ~= #b.args then return false end
  for i, x in ipairs(a.args) do
    if x.name ~= b.args[i].name or x.type ~= b.args[i].type then return false end
  end
  return true
end

-- Checks one result of an example: { shape = {...}, data = {...} } with numel(shape) values.
local function check_value(v, what)
  if type(v) ~= "table" or not is_array(v.shape) or not is_array(v.data) then
    return what .. ": expected { shape = {...}, data = {...} }"
  end
  for _, d in ipairs(v.shape) do
    if math.type(d) ~= "integer" or d < 0 then return what .. ": shape holds sizes (integers, 0 or more)" end
  end
  if #v.data ~= numel(v.shape) then
    return string.format("%s: %d values for a shape of %d elements", what, #v.data, numel(v.shape))
  end
end

-- Validates the tuple entries against the model (its ops already checked). err(entry,
-- field, msg) reports; check_fields and text_problem are validate.lua's.
function M.validate(entries, model, err, check_fields, suggest, text_problem)
  model.tuples = {}
  local by_name = {}
  for _, e in ipairs(entries) do
    if e.decl ~= "tuple" then goto continue end
    local f = e.fields
    local ok = check_fields(e, schema.tuple_fields, schema.tuple_required, err, suggest)
    if type(f.doc) == "string" then
      local p = text_problem(f.doc, false)
      if p then err(e, "doc", p); ok = false end
    end
    if type(f.name) == "string" and not f.name:match("^[a-z][a-z0-9_]*$") then
      err(e, "name", "'" .. f.name .. "' is not a lower-case identifier")
      ok = false
    end
    if ok and (model.op_by_name[f.name] or by_name[f.name]) then
      local prev = model.op_by_name[f.name] or by_name[f.name]
      err(e, "name", string.format("duplicate name (first declared at %s:%d)", prev.file, prev.line))
      ok = false
    end
    if not ok then goto continue end
    local t = { name = f.name, doc = f.doc, file = e.file, line = e.line, entry = e, parts = {}, examples = f.examples,
      tolerance = f.tolerance or 1e-5 }
    if not is_array(f.parts) or #f.parts < 2 then
      err(e, "parts", "expected an array of at least two \"result = op\" strings")
      goto continue
    end
    for i, p in ipairs(f.parts) do
      local rname, opname
      if type(p) == "string" then rname, opname = p:match("^%s*([%a_][%w_]*)%s*=%s*([%a_][%w_]*)%s*$") end
      if not rname then
        err(e, "parts", string.format("part %d: expected \"result = op\", got %s", i, type(p) == "string" and
          ("'" .. p .. "'") or ("a " .. type(p))))
        ok = false
        break
      end
      local op = model.op_by_name[opname]
      if not op or op.broken then
        err(e, "parts", string.format("part %d: unknown op '%s'", i, opname))
        ok = false
        break
      end
      if not schema.classes[op.returns] or op.family == "distributed" then
        err(e, "parts", string.format("part %d: %s %s", i, opname, op.family == "distributed" and
          "is a collective" or "returns no tensor"))
        ok = false
        break
      end
      for _, q in ipairs(t.parts) do
        if q.result == rname then
          err(e, "parts", string.format("part %d: the result name '%s' is taken", i, rname))
          ok = false
        end
      end
      if op.arg_by_name[rname] or schema.reserved_names[rname] then
        err(e, "parts", string.format("part %d: the result name '%s' is an argument or a reserved name", i, rname))
        ok = false
      end
      if #t.parts > 0 and not same_args(t.parts[1].op, op) then
        err(e, "parts", string.format("part %d: %s does not take the arguments of %s (same names and types, in " ..
          "order)", i, opname, t.parts[1].op.name))
        ok = false
      end
      if not ok then break end
      t.parts[i] = { result = rname, op = op, class = op.returns }
    end
    if not ok then goto continue end
    t.args = t.parts[1].op.args
    if f.examples ~= nil then
      if not is_array(f.examples) or #f.examples == 0 then
        err(e, "examples", "expected a non-empty array of examples")
        goto continue
      end
      for i, ex in ipairs(f.examples) do
        if type(ex) ~= "table" then
          err(e, "examples", string.format("example %d: expected a table", i))
          ok = false
          break
        end
        for _, a in ipairs(t.args) do
          if ex[a.name] == nil and (a.t.tensor or a.t.list) then
            err(e, "examples", string.format("example %d: no value for '%s'", i, a.name))
            ok = false
          elseif a.t.tensor then
            local m = check_value(ex[a.name], string.format("example %d: %s", i, a.name))
            if m then err(e, "examples", m); ok = false end
          end
        end
        for _, p in ipairs(t.parts) do
          local m = check_value(ex[p.result], string.format("example %d: %s", i, p.result))
          if m then err(e, "examples", m); ok = false end
        end
        if not ok then break end
      end
    end
    if not ok then goto continue end
    by_name[t.name] = t
    model.tuples[#model.tuples + 1] = t
    ::continue::
  end
  model.tuple_by_name = by_name
end

-- How backend be runs tuple t: "native" (every part native), "composite" (every part
-- runs, one by its decomposition), or nil and the parts it lacks.
function M.how(t, be)
  local missing, comp = {}, false
  for _, p in ipairs(t.parts) do
    if not be.runs[p.op.name] then missing[#missing + 1] = p.op.name
    elseif not be.ops[p.op.name] then comp = true end
  end
  if #missing > 0 then return nil, missing end
  return comp and "composite" or "native"
end

-- Keeps the tuples whose parts are all in the model (a selective build drops the rest).
function M.select(model)
  local kept = {}
  local have = {}
  for _, op in ipairs(model.ops) do have[op.name] = true end
  for _, t in ipairs(model.tuples or {}) do
    local all = true
    for _, p in ipairs(t.parts) do if not have[p.op.name] then all = false end end
    if all then kept[#kept + 1] = t end
  end
  model.tuples = kept
end

return M
