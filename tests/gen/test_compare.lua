-- Tests of gen/tdgen/emit_compare.lua (the many-shape comparisons with the CPU) on ops
-- built in memory: every shape rule outside the distributed family has cases, and they fit
-- the rule; a comparison that cannot run becomes a skip that says why.
-- usage: lua5.4 tests/gen/test_compare.lua <repo-root>
-- Prints "ok - NAME" / "not ok - NAME: WHY" per check, then "N passed, M failed".
local root = assert(arg[1], "usage: lua5.4 tests/gen/test_compare.lua <repo-root>")
package.path = root .. "/gen/?.lua;" .. package.path
local schema = require("tdgen.schema")
local util = require("tdgen.util")
local compare = require("tdgen.emit_compare")

local passed, failed = 0, 0
local function check(name, cond, why)
  if cond then
    passed = passed + 1
    print("ok - " .. name)
  else
    failed = failed + 1
    print("not ok - " .. name .. ": " .. tostring(why))
  end
end

-- An op whose arguments are "type name" strings, shaped like validate.lua's.
local function make_op(name, family, args, returns, rule, rule_args, fields)
  local op = { name = name, family = family, returns = returns, args = {}, arg_by_name = {}, fields = fields or {},
    rule = rule and { name = rule, args = rule_args } }
  for _, s in ipairs(args) do
    local ty, n = s:match("^(%S+) (%S+)$")
    local a = { type = ty, name = n, t = assert(schema.types[ty], ty) }
    op.args[#op.args + 1] = a
    op.arg_by_name[n] = a
  end
  return op
end

-- One op per shape rule, with the argument types the rule's parameters take.
local KIND_TYPE = { tensor = "float", list = "floats", array = "dims", dims = "dims", i64 = "i64", dim = "dim", f32 = "f32",
  distribution = "distribution", host_out = "f32_out", i32 = "i32" }
local function op_for_rule(rule)
  local params = schema.rules[rule]
  local args, names, creation = {}, {}, false
  for i, kind in ipairs(params) do
    if kind == "group" then return nil end
    if kind == "array" or kind == "i64" or kind == "distribution" then creation = creation or i == 1 end
    local ty = KIND_TYPE[kind] or error("no argument type for the rule parameter kind " .. kind)
    if rule == "from_shape" or rule == "random" or rule == "random_int" then ty = kind == "array" and "shape" or ty end
    names[i] = "p" .. i
    args[#args + 1] = ty .. " " .. names[i]
  end
  local family = creation and "creation" or (params[1] == "list" and "multi" or "unary_float")
  if creation then table.insert(args, 1, "device d") end
  if rule == "random" then args[#args + 1] = "u64 seed" end
  local returns = rule == "host_out" and "host" or "float"
  return make_op("op_" .. rule, family, args, returns, rule, names)
end

local ALL = { float_from_data = true, float_to_device = true, float_into_data = true }
local model = { backend_by_name = { cpu = { name = "cpu", ops = {} } } }
local be = { name = "other", ops = {} }
-- Nothing is composite here: what a backend runs is what it implements.
model.backend_by_name.cpu.runs = model.backend_by_name.cpu.ops
be.runs = be.ops
local function emit(op)
  local b = util.buffer()
  local tests = {}
  compare.emit(b, model, be, op, function(n) tests[#tests + 1] = n; return n end)
  return b:text(), tests
end
local function allow(op)
  for k in pairs(ALL) do model.backend_by_name.cpu.ops[k] = true; be.ops[k] = true end
  model.backend_by_name.cpu.ops[op.name] = true
  be.ops[op.name] = true
end

-- Every rule but the distributed one has cases (no skip), and as many as the rule gives.
local rules = {}
for r in pairs(schema.rules) do rules[#rules + 1] = r end
table.sort(rules)
for _, r in ipairs(rules) do
  local op = op_for_rule(r)
  if op then
    allow(op)
    local text, tests = emit(op)
    local rows = select(2, text:gsub("\n    { %.fill = ", ""))
    check("rule " .. r .. ": a comparison with cases", #tests == 1 and tests[1] == "test_op_" .. r .. "_vs_cpu"
      and not text:find("tdt_compare_skip", 1, true) and rows >= 8, rows .. " cases; " .. text:sub(1, 300))
    check("rule " .. r .. ": the op is called from the case", text:find("return td_op_" .. r .. "(", 1, true) ~= nil,
      text:sub(1, 300))
  end
end

-- Zero-size cases: every rule but the distributed one has its own (each saying the result
-- shape or the error it must give), with an empty tensor or an empty result among them.
local function emit_empty(op)
  local b = util.buffer()
  local tests = {}
  compare.emit_empty(b, model, be, op, function(n) tests[#tests + 1] = n; return n end, "cpu_dev")
  return b:text(), tests
end
for _, r in ipairs(rules) do
  local op = op_for_rule(r)
  if op then
    allow(op)
    local text, tests = emit_empty(op)
    local rows = select(2, text:gsub("\n    { %.fill = ", ""))
    local told = select(2, text:gsub("%.want_shape = true", "")) + select(2, text:gsub("%.want_status = TD_E_", ""))
    check("rule " .. r .. ": zero-size cases", #tests == 1 and tests[1] == "test_op_" .. r .. "_empty"
      and not text:find("tdt_compare_skip", 1, true) and rows >= 2 and told == rows
      and (text:find("{ %d, { [%d, ]*0[,} ]") ~= nil or text:find("%.want_dims = { [%d, ]*0[,} ]") ~= nil),
      rows .. " cases, " .. told .. " with what they must give; " .. text:sub(1, 400))
    check("rule " .. r .. ": zero-size cases on the device and on autodiff",
      text:find("tdt_compare(dev, cpu_dev, &desc, empty_op_" .. r, 1, true) ~= nil
      and text:find("tdt_compare(ad_dev, cpu_dev, &desc, empty_op_" .. r, 1, true) ~= nil, text:sub(1, 300))
  end
end
do
  local text = emit_empty(op_for_rule("reduce_dim_nonempty"))
  check("reduce_dim_nonempty: an empty dim is an error", text:find(
    "{ 3, { 2, 0, 3 } } }, .i = { INT64_C(1) }, .want_status = TD_E_SHAPE", 1, true) ~= nil, text)
  text = emit_empty(op_for_rule("matmul"))
  check("matmul: [2,0] @ [0,3] is [2,3]", text:find(
    "{ 2, { 2, 0 } }, { 2, { 0, 3 } } }, .want_shape = true, .want_ndim = 2, .want_dims = { 2, 3 }", 1, true) ~= nil,
    text)
  text = emit_empty(op_for_rule("cat"))
  check("cat: [0] is skipped beside [2,3] and [1,3]", text:find(
    "{ 2, { 2, 3 } }, { 1, { 0 } }, { 2, { 1, 3 } } }, .i = { INT64_C(0) }, .want_shape = true, .want_ndim = 2, " ..
    ".want_dims = { 3, 3 }", 1, true) ~= nil, text)
  -- A rule without its own zero-size cases: derived from its many-shape ones, the CPU decides.
  local saved = compare.Z_for_tests and compare.Z_for_tests.same
  local op = make_op("op_newrule", "unary_float", { "float a" }, "float", "same", { "a" })
  allow(op)
  compare.Z_for_tests.same = nil
  text = emit_empty(op)
  compare.Z_for_tests.same = saved
  check("a rule without zero-size cases: derived ones, the reference decides",
    text:find(".as_reference = true", 1, true) ~= nil and text:find("{ 1, { 0 } }", 1, true) ~= nil, text)
end

-- Broadcast pairs include a 0-d input with a big one, [3,1] x [1,4] and a leading-dim broadcast.
do
  local text = emit(op_for_rule("broadcast"))
  check("broadcast: 0-d with 10007 elements", text:find("{ 0, { 0 } }, { 1, { 10007 } }", 1, true) ~= nil)
  check("broadcast: [3,1] x [1,4]", text:find("{ 2, { 3, 1 } }, { 2, { 1, 4 } }", 1, true) ~= nil)
  check("broadcast: [33] x [7,33]", text:find("{ 1, { 33 } }, { 2, { 7, 33 } }", 1, true) ~= nil)
end

-- reduce_dim covers every dim of a 4-d shape.
do
  local text = emit(op_for_rule("reduce_dim"))
  local dims = {}
  for d in text:gmatch("{ 4, { 3, 5, 7, 97 } } }, %.i = { INT64_C%((%-?%d+)%) }") do dims[tonumber(d)] = true end
  local seen = {}
  for k in pairs(dims) do seen[#seen + 1] = k end
  table.sort(seen)
  check("reduce_dim: every dim of [3,5,7,97]", dims[0] and dims[1] and dims[2] and (dims[3] or dims[-1]),
    "dims seen: " .. table.concat(seen, ","))
end

-- The spec's nmse and domain reach the test.
do
  local op = make_op("op_log", "unary_float", { "float a" }, "float", "same", { "a" },
    { nmse = 1e-5, domain = { a = "positive" } })
  allow(op)
  local text = emit(op)
  check("nmse from the spec", text:find(".nmse = 1e-05,", 1, true) ~= nil)
  check("domain from the spec", text:find(".domain = { TDT_DOMAIN_POSITIVE },", 1, true) ~= nil)
  local plain = make_op("op_neg", "unary_float", { "float a" }, "float", "same", { "a" })
  allow(plain)
  check("the default nmse is 1e-7", emit(plain):find(".nmse = 1e-07,", 1, true) ~= nil)
  check("zero signs unchecked by default", emit(plain):find(".zero_sign", 1, true) == nil)
  local signed = make_op("op_max", "unary_float", { "float a" }, "float", "same", { "a" }, { zero_sign = true })
  allow(signed)
  check("zero_sign from the spec", emit(signed):find(".zero_sign = true,", 1, true) ~= nil)
end

-- Skips that say why.
do
  local op = make_op("op_lonely", "unary_float", { "float a" }, "float", "same", { "a" })
  allow(op)
  model.backend_by_name.cpu.ops.op_lonely = nil
  local text, tests = emit(op)
  check("no CPU reference: a skip", #tests == 1 and text:find(
    'tdt_compare_skip("op_lonely", "no reference: the cpu backend does not run op_lonely");', 1, true) ~= nil,
    text)
  local iop = make_op("op_ints", "binary", { "int a", "int b" }, "int", "broadcast", { "a", "b" })
  allow(iop)
  text = emit(iop)
  check("inputs the backend cannot make: a skip", text:find(
    "other cannot make int inputs: it lacks int_from_data and the cpu backend lacks int_to_device", 1, true) ~= nil,
    text)
  local rop = make_op("op_odd", "unary_float", { "float a" }, "float", "no_such_rule", { "a" })
  allow(rop)
  text = emit(rop)
  check("a rule without cases: a skip", text:find("no many-shape cases for the shape rule 'no_such_rule'", 1, true)
    ~= nil, text)
end

-- Distributed and device ops have no comparison.
do
  local op = make_op("op_sync", "device", { "device d" }, "none", nil, nil)
  allow(op)
  check("device ops: none", not compare.applies(model, be, op))
  local dop = make_op("op_gather", "distributed", { "float a", "group g" }, "float", "all_gather", { "a", "g" })
  allow(dop)
  check("distributed ops: none", not compare.applies(model, be, dop))
end

print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
