-- The dtype table (specs/dtypes.lua): loaded in the sandbox, validated, and installed
-- into the schema (schema.dtypes, dtype_order, classes, dtype_rows), which every other
-- module reads. The repository's specs/dtypes.lua is the default; a --specs directory
-- may bring its own dtypes.lua instead (at most one of them).
local load = require("tdgen.load")
local util = require("tdgen.util")

local show = util.show
local M = {}

-- The classes of the runtime (td_class) in their enum order, and the dtype the runtime's
-- existing API (td_float_*, td_int_*, td_bool_*) stands for in each.
M.class_order = { "float", "int", "bool" }
M.runtime_defaults = { float = "f32", int = "i32", bool = "bool" }
-- Host-side storage types a row may name (C types the runtime and the tests know).
M.c_types = { float = true, double = true, uint16_t = true, int32_t = true, int64_t = true, int8_t = true,
  uint8_t = true, bool = true }
-- Ids fit the vtables' `unsigned dtypes` bit mask (1u << id).
M.max_id = 31

M.fields = {
  name = "string", id = "number", class = "string", size = "number", block = "number", c_type = "string",
  default = "boolean", quantized = "boolean", safetensors = "string", ggml = "number", nmse = "number",
  via = "string", doc = "string",
}
M.required = { "name", "id", "class", "size", "block", "c_type", "doc" }

local function sorted(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return show(a) < show(b) end)
  return ks
end

local function int_in(v, lo, hi) return math.type(v) == "integer" and v >= lo and v <= hi end

