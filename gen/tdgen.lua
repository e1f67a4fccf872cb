-- tdgen: reads backend and op specs and emits tdispatch's C dispatch layer.
-- Pure Lua 5.4; run `lua5.4 gen/tdgen.lua --help`.
local here = (arg and arg[0] or ""):match("^(.*)[/\\][^/\\]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local util = require("tdgen.util")
local load = require("tdgen.load")
local validate = require("tdgen.validate")
local emit_c = require("tdgen.emit_c")
local emit_support = require("tdgen.emit_support")
local emit_api = require("tdgen.emit_api")
local emit_tests = require("tdgen.emit_tests")
local needs = require("tdgen.needs")
local emit_fuzz = require("tdgen.emit_fuzz")
local emit_python = require("tdgen.emit_python")

local USAGE = [[
usage: lua5.4 gen/tdgen.lua --specs DIR [--specs DIR ...] [--extra-specs DIR ...]
                           (--out DIR | --check DIR | --list | --backends | --needs | --reach LIST)

  --specs DIR    a spec directory holding backends/*.lua and/or ops/*.lua;
                 repeat it to combine directories (their files are merged)
  --extra-specs DIR  a spec directory of out-of-tree backends (CMake's TD_EXTRA_SPECS):
                 merged like --specs, but its backends must take ids from 32 to 62
  --out DIR      write the generated files into DIR (created if missing); files
                 whose content did not change are left untouched
  --check DIR    compare DIR with what would be generated; exit 1 and name each
                 file that differs or is missing
  --list         print one line per op: name, family, backends that implement it
  --ops LIST     a selective build: only these ops (comma-separated), plus what their
                 gradients and the engine and tests need; says what it added
  --backends     print one line per backend: name|option|default|kernel folder
                 (the folder joined to its spec directory; read by CMake)
  --needs        print the ops autodiff runs besides the op itself: the engine's, the
                 generated gradient check's, then one line per differentiable op
  --reach LIST   what a backend with native kernels for exactly these ops (comma-
                 separated) would run: every op it gets as a composite, a count of
                 ops and of gradients that run, and the kernels that would unlock most
  --help         this text

Specs are validated before anything is written: every problem is reported as
file:line: entry: field: message (the first 50, then a count), then the run exits 1
and writes nothing. Each spec file runs in a sandbox bounded in size, time and memory
(gen/tdgen/load.lua).]]

local function fail(msg)
  io.stderr:write("tdgen: ", msg, "\n")
  os.exit(1)
end

-- Prints the errors of a run and exits 1. All are collected first; a run that finds very
-- many (a renamed field in every entry) prints the first MAX_SHOWN and counts the rest.
local MAX_SHOWN = 50
local function report(errors)
  for i = 1, math.min(#errors, MAX_SHOWN) do io.stderr:write(errors[i], "\n") end
  local shown = #errors > MAX_SHOWN and string.format(" (the first %d shown)", MAX_SHOWN) or ""
  io.stderr:write(string.format("tdgen: %d error%s%s; nothing written\n", #errors, #errors == 1 and "" or "s", shown))
  os.exit(1)
end

-- opts.specs: every spec directory in the order given; opts.extra[i]: opts.specs[i] came from
-- --extra-specs (an out-of-tree backend's directory).
local opts = { specs = {}, extra = {} }
local i = 1
while i <= #arg do
  local a = arg[i]
  local function value()
    i = i + 1
    if arg[i] == nil then fail(a .. " needs a value (see --help)") end
    return arg[i]
  end
  if a == "--help" or a == "-h" then
    print(USAGE)
    os.exit(0)
  elseif a == "--specs" then opts.specs[#opts.specs + 1] = value()
  elseif a == "--extra-specs" then
    local dir = value()
    opts.specs[#opts.specs + 1] = dir
    opts.extra[#opts.specs] = true
  elseif a == "--out" then opts.out = value()
  elseif a == "--check" then opts.check = value()
  elseif a == "--list" then opts.list = true
  elseif a == "--backends" then opts.backends = true
  elseif a == "--ops" then opts.ops = value()
  elseif a == "--reach" then opts.reach = value()
  elseif a == "--needs" then opts.needs = true
  else fail("unknown argument '" .. a .. "' (see --help)") end
  i = i + 1
end
local modes = (opts.out and 1 or 0) + (opts.check and 1 or 0) + (opts.list and 1 or 0) + (opts.backends and 1 or 0)
  + (opts.reach and 1 or 0) + (opts.needs and 1 or 0)
if #opts.specs == 0 then fail("no --specs directory given (see --help)") end
if modes ~= 1 then fail("give exactly one of --out, --check, --list, --backends, --needs, --reach (see --help)") end

-- The dtype table first: backends and ops name its dtypes. A --specs directory may hold a
-- dtypes.lua (at most one of them does); else the repository's specs/dtypes.lua.
local entries, errors = {}, {}
do
  local dtypes = require("tdgen.dtypes")
  local schema = require("tdgen.schema")
  local path
  for _, dir in ipairs(opts.specs) do
    local cand = dir .. "/dtypes.lua"
    local f = io.open(cand, "rb")
    if f then
      f:close()
      if path then
        errors[#errors + 1] = string.format("%s:1: a second dtype table (the first is %s); keep one", cand, path)
      else
        path = cand
      end
    end
  end
  if #errors == 0 then
    local rows, derrs = dtypes.load(path or dtypes.default_path())
    if rows then dtypes.install(schema, rows) end
    for _, e in ipairs(derrs) do errors[#errors + 1] = e end
  end
  if #errors > 0 then report(errors) end
end

-- Load every spec file of every directory, backends and ops apart.
local nfiles = 0
for di, dir in ipairs(opts.specs) do
  if not util.is_dir(dir) then
    errors[#errors + 1] = dir .. ": not a directory"
  else
    for _, sub in ipairs({ { "backends", "backend" }, { "ops", "op" } }) do
      local files = util.list_lua(dir .. "/" .. sub[1])
      if not files then errors[#errors + 1] = dir .. "/" .. sub[1] .. ": cannot list the directory" end
      for _, f in ipairs(files or {}) do
        nfiles = nfiles + 1
        local es, errs = load.load_file(f, sub[2])
        for _, e in ipairs(es) do
          e.dir, e.extra = dir, opts.extra[di] -- where its kernels are; whether it is out of tree
          entries[#entries + 1] = e
        end
        for _, e in ipairs(errs) do errors[#errors + 1] = e end
      end
    end
  end
end
if #errors == 0 and nfiles == 0 then
  errors[#errors + 1] = table.concat(opts.specs, ", ") .. ": no spec files (expected backends/*.lua and ops/*.lua)"
end
local model
if #errors == 0 then
  local verrs
  -- The kernel folders are checked on disk here (the fuzzer validates specs in memory).
  model, verrs = validate.validate(entries, { is_dir = util.is_dir, exists = util.exists })
  for _, e in ipairs(verrs) do errors[#errors + 1] = e end
  if #errors == 0 and #model.ops == 0 then errors[#errors + 1] = "no op declared in any ops/*.lua" end
  if #errors == 0 and #model.backends == 0 then errors[#errors + 1] = "no backend declared in any backends/*.lua" end
end
if #errors > 0 then report(errors) end

if opts.needs then
  for _, l in ipairs(needs.lines(model)) do print(l) end
  os.exit(0)
end

if opts.reach then
  -- A hypothetical backend "reach" with these kernels: what it runs, native and composite,
  -- and how many differentiable ops it can run backward for.
  local be = { name = "reach", ops = {} }
  local unknown, n = {}, 0
  for name in opts.reach:gmatch("[^,%s]+") do
    local op = model.op_by_name[name]
    if op and not op.broken then
      if not be.ops[name] then n = n + 1 end
      be.ops[name] = true
    else unknown[#unknown + 1] = name end
  end
  if #unknown > 0 or n == 0 then
    fail("--reach: " .. (n == 0 and #unknown == 0 and "no op named" or ("unknown op" .. (#unknown > 1 and "s" or "") ..
      " " .. table.concat(unknown, ", "))) .. " (see --list)")
  end
  model.backends = { be }
  local decomp = require("tdgen.decomp")
  -- What be runs with its kernels: the composites, the count of ops that run, and of the
  -- differentiable ops (formulas or differentiated through a decomposition) those whose
  -- backward runs too.
  local function measure()
    decomp.availability(model)
    needs.analyze(model)
    local r = { comp = {}, runs = 0, nd = 0, gd = 0 }
    for _, op in ipairs(model.ops) do
      if be.runs[op.name] then
        r.runs = r.runs + 1
        if be.composite[op.name] then r.comp[#r.comp + 1] = op.name end
        local g = be.grad[op.name]
        if g then
          r.nd = r.nd + 1
          if #g.missing == 0 then r.gd = r.gd + 1 end
        end
      end
    end
    return r
  end
  local base = measure()
  local base_runs = be.runs
  local ndiff = 0
  for _, op in ipairs(model.ops) do if op.backward or op.ad_decomp then ndiff = ndiff + 1 end end
  print(string.format("%d native kernels run %d of %d ops (%d composite); backward runs for %d of the %d " ..
    "differentiable ones", n, base.runs, #model.ops, #base.comp, base.gd, base.nd))
  print(string.format("reach: values %d of %d ops (%.1f%%), gradients %d of %d differentiable ops (%.1f%%)",
    base.runs, #model.ops, 100 * base.runs / #model.ops, base.gd, ndiff, ndiff > 0 and 100 * base.gd / ndiff or 0))
  for _, name in ipairs(base.comp) do print("composite " .. name) end
  -- What one more kernel would buy: each op the set does not run, added alone; the ten
  -- that unlock most ops (then most gradients) are the ones that block reach most.
  local gains = {}
  for _, op in ipairs(model.ops) do
    if not base_runs[op.name] then
      be.ops[op.name] = true
      local r = measure()
      be.ops[op.name] = nil
      local more = {}
      for _, o in ipairs(model.ops) do
        if be.runs[o.name] and not base_runs[o.name] and o ~= op then more[#more + 1] = o.name end
      end
      gains[#gains + 1] = { name = op.name, ops = r.runs - base.runs, grads = r.gd - base.gd, more = more }
    end
  end
  table.sort(gains, function(x, y)
    if x.ops ~= y.ops then return x.ops > y.ops end
    if x.grads ~= y.grads then return x.grads > y.grads end
    return x.name < y.name
  end)
  for i = 1, math.min(10, #gains) do
    local gn = gains[i]
    print(string.format("unlock %s: +%d ops, +%d gradients%s", gn.name, gn.ops, gn.grads,
      #gn.more > 0 and (" (with " .. table.concat(gn.more, ", ") .. ")") or ""))
  end
  os.exit(0)
end

if opts.ops then
  local names = {}
  for n in opts.ops:gmatch("[^,%s]+") do names[#names + 1] = n end
  local set, added, unknown = needs.closure(model, names)
  if #unknown > 0 or #names == 0 then
    fail("--ops: " .. (#names == 0 and "no op named" or ("unknown op" .. (#unknown > 1 and "s" or "") .. " " ..
      table.concat(unknown, ", "))) .. " (see --list)")
  end
  local kept = {}
  for _, op in ipairs(model.ops) do if set[op.name] then kept[#kept + 1] = op end end
  model.all_ops, model.ops, model.selected = model.ops, kept, set
  require("tdgen.tuple").select(model)
  io.stderr:write(string.format("tdgen: selective build: %d ops asked, %d added for gradients, the engine and the tests%s\n",
    #names, #added, #added > 0 and (": " .. table.concat(added, ", ")) or ""))
end

if opts.list then
  -- name, family, backends that implement it, and for a differentiable op the backends
  -- whose backward runs ("grad:cpu,vulkan") and those where it cannot, with what is missing.
  for _, op in ipairs(model.ops) do
    local grad = ""
    if op.backward or op.ad_decomp then
      local yes, no = {}, {}
      for _, be in ipairs(model.backends) do
        local g = be.grad[op.name]
        if be.runs[op.name] then
          if #g.missing == 0 then yes[#yes + 1] = be.name
          else no[#no + 1] = be.name .. "(needs " .. table.concat(g.missing, "+") .. ")" end
        end
      end
      grad = " grad:" .. (#yes > 0 and table.concat(yes, ",") or "-")
      if #no > 0 then grad = grad .. " no-grad:" .. table.concat(no, ",") end
    end
    local comp = #(op.composite_on or {}) > 0 and (" composite:" .. table.concat(op.composite_on, ",")) or ""
    print(string.format("%-22s %-13s %s%s%s", op.name, op.family,
      #op.backends > 0 and table.concat(op.backends, ",") or "-", comp, grad))
  end
  -- Tuples: "name tuple(part,part) backends-that-run-it".
  local tuple = require("tdgen.tuple")
  for _, t in ipairs(model.tuples or {}) do
    local ps, on = {}, {}
    for _, p in ipairs(t.parts) do ps[#ps + 1] = p.op.name end
    for _, be in ipairs(model.backends) do if tuple.how(t, be) then on[#on + 1] = be.name end end
    print(string.format("%-22s tuple(%s) %s", t.name, table.concat(ps, ","), #on > 0 and table.concat(on, ",") or "-"))
  end
  os.exit(0)
end
if opts.backends then
  for _, be in ipairs(model.backends) do
    -- The kernel folder is relative to the spec directory the backend came from.
    print(string.format("%s|%s|%s|%s/%s", be.name, be.option, be.default and "ON" or "OFF", be.dir, be.kernels))
  end
  os.exit(0)
end

-- Everything is emitted in memory first; files are written only at the end.
-- The banner names no counts: adding a spec changes only the files that describe it.
local note = "the specs"
local files = {
  { "td_dtypes.h", require("tdgen.emit_dtypes").header(note) },
  { "td_dtypes.c", require("tdgen.emit_dtypes").source(note) },
  { "td_kinds.h", emit_c.kinds_header(model, note) },
  { "td_ops.h", emit_c.ops_header(model, note) },
  { "td_dispatch.c", emit_c.dispatch_source(model, note) },
  { "SUPPORT.md", emit_support.support(model, note) },
  { "API.md", emit_api.api(model, note) },
  { "fuzz_kinds.h", emit_fuzz.kinds_header(model, note) },
  { "fuzz_ops.c", emit_fuzz.fuzz_table(model, note) },
  -- The Python binding's op functions and their stub (python/, TD_PYTHON).
  { "td_python.c", emit_python.module_source(model, note) },
  { "tdispatch.pyi", emit_python.stub(model, note) },
  -- The specs' examples as data for the Python tests (tests/python/test_examples.py).
  { "tdispatch_examples.py", emit_python.examples(model, note) },
}
for _, be in ipairs(model.backends) do
  files[#files + 1] = { "td_backend_" .. be.name .. ".h", emit_c.backend_header(model, be, note) }
  files[#files + 1] = { "td_backend_" .. be.name .. "_table.c", emit_c.backend_table(model, be, note) }
  if be.id >= 32 then -- out-of-tree: also its table as a loadable module (td_backend_api.h)
    files[#files + 1] = { "td_backend_" .. be.name .. "_module.c", emit_c.backend_module(model, be, note) }
  end
  files[#files + 1] = { "test_ops_" .. be.name .. ".c", emit_tests.ops_tests(model, be, note) }
  files[#files + 1] = { "test_autodiff_" .. be.name .. ".c", emit_tests.autodiff_tests(model, be, note) }
  -- The per-dtype comparisons (gen/tdgen/emit_dtype_tests.lua).
  files[#files + 1] = { "test_dtypes_" .. be.name .. ".c", require("tdgen.emit_dtype_tests").tests(model, be, note) }
end

if opts.check then
  local stale = 0
  for _, f in ipairs(files) do
    local cur = util.read_file(opts.check .. "/" .. f[1])
    if cur == nil then
      io.stderr:write(opts.check, "/", f[1], ": missing\n"); stale = stale + 1
    elseif cur ~= f[2] then
      io.stderr:write(opts.check, "/", f[1], ": differs from what the specs generate\n"); stale = stale + 1
    end
  end
  if stale > 0 then
    io.stderr:write(string.format("tdgen: %s is stale (%d file%s); refresh it with `cmake --build BUILD --target regenerate`\n",
      opts.check, stale, stale == 1 and "" or "s"))
    os.exit(1)
  end
  os.exit(0)
end

for _, w in ipairs(needs.warnings(model)) do io.stderr:write("tdgen: warning: ", w, "\n") end
if not util.make_dir(opts.out) then fail("cannot create " .. opts.out) end
local ok, werr = pcall(function()
  for _, f in ipairs(files) do util.write_if_changed(opts.out .. "/" .. f[1], f[2]) end
end)
if not ok then fail(tostring(werr)) end
