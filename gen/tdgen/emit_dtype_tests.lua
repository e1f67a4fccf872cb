-- Emits test_dtypes_<backend>.c: the per-dtype comparisons (docs/dtypes.md section 4,
-- docs/comparisons.md "Per dtype"). For every op x dtype cell the backend claims in
-- SUPPORT.md's dtype tables (native, via f32 or composite) outside the class defaults
-- (f32, i32, bool: the plain comparisons cover those), a few of the op's many-shape cases
-- run with the inputs of the dtype's class brought into the dtype (the test's own
-- rounding), against the CPU on the same values in f32 / i32 (f64 where the CPU computes
-- the op in f64 and the device is not the CPU), with the dtype's NMSE bound
-- (specs/dtypes.lua) or the op's `dtype_nmse`. Cells are read from the backend spec's
-- dtype declarations, so a backend that comes to store a dtype gets its cases here.
local util = require("tdgen.util")
local schema = require("tdgen.schema")
local compare = require("tdgen.emit_compare")
local support = require("tdgen.emit_support")

local M = {}

-- The subset per op (the suite's time; the range of f16): cases whose every input tensor
-- has at most MAX_ELEMENTS elements, so that no sum, product sum or prefix sum of inputs
-- below 2 in magnitude (clean fill) or in {-1, 0, 0.5, 1, 2} (ties) passes f16's 65,504
-- (10,007 x 2 x 2 = 40,028 for a dot product); then one case per fill (edges, ties,
-- clean), the one of the most dims (then the most elements) of each, up to CASES.
M.MAX_ELEMENTS = 10007
M.CASES = 3

-- The cases of op for the dtype comparisons, or nil and why there are none.
function M.pick(op, cases)
  local fits = {}
  for _, c in ipairs(cases) do
    local ok = not c.want
    for _, a in ipairs(op.args) do
      local v = c.v[a.name]
      if a.t.tensor and v then ok = ok and compare.numel(v) <= M.MAX_ELEMENTS end
      if a.t.list and v then
        for _, s in ipairs(v) do ok = ok and compare.numel(s) <= M.MAX_ELEMENTS end
      end
    end
    if ok then fits[#fits + 1] = c end
  end
  local function size(c)
    local nd, n = 0, 0
    for _, a in ipairs(op.args) do
      local v = c.v[a.name]
      if a.t.tensor and v then nd = math.max(nd, #v); n = n + compare.numel(v) end
      if a.t.list and v then
        for _, s in ipairs(v) do nd = math.max(nd, #s); n = n + compare.numel(s) end
      end
    end
    return nd, n
  end
  local function better(a, b)
    local an, ae = size(a)
    local bn, be = size(b)
    if an ~= bn then return an > bn end
    return ae > be
  end
  local picked, used = {}, {}
  for _, fill in ipairs({ "EDGES", "TIES", "CLEAN" }) do
    local best
    for _, c in ipairs(fits) do
      if c.fill == fill and (not best or better(c, best)) then best = c end
    end
    if best then picked[#picked + 1] = best; used[best] = true end
  end
  -- fewer fills than CASES: the next largest of the rest
  while #picked < M.CASES do
    local best
    for _, c in ipairs(fits) do
      if not used[c] and (not best or better(c, best)) then best = c end
    end
    if not best then break end
    picked[#picked + 1] = best
    used[best] = true
  end
  while #picked > M.CASES do picked[#picked] = nil end
  if #picked == 0 then
    return nil, string.format("no case of the shape rule '%s' has inputs of at most %d elements", op.rule.name,
      M.MAX_ELEMENTS)
  end
  return picked
end

-- i64 inputs scaled by 2^shift (tdt.h): 32 for ops of degree 1 in their ints (sums,
-- comparisons, moves and views), 16 for degree 2 (products); nil: not scaled.
function M.shift(op)
  local deg = op.fields.int_degree
  if deg == nil and (op.view or op.family == "to_device") then deg = 1 end
  if deg == 1 then return 32 elseif deg == 2 then return 16 end
  return nil
end

-- i8 / u8 cells: the bit mask of op's tdt_case ints (the order of the generated call's
-- c->cs->i) that are int values (i32 arguments) the op converts to the tensor's dtype
-- modulo 2^n, so that the test brings them into the dtype for both sides as it does the
-- tensors; exponents and shift counts are counts, not values, and stay as they are.
function M.wrap_ints(op, d)
  if d ~= "i8" and d ~= "u8" then return 0 end
  local mask, ni = 0, 0
  for _, a in ipairs(op.args) do
    local t = a.t
    if not (t.tensor or t.list or t.device or t.array or t.host_in or t.host_out or a.type == "f32") then
      if a.type == "i32" and a.name ~= "exponent" and not op.name:find("shift") then mask = mask | (1 << ni) end
      ni = ni + 1
    end
  end
  return mask
end

-- The class of op's result (nil without one), and whether it is host data.
local function result_class(op)
  if schema.classes[op.returns] then return op.returns, false end
  for _, a in ipairs(op.args) do
    if a.t.host_out then return schema.dtype_by_name[a.t.host_out].class, true end
  end
end

-- The reference dtype, the result dtypes and the NMSE bound of op's cell (be, d).
function M.cell_desc(model, be, op, d)
  local row = schema.dtype_by_name[d]
  local cls = row.class
  local ref = schema.classes[cls]
  local cpu = model.backend_by_name.cpu
  if d == "f64" and be.name ~= "cpu" and cpu.dtypes.f64 and support.dtype_cell(op, cpu, "f64") ~= "-" then
    ref = "f64"
  end
  local rcls, host = result_class(op)
  local out, ref_out
  if host then
    local hd = nil
    for _, a in ipairs(op.args) do if a.t.host_out then hd = a.t.host_out end end
    out, ref_out = hd, hd
  elseif rcls == cls then
    out, ref_out = d, ref
  else
    out, ref_out = schema.classes[rcls], schema.classes[rcls]
  end
  local op_nmse = op.fields.nmse or compare.DEFAULT_NMSE
  local nmse = 0
  local over = op.fields.dtype_nmse
  if over and over[d] then
    nmse = over[d]
  elseif cls == "float" then
    -- the dtype's bound (f64's also on the CPU, against its f32 kernel: the f32 result's
    -- own rounding, NMSE below 1e-13 over these cases, stays well under it)
    nmse = row.nmse or op_nmse
  end
  return { ref = ref, out = out, ref_out = ref_out, nmse = nmse }
end

-- Every (op, dtype) cell of be: { op, d, how } to generate, and the cells not generated
-- with their reason (counted and printed by the test).
function M.cells(model, be)
  local out, left = {}, {}
  support.use_model(model)
  for _, op in ipairs(model.ops) do
    local cls = support.dtype_class(op)
    if cls and cls ~= "bool" then
      for _, r in ipairs(schema.dtype_rows) do
        if r.class == cls and not r.default and be.dtypes[r.name] then
          local how = support.dtype_cell(op, be, r.name)
          if how ~= "-" then
            local why
            if how == "twin" then
              why = "creation ops' _dtype twins (tests/runtime/test_dtype.c)"
            elseif op.family == "distributed" then
              why = "distributed ops (they need a process group: tests/dist)"
            elseif r.quantized then
              why = "quantized dtypes (no rounding rule in the generator yet)"
            elseif not (schema.classes[op.returns] or op.returns == "host") then
              why = "ops without a result"
            end
            if why then
              left[why] = (left[why] or 0) + 1
            else
              out[#out + 1] = { op = op, d = r.name, how = how }
            end
          end
        end
      end
    end
  end
  return out, left
end

function M.tests(model, be, specs_note)
  local b = util.buffer()
  local tests = {}
  local cells, left = {}, {}
  if model.backend_by_name.cpu then cells, left = M.cells(model, be) end -- the reference
  b:put("/* Generated per-dtype comparisons of the %s backend against the CPU (docs/comparisons.md).", be.name)
  b:put(" * Generated by gen/tdgen.lua from %s. Do not edit: change the specs", specs_note)
  b:put(" * or the generator and rebuild (or run the `regenerate` target). */")
  for _, h in ipairs({ "math.h", "setjmp.h", "stdarg.h", "stdbool.h", "stddef.h", "stdint.h", "string.h",
    "cmocka.h" }) do
    b:put("#include <%s>", h)
  end
  b:put("")
  b:put("#include \"td_ops.h\"")
  b:put("#include \"tdt.h\"")
  b:put("")
  b:put("static td_device *dev;     /* the %s device under test */", be.name)
  b:put("static td_device *ad_dev;  /* opened with it (unused) */")
  b:put("static td_device *cpu_dev; /* the reference */")
  local emitted, per_dtype = {}, {}
  for _, c in ipairs(cells) do
    local op, d = c.op, c.d
    local name = string.format("test_%s_%s_vs_cpu", op.name, d)
    tests[#tests + 1] = name
    per_dtype[d] = (per_dtype[d] or 0) + 1
    local why = compare.why_not(model, be, op)
    local cases, rows
    if not why then
      cases, why = compare.cases_of(op), nil
      if not cases then why = "no many-shape cases for the shape rule (gen/tdgen/emit_compare.lua)" end
    end
    if not why then cases, why = M.pick(op, cases) end
    if not why then
      if op.family == "to_device" then
        for i, cs in ipairs(cases) do
          cs.route = ({ "TDT_ROUTE_SAME", "TDT_ROUTE_TO_CPU", "TDT_ROUTE_FROM_CPU" })[(i - 1) % 3 + 1]
        end
      end
      rows = {}
      for i, cs in ipairs(cases) do
        local row, err = compare.case_row(op, cs)
        if not row then why = err; break end
        rows[i] = row
      end
    end
    b:put("")
    if why then
      b:put("static void %s(void **state)", name)
      b:put("{")
      b:put("    (void)state;")
      b:put("    tdt_compare_skip(%s, %s);", util.c_string(op.name .. " in " .. d), util.c_string(why))
      b:put("}")
    else
      compare.emit_call(b, op, emitted)
      if not emitted["dcases " .. op.name] then
        emitted["dcases " .. op.name] = true
        b:put("")
        b:put("static const tdt_case dcases_%s[] = {", op.name)
        for _, r in ipairs(rows) do b:put("    %s,", r) end
        b:put("};")
        b:put("")
      end
      local cd = M.cell_desc(model, be, op, d)
      local shifts = { 0 }
      if d == "i64" and M.shift(op) then shifts[2] = M.shift(op) end
      b:put("/* %s in %s: %s on %s; reference: the cpu in %s */", op.name, d, c.how, be.name, cd.ref)
      b:put("static void %s(void **state)", name)
      b:put("{")
      b:put("    (void)state;")
      compare.emit_desc(b, op)
      for i, s in ipairs(shifts) do
        local wrap = M.wrap_ints(op, d)
        b:put("    static const tdt_dtype_desc dd%d = { .dtype = %s, .ref = %s, .out = %s, .ref_out = %s, .shift = %d, "
          .. ".nmse = %s%s };", i, schema.dtypes[d], schema.dtypes[cd.ref], schema.dtypes[cd.out],
          schema.dtypes[cd.ref_out], s, string.format("%.9g", cd.nmse),
          wrap ~= 0 and string.format(", .wrap_ints = 0x%xu", wrap) or "")
      end
      for i = 1, #shifts do
        b:put("    tdt_compare_dtype(dev, cpu_dev, &desc, &dd%d, dcases_%s, (int)(sizeof dcases_%s / sizeof dcases_%s[0]));",
          i, op.name, op.name, op.name)
      end
      b:put("}")
    end
  end
  -- The counts, printed by every run.
  local parts = {}
  for _, r in ipairs(schema.dtype_rows) do
    if per_dtype[r.name] then parts[#parts + 1] = string.format("%s %d", r.name, per_dtype[r.name]) end
  end
  local reasons = {}
  for k in pairs(left) do reasons[#reasons + 1] = k end
  table.sort(reasons)
  local lparts, nleft = {}, 0
  for _, k in ipairs(reasons) do
    lparts[#lparts + 1] = string.format("%d %s", left[k], k)
    nleft = nleft + left[k]
  end
  local summary = string.format("%s: %d op x dtype cells beyond f32, i32 and bool compared with the cpu (%s); %d " ..
    "claimed cells not generated%s", be.name, #cells, #parts > 0 and table.concat(parts, ", ") or "none",
    nleft, nleft > 0 and (": " .. table.concat(lparts, "; ")) or "")
  if #cells == 0 then
    tests[#tests + 1] = "test_no_dtype_cells"
    b:put("")
    b:put("static void test_no_dtype_cells(void **state)")
    b:put("{")
    b:put("    (void)state;")
    b:put("    print_message(\"%%s\\n\", %s);", util.c_string(model.backend_by_name.cpu and (be.name ..
      " stores no dtype beyond f32, i32 and bool (its spec's dtypes): nothing to compare") or
      "no cpu backend in the specs: no reference to compare with"))
    b:put("    skip();")
    b:put("}")
  end
  b:put("")
  b:put("static int group_setup(void **state)")
  b:put("{")
  b:put("    (void)state;")
  b:put("    print_message(\"%%s\\n\", %s);", util.c_string(summary))
  b:put("    if (tdt_open_devices(TD_BACKEND_%s, &dev, &ad_dev, NULL) != 0)", be.name:upper())
  b:put("        return -1;")
  b:put("    return td_device_open(TD_BACKEND_CPU, 0, &cpu_dev) == TD_OK ? 0 : -1;")
  b:put("}")
  b:put("")
  b:put("static int group_teardown(void **state)")
  b:put("{")
  b:put("    (void)state;")
  b:put("    td_device_release(cpu_dev);")
  b:put("    return tdt_close_devices(dev, ad_dev, NULL);")
  b:put("}")
  b:put("")
  b:put("int main(void)")
  b:put("{")
  b:put("    const struct CMUnitTest tests[] = {")
  for _, t in ipairs(tests) do b:put("        TDT_TEST(%s),", t) end
  b:put("    };")
  b:put("    return cmocka_run_group_tests_name(%s, tests, group_setup, group_teardown);",
    util.c_string("dtypes_" .. be.name))
  b:put("}")
  return b:text()
end

return M