-- Validates the `dtype` entries of one file. Returns the rows (sorted by id) and a list
-- of "file:line: name: field: message" errors.
function M.validate(entries, file)
  local errors = {}
  local function err(e, field, msg)
    local name = type(e.fields.name) == "string" and show(e.fields.name) or "<dtype without a name>"
    errors[#errors + 1] = string.format("%s:%d: %s: %s%s", e.file, e.line, name, field and (field .. ": ") or "", msg)
  end
  local rows, by_name, by_id, by_st, by_ggml = {}, {}, {}, {}, {}
  for _, e in ipairs(entries) do
    local f, ok = e.fields, true
    for _, k in ipairs(sorted(f)) do
      if type(k) ~= "string" then
        err(e, nil, "positional value in the declaration (every field is written name = value)"); ok = false
      elseif not M.fields[k] then
        err(e, show(k), "unknown field; fields: " .. table.concat(sorted(M.fields), ", ")); ok = false
      elseif type(f[k]) ~= M.fields[k] then
        err(e, k, string.format("expected a %s, got a %s", M.fields[k], type(f[k]))); ok = false
      end
    end
    for _, k in ipairs(M.required) do
      if f[k] == nil then err(e, nil, "missing required field '" .. k .. "'"); ok = false end
    end
    if ok then
      if not f.name:match("^[a-z][a-z0-9_]*$") or #f.name > 16 then
        err(e, "name", "'" .. show(f.name) .. "' is not a lower-case identifier of at most 16 characters"); ok = false
      elseif by_name[f.name] then
        err(e, "name", string.format("duplicate dtype (first declared at %s:%d)", by_name[f.name].file, by_name[f.name].line))
        ok = false
      end
      if not int_in(f.id, 0, M.max_id) then
        err(e, "id", string.format("expected an integer from 0 to %d, got %s", M.max_id, show(f.id))); ok = false
      elseif by_id[f.id] then
        err(e, "id", string.format("dtype id %d is already taken by %s (%s:%d)", f.id, by_id[f.id].name,
          by_id[f.id].file, by_id[f.id].line)); ok = false
      end
      if not M.runtime_defaults[f.class] then
        err(e, "class", "unknown class '" .. show(f.class) .. "'; classes: float, int, bool"); ok = false
      end
      if not int_in(f.size, 1, 1024) then
        err(e, "size", "expected an integer from 1 to 1024 (bytes per block), got " .. show(f.size)); ok = false
      end
      if not int_in(f.block, 1, 1024) then
        err(e, "block", "expected an integer from 1 to 1024 (values per block), got " .. show(f.block)); ok = false
      elseif f.block > 1 and not f.quantized then
        err(e, "block", "only a quantized dtype has blocks of several values"); ok = false
      end
      if f.quantized and f.class ~= "float" then
        err(e, "quantized", "only a float dtype can be quantized"); ok = false
      end
      if not M.c_types[f.c_type] then
        err(e, "c_type", "unknown C type '" .. show(f.c_type) .. "'; C types: " .. table.concat(sorted(M.c_types), ", "))
        ok = false
      end
      if f.default and f.quantized then err(e, "default", "a quantized dtype cannot be a class's default"); ok = false end
      if f.safetensors ~= nil then
        if not f.safetensors:match("^[A-Z][A-Z0-9_]*$") or #f.safetensors > 16 then
          err(e, "safetensors", "'" .. show(f.safetensors) .. "' is not an upper-case safetensors dtype name"); ok = false
        elseif by_st[f.safetensors] then
          err(e, "safetensors", "'" .. f.safetensors .. "' is already the name of " .. by_st[f.safetensors]); ok = false
        end
      end
      if f.ggml ~= nil then
        if not int_in(f.ggml, 0, 1023) then
          err(e, "ggml", "expected a GGML_TYPE id from 0 to 1023, got " .. show(f.ggml)); ok = false
        elseif by_ggml[f.ggml] then
          err(e, "ggml", string.format("GGML_TYPE id %d is already the id of %s", f.ggml, by_ggml[f.ggml])); ok = false
        end
      end
      if f.nmse ~= nil and (f.class ~= "float" or not (f.nmse > 0 and f.nmse < 1)) then
        err(e, "nmse", "a float dtype's bound, a number between 0 and 1 (exclusive), got " .. show(f.nmse)); ok = false
      end
      if f.doc:find("%c") or f.doc:find("*/", 1, true) or f.doc:find("|", 1, true) then
        err(e, "doc", "expected one line of text without '*/' or '|'"); ok = false
      end
    end
    if ok then
      local row = { name = f.name, id = f.id, class = f.class, size = f.size, block = f.block, c_type = f.c_type,
        default = f.default or false, quantized = f.quantized or false, safetensors = f.safetensors, ggml = f.ggml,
        nmse = f.nmse, via = f.via, doc = f.doc, file = e.file, line = e.line, entry = e }
      rows[#rows + 1] = row
      by_name[f.name], by_id[f.id] = row, row
      if f.safetensors then by_st[f.safetensors] = f.name end
      if f.ggml then by_ggml[f.ggml] = f.name end
    end
  end
  if #errors > 0 then return nil, errors end
  -- Across rows: via names a plain dtype of the same class; one default per class, the
  -- runtime's own.
  for _, r in ipairs(rows) do
    if r.via ~= nil then
      local v = by_name[r.via]
      if not v then
        err(r.entry, "via", "unknown dtype '" .. show(r.via) .. "'")
      elseif v == r or v.class ~= r.class or v.quantized or v.via then
        err(r.entry, "via", string.format("'%s' is not another plain %s dtype without a via of its own", r.via, r.class))
      end
    end
  end
  for _, cls in ipairs(M.class_order) do
    local want, defaults = M.runtime_defaults[cls], {}
    for _, r in ipairs(rows) do if r.class == cls and r.default then defaults[#defaults + 1] = r end end
    if #defaults ~= 1 or defaults[1].name ~= want then
      local e = defaults[2] and defaults[2].entry or (by_name[want] and by_name[want].entry)
        or { file = file, line = 1, fields = {} }
      errors[#errors + 1] = string.format("%s:%d: %s: default: class %s needs exactly one default dtype, %s " ..
        "(the runtime's td_%s_* functions make it)%s", e.file, e.line, show(e.fields.name or "dtypes"), cls, want, cls,
        #defaults > 1 and ("; found " .. #defaults) or "")
    end
  end
  if #errors > 0 then return nil, errors end
  table.sort(rows, function(a, b) return a.id < b.id end)
  return rows, {}
end

-- Fills the schema's tables in place (modules keep references to them).
function M.install(schema, rows)
  for _, t in ipairs({ schema.dtypes, schema.dtype_order, schema.classes, schema.dtype_rows, schema.dtype_by_name }) do
    for k in pairs(t) do t[k] = nil end
  end
  for i, r in ipairs(rows) do
    schema.dtype_rows[i] = r
    schema.dtype_by_name[r.name] = r
    schema.dtypes[r.name] = "TD_" .. r.name:upper()
    schema.dtype_order[i] = r.name
    if r.default then schema.classes[r.class] = r.name end
  end
end

-- The dtypes a backend's kernel of op computes (a set of names): every dtype it stores for
-- moves and views (they copy or share bytes), the spec's per-op override, else the
-- backend's per-class defaults for the classes of the op's tensors and result.
function M.kernel_dtypes(op, be)
  local schema = require("tdgen.schema")
  local set = {}
  if op.view or op.family == "to_device" then
    for d in pairs(be.dtypes) do set[d] = true end
    return set
  end
  if be.op_dtypes and be.op_dtypes[op.name] then
    for d in pairs(be.op_dtypes[op.name]) do set[d] = true end
    -- the classes the override does not name keep their defaults
    local named = {}
    for d in pairs(set) do named[schema.dtype_by_name[d].class] = true end
    for cls, ds in pairs(be.computes or {}) do
      if not named[cls] then for d in pairs(ds) do set[d] = true end end
    end
    return set
  end
  for cls, ds in pairs(be.computes or {}) do
    for d in pairs(ds) do set[d] = true end
  end
  if not be.computes then for d in pairs(be.dtypes) do set[d] = true end end
  return set
end

-- The tensor arguments of op (C expressions: a list stands for its first item) whose
-- dtype the arm of backend be must check: those of a class in which the backend stores a
-- dtype its kernel does not compute. Returns the list and the computed set.
function M.arm_checks(op, be)
  local schema = require("tdgen.schema")
  local kd = M.kernel_dtypes(op, be)
  local missing = {}
  for d in pairs(be.dtypes) do
    if not kd[d] then missing[schema.dtype_by_name[d].class] = true end
  end
  local checks = {}
  for _, a in ipairs(op.args) do
    local cls = a.t.tensor or a.t.list
    if cls and missing[cls] then
      checks[#checks + 1] = { arg = a, expr = a.t.tensor and a.name or (a.name .. "[0]"), list = a.t.list ~= nil,
        class = cls }
    end
  end
  return checks, kd
end

-- The C bit mask of a set of dtype names, in id order.
function M.mask(set)
  local schema = require("tdgen.schema")
  local parts = {}
  for _, r in ipairs(schema.dtype_rows) do
    if set[r.name] then parts[#parts + 1] = "(1u << " .. schema.dtypes[r.name] .. ")" end
  end
  return #parts > 0 and table.concat(parts, " | ") or "0u"
end

-- The repository's dtype table, beside this generator.
function M.default_path()
  local src = debug.getinfo(1, "S").source
  local dir = src:sub(1, 1) == "@" and src:sub(2):match("^(.*)[/\\][^/\\]*$") or "."
  return dir .. "/../../specs/dtypes.lua"
end

-- Loads and validates one dtypes file; returns rows or nil and errors.
function M.load(path)
  local entries, errs = load.load_file(path, "dtype")
  if #errs > 0 then return nil, errs end
  if #entries == 0 then return nil, { path .. ":1: no dtype declared" } end
  return M.validate(entries, path)
end

return M
