-- Emits the generated cmocka tests of one backend: known values from the specs'
-- examples, the kind, NULL, backend-mismatch and unsupported errors of every op, and (for
-- a backend other than the CPU) each op against the CPU over many shapes (emit_compare.lua).
local util = require("tdgen.util")
local schema = require("tdgen.schema")
local emit_c = require("tdgen.emit_c")
local compare = require("tdgen.emit_compare")

local M = {}
local U = util.upper

local CTYPE = { f32 = "float", i32 = "int32_t", bool = "bool" }
local DT = schema.dtypes

local function is_int(x) return math.type(x) == "integer" or (type(x) == "number" and x == math.floor(x)) end

local function c_float(x)
  if x == "nan" then return "NAN" end
  if x == "inf" then return "INFINITY" end
  if x == "-inf" then return "-INFINITY" end
  local s = string.format("%.9g", x)
  if not s:find("[%.eEn]") then s = s .. ".0" end
  return s .. "f"
end

local function c_value(dtype, x)
  if dtype == "f32" then return c_float(x) end
  if dtype == "bool" then return (x == true or x == 1) and "true" or "false" end
  return string.format("%d", math.tointeger(x) or math.floor(x))
end

local function c_array(dtype, data)
  local parts = {}
  for i, x in ipairs(data) do parts[i] = c_value(dtype, x) end
  if #parts == 0 then parts[1] = dtype == "f32" and "0.0f" or (dtype == "bool" and "false" or "0") end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

local function c_dims(dims)
  local parts = {}
  for i, x in ipairs(dims) do parts[i] = string.format("INT64_C(%d)", math.tointeger(x) or math.floor(x)) end
  if #parts == 0 then return "{ 0 }", 0 end
  return "{ " .. table.concat(parts, ", ") .. " }", #parts
end

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

-- Default values for ops without examples: small, valid for every shape rule we use.
local DEFAULT_TENSOR = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } }
local function default_value(a)
  local t = a.t
  if t.tensor then
    if t.tensor == "bool" then return { shape = { 2, 2 }, data = { true, false, true, false } } end
    return DEFAULT_TENSOR
  end
  if t.list then return { DEFAULT_TENSOR, DEFAULT_TENSOR } end
  if a.type == "shape" then return { 2, 2 } end
  if a.type == "dims" then return {} end
  if a.type == "distribution" then return "uniform" end
  if a.type == "f32" or a.type == "i32" or a.type == "u64" then return 1 end
  if a.type == "i64" or a.type == "dim" then return 0 end
  if t.host_in then return { 1, 2, 3, 4 } end
  return nil
end

