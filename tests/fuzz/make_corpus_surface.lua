-- Writes the seed corpus of fuzz_surface (tests/fuzz/corpus_surface/*): for every op and
-- tuple with examples in the specs, programs in fuzz_surface.c's byte format that make the
-- example's tensors and call the op with the example's arguments: as given (on cpu), with
-- every tensor's first dim emptied (0), and on autodiff(cpu) with gradients required and a
-- backward through float_sum of the result. The op model comes from the generator itself,
-- so a new op with an example gets its seeds on the next run. Plus a few programs for the
-- other instructions (assign, fallback, OOM, detach).
-- Usage, from the repository root: lua5.4 tests/fuzz/make_corpus_surface.lua [OUTDIR [SPECDIR]]
local outdir = arg[1] or "tests/fuzz/corpus_surface"
local specdir = arg[2] or "specs"
package.path = "gen/?.lua;" .. package.path
local util = require("tdgen.util")
local load = require("tdgen.load")
local validate = require("tdgen.validate")

local entries = {}
for _, sub in ipairs({ { "backends", "backend" }, { "ops", "op" } }) do
  for _, f in ipairs(util.list_lua(specdir .. "/" .. sub[1]) or {}) do
    local es, errs = load.load_file(f, sub[2])
    assert(#errs == 0, table.concat(errs, "\n"))
    for _, e in ipairs(es) do e.dir = specdir; entries[#entries + 1] = e end
  end
end
local model, errs = validate.validate(entries)
assert(#errs == 0, table.concat(errs, "\n"))

local MAKE, CALL, GRAD, BACKWARD, RELEASE, ASSIGN, MISC = 0, 1, 2, 3, 4, 5, 6
local TUPLE_ID0 = 8192 -- FZ_TUPLE_ID0 (fuzz_ops.h)
local CLASS = { float = 0, int = 1, bool = 2 }
local FVALS = { 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 1e30, -1e30, math.huge, -math.huge, 0 / 0, 1e-40, -0.0, 2.0, 0.25 }
local IVALS = { 0, 1, -1, 2, -2, 3, 7, -7, 100, 2147483647, -2147483648, 65536, -65536, 46341, 5, -3 }

local function fbyte(x)
  if x == "nan" then return 11 elseif x == "inf" then return 9 elseif x == "-inf" then return 10 end
  local best, bd = 0, math.huge
  for i, v in ipairs(FVALS) do
    local d = math.abs(v - x)
    if d < bd then best, bd = i - 1, d end
  end
  return best
end

-- One program; nil when an example does not fit the byte format (big shapes, values).
local function program(op, id, ex, variant)
  local b = {}
  local function put(...) for _, x in ipairs({ ... }) do b[#b + 1] = x end end
  local nslot = 0
  local float_slots = {}
  local function make(cls, v)
    local shape = {}
    for i, d in ipairs(v.shape) do shape[i] = d end
    if variant == "empty" and #shape > 0 then shape[1] = 0 end
    if #shape > 4 then return nil end
    local n = 1
    for _, d in ipairs(shape) do
      if d > 8 then return nil end
      n = n * d
    end
    local dev = (variant == "grad" and cls == "float") and 1 or 0
    put(MAKE, CLASS[cls], dev, #shape)
    for _, d in ipairs(shape) do put(d) end
    put(2) -- explicit: a byte per element
    for i = 1, n do
      local x = v.data[i]
      local byte
      if cls == "bool" then byte = x and 1 or 0
      elseif cls == "int" then byte = math.max(-128, math.min(127, x)) % 256
      else
        if type(x) ~= "number" or x ~= x then x = 0 end
        byte = math.floor(math.max(-128, math.min(127, x * 4)) + 0.5) % 256
      end
      put(byte)
    end
    local s = nslot
    nslot = nslot + 1
    if nslot > 10 then return nil end
    put(s)
    if dev == 1 then float_slots[#float_slots + 1] = s end
    return s, #shape
  end
  local argbytes = {}
  local nd_ref
  for _, a in ipairs(op.args) do
    local v = ex[a.name]
    local t = a.t
    if t.tensor then
      local s, nd = make(t.tensor, v)
      if not s then return nil end
      nd_ref = nd_ref or nd
      argbytes[#argbytes + 1] = { s }
    elseif t.list then
      if #v > 5 then return nil end
      local bs = { #v }
      for _, item in ipairs(v) do
        local s, nd = make(t.list, item)
        if not s then return nil end
        nd_ref = nd_ref or nd
        bs[#bs + 1] = s
      end
      argbytes[#argbytes + 1] = bs
    elseif t.array then
      if #v > 8 then return nil end
      local bs = { #v }
      for _, x in ipairs(v) do
        if x < -4 or x > 19 then return nil end
        bs[#bs + 1] = x + 4
      end
      argbytes[#argbytes + 1] = bs
    elseif a.type == "dim" then
      local nd = nd_ref or 0
      local byte = v + nd + 2
      if byte < 0 or byte >= 2 * nd + 4 then return nil end
      argbytes[#argbytes + 1] = { byte }
    elseif a.type == "i64" or a.type == "i32" then
      if v >= -8 and v <= 39 then argbytes[#argbytes + 1] = { v + 8 }
      else
        local idx
        for i, x in ipairs(IVALS) do if x == v then idx = i - 1 end end
        if not idx or a.type ~= "i32" then return nil end
        argbytes[#argbytes + 1] = { 0xF0 + idx }
      end
    elseif a.type == "u64" then argbytes[#argbytes + 1] = { v % 256 }
    elseif a.type == "f32" then argbytes[#argbytes + 1] = { fbyte(v) }
    elseif t.enum then
      local idx = 0
      for i, c in ipairs(t.enum) do if c:match("_([%u%d]+)$"):lower() == v then idx = i - 1 end end
      argbytes[#argbytes + 1] = { idx }
    elseif t.device then argbytes[#argbytes + 1] = { variant == "grad" and 1 or 0 }
    elseif t.group then argbytes[#argbytes + 1] = {}
    else argbytes[#argbytes + 1] = { 0 } end -- host data (a pattern) and host outputs (exact capacity)
  end
  local nouts = op.parts and #op.parts or ((op.returns ~= "host" and op.returns ~= "none") and 1 or 0)
  if variant == "grad" then for _, s in ipairs(float_slots) do put(GRAD, s) end end
  put(CALL, id % 256, id // 256)
  for _, bs in ipairs(argbytes) do put(table.unpack(bs)) end
  for k = 1, nouts do put(10 + k - 1) end
  if variant == "grad" then
    local sum = model.op_by_name.float_sum
    if sum then
      put(CALL, sum.id % 256, sum.id // 256, 10, 9)
      put(BACKWARD, 0, 9, 0)
      for i = 0, 11 do put(i * 2 + 1) end -- keep every gradient, in slots 0..11
    end
  end
  return string.char(table.unpack(b))
end

os.execute("mkdir -p '" .. outdir .. "'")
for f in (io.popen("ls '" .. outdir .. "'"):read("a")):gmatch("[^\n]+") do os.remove(outdir .. "/" .. f) end
local written = 0
local function write(name, bytes)
  local f = assert(io.open(outdir .. "/" .. name, "wb"))
  f:write(bytes)
  f:close()
  written = written + 1
end

local function seeds(op, id, examples)
  local n = 0
  for i, ex in ipairs(examples or {}) do
    for _, variant in ipairs({ "plain", "empty", "grad" }) do
      if variant ~= "grad" or op.is_float or op.float_in then
        local p = program(op, id, ex, variant)
        if p then write(string.format("%s-%d-%s", op.name, i, variant), p); n = n + 1 end
      end
    end
    if n >= 4 then break end
  end
  return n
end

local covered, total, unseeded = 0, 0, {}
for _, op in ipairs(model.ops) do
  total = total + 1
  if seeds(op, op.id, op.examples) > 0 then covered = covered + 1 else unseeded[#unseeded + 1] = op.name end
end
for i, t in ipairs(model.tuples or {}) do
  total = total + 1
  local pseudo = { name = t.name, args = t.args, parts = t.parts, float_in = true }
  if seeds(pseudo, TUPLE_ID0 + i - 1, t.examples) > 0 then covered = covered + 1 else unseeded[#unseeded + 1] = t.name end
end

-- The other instructions, on a float [2,3] leaf (slot 0) and a [2,3] value (slot 1).
local leaf = string.char(MAKE, 0, 1, 2, 2, 3, 1, 7, 0, MAKE, 0, 1, 2, 2, 3, 1, 9, 1, MAKE, 0, 0, 2, 2, 3, 0, 2)
local add = model.op_by_name.float_add
local sum = model.op_by_name.float_sum
local function call2(op, a, b, dst) return string.char(CALL, op.id % 256, op.id // 256, a, b, dst) end
local function call1(op, a, dst) return string.char(CALL, op.id % 256, op.id // 256, a, dst) end
if add and sum then
  write("x-assign-backward", leaf .. string.char(GRAD, 0) .. call2(add, 0, 1, 3) .. call1(sum, 3, 4) ..
    string.char(ASSIGN, 0, 1, ASSIGN, 0, 2, ASSIGN, 1, 0) .. string.char(BACKWARD, 2, 4, 0, 0, 3, 3, 3, 3, 3))
  write("x-oom", leaf .. string.char(GRAD, 0, MISC, 5, 3, 0) .. call2(add, 0, 1, 3) ..
    string.char(MISC, 5, 1, 0) .. call1(sum, 3, 4) .. string.char(BACKWARD, 0, 4, 0))
  write("x-fallback-composites", leaf .. string.char(MISC, 0, 0, 1, MISC, 1, 1, 1) .. call2(add, 0, 2, 3) ..
    string.char(MISC, 0, 1, 2, MISC, 1, 0, 0) .. call2(add, 1, 0, 4))
  write("x-detach-value-context", leaf .. string.char(GRAD, 0, MISC, 2, 0, 5, MISC, 3, 0, 6, MISC, 4, 1, 0,
    MISC, 4, 0, 3, MISC, 7, 0, 8, MISC, 6, 1, 0) .. call2(add, 0, 1, 3) .. call2(add, 5, 6, 4))
end
-- Regressions the fuzzer found.
local unfold = model.op_by_name.float_unfold
if unfold then
  -- float_unfold of a [7, 3] tensor along dim 0, size 1, step 2^62 (byte 0xF4): one window,
  -- whose stride step * 3 overflowed in the kernels (UBSan, cpu_indexing.c)
  write("x-unfold-huge-step", string.char(MAKE, 0, 0, 2, 7, 3, 0, 0, CALL, unfold.id % 256, unfold.id // 256,
    0, 2, 9, 0xF4, 3))
end
io.stderr:write(string.format("make_corpus_surface: %d files; %d of %d ops and tuples seeded from their examples%s\n",
  written, covered, total, #unseeded > 0 and (" (not: " .. table.concat(unseeded, ", ") .. ")") or ""))
