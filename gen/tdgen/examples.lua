-- Checks an op's examples, the known-value cases of the generated tests. The test
-- emitter trusts them, so every value is checked down to its leaves: types, ranges,
-- nesting, and counts against shapes.
local schema = require("tdgen.schema")
local util = require("tdgen.util")

local M = {}

local show = util.show

local MAX_DIMS = 8 -- TD_MAX_DIMS in runtime/core/td_core.h
local I32_MIN, I32_MAX = -2147483648, 2147483647
local F32_MAX = 3.4028234663852886e38
local FLOAT_WORDS = { nan = true, inf = true, ["-inf"] = true }

-- A value in a message: strings quoted, so that "1" and 1 differ.
local function value(x)
  return type(x) == "string" and ('"' .. show(x) .. '"') or show(x)
end

-- A key in a message.
local function key(k)
  return type(k) == "string" and ("'" .. show(k) .. "'") or show(k)
end

local function integer(x)
  return type(x) == "number" and math.tointeger(x) or nil
end

-- Element checks by dtype (tensor data, host data and scalars alike). These and the
-- checks below return the problem as a message, or nil; `what` names the value.
local ELEMENT = {
  f32 = function(x)
    if FLOAT_WORDS[x] then return nil end
    if type(x) ~= "number" or x ~= x or x < -F32_MAX or x > F32_MAX then
      return "expected a finite float (or \"nan\", \"inf\", \"-inf\"), got " .. value(x)
    end
  end,
  i32 = function(x)
    local i = integer(x)
    if not i or i < I32_MIN or i > I32_MAX then return "expected a 32-bit integer, got " .. value(x) end
  end,
  bool = function(x)
    if type(x) ~= "boolean" then return "expected true or false, got " .. value(x) end
  end,
}

