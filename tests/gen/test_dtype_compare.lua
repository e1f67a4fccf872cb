-- Tests of gen/tdgen/emit_dtype_tests.lua (the per-dtype comparisons): the cells follow the
-- backend spec's dtype declarations (a Vulkan spec that stores f16 and computes float_add
-- in f64 gets those cells, f64 against the CPU's f64), every claimed cell is generated or
-- counted, the case subset keeps inputs within 10,007 elements, i64 cases scale by the
-- op's int_degree.
-- usage: lua5.4 tests/gen/test_dtype_compare.lua <repo-root> <lua>
-- Prints "ok - NAME" / "not ok - NAME: WHY" per check, then "N passed, M failed".
local root = assert(arg[1], "usage: lua5.4 tests/gen/test_dtype_compare.lua <repo-root> <lua>")
local lua = assert(arg[2], "usage: lua5.4 tests/gen/test_dtype_compare.lua <repo-root> <lua>")
package.path = root .. "/gen/?.lua;" .. package.path
local emit = require("tdgen.emit_dtype_tests")

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

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function sh(cmd) return os.execute(cmd) == true end
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local tmp = os.tmpname()
os.remove(tmp)
assert(sh("mkdir -p " .. q(tmp)))
local function generate(specs, out)
  return sh(string.format("%s %s --specs %s --out %s >/dev/null 2>&1", q(lua), q(root .. "/gen/tdgen.lua"), q(specs),
    q(out)))
end

-- 1. The repository's specs: the CPU's cells against SUPPORT.md's dtype columns.
local out1 = tmp .. "/out1"
check("generate from specs/", generate(root .. "/specs", out1))
local support = read(out1 .. "/SUPPORT.md") or ""
local cpu = read(out1 .. "/test_dtypes_cpu.c") or ""
local vk = read(out1 .. "/test_dtypes_vulkan.c") or ""
-- the float table's header names the columns; each op row's cell per column
local claimed, missing = 0, {}
local cols
-- the cells of a table row, trimmed
local function split(line)
  local out = {}
  for c in line:gmatch("|([^|]*)") do
    local t = c:match("^%s*(.-)%s*$")
    if t ~= "" then out[#out + 1] = t end
  end
  return out
end
for line in support:gmatch("[^\n]+") do
  if line:match("^| op | cpu ") then
    cols = split(line)
  elseif cols and line:match("^| `") then
    local cells = split(line)
    local op = cells[1]:match("`(.-)`")
    for i, c in ipairs(cols) do
      local d = c:match("^cpu (%w+)$")
      if d and d ~= "f32" and d ~= "i32" and cells[i] ~= "-" and cells[i] ~= "twin" and
        not op:match("all_reduce") and not op:match("broadcast$") and not op:match("all_gather") then
        claimed = claimed + 1
        if not cpu:find("static void test_" .. op .. "_" .. d .. "_vs_cpu(", 1, true) then missing[#missing + 1] = op .. " " .. d end
      end
    end
  elseif not line:match("^|") then
    cols = nil
  end
end
check("every claimed cpu cell of SUPPORT.md has its test", claimed > 300 and #missing == 0,
  string.format("%d claimed, missing: %s", claimed, table.concat(missing, ", ")))
local n = tonumber(cpu:match("cpu: (%d+) op x dtype cells"))
check("the cpu's count of cells is printed", n ~= nil and n >= claimed, tostring(n))
check("claimed cells not generated are counted with their reason",
  cpu:find("claimed cells not generated: %d+ creation ops' _dtype twins") ~= nil, "no count")
check("vulkan on main: no cell, a skip that says so", vk:find("vulkan stores no dtype beyond f32, i32 and bool", 1, true)
  ~= nil and vk:find("skip();", 1, true) ~= nil, "no skip")
-- i64: int_mul runs its cases unscaled and scaled by 2^16, int_add by 2^32
local mul = cpu:match("static void test_int_mul_i64_vs_cpu%(.-\n}") or ""
check("i64 int_mul: shift 0 and 16", mul:find(".shift = 0", 1, true) and mul:find(".shift = 16", 1, true), mul)
local add = cpu:match("static void test_int_add_i64_vs_cpu%(.-\n}") or ""
check("i64 int_add: shift 0 and 32", add:find(".shift = 0", 1, true) and add:find(".shift = 32", 1, true), add)
local norm = cpu:match("static void test_float_layer_norm_bf16_vs_cpu%(.-\n}") or ""
check("an op's dtype_nmse replaces the dtype's bound", norm:find(".nmse = 4e-05", 1, true) ~= nil, norm)
local exp = cpu:match("static void test_float_exp_f16_vs_cpu%(.-\n}") or ""
check("f16's bound from specs/dtypes.lua", exp:find(".nmse = 5e-08", 1, true) ~= nil, exp)
-- every case table: at most 3 cases, every input shape within 10,007 elements
local over = {}
for name, body in cpu:gmatch("static const tdt_case dcases_([%w_]+)%[%] = {(.-)\n};") do
  local k = 0
  for row in body:gmatch("{ %.fill[^\n]*") do
    k = k + 1
    for nd, dims in row:gmatch("{ (%d+), { ([%d, ]*) } }") do
      local e = 1
      for x in dims:gmatch("%d+") do e = e * tonumber(x) end
      if tonumber(nd) > 0 and e > emit.MAX_ELEMENTS then over[#over + 1] = name .. " (" .. e .. ")" end
    end
  end
  if k > emit.CASES then over[#over + 1] = name .. " has " .. k .. " cases" end
end
check("case tables within the subset's limits", #over == 0, table.concat(over, ", "))

-- 2. A Vulkan spec that stores f16 and f64 and computes float_add in f64: its cells appear.
local specs2 = tmp .. "/specs"
assert(sh("cp -r " .. q(root .. "/specs") .. " " .. q(specs2)))
local vs = read(specs2 .. "/backends/vulkan.lua")
local vs2, k = vs:gsub('  dtypes = { "f32", "i32", "bool" },',
  '  dtypes = { "f32", "i32", "bool", "f16", "f64" },\n  computes = { float = { "f32" }, int = { "i32" }, bool = { "bool" } },\n' ..
  '  op_dtypes = { float_add = { "f32", "f64" } },', 1)
check("the test can edit the vulkan spec", k == 1, "pattern not found")
write(specs2 .. "/backends/vulkan.lua", vs2)
local out2 = tmp .. "/out2"
check("generate with vulkan f16 / f64", generate(specs2, out2))
local vk2 = read(out2 .. "/test_dtypes_vulkan.c") or ""
check("vulkan's f16 cells appear", vk2:find("static void test_float_exp_f16_vs_cpu(", 1, true) ~= nil, "no float_exp f16")
local add64 = vk2:match("static void test_float_add_f64_vs_cpu%(.-\n}") or ""
check("vulkan f64 float_add against the cpu's f64, bound 1e-12",
  add64:find(".dtype = TD_F64, .ref = TD_F64", 1, true) and add64:find(".nmse = 1e-12", 1, true), add64)
check("vulkan f64 float_exp (not computed) has no cell", not vk2:find("test_float_exp_f64_vs_cpu", 1, true), "generated")
check("vulkan's count printed", vk2:find("vulkan: %d+ op x dtype cells") ~= nil, "no count")

sh("rm -rf " .. q(tmp))
print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