-- Emits the declarations of one call's arguments; returns the argument expressions
-- and the names to release. `over` maps an argument name to a replacement:
-- { dtype = "i32" } (another primitive kind), { device = "ad_dev" } or "NULL".
local function emit_args(b, op, ex, over, dev)
  dev = dev or "dev"
  local exprs, owned = {}, {}
  local example = ex or {}
  for _, a in ipairs(op.args) do
    local t, n = a.t, a.name
    local v = example[n]
    if v == nil then v = default_value(a) end
    local o = over[n]
    if o and o.ins then
      if t.list then
        local refs = {}
        for i = 1, #v do refs[i] = string.format("ins[%d]", o.ins + i - 1) end
        b:put("    const td_tensor *%s[] = { %s };", n, table.concat(refs, ", "))
        exprs[#exprs + 1] = n
        exprs[#exprs + 1] = tostring(#v)
      else
        exprs[#exprs + 1] = string.format("ins[%d]", o.ins)
      end
    elseif o == "NULL" then
      exprs[#exprs + 1] = "NULL"
      if t.list or t.array or t.host_out then exprs[#exprs + 1] = t.list and "1" or "0" end
    elseif t.device then
      exprs[#exprs + 1] = (o and o.device) or dev
    elseif t.tensor then
      local dtype = (o and o.dtype) or schema.classes[t.tensor]
      local dims, nd = c_dims(v.shape)
      b:put("    static const int64_t %s_shape[] = %s;", n, dims)
      b:put("    static const %s %s_data[] = %s;", CTYPE[dtype], n,
        (o and o.dtype) and c_array(dtype, {}) or c_array(dtype, v.data))
      if o and o.random then
        b:put("    td_tensor *%s = tdt_own(tdt_random(%s, %s, %s_shape, %d, %du));", n, dev, DT[dtype], n, nd, o.random)
      elseif o and o.dtype then
        b:put("    td_tensor *%s = tdt_own(tdt_filled(%s, %s, %s_shape, %d));", n, (o.device or dev), DT[dtype], n, nd)
      else
        b:put("    td_tensor *%s = tdt_own(tdt_make(%s, %s, %s_data, %s_shape, %d));", n, (o and o.device) or dev, DT[dtype],
          n, n, nd)
      end
      b:put("    (void)%s_data;", n)
      b:put("    assert_non_null(%s);", n)
      owned[#owned + 1] = n
      exprs[#exprs + 1] = n
    elseif t.list then
      local dtype = schema.classes[t.list]
      b:put("    td_tensor *%s_items[%d];", n, #v)
      for i, item in ipairs(v) do
        local dims, nd = c_dims(item.shape)
        local idev = (i == 2 and o and o.device) or dev
        local odt = (i == 1 and o and o.dtype) or nil
        b:put("    static const int64_t %s_%d_shape[] = %s;", n, i, dims)
        if o and o.random then
          b:put("    %s_items[%d] = tdt_own(tdt_random(%s, %s, %s_%d_shape, %d, %du));", n, i - 1, idev, DT[dtype], n, i, nd,
            o.random + i)
        elseif odt then
          b:put("    %s_items[%d] = tdt_own(tdt_filled(%s, %s, %s_%d_shape, %d));", n, i - 1, idev, DT[odt], n, i, nd)
        else
          b:put("    static const %s %s_%d_data[] = %s;", CTYPE[dtype], n, i, c_array(dtype, item.data))
          b:put("    %s_items[%d] = tdt_own(tdt_make(%s, %s, %s_%d_data, %s_%d_shape, %d));", n, i - 1, idev, DT[dtype], n, i, n,
            i, nd)
        end
        b:put("    assert_non_null(%s_items[%d]);", n, i - 1)
        owned[#owned + 1] = string.format("%s_items[%d]", n, i - 1)
      end
      local refs = {}
      for i = 1, #v do refs[i] = string.format("%s_items[%d]", n, i - 1) end
      b:put("    const td_tensor *%s[] = { %s };", n, table.concat(refs, ", "))
      exprs[#exprs + 1] = n
      exprs[#exprs + 1] = tostring(#v)
    elseif t.array then
      local dims, nd = c_dims(v)
      if nd > 0 then b:put("    static const int64_t %s[] = %s;", n, dims) end
      exprs[#exprs + 1] = nd > 0 and n or "NULL"
      exprs[#exprs + 1] = tostring(nd)
    elseif t.host_in then
      b:put("    static const %s %s[] = %s;", CTYPE[t.host_in], n, c_array(t.host_in, v))
      exprs[#exprs + 1] = n
    elseif t.host_out then
      local len = 1
      if ex and ex.out and ex.out.data then len = math.max(1, #ex.out.data) else
        local first = op.args[1]
        local fv = example[first.name] or default_value(first)
        if fv and fv.shape then len = numel(fv.shape) end
      end
      b:put("    %s %s[%d];", CTYPE[t.host_out], n, len)
      b:put("    memset(%s, 0, sizeof %s);", n, n)
      exprs[#exprs + 1] = n
      exprs[#exprs + 1] = tostring(len)
    elseif a.type == "f32" then
      exprs[#exprs + 1] = c_float(v)
    elseif a.type == "i32" then
      exprs[#exprs + 1] = string.format("(int32_t)%d", math.tointeger(v) or math.floor(v))
    elseif a.type == "i64" or a.type == "dim" then
      exprs[#exprs + 1] = string.format("INT64_C(%d)", math.tointeger(v) or math.floor(v))
    elseif a.type == "u64" then
      exprs[#exprs + 1] = string.format("UINT64_C(%d)", math.tointeger(v) or math.floor(v))
    elseif a.type == "distribution" then
      exprs[#exprs + 1] = v == "normal" and "TD_NORMAL" or "TD_UNIFORM"
    else
      error("emit_tests: no value for argument type " .. a.type)
    end
  end
  if schema.classes[op.returns] then exprs[#exprs + 1] = "&out" end
  return exprs, owned
end

-- Every tensor a generated test makes is on the test's cleanup list (tdt_own, in
-- tests/common/tdt.c) until tdt_release lets go of it: a failed check that ends the test
-- early leaves them to the per-test teardown, which releases them, so the failure is
-- reported alone (no false leak, no failed group teardown). Issue 23.
local function release_all(b, owned)
  for _, n in ipairs(owned) do b:put("    tdt_release(%s);", n) end
end

local function first_tensor(op)
  for _, a in ipairs(op.args) do
    if a.t.tensor or a.t.list then return a end
  end
end

local function tensor_count(op)
  local n = 0
  for _, a in ipairs(op.args) do
    if a.t.tensor then n = n + 1 elseif a.t.list then n = n + 2 end
  end
  return n
end

local function second_tensor(op)
  local seen = 0
  for _, a in ipairs(op.args) do
    if a.t.tensor then
      seen = seen + 1
      if seen == 2 then return a end
    elseif a.t.list then
      return a -- its second item moves
    end
  end
end

-- Whether the backend can hold the op's tensors (and `extra`, a dtype), so a test can
-- make its inputs there.
local function can_hold(be, op, extra)
  if extra and not be.dtypes[extra] then return false end
  for _, a in ipairs(op.args) do
    local cls = a.t.tensor or a.t.list
    if cls and not be.dtypes[schema.classes[cls]] then return false end
  end
  local rc = schema.classes[op.returns]
  return rc == nil or be.dtypes[rc] == true
end

-- The end of a generated test program: group fixtures (tdt_open_devices: dev, ad_dev and
-- ad_bal when `bal`; cpu_dev too when `cpu_ref`), the per-test leak check, and main.
local function emit_harness(b, tests, group_name, be, bal, cpu_ref)
  b:put("")
  b:put("static int group_setup(void **state)")
  b:put("{")
  b:put("    (void)state;")
  b:put("    if (tdt_open_devices(TD_BACKEND_%s, &dev, &ad_dev, %s) != 0)", U(be.name), bal and "&ad_bal" or "NULL")
  b:put("        return -1;")
  if cpu_ref then
    b:put("    return td_device_open(TD_BACKEND_CPU, 0, &cpu_dev) == TD_OK ? 0 : -1;")
  else
    b:put("    return 0;")
  end
  b:put("}")
  b:put("")
  b:put("static int group_teardown(void **state)")
  b:put("{")
  b:put("    (void)state;")
  if cpu_ref then b:put("    td_device_release(cpu_dev);") end
  b:put("    return tdt_close_devices(dev, ad_dev, %s);", bal and "ad_bal" or "NULL")
  b:put("}")
  b:put("")
  b:put("int main(void)")
  b:put("{")
  b:put("    /* Every test releases what it made: nothing may outlive it. */")
  b:put("    const struct CMUnitTest tests[] = {")
  for _, t in ipairs(tests) do b:put("        TDT_TEST(%s),", t) end
  b:put("    };")
  b:put("    return cmocka_run_group_tests_name(%s, tests, group_setup, group_teardown);", util.c_string(group_name))
  b:put("}")
end

-- A gradient-check test: inputs { shape, positive ("above_one" or truthy), grad } are the
-- float inputs fwd_<fwd> takes, in order.
local function emit_gradcheck_test(b, name, fwd, inputs, seed)
  b:put("")
  b:put("static void %s(void **state)", name)
  b:put("{")
  b:put("    (void)state;")
  local parts = {}
  for i, inp in ipairs(inputs) do
    local dims, nd = c_dims(inp.shape)
    b:put("    static const int64_t s%d[] = %s;", i, dims)
    parts[i] = string.format("{ s%d, %d, %s, %s }", i, nd,
      inp.positive == "above_one" and "TDT_ABOVE_ONE" or (inp.positive and "true" or "false"),
      inp.grad and "true" or "false")
  end
  b:put("    const tdt_input ins[] = { %s };", table.concat(parts, ", "))
  b:put("    tdt_gradcheck(dev, ad_dev, ad_bal, fwd_%s, ins, %d, %du);", fwd, #inputs, seed)
  b:put("}")
end

-- Tuples (gen/tdgen/tuple.lua): known values of every result, and NULL handling, on a
-- backend that runs every part.
local function emit_tuple_tests(b, model, be, test)
  local tuple = require("tdgen.tuple")
  for _, t in ipairs(model.tuples or {}) do
    if not tuple.how(t, be) then goto continue end
    local op1 = t.parts[1].op
    local call = "td_" .. t.name
    local function results(override)
      local rs = {}
      for _, p in ipairs(t.parts) do rs[#rs + 1] = (override and override[p.result]) or ("&r_" .. p.result) end
      return table.concat(rs, ", ")
    end
    local function args_of(exprs)
      local xs = {}
      for i = 1, #exprs - 1 do xs[i] = exprs[i] end -- drop the part's "&out"
      return xs
    end
    for i, ex in ipairs(t.examples or {}) do
      b:put("")
      b:put("static void %s(void **state)", test(string.format("test_%s_example_%d", t.name, i)))
      b:put("{")
      b:put("    (void)state;")
      for _, p in ipairs(t.parts) do b:put("    td_tensor *r_%s = NULL;", p.result) end
      local exprs, owned = emit_args(b, op1, ex, {})
      local xs = args_of(exprs)
      xs[#xs + 1] = results()
      b:put("    tdt_check(%s(%s), %s);", call, table.concat(xs, ", "), util.c_string(t.name))
      for _, p in ipairs(t.parts) do b:put("    tdt_own(r_%s);", p.result) end
      for _, p in ipairs(t.parts) do
        local cls = schema.classes[p.class]
        local v = ex[p.result]
        local dims, nd = c_dims(v.shape)
        b:put("    static const int64_t want_%s_shape[] = %s;", p.result, dims)
        b:put("    static const %s want_%s[] = %s;", CTYPE[cls], p.result, c_array(cls, v.data))
        b:put("    tdt_expect(r_%s, %s, want_%s_shape, %d, want_%s, %d, %sf);", p.result, DT[cls], p.result, nd,
          p.result, #v.data, string.format("%.9g", t.tolerance))
        b:put("    tdt_release(r_%s);", p.result)
      end
      release_all(b, owned)
      b:put("}")
    end
    local ex1 = t.examples and t.examples[1]
    if ex1 then
      -- NULL: each result pointer, the others preset to a sentinel that must come back
      -- NULL (the header's promise: on an error every result is NULL); then a NULL first
      -- argument, which the first part rejects: every result must come back NULL.
      b:put("")
      b:put("static void %s(void **state)", test("test_" .. t.name .. "_null"))
      b:put("{")
      b:put("    (void)state;")
      for _, p in ipairs(t.parts) do b:put("    td_tensor *r_%s = NULL;", p.result) end
      local exprs, owned = emit_args(b, op1, ex1, {})
      local xs = args_of(exprs)
      for _, p in ipairs(t.parts) do
        for _, q in ipairs(t.parts) do
          if q ~= p then b:put("    r_%s = (td_tensor *)&r_%s;", q.result, q.result) end
        end
        local ys = { table.unpack(xs) }
        ys[#ys + 1] = results({ [p.result] = "NULL" })
        b:put("    tdt_expect_error(%s(%s), TD_E_NULL, %s);", call, table.concat(ys, ", "), util.c_string(t.name))
        for _, q in ipairs(t.parts) do
          if q ~= p then b:put("    assert_null(r_%s);", q.result) end
        end
      end
      release_all(b, owned)
      local first
      for _, a in ipairs(op1.args) do if a.t.tensor then first = a; break end end
      if first then
        b:put("    {") -- the arguments again, in a scope of their own
        local nexprs, nowned = emit_args(b, op1, ex1, { [first.name] = "NULL" })
        local ys = args_of(nexprs)
        ys[#ys + 1] = results()
        b:put("    tdt_expect_error(%s(%s), TD_E_NULL, %s);", call, table.concat(ys, ", "), util.c_string(t.name))
        for _, p in ipairs(t.parts) do b:put("    assert_null(r_%s);", p.result) end
        release_all(b, nowned)
        b:put("    }")
      end
      b:put("}")
    end
    ::continue::
  end
end

-- Gradient checks of a tuple's first differentiable float result, through the tuple
-- (the other results are made and released).
local function emit_tuple_gradchecks(b, model, be, test, compare)
  local tuple = require("tdgen.tuple")
  for _, t in ipairs(model.tuples or {}) do
    local ex1 = t.examples and t.examples[1]
    if not (tuple.how(t, be) and ex1) then goto continue end
    local part
    for _, p in ipairs(t.parts) do
      if p.class == "float" and (p.op.backward or p.op.ad_decomp) then part = p; break end
    end
    if not part then goto continue end
    local g = be.grad[part.op.name]
    if not g or #g.check_missing > 0 then
      b:put("")
      b:put("static void %s(void **state)", test("test_" .. t.name .. "_gradcheck"))
      b:put("{")
      b:put("    (void)state;")
      b:put("    print_message(\"skipped: the gradient check of %s needs %s, which %s does not implement\\n\");",
        t.name, g and table.concat(g.check_missing, ", ") or part.op.name, be.name)
      b:put("    skip();")
      b:put("}")
      goto continue
    end
    local op1 = t.parts[1].op
    local over, inputs, k = {}, {}, 0
    for _, a in ipairs(op1.args) do
      if a.t.tensor == "float" then
        over[a.name] = { ins = k }
        inputs[#inputs + 1] = { shape = ex1[a.name].shape }
        k = k + 1
      end
    end
    if k == 0 then goto continue end
    b:put("")
    b:put("static td_status fwd_%s(td_device *d, td_tensor *const *ins, td_tensor **out)", t.name)
    b:put("{")
    b:put("    (void)d;")
    local rs = {}
    for _, p in ipairs(t.parts) do
      if p == part then rs[#rs + 1] = "out" else
        b:put("    td_tensor *r_%s = NULL;", p.result)
        rs[#rs + 1] = "&r_" .. p.result
      end
    end
    local exprs, owned = emit_args(b, op1, ex1, over, "d")
    local xs = {}
    for i = 1, #exprs - 1 do xs[i] = exprs[i] end
    for _, r in ipairs(rs) do xs[#xs + 1] = r end
    b:put("    td_status st = td_%s(%s);", t.name, table.concat(xs, ", "))
    for _, p in ipairs(t.parts) do
      if p ~= part then b:put("    td_tensor_release(r_%s);", p.result) end
    end
    release_all(b, owned)
    b:put("    return st;")
    b:put("}")
    emit_gradcheck_test(b, test("test_" .. t.name .. "_gradcheck"), t.name, inputs, compare.seed_of("g" .. t.name))
    ::continue::
  end
end

function M.ops_tests(model, be, specs_note)
  local b = util.buffer()
  local tests = {}
  local function test(name) tests[#tests + 1] = name; return name end
  local vs_cpu = be.name ~= "cpu" and model.backend_by_name.cpu ~= nil
  b:put("/* Generated tests of the %s backend: known values, error paths%s of every op.", be.name,
    vs_cpu and " and many-shape comparisons with the CPU" or "")
  b:put(" * Generated by gen/tdgen.lua from %s. Do not edit: change the specs", specs_note)
  b:put(" * or the generator and rebuild (or run the `regenerate` target). */")
  b:put("#include <math.h>")
  b:put("#include <setjmp.h>")
  b:put("#include <stdarg.h>")
  b:put("#include <stdbool.h>")
  b:put("#include <stddef.h>")
  b:put("#include <stdint.h>")
  b:put("#include <string.h>")
  b:put("#include <cmocka.h>")
  b:put("")
  b:put("#include \"td_ops.h\"")
  b:put("#include \"tdt.h\"")
  b:put("")
  b:put("static td_device *dev;    /* the %s device under test */", be.name)
  b:put("static td_device *ad_dev; /* autodiff(%s): another kind, for mismatch errors */", be.name)
  if vs_cpu then b:put("static td_device *cpu_dev; /* the reference */") end
  local emitted = {} -- ops whose cmp_<op> call is in the file
  for _, op in ipairs(model.ops) do
    if op.family == "distributed" then goto continue end -- needs a process group: tests/dist
    local impl = be.runs[op.name]
    local has_out = schema.classes[op.returns] ~= nil
    local call = "td_" .. op.name
    -- Known values.
    if impl and op.examples then
      for i, ex in ipairs(op.examples) do
        b:put("")
        b:put("static void %s(void **state)", test(string.format("test_%s_example_%d", op.name, i)))
        b:put("{")
        b:put("    (void)state;")
        if has_out then b:put("    td_tensor *out = NULL;") end
        local exprs, owned = emit_args(b, op, ex, {})
        b:put("    tdt_check(%s(%s), %s);", call, table.concat(exprs, ", "), util.c_string(op.name))
        if has_out then
          b:put("    tdt_own(out);")
          local cls = schema.classes[op.returns]
          local dims, nd = c_dims(ex.out.shape or {})
          b:put("    static const int64_t want_shape[] = %s;", dims)
          b:put("    static const %s want[] = %s;", CTYPE[cls], c_array(cls, ex.out.data or {}))
          b:put("    tdt_expect(out, %s, want_shape, %d, want, %d, %sf);", DT[cls], nd, #(ex.out.data or {}),
            string.format("%.9g", op.tolerance))
          b:put("    tdt_release(out);")
        elseif op.returns == "host" then
          local host
          for _, a in ipairs(op.args) do if a.t.host_out then host = a end end
          local dt = host.t.host_out
          b:put("    static const %s want[] = %s;", CTYPE[dt], c_array(dt, ex.out.data or {}))
          b:put("    tdt_expect_host(%s, %s, want, %d, %sf);", DT[dt], host.name, #(ex.out.data or {}),
            string.format("%.9g", op.tolerance))
        end
        release_all(b, owned)
        b:put("}")
      end
    end
    local ex1 = op.examples and op.examples[1] or nil
    -- Views: the result shares the storage (released in any order, written through, moved).
    if op.view and impl and ex1 and can_hold(be, op) then
      local a1 = op.args[1]
      local cls = schema.classes[a1.t.tensor]
      b:put("")
      b:put("static td_status view_%s(const td_tensor *const *ins, td_tensor **view)", op.name)
      b:put("{")
      b:put("    td_tensor *out = NULL;")
      local exprs = emit_args(b, op, ex1, { [a1.name] = { ins = 0 } })
      b:put("    const td_status st = %s(%s);", call, table.concat(exprs, ", "))
      b:put("    *view = out;")
      b:put("    return st;")
      b:put("}")
      local dims, nd = c_dims(ex1[a1.name].shape)
      -- The helpers get the class's reshape and slice_assign from here, so a selective
      -- build without them still links (the checks that need them are not emitted).
      local function built(name) return be.runs[name] and (model.selected == nil or model.selected[name]) end
      local reshape, assign = a1.t.tensor .. "_reshape", a1.t.tensor .. "_slice_assign"
      local checks = {}
      if built(reshape) then
        checks[#checks + 1] = { "view", "tdt_view_checks(dev", "td_" .. reshape }
        checks[#checks + 1] = { "view_on_autodiff", "tdt_view_checks(ad_dev", "td_" .. reshape }
      end
      if built(assign) then
        checks[#checks + 1] = { "view_write", "tdt_view_write_checks(dev", "td_" .. assign }
      end
      if built(a1.t.tensor .. "_to_device") then
        checks[#checks + 1] = { "view_move", "tdt_view_move_checks(dev, " .. (vs_cpu and "cpu_dev" or "ad_dev") }
      end
      for i, c in ipairs(checks) do
        b:put("")
        b:put("static void %s(void **state)", test(string.format("test_%s_%s", op.name, c[1])))
        b:put("{")
        b:put("    (void)state;")
        b:put("    static const int64_t shape[] = %s;", dims)
        b:put("    %s, %s, shape, %d, view_%s, %s%du);", c[2], DT[cls], nd, op.name, c[3] and (c[3] .. ", ") or "",
          40 + i)
        b:put("}")
      end
    end
    -- NULL: the first pointer argument.
    local nullable
    for _, a in ipairs(op.args) do
      if a.t.tensor or a.t.list or a.t.device or a.t.host_in or a.t.host_out then nullable = a; break end
    end
    if nullable and can_hold(be, op) then
      b:put("")
      b:put("static void %s(void **state)", test("test_" .. op.name .. "_null"))
      b:put("{")
      b:put("    (void)state;")
      if has_out then b:put("    td_tensor *out = NULL;") end
      local exprs, owned = emit_args(b, op, ex1, { [nullable.name] = "NULL" })
      b:put("    tdt_expect_error(%s(%s), TD_E_NULL, %s);", call, table.concat(exprs, ", "), util.c_string(op.name))
      if has_out then b:put("    assert_null(tdt_own(out));") end
      release_all(b, owned)
      b:put("}")
    end
    -- Wrong primitive kind: the first tensor argument gets another class.
    local ft = first_tensor(op)
    if ft and can_hold(be, op, (ft.t.tensor or ft.t.list) == "float" and "i32" or "f32") then
      local cls = ft.t.tensor or ft.t.list
      local wrong = cls == "float" and "i32" or "f32"
      b:put("")
      b:put("static void %s(void **state)", test("test_" .. op.name .. "_wrong_kind"))
      b:put("{")
      b:put("    (void)state;")
      if has_out then b:put("    td_tensor *out = NULL;") end
      local exprs, owned = emit_args(b, op, ex1, { [ft.name] = { dtype = wrong } })
      b:put("    tdt_expect_error(%s(%s), TD_E_KIND, %s);", call, table.concat(exprs, ", "), util.c_string(op.name))
      if has_out then b:put("    assert_null(tdt_own(out));") end
      release_all(b, owned)
      b:put("}")
    end
    -- Backend mismatch: the second tensor lives on another kind.
    if tensor_count(op) >= 2 and can_hold(be, op) then
      local st = second_tensor(op)
      b:put("")
      b:put("static void %s(void **state)", test("test_" .. op.name .. "_backend_mismatch"))
      b:put("{")
      b:put("    (void)state;")
      if has_out then b:put("    td_tensor *out = NULL;") end
      local exprs, owned = emit_args(b, op, ex1, { [st.name] = { device = "ad_dev" } })
      b:put("    tdt_expect_error(%s(%s), TD_E_BACKEND_MISMATCH, %s);", call, table.concat(exprs, ", "),
        util.c_string(op.name))
      if has_out then b:put("    assert_null(tdt_own(out));") end
      release_all(b, owned)
      b:put("}")
    end
    -- Another backend against the CPU over many shapes (gen/tdgen/emit_compare.lua).
    if compare.applies(model, be, op) then compare.emit(b, model, be, op, test, emitted) end
    if compare.applies_composite(model, be, op) then compare.emit(b, model, be, op, test, emitted, true) end
    -- Zero-size tensors: on the device and on autodiff over it, against the CPU.
    if compare.applies_empty(be, op) then
      compare.emit_empty(b, model, be, op, test, vs_cpu and "cpu_dev" or "dev", emitted)
    end
    -- Not implemented by this backend: the generated arm says so.
    if not impl and can_hold(be, op) and (ex1 or op.family == "creation" or op.family == "device") then
      b:put("")
      b:put("static void %s(void **state)", test("test_" .. op.name .. "_unsupported"))
      b:put("{")
      b:put("    (void)state;")
      if has_out then b:put("    td_tensor *out = NULL;") end
      local exprs, owned = emit_args(b, op, ex1, {})
      b:put("    tdt_expect_error(%s(%s), TD_E_UNSUPPORTED, %s);", call, table.concat(exprs, ", "),
        util.c_string(op.name))
      b:put("    assert_non_null(strstr(td_last_error(), %s));", util.c_string("'" .. be.name .. "'"))
      release_all(b, owned)
      b:put("}")
    end
    ::continue::
  end
  emit_tuple_tests(b, model, be, test)
  emit_harness(b, tests, "ops_" .. be.name, be, false, vs_cpu)
  return b:text()
end


-- The generated autodiff tests of one inner backend: for every differentiable op a
-- finite-difference gradient check (NONE and BALANCED), for every op with float inputs
-- the context guard, and the context-merge rules on every family with autodiff arms.
function M.autodiff_tests(model, be, specs_note)
  local b = util.buffer()
  local tests = {}
  local function test(name) tests[#tests + 1] = name; return name end
  b:put("/* Generated autodiff tests over the %s backend: gradient checks, the guard, context merges.", be.name)
  b:put(" * Generated by gen/tdgen.lua from %s. Do not edit: change the specs", specs_note)
  b:put(" * or the generator and rebuild (or run the `regenerate` target). */")
  for _, h in ipairs({ "math.h", "setjmp.h", "stdarg.h", "stdbool.h", "stddef.h", "stdint.h", "string.h", "cmocka.h" }) do
    b:put("#include <%s>", h)
  end
  b:put("")
  b:put("#include \"td_ops.h\"")
  b:put("#include \"tdt.h\"")
  b:put("")
  b:put("static td_device *dev;    /* the %s device */", be.name)
  b:put("static td_device *ad_dev; /* autodiff(%s), NONE */", be.name)
  b:put("static td_device *ad_bal; /* autodiff(%s), BALANCED */", be.name)
  local disabled = "(td_autodiff_context){ .enabled = false, .strategy = TD_CHECKPOINT_NONE }"
  for _, op in ipairs(model.ops) do
    if op.family == "distributed" then goto continue end -- needs a process group: tests/dist
    local ex1 = op.examples and op.examples[1] or nil
    local has_out = schema.classes[op.returns] ~= nil
    local call = "td_" .. op.name
    local grads = op.backward ~= nil or op.ad_decomp
    if be.runs[op.name] and grads and not (can_hold(be, op) and ex1) then
      -- A gradient check that cannot be generated says why and counts as skipped.
      b:put("")
      b:put("static void %s(void **state)", test("test_" .. op.name .. "_gradcheck"))
      b:put("{")
      b:put("    (void)state;")
      b:put("    print_message(\"skipped: %s has no example to take input shapes from\\n\");", op.name)
      b:put("    skip();")
      b:put("}")
    end
    if be.runs[op.name] and can_hold(be, op) and ex1 then
      -- Gradient check, where the backend has every op the check, the engine and the
      -- formulas run (gen/tdgen/needs.lua); otherwise a test that reports the skip.
      local g = grads and be.grad[op.name] or nil
      local runs = g ~= nil and #g.check_missing == 0
      if g and not runs then
        b:put("")
        b:put("static void %s(void **state)", test("test_" .. op.name .. "_gradcheck"))
        b:put("{")
        b:put("    (void)state;")
        b:put("    print_message(\"skipped: the gradient check of %s needs %s, which %s does not implement\\n\");",
          op.name, table.concat(g.check_missing, ", "), be.name)
        b:put("    skip();")
        b:put("}")
      end
      if runs then
        local over, inputs, k = {}, {}, 0
        for _, a in ipairs(op.args) do
          if a.t.tensor == "float" then
            over[a.name] = { ins = k }
            inputs[#inputs + 1] = { shape = ex1[a.name].shape, positive = op.fields.gradcheck and op.fields.gradcheck[a.name] }
            k = k + 1
          elseif a.t.list == "float" then
            over[a.name] = { ins = k }
            for _, item in ipairs(ex1[a.name]) do inputs[#inputs + 1] = { shape = item.shape }; k = k + 1 end
          end
        end
        b:put("")
        b:put("static td_status fwd_%s(td_device *d, td_tensor *const *ins, td_tensor **out)", op.name)
        b:put("{")
        b:put("    (void)d;")
        local exprs, owned = emit_args(b, op, ex1, over, "d")
        b:put("    td_status st = %s(%s);", call, table.concat(exprs, ", "):gsub("&out", "out"))
        release_all(b, owned)
        b:put("    return st;")
        b:put("}")
        emit_gradcheck_test(b, test("test_" .. op.name .. "_gradcheck"), op.name, inputs, compare.seed_of("g" .. op.name))
        -- The same with zero-size inputs (or an empty result): backward runs, and every
        -- float input with a formula gets a gradient of its own shape.
        local zex = compare.empty_gradcheck_case(op)
        if zex then
          local zover, zins, zk = {}, {}, 0
          local has_formula = {}
          for n in pairs(op.fields.backward or {}) do has_formula[n] = true end
          if op.ad_decomp then -- differentiated through its pieces: every float input
            for _, a in ipairs(op.args) do
              if a.t.tensor == "float" or a.t.list == "float" then has_formula[a.name] = true end
            end
          end
          for _, a in ipairs(op.args) do
            if a.t.tensor == "float" then
              zover[a.name] = { ins = zk }
              zins[#zins + 1] = { shape = zex[a.name].shape, positive = op.fields.gradcheck and op.fields.gradcheck[a.name],
                grad = has_formula[a.name] }
              zk = zk + 1
            elseif a.t.list == "float" then
              zover[a.name] = { ins = zk }
              for _, item in ipairs(zex[a.name]) do
                zins[#zins + 1] = { shape = item.shape, grad = has_formula[a.name] }
                zk = zk + 1
              end
            end
          end
          b:put("")
          b:put("static td_status fwd_%s_empty(td_device *d, td_tensor *const *ins, td_tensor **out)", op.name)
          b:put("{")
          b:put("    (void)d;")
          local zexprs, zowned = emit_args(b, op, zex, zover, "d")
          b:put("    td_status st = %s(%s);", call, table.concat(zexprs, ", "):gsub("&out", "out"))
          release_all(b, zowned)
          b:put("    return st;")
          b:put("}")
          emit_gradcheck_test(b, test("test_" .. op.name .. "_gradcheck_empty"), op.name .. "_empty", zins,
            op.decl_index * 7919 + 1)
        end
      end
      -- The guard: the first float input loses its context.
      local guarded
      for _, a in ipairs(op.args) do
        if a.t.tensor == "float" or a.t.list == "float" then guarded = a; break end
      end
      if guarded then
        b:put("")
        b:put("static void %s(void **state)", test("test_" .. op.name .. "_guard"))
        b:put("{")
        b:put("    (void)state;")
        if has_out then b:put("    td_tensor *out = NULL;") end
        local exprs, owned = emit_args(b, op, ex1, {}, "ad_dev")
        local target = guarded.t.list and (guarded.name .. "_items[0]") or guarded.name
        b:put("    tdt_check(td_tensor_set_autodiff_context(%s, %s), \"set context\");", target, disabled)
        b:put("    assert_int_equal(%s(%s), TD_E_AUTODIFF_CONTEXT);", call, table.concat(exprs, ", "))
        b:put("    assert_string_equal(td_last_error(), TDT_GUARD_MESSAGE);")
        if has_out then b:put("    assert_null(tdt_own(out));") end
        release_all(b, owned)
        b:put("}")
      end
      -- Context merges, where an op combines several tensors.
      if tensor_count(op) >= 2 and op.family ~= "multi" then
        local ts = {}
        for _, a in ipairs(op.args) do if a.t.tensor then ts[#ts + 1] = a end end
        local first, second = ts[1], ts[2]
        local floats = first.t.tensor == "float" and second.t.tensor == "float"
        if floats then
          b:put("")
          b:put("static void %s(void **state)", test("test_" .. op.name .. "_merge_none_balanced"))
          b:put("{")
          b:put("    (void)state;")
          if has_out then b:put("    td_tensor *out = NULL;") end
          local exprs, owned = emit_args(b, op, ex1, { [second.name] = { device = "ad_bal" } }, "ad_dev")
          b:put("    assert_int_equal(%s(%s), TD_E_AUTODIFF_CONTEXT);", call, table.concat(exprs, ", "))
          b:put("    assert_non_null(strstr(td_last_error(), \"NONE\"));")
          b:put("    assert_non_null(strstr(td_last_error(), \"BALANCED\"));")
          if has_out then b:put("    assert_null(tdt_own(out));") end
          release_all(b, owned)
          b:put("}")
        end
        -- DISABLED joins ENABLED: a tensor the guard does not cover loses its context.
        local plain
        for _, a in ipairs(ts) do if a.t.tensor ~= "float" then plain = a; break end end
        if plain then
          b:put("")
          b:put("static void %s(void **state)", test("test_" .. op.name .. "_merge_disabled_enabled"))
          b:put("{")
          b:put("    (void)state;")
          if has_out then b:put("    td_tensor *out = NULL;") end
          local exprs, owned = emit_args(b, op, ex1, {}, "ad_dev")
          b:put("    tdt_check(td_tensor_set_autodiff_context(%s, %s), \"set context\");", plain.name, disabled)
          b:put("    tdt_check(%s(%s), %s);", call, table.concat(exprs, ", "), util.c_string(op.name))
          if has_out then
            b:put("    tdt_own(out);")
            b:put("    td_autodiff_context ctx;")
            b:put("    tdt_check(td_tensor_autodiff_context(out, &ctx), \"context\");")
            b:put("    assert_true(ctx.enabled);")
            b:put("    tdt_release(out);")
          end
          release_all(b, owned)
          b:put("}")
        end
      end
    end
    ::continue::
  end
  emit_tuple_gradchecks(b, model, be, test, compare)
  emit_harness(b, tests, "autodiff_" .. be.name, be, true, false)
  return b:text()
end

return M