-- Nil when t is an array (keys 1..#t, no holes), else the problem.
local function array_problem(t, what)
  if type(t) ~= "table" then return string.format("%s: expected an array, got a %s", what, type(t)) end
  local n, count, bad = #t, 0, nil
  for k in pairs(t) do
    count = count + 1
    if math.type(k) ~= "integer" or k < 1 or k > n then
      local s = key(k)
      if not bad or s < bad then bad = s end
    end
  end
  if bad then return string.format("%s: expected an array, got the key %s", what, bad) end
  if count ~= n then return string.format("%s: expected an array, got one with holes", what) end
end

-- Nil when t has no keys but the allowed ones, else the problem (naming the first, sorted).
local function keys_problem(t, allowed, what)
  local bad
  for k in pairs(t) do
    if not allowed[k] then
      local s = key(k)
      if not bad or s < bad then bad = s end
    end
  end
  if bad then return string.format("%s: unexpected key %s", what, bad) end
end

-- Checks an array of elements of a dtype; returns its length or nil and the problem.
local function elements(t, dtype, what)
  local p = array_problem(t, what)
  if p then return nil, p end
  for i, x in ipairs(t) do
    local q = ELEMENT[dtype](x)
    if q then return nil, string.format("%s[%d]: %s", what, i, q) end
  end
  return #t
end

-- Checks a shape (an array of at most MAX_DIMS sizes); returns its element count, capped
-- just above `cap` so that huge shapes do not overflow, or nil and the problem.
local function shape_numel(t, what, cap)
  local p = array_problem(t, what)
  if p then return nil, p end
  if #t > MAX_DIMS then return nil, string.format("%s: %d dimensions; at most %d", what, #t, MAX_DIMS) end
  local n, zero = 1, false
  for i, x in ipairs(t) do
    local d = integer(x)
    if not d or d < 0 or d > I32_MAX then
      return nil, string.format("%s[%d]: expected a size (an integer from 0 to %d), got %s", what, i, I32_MAX, value(x))
    end
    if d == 0 then zero = true elseif n <= cap then n = n * d end
  end
  return zero and 0 or n
end

-- A tensor value: { shape = {...}, data = {...} } with #data elements of the dtype.
local function tensor(v, dtype, what)
  if type(v) ~= "table" then
    return string.format("%s: expected a tensor { shape = {...}, data = {...} }, got a %s", what, type(v))
  end
  local p = keys_problem(v, { shape = true, data = true }, what)
  if p then return p end
  if v.shape == nil then return what .. ": no 'shape'" end
  if v.data == nil then return what .. ": no 'data'" end
  local count, q = elements(v.data, dtype, what .. ".data")
  if not count then return q end
  local numel, r = shape_numel(v.shape, what .. ".shape", count)
  if not numel then return r end
  if numel ~= count then
    return string.format("%s: data holds %d values, but the shape holds %s", what, count,
      numel > count and "more" or tostring(numel))
  end
end

-- Checks one argument's value; returns the problem or nil.
local function argument(op, a, v, what, ex)
  local t = a.t
  if t.tensor then return tensor(v, schema.classes[t.tensor], what) end
  if t.list then
    local p = array_problem(v, what)
    if p then return p end
    if #v == 0 then return what .. ": expected at least one tensor" end
    for i, item in ipairs(v) do
      local q = tensor(item, schema.classes[t.list], string.format("%s[%d]", what, i))
      if q then return q end
    end
    return nil
  end
  if t.array then
    local p = array_problem(v, what)
    if p then return p end
    if #v > MAX_DIMS then return string.format("%s: %d values; at most %d", what, #v, MAX_DIMS) end
    for i, x in ipairs(v) do
      if not integer(x) then return string.format("%s[%d]: expected an integer, got %s", what, i, value(x)) end
    end
    return nil
  end
  if t.host_in then
    local count, p = elements(v, t.host_in, what)
    if not count then return p end
    -- Host data fills the tensor the op's `shape` argument describes.
    for _, s in ipairs(op.args) do
      if s.type == "shape" and type(ex[s.name]) == "table" then
        local numel = shape_numel(ex[s.name], s.name, count)
        if numel and numel ~= count then
          return string.format("%s: holds %d values, but '%s' holds %s", what, count, s.name,
            numel > count and "more" or tostring(numel))
        end
        break
      end
    end
    return nil
  end
  if a.type == "f32" then return ELEMENT.f32(v) and (what .. ": " .. ELEMENT.f32(v)) end
  if a.type == "i32" then return ELEMENT.i32(v) and (what .. ": " .. ELEMENT.i32(v)) end
  if a.type == "i64" or a.type == "dim" then
    if not integer(v) then return what .. ": expected an integer, got " .. value(v) end
    return nil
  end
  if a.type == "u64" then
    local i = integer(v)
    if not i or i < 0 then return what .. ": expected a non-negative integer, got " .. value(v) end
    return nil
  end
  if t.enum then
    -- Enum values are written as the lower-case last word of their C name: "uniform".
    local names = {}
    for _, c in ipairs(t.enum) do
      local word = c:match("_([%u%d]+)$"):lower()
      if v == word then return nil end
      names[#names + 1] = '"' .. word .. '"'
    end
    return string.format("%s: expected one of %s, got %s", what, table.concat(names, ", "), value(v))
  end
  return string.format("%s: a %s argument has no example values", what, a.type)
end

-- Whether an example must give the argument: every input but devices and groups (made
-- by the test) and host outputs (whose expected values are `out`).
local function given(a)
  return not (a.t.device or a.t.group or a.t.host_out)
end

-- Checks the examples (already known to be an array) of a validated op; returns a list
-- of messages.
function M.check(op, list)
  local msgs = {}
  if op.returns == "none" and #list > 0 then
    return { "an op that returns none has no examples (there is no result to compare)" }
  end
  for i, ex in ipairs(list) do
    local pre = string.format("example %d: ", i)
    if type(ex) ~= "table" then
      msgs[#msgs + 1] = pre .. "expected a table"
    else
      local unknown = {}
      for k in pairs(ex) do
        if k ~= "out" and not (type(k) == "string" and op.arg_by_name[k]) then unknown[#unknown + 1] = key(k) end
      end
      table.sort(unknown)
      for _, k in ipairs(unknown) do
        msgs[#msgs + 1] = pre .. string.format("%s is not an argument of %s", k, op.name)
      end
      for _, a in ipairs(op.args) do
        local v = ex[a.name]
        if v == nil then
          if given(a) then msgs[#msgs + 1] = pre .. string.format("no value for argument '%s'", a.name) end
        else
          local p
          if given(a) then
            p = argument(op, a, v, a.name, ex)
          elseif a.t.host_out then
            p = a.name .. ": a host output has no value in an example; its expected values go in 'out'"
          else
            p = string.format("%s: the test makes the %s; an example gives it no value", a.name, a.type)
          end
          if p then msgs[#msgs + 1] = pre .. p end
        end
      end
      local out = ex.out
      if out == nil then
        msgs[#msgs + 1] = pre .. "no 'out'"
      elseif schema.classes[op.returns] then
        local p = tensor(out, schema.classes[op.returns], "out")
        if p then msgs[#msgs + 1] = pre .. p end
      elseif op.returns == "host" then
        local dtype
        for _, a in ipairs(op.args) do if a.t.host_out then dtype = a.t.host_out end end
        local p
        if type(out) ~= "table" then
          p = "out: expected { data = {...} }, got a " .. type(out)
        elseif not dtype then
          p = "out: the op has no host output argument (f32_out, i32_out, bool_out)"
        else
          p = keys_problem(out, { data = true }, "out")
          if not p and out.data == nil then p = "out: no 'data'" end
          if not p then
            local _, q = elements(out.data, dtype, "out.data")
            p = q
          end
        end
        if p then msgs[#msgs + 1] = pre .. p end
      end
    end
  end
  return msgs
end

return M
