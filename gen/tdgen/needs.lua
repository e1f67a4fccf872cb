-- What each backend can run of autodiff: per differentiable op, the ops its backward
-- needs and the ones its generated gradient check needs, and which of them the backend
-- lacks. The tests, SUPPORT.md, --list and the generation warnings all read this, so a
-- gradient that cannot run is said so everywhere instead of silently dropped.
local M = {}

-- The engine runs these on the inner backend in every backward: the seed (ones), the
-- accumulation of gradients (add), and the reduction of broadcast gradients to an
-- input's shape (sum_dim, reshape).
M.ENGINE = { "float_ones", "float_add", "float_sum_dim", "float_reshape" }
-- The generated check makes its inputs, computes L = sum(op(x) * w) on autodiff and
-- reads values back; mul and sum are recorded too, so their backward runs as well.
M.GRADCHECK = { "float_from_data", "float_into_data", "float_mul", "float_sum" }

local function add_all(set, names)
  for _, n in ipairs(names) do set[n] = true end
end

local function sorted(set)
  local out = {}
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out)
  return out
end

-- The ops a backward of op runs: op itself (it was recorded), its formulas, the engine.
local function backward_needs(op)
  local need = { [op.name] = true }
  for n in pairs(op.backward.ops) do need[n] = true end
  add_all(need, M.ENGINE)
  return need
end

-- The ops autodiff runs for an op: its backward's (formulas), or for an op differentiated
-- through its decomposition, the pieces' own needs; ops without gradients add themselves.
local function ad_needs(model, op, memo)
  if memo[op.name] then return memo[op.name] end
  local need = {}
  memo[op.name] = need
  if op.backward then
    for n in pairs(backward_needs(op)) do need[n] = true end
  elseif op.ad_decomp then
    need[op.name] = true -- its arm on an inner backend, for the values
    for n in pairs(op.decomp.calls) do
      local piece = model.op_by_name[n]
      if piece then
        for m in pairs(ad_needs(model, piece, memo)) do need[m] = true end
      end
    end
    add_all(need, M.ENGINE)
  else
    need[op.name] = true
  end
  return need
end

-- What be lacks of need (be.runs: native or composite).
local function missing(be, need)
  local out = {}
  for n in pairs(need) do if not be.runs[n] then out[n] = true end end
  return sorted(out)
end

-- Sets be.grad[op.name] = { missing = {...}, check_missing = {...} } for every backend
-- and differentiable op (empty lists: it runs).
function M.analyze(model)
  local check_extra = {}
  add_all(check_extra, M.GRADCHECK)
  for _, name in ipairs(M.GRADCHECK) do
    local lop = model.op_by_name[name]
    if lop and lop.backward then
      for n in pairs(backward_needs(lop)) do check_extra[n] = true end
    end
  end
  local memo = {}
  for _, be in ipairs(model.backends) do
    be.grad = {}
    for _, op in ipairs(model.ops) do
      if op.backward or op.ad_decomp then
        local need = ad_needs(model, op, memo)
        local check = {}
        for n in pairs(need) do check[n] = true end
        for n in pairs(check_extra) do check[n] = true end
        be.grad[op.name] = { missing = missing(be, need), check_missing = missing(be, check) }
      end
    end
  end
end

-- What --needs prints (docs/adding-a-backend.md quotes some of its lines, and
-- tests/gen/test_cli.lua holds the doc to them): the engine's ops, the generated gradient
-- check's (its own and their backward's, beyond the engine), and per differentiable op
-- what its backward runs beyond the engine and the op itself. Lines "name: op op ...",
-- sorted names; "-" for nothing.
function M.lines(model)
  local engine = {}
  add_all(engine, M.ENGINE)
  local function line(name, set)
    local out = {}
    for n in pairs(set) do if not engine[n] and n ~= name then out[#out + 1] = n end end
    table.sort(out)
    return name .. ": " .. (#out > 0 and table.concat(out, " ") or "-")
  end
  local lines = { "engine: " .. table.concat(sorted(engine), " ") }
  local check = {}
  add_all(check, M.GRADCHECK)
  for _, name in ipairs(M.GRADCHECK) do
    local lop = model.op_by_name[name]
    if lop and lop.backward then
      for n in pairs(backward_needs(lop)) do check[n] = true end
    end
  end
  lines[#lines + 1] = line("gradcheck", check)
  local memo = {}
  for _, op in ipairs(model.ops) do
    if op.backward or op.ad_decomp then lines[#lines + 1] = line(op.name, ad_needs(model, op, memo)) end
  end
  return lines
end

-- For one backend: how many differentiable ops it implements, how many of them cannot
-- run backward there, and the ops those need (sorted).
function M.tally(model, be)
  local n, bad, names = 0, 0, {}
  for _, op in ipairs(model.ops) do
    local g = be.grad[op.name]
    if g and be.runs[op.name] then
      n = n + 1
      if #g.missing > 0 then
        bad = bad + 1
        for _, m in ipairs(g.missing) do names[m] = true end
      end
    end
  end
  return n, bad, sorted(names)
end

-- One line per backend whose implemented differentiable ops cannot all run backward:
-- "toy: 3 of 5 implemented differentiable ops cannot run backward (missing: float_expand)".
function M.warnings(model)
  local lines = {}
  for _, be in ipairs(model.backends) do
    local n, bad, names = M.tally(model, be)
    if bad > 0 then
      lines[#lines + 1] = string.format("%s: %d of %d implemented differentiable ops cannot run backward " ..
        "(missing: %s); their gradient checks are generated as skipped", be.name, bad, n, table.concat(names, ", "))
    end
  end
  return lines
end

-- Ops every build keeps: the engine's, and what the test helpers (tests/common/tdt.c)
-- and the generated tests use to make and read tensors of each dtype.
M.ALWAYS = { "float_from_data", "int_from_data", "bool_from_data", "float_into_data", "int_into_data",
  "bool_into_data", "float_to_device", "int_to_device", "bool_to_device", "float_mul", "float_sum" }

-- A selective build: the named ops, plus what their gradients need, plus the engine's and
-- the tests' ops, to a fixed point. Returns the set, the sorted list of ops added, and the
-- unknown names.
function M.closure(model, names)
  local set, queue, unknown = {}, {}, {}
  local function add(n)
    if not set[n] then set[n] = true; queue[#queue + 1] = n end
  end
  for _, n in ipairs(names) do
    if model.op_by_name[n] and not model.op_by_name[n].broken then add(n) else unknown[#unknown + 1] = n end
  end
  local asked = {}
  for n in pairs(set) do asked[n] = true end
  add_all(set, {})
  for _, n in ipairs(M.ENGINE) do add(n) end
  for _, n in ipairs(M.ALWAYS) do add(n) end
  local i = 1
  while i <= #queue do
    local op = model.op_by_name[queue[i]]
    if op and op.backward then
      for n in pairs(backward_needs(op)) do add(n) end
    end
    if op and op.decomp then
      for n in pairs(op.decomp.calls) do add(n) end
    end
    i = i + 1
  end
  local added = {}
  for n in pairs(set) do if not asked[n] then added[#added + 1] = n end end
  table.sort(added)
  return set, added, unknown
end

return M
