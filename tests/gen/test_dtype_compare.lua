-- Tests of gen/tdgen/emit_dtype_tests.lua (the per-dtype comparisons): the cells follow the
-- backend spec's dtype declarations (Vulkan's f16 / bf16 cells, f64 cells only for the ops
-- its spec computes in f64: moves, views, matmul and matmul_nt, the elementwise ops, the
-- reductions, the float math; float_matmul_nt's against the CPU's f64); an edit that takes f64
-- out of float_matmul_nt and float_atan in Vulkan's op_dtypes drops those cells (vkgap: every
-- native Vulkan float op computes f64 now, so the edit removes instead of adding), every claimed
-- cell is generated or counted, composites in
-- f16 / bf16 are claimed "composite (f32 inside)", the case subset keeps inputs within
-- 10,007 elements, i64 cases scale by the op's int_degree, an op's dtype_nmse replaces the
-- dtype's bound.
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
-- the float and int tables' headers name the columns; each op row's cell per column
-- The cells of a table row, trimmed.
local function split(line)
  local out = {}
  for c in line:gmatch("|([^|]*)") do
    local t = c:match("^%s*(.-)%s*$")
    if t ~= "" then out[#out + 1] = t end
  end
  return out
end
-- SUPPORT.md's claimed cells of backend be beyond f32 / i32, as { op, d, cell } (collectives
-- and twins left out: the generator counts them instead of comparing them).
local function claimed_cells(be)
  local out, cols = {}, nil
  for line in support:gmatch("[^\n]+") do
    if line:match("^| op | cpu ") then
      cols = split(line)
    elseif cols and line:match("^| `") then
      local cells = split(line)
      local op = cells[1]:match("`(.-)`")
      for i, c in ipairs(cols) do
        local d = c:match("^" .. be .. " (%w+)$")
        if d and d ~= "f32" and d ~= "i32" and cells[i] ~= "-" and cells[i] ~= "twin" and
          not op:match("all_reduce") and not op:match("broadcast$") and not op:match("all_gather") then
          out[#out + 1] = { op = op, d = d, cell = cells[i] }
        end
      end
    elseif not line:match("^|") then
      cols = nil
    end
  end
  return out
end
-- The test functions of a generated file per dtype.
local function tests_per_dtype(src)
  local per = {}
  for d in src:gmatch("static void test_[%w_]-_(%w+)_vs_cpu%(") do per[d] = (per[d] or 0) + 1 end
  return per
end
for _, be in ipairs({ { "cpu", cpu, 300 }, { "vulkan", vk, 250 } }) do
  local name, src, least = be[1], be[2], be[3]
  local cells, missing = claimed_cells(name), {}
  for _, c in ipairs(cells) do
    if not src:find("static void test_" .. c.op .. "_" .. c.d .. "_vs_cpu(", 1, true) then
      missing[#missing + 1] = c.op .. " " .. c.d
    end
  end
  check("every claimed " .. name .. " cell of SUPPORT.md has its test", #cells > least and #missing == 0,
    string.format("%d claimed, missing: %s", #cells, table.concat(missing, ", ")))
  local n = tonumber(src:match(name .. ": (%d+) op x dtype cells"))
  check(name .. "'s count of cells is printed", n ~= nil and n >= #cells, tostring(n))
  -- the printed count per dtype is the number of tests of that dtype
  local per, bad = tests_per_dtype(src), {}
  local listed = src:match(name .. ": %d+ op x dtype cells beyond f32, i32 and bool compared with the cpu %(([^)]*)%)")
    or ""
  for d, k in listed:gmatch("(%w+) (%d+)") do
    if per[d] ~= tonumber(k) then bad[#bad + 1] = string.format("%s: printed %s, %s tests", d, k, tostring(per[d])) end
  end
  check(name .. "'s per-dtype counts match its tests", listed ~= "" and #bad == 0,
    listed == "" and "no counts" or table.concat(bad, "; "))
end
check("claimed cells not generated are counted with their reason",
  cpu:find("claimed cells not generated: %d+ creation ops' _dtype twins") ~= nil, "no count")
-- Vulkan (specs/backends/vulkan.lua stores f16, bf16, f64, i64, i8, u8; computes f32, i32,
-- bool; native f16 / bf16 for the elementwise, unary and reduction shaders)
check("vulkan: native f16 cells (float_exp)", vk:find("/* float_exp in f16: native on vulkan;", 1, true) ~= nil,
  "no native float_exp f16 cell")
check("vulkan: via f32 cells (float_matmul in bf16)",
  vk:find("/* float_matmul in bf16: via f32 on vulkan;", 1, true) ~= nil or
  vk:find("/* float_matmul in bf16: native on vulkan;", 1, true) ~= nil, "no float_matmul bf16 cell")
local vper = tests_per_dtype(vk)
local base64 = vk:match("static void test_float_matmul_nt_f64_vs_cpu%(.-\n}") or ""
check("vulkan: f64 cells of the ops its spec computes in f64 (float_matmul_nt against the cpu's f64, bound 1e-12; float_atan)",
  base64:find(".dtype = TD_F64, .ref = TD_F64", 1, true) and base64:find(".nmse = 1e-12", 1, true) and
  vk:find("test_float_atan_f64_vs_cpu", 1, true) ~= nil, base64)
check("vulkan: its f64 cells (moves, views, reductions) are counted",
  (vper.f64 or 0) > 0 and vk:find("f64 " .. vper.f64, 1, true) ~= nil and
  vk:find("/* float_to_device in f64: native on vulkan; reference: the cpu in f64 */", 1, true) ~= nil and
  vk:find("/* float_sum_dim in f64: native on vulkan; reference: the cpu in f64 */", 1, true) ~= nil,
  "f64: " .. tostring(vper.f64))
-- composites in f16 / bf16 run in f32 and round once (docs/composites.md): claimed so,
-- including those whose decompositions make f32 tensors (attention_masked, the adaptive
-- pools, bilinear interpolation, conv_transpose2d), on both backends; layer_norm is one on
-- vulkan only (the cpu has an f32 kernel for it)
for _, be in ipairs({ { "cpu", cpu }, { "vulkan", vk, "float_layer_norm" } }) do
  local miss = {}
  for _, op in ipairs({ "float_attention_masked", "float_adaptive_avg_pool1d", "float_adaptive_avg_pool2d",
    "float_interpolate2d_bilinear", "float_conv_transpose2d", be[3] }) do
    for _, d in ipairs({ "f16", "bf16" }) do
      if not be[2]:find("/* " .. op .. " in " .. d .. ": composite (f32 inside) on " .. be[1] .. ";", 1, true) then
        miss[#miss + 1] = op .. " " .. d
      end
    end
  end
  check(be[1] .. ": composites in f16 / bf16 are compared as 'composite (f32 inside)'", #miss == 0,
    table.concat(miss, ", "))
end
check("vulkan: softmax (composite there) in f16 is f32 inside",
  support:find("| `float_softmax` | native | via f32 | via f32 |", 1, true) ~= nil and
  vk:find("/* float_softmax in f16: composite (f32 inside) on vulkan;", 1, true) ~= nil, "not claimed so")
check("SUPPORT.md counts the f32-inside composites",
  support:find("vulkan f16 %d+ %(%d+ via f32, %d+ composite f32 inside%)") ~= nil, "no count")
local dispatch = read(out1 .. "/td_dispatch.c") or ""
check("the composite's wrapper converts f16 / bf16 inputs (td_opmath_in) around its body",
  dispatch:match("static td_status comp_float_softmax%(.-\n}"):find("td_opmath_in", 1, true) ~= nil and
  dispatch:find("static td_status compb_float_softmax(", 1, true) ~= nil, "no wrapper")
-- i64: int_mul runs its cases unscaled and scaled by 2^16, int_add by 2^32
local mul = cpu:match("static void test_int_mul_i64_vs_cpu%(.-\n}") or ""
check("i64 int_mul: shift 0 and 16", mul:find(".shift = 0", 1, true) and mul:find(".shift = 16", 1, true), mul)
local add = cpu:match("static void test_int_add_i64_vs_cpu%(.-\n}") or ""
check("i64 int_add: shift 0 and 32", add:find(".shift = 0", 1, true) and add:find(".shift = 32", 1, true), add)
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

-- 2. Cells follow the specs: an edit of Vulkan's op_dtypes that takes f64 out of
-- float_remainder_scalar and float_cumprod (kernels without a decomposition: an op with one
-- would run it in f64 instead) and of float_exp's spec that sets dtype_nmse changes the cells,
-- whatever the files' spacing.
local specs2 = tmp .. "/specs"
assert(sh("cp -r " .. q(root .. "/specs") .. " " .. q(specs2)))
-- the backend specs name their kernels folders relative to the spec directory (../runtime/cpu)
assert(sh("ln -s " .. q(root .. "/runtime") .. " " .. q(tmp .. "/runtime")))
local vs = read(specs2 .. "/backends/vulkan.lua") or ""
-- the entries of float_remainder_scalar and float_cumprod in op_dtypes lose "f64"
local function drop_f64(text, name)
  return text:gsub("(" .. name .. "%s*=%s*{)([^}]*)}", function(head, body)
    return head .. body:gsub(',%s*"f64"', "") .. "}"
  end, 1)
end
local vs2, k = drop_f64(vs, "float_remainder_scalar")
local k1
vs2, k1 = drop_f64(vs2, "float_cumprod")
local k3
vs2, k3 = drop_f64(vs2, "float_atan")
check("the test can edit vulkan's op_dtypes", k == 1 and k1 == 1 and k3 == 1,
  "float_remainder_scalar, float_cumprod or float_atan not found")
write(specs2 .. "/backends/vulkan.lua", vs2)
local us = read(specs2 .. "/ops/unary_float.lua") or ""
local us2, k2 = us:gsub('(name%s*=%s*"float_exp"%s*,)', '%1 dtype_nmse = { f16 = 2e-7 },', 1)
check("the test can edit float_exp's spec", k2 == 1, "float_exp not found in specs/ops/unary_float.lua")
write(specs2 .. "/ops/unary_float.lua", us2)
local out2 = tmp .. "/out2"
check("generate with vulkan float_remainder_scalar and float_cumprod without f64", generate(specs2, out2))
local vk2 = read(out2 .. "/test_dtypes_vulkan.c") or ""
check("vulkan: no f64 cell of an op without an f64 kernel (float_remainder_scalar, float_cumprod)",
  vk:find("test_float_cumprod_f64_vs_cpu", 1, true) and vk:find("test_float_remainder_scalar_f64_vs_cpu", 1, true)
    and not vk2:find("test_float_remainder_scalar_f64_vs_cpu", 1, true) and not vk2:find("test_float_cumprod_f64_vs_cpu", 1, true),
  "an f64 cell of an op without an f64 kernel")
-- float_atan has a decomposition: without its f64 kernel it runs that in f64 (emit_support's
-- dtype_cell, emit_c's emit_dtype_fallback), and is compared as such
check("vulkan: an op with a decomposition runs it in f64 where its kernel lacks f64 (float_atan)",
  vk:find("/* float_atan in f64: native on vulkan;", 1, true) ~= nil
    and vk2:find("/* float_atan in f64: composite on vulkan;", 1, true) ~= nil, "float_atan's f64 cell")
local n1 = tonumber(vk:match("vulkan: %d+ op x dtype cells beyond f32, i32 and bool compared with the cpu %(.-f64 (%d+)"))
local n2 = tonumber(vk2:match("vulkan: %d+ op x dtype cells beyond f32, i32 and bool compared with the cpu %(.-f64 (%d+)"))
-- The printed count is the number of f64 cells generated, and it shrinks with the edit: by one
-- for each of the two ops, and by any composites built of them in f64.
local function f64_cells(text)
  local c = 0
  for _ in text:gmatch("static void test_[%w_]+_f64_vs_cpu%(") do c = c + 1 end
  return c
end
check("vulkan's printed f64 count is its f64 cells, and shrinks with the edit",
  n1 ~= nil and n2 ~= nil and n1 == f64_cells(vk) and n2 == f64_cells(vk2) and n2 <= n1 - 2,
  tostring(n1) .. " -> " .. tostring(n2) .. " (cells " .. f64_cells(vk) .. " -> " .. f64_cells(vk2) .. ")")
local exp2 = (read(out2 .. "/test_dtypes_cpu.c") or ""):match("static void test_float_exp_f16_vs_cpu%(.-\n}") or ""
check("an op's dtype_nmse replaces the dtype's bound", exp2:find(".nmse = 2e-07", 1, true) ~= nil, exp2)

sh("rm -rf " .. q(tmp))
print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
