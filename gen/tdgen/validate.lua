-- Validates loaded spec entries and builds the model the emitters walk.
-- Every error names file:line, the entry and the field; all are collected.
local schema = require("tdgen.schema")
local formula = require("tdgen.formula")
local decomp = require("tdgen.decomp")
local examples = require("tdgen.examples")
local needs = require("tdgen.needs")
local util = require("tdgen.util")

local show = util.show

local M = {}

-- Field lines. An error names the line where its field is written: `field =` at the
-- start of a line of the entry, else after '{' or ',' (fields on the declaration's line),
-- else the declaration's line. Spec text is never used as a pattern; each file's text is
-- scanned once for all the errors of the run, so hostile specs cost linear time.
local function is_name(s) return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil end

-- Calls visit(line_number, line) for each line of text, numbered like Lua numbers them
-- ("\n", "\r", "\r\n" and "\n\r" each end one line).
local function each_line(text, visit)
  local pos, n = 1, 1
  while true do
    local s = text:find("[\n\r]", pos)
    visit(n, text:sub(pos, (s or #text + 1) - 1))
    if not s then return end
    local c, d = text:byte(s), text:byte(s + 1)
    if d and d ~= c and (d == 10 or d == 13) then s = s + 1 end
    pos, n = s + 1, n + 1
  end
end

-- Resolves the `line` of every query {entry, field}: per file, the queries of each field
-- are sorted by the first line of their entry; a query is open from that line on, and
-- the first line at or after it that writes the field answers it, if before next_line.
local function resolve_lines(queries)
  local by_source, order = {}, {}
  for _, q in ipairs(queries) do
    q.line = q.entry.line
    if q.field and is_name(q.field) then
      local src = q.entry.source
      if not by_source[src] then by_source[src] = {}; order[#order + 1] = src end
      local list = by_source[src][q.field]
      if not list then list = {}; by_source[src][q.field] = list end
      list[#list + 1] = q
    end
  end
  for _, src in ipairs(order) do
    local fields = by_source[src]
    for _, list in pairs(fields) do
      table.sort(list, function(x, y) return x.entry.line < y.entry.line end)
    end
    -- state[field][pass] = { next = index of the first query not yet open, open = {...} }
    local state = {}
    local function hit(field, pass, n)
      local list = fields[field]
      if not list then return end
      local st = state[field]
      if not st then st = { { next = 1, open = {} }, { next = 1, open = {} } }; state[field] = st end
      local ps = st[pass]
      while list[ps.next] and list[ps.next].entry.line <= n do
        ps.open[#ps.open + 1] = list[ps.next]
        ps.next = ps.next + 1
      end
      for _, q in ipairs(ps.open) do
        if not q.found then q.found = {} end
        if not q.found[pass] and n < (q.entry.next_line or math.huge) then q.found[pass] = n end
      end
      ps.open = {}
    end
    each_line(src.text, function(n, line)
      local name = line:match("^%s*([%a_][%w_]*)%s*=")
      if name then hit(name, 1, n) end
      for name2 in line:gmatch("[{,]%s*([%a_][%w_]*)%s*=") do hit(name2, 2, n) end
    end)
  end
  for _, q in ipairs(queries) do
    if q.found then q.line = q.found[1] or q.found[2] or q.line end
  end
end

-- "Did you mean" suggestions. Edit distance costs the product of the lengths, so long
-- words get none, candidates more than 2 longer or shorter are skipped (they are too far
-- anyway), and a run stops suggesting once it has spent its budget.
local SUGGEST_MAX_LEN = 64
local SUGGEST_BUDGET = 10000000

local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

local function suggester()
  local budget = SUGGEST_BUDGET
  return function(word, candidates)
    if type(word) == "number" then word = tostring(word) end
    if type(word) ~= "string" or #word > SUGGEST_MAX_LEN then return "" end
    local best, bestd
    for _, c in ipairs(candidates) do
      budget = budget - 1
      if budget < 0 then return "" end
      if #c <= #word + 2 and #word <= #c + 2 then
        budget = budget - #word * #c
        if budget < 0 then return "" end
        local d = distance(word, c)
        -- A suggestion must keep some of the word: "%" is not a misspelt "id".
        if d <= 2 and d < #word and (not bestd or d < bestd) then best, bestd = c, d end
      end
    end
    return best and (" (did you mean '" .. best .. "'?)") or ""
  end
end

-- The keys of a spec table in an order that does not depend on pairs(): by how a
-- message shows them.
local function sorted_keys(t)
  local items = {}
  for k in pairs(t) do items[#items + 1] = { k = k, s = show(k), t = type(k) } end
  table.sort(items, function(x, y)
    if x.s ~= y.s then return x.s < y.s end
    return x.t < y.t
  end)
  local ks = {}
  for i, it in ipairs(items) do ks[i] = it.k end
  return ks
end

local function keys_of(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

local is_array = util.is_array

-- index_range: int input -> the exclusive bound of its values, "size(t, d)" (t a tensor
-- argument, d a dim argument or an integer) or the name of an i64 argument. Sets
-- op.index_range to { {name, tensor, dim} | {name, bound} } in argument order; returns the
-- problems found.
local function check_index_range(op, spec)
  local problems = {}
  if type(spec) ~= "table" then return { "expected a table of int input -> bound" } end
  local ranges = {}
  for _, k in ipairs(sorted_keys(spec)) do
    local v = spec[k]
    local a = type(k) == "string" and op.arg_by_name[k] or nil
    if not (a and a.t.tensor == "int") then
      problems[#problems + 1] = string.format("'%s' is not an int tensor input of %s", show(k), op.name)
    elseif type(v) ~= "string" then
      problems[#problems + 1] = string.format("%s: expected \"size(tensor, dim)\" or an i64 argument's name, got %s",
        k, show(v))
    else
      local t, d = v:match("^size%(%s*([%a_][%w_]*)%s*,%s*(%-?[%w_]+)%s*%)$")
      local ta, da = t and op.arg_by_name[t], d and op.arg_by_name[d]
      if t then
        if not (ta and ta.t.tensor) then
          problems[#problems + 1] = string.format("%s: '%s' is not a tensor argument of %s", k, t, op.name)
        elseif not (d:match("^%-?%d+$") or (da and da.type == "dim")) then
          problems[#problems + 1] = string.format("%s: '%s' is neither an integer nor a dim argument of %s", k, d,
            op.name)
        else
          ranges[#ranges + 1] = { name = k, tensor = t, dim = d }
        end
      elseif op.arg_by_name[v] and op.arg_by_name[v].type == "i64" then
        ranges[#ranges + 1] = { name = k, bound = v }
      else
        problems[#problems + 1] = string.format("%s: expected \"size(tensor, dim)\" or an i64 argument's name, got '%s'",
          k, v)
      end
    end
  end
  op.index_range = ranges
  return problems
end

-- Checks the fields of an entry against a field table; returns false when the entry
-- lacks what the rest of the validation needs.
local function check_fields(entry, fields, required, err, suggest)
  local f = entry.fields
  local known = keys_of(fields)
  local ok = true
  local unknown = {}
  for k in pairs(f) do
    if type(k) ~= "string" then
      err(entry, nil, "positional value in the declaration (every field is written name = value)")
    elseif not fields[k] then
      unknown[#unknown + 1] = k
    end
  end
  table.sort(unknown)
  for _, k in ipairs(unknown) do err(entry, k, "unknown field" .. suggest(k, known)) end
  for _, k in ipairs(required) do
    if f[k] == nil then
      err(entry, nil, "missing required field '" .. k .. "'")
      ok = false
    end
  end
  for _, k in ipairs(known) do
    -- "table|string": either type
    if f[k] ~= nil and not ("|" .. fields[k] .. "|"):find("|" .. type(f[k]) .. "|", 1, true) then
      err(entry, k, string.format("expected a %s, got a %s", fields[k]:gsub("|", " or "), type(f[k])))
      ok = false
    end
  end
  return ok
end

-- Names an argument may not have: C keywords and names the generated C declares
-- next to the arguments (entry functions, arms, generated tests).
local C_NAMES = {}
for w in ([[auto break case char const continue default do double else enum extern float for goto
  if inline int long register restrict return short signed sizeof static struct switch typedef union
  unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn
  _Static_assert _Thread_local bool true false NULL
  i k d st state dev ad_dev ad_bal cpu_dev want want_shape got st_got st_want ins ctx]]):gmatch("%S+") do
  C_NAMES[w] = true
end
-- Suffixes the generated C appends to an argument's name (lengths, test data).
local C_SUFFIXES = { "_len", "_shape", "_data", "_items" }

local F32_MAX = 3.4028234663852886e38
-- The backend ids of out-of-tree backends (docs/adding-a-backend.md); in-tree ones take
-- 0-31 by convention.
local OUT_OF_TREE_IDS = { 32, 62 }

-- Text that lands in a generated C comment or in a cell of SUPPORT.md's table: the
-- problem, or nil.
local function text_problem(s, cell)
  if s:find("%c") then return "expected one line of text (no newlines or other control characters)" end
  if s:find("*/", 1, true) then return "may not contain '*/' (the text goes into a C comment)" end
  if cell and s:find("|", 1, true) then return "may not contain '|' (the text goes into a table of SUPPORT.md)" end
end

-- Parses "rule(a, b)" into rule, {a, b}.
local function parse_call(s)
  local rule, inner = s:match("^%s*([%a_][%w_]*)%s*%((.-)%)%s*$")
  if not rule then return nil end
  local args = {}
  if inner:match("%S") then
    for part in (inner .. ","):gmatch("([^,]*),") do
      local name = part:match("^%s*([%a_][%w_]*)%s*$")
      if not name then return nil end
      args[#args + 1] = name
    end
  end
  return rule, args
end

-- opts (optional): opts.is_dir(path) and opts.exists(path) -> boolean check each
-- backend's kernel folder on disk (gen/tdgen.lua passes them; the spec fuzzer validates
-- in memory and does not).
function M.validate(entries, opts)
  opts = opts or {}
  -- Errors are collected as queries; their lines are found at the end, in one pass.
  local queries = {}
  local function err(entry, field, msg)
    queries[#queries + 1] = { entry = entry, field = field, msg = msg }
  end
  local suggest = suggester()

  -- Each entry's span ends where the next one of the same file starts.
  for i, e in ipairs(entries) do
    local n = entries[i + 1]
    if n and n.file == e.file then e.next_line = n.line end
  end

  local model = { backends = {}, ops = {}, op_by_name = {}, backend_by_name = {} }

  -- Stable ids: each op and each backend names its own, once.
  local op_ids, backend_ids = {}, {}
  local function check_id(e, f, what, max, seen)
    local id = f.id
    -- Issue 23: an out-of-tree backend (its spec came through --extra-specs, CMake's
    -- TD_EXTRA_SPECS) takes an id of the range kept for them, so that no in-tree backend
    -- added later can take its id.
    if what == "backend" and e.extra then
      if math.type(id) ~= "integer" or id < OUT_OF_TREE_IDS[1] or id > OUT_OF_TREE_IDS[2] then
        err(e, "id", string.format("an out-of-tree backend (--extra-specs, TD_EXTRA_SPECS) takes an integer id " ..
          "from %d to %d, got %s", OUT_OF_TREE_IDS[1], OUT_OF_TREE_IDS[2], show(id)))
        return false
      end
    elseif math.type(id) ~= "integer" or id < 0 or id > max then
      err(e, "id", string.format("expected an integer from 0 to %d, got %s", max, show(id)))
      return false
    end
    local prev = seen[id]
    if prev then
      err(e, "id", string.format("%s id %d is already taken by %s (%s:%d)", what, id, prev.name, prev.file, prev.line))
      return false
    end
    seen[id] = { name = f.name, file = e.file, line = e.line }
    return true
  end

  -- Ops first: backends refer to them.
  for _, e in ipairs(entries) do
    if e.decl == "op" then
      local f = e.fields
      local ok = check_fields(e, schema.op_fields, schema.op_required, err, suggest)
      for _, k in ipairs({ "doc", "semantics", "why" }) do
        local p = type(f[k]) == "string" and text_problem(f[k], k == "why")
        if p then err(e, k, p) end
      end
      if type(f.tolerance) == "number" and not (f.tolerance >= 0 and f.tolerance <= F32_MAX) then
        err(e, "tolerance", "expected a finite number, 0 or more, got " .. show(f.tolerance))
      end
      if type(f.nmse) == "number" and not (f.nmse >= 0 and f.nmse <= F32_MAX) then
        err(e, "nmse", "expected a finite number, 0 or more, got " .. show(f.nmse))
      end
      if type(f.name) == "string" and not f.name:match("^[a-z][a-z0-9_]*$") then
        err(e, "name", "'" .. show(f.name) .. "' is not a lower-case identifier")
        ok = false
      end
      if ok and model.op_by_name[f.name] then
        local prev = model.op_by_name[f.name]
        err(e, "name", string.format("duplicate op (first declared at %s:%d)", prev.file, prev.line))
        ok = false
      end
      if ok and not check_id(e, f, "op", schema.max_op_id, op_ids) then ok = false end
      local op = { name = f.name, id = f.id, family = f.family, doc = f.doc, returns = f.returns, file = e.file,
        line = e.line, args = {}, arg_by_name = {}, examples = f.examples, tolerance = f.tolerance or 1e-5,
        semantics = f.semantics, backends = {}, entry = e, fields = f }
      -- The family, the result and the arguments are checked whatever else is wrong with
      -- the entry (a misspelt field name hides no unknown family), each only when the
      -- field is there with the right type (check_fields said so otherwise). Issue 23.
      do
        if type(f.family) ~= "string" then
          ok = false
        elseif not schema.families[f.family] then
          err(e, "family", "unknown family '" .. show(f.family) .. "'" .. suggest(f.family, schema.family_order) ..
            "; families: " .. table.concat(schema.family_order, ", "))
          ok = false
        end
        if type(f.returns) ~= "string" then
          ok = false
        elseif not schema.returns[f.returns] then
          err(e, "returns", "unknown result '" .. show(f.returns) .. "'; expected float, int, bool, host or none")
          ok = false
        end
        if type(f.args) ~= "table" then
          ok = false
        elseif not is_array(f.args) then
          err(e, "args", "expected an array of \"type name\" strings")
          ok = false
        else
          for i, a in ipairs(f.args) do
            local ty, name = nil, nil
            if type(a) == "string" then ty, name = a:match("^%s*([%a_][%w_]*)%s+([%a_][%w_]*)%s*$") end
            if not ty then
              err(e, "args", string.format("argument %d: malformed argument %s; expected \"type name\"", i,
                type(a) == "string" and ("'" .. show(a) .. "'") or ("(a " .. type(a) .. ")")))
              ok = false
            elseif not schema.types[ty] then
              err(e, "args", string.format("argument %d: unknown type or primitive kind '%s'%s", i, show(ty),
                suggest(ty, keys_of(schema.types))))
              ok = false
            elseif schema.reserved_names[name] or C_NAMES[name] or name:match("^td_") then
              err(e, "args", string.format("argument %d: the name '%s' is reserved", i, show(name)))
              ok = false
            elseif op.arg_by_name[name] then
              err(e, "args", string.format("argument %d: duplicate argument name '%s'", i, show(name)))
              ok = false
            else
              local arg = { type = ty, name = name, t = schema.types[ty] }
              op.args[#op.args + 1] = arg
              op.arg_by_name[name] = arg
            end
          end
        end
      end
      if ok then
        local msg = schema.families[f.family](op)
        if msg then err(e, "args", msg); ok = false end
      end
      if ok then
        local host_outs = 0
        for i, a in ipairs(op.args) do
          for _, suffix in ipairs(C_SUFFIXES) do
            local base = a.name:sub(1, -#suffix - 1)
            if a.name:sub(-#suffix) == suffix and op.arg_by_name[base] then
              err(e, "args", string.format("argument %d: the name '%s' clashes with the generated '%s%s' of '%s'", i,
                a.name, base, suffix, base))
              ok = false
            end
          end
          if a.t.list and not (i == 1 and f.family == "multi") then
            err(e, "args", string.format("argument %d: a tensor list (%s) is only the first argument of a multi op", i,
              a.type))
            ok = false
          end
          if (a.t.group or a.type == "reduce_op") and f.family ~= "distributed" then
            err(e, "args", string.format("argument %d: a %s argument belongs to distributed ops", i, a.type))
            ok = false
          end
          if a.t.host_out then host_outs = host_outs + 1 end
        end
        if (f.returns == "host") ~= (host_outs == 1) then
          err(e, "args", "an op returns host data (returns = \"host\") exactly when it takes one host output " ..
            "argument (f32_out, i32_out, bool_out)")
          ok = false
        end
      end
      if ok then
        -- Float op: works on float tensors and returns a float tensor.
        local a1 = op.args[1]
        op.float_in = a1 and (a1.t.tensor == "float" or a1.t.list == "float") or false
        op.is_float = op.returns == "float" and (op.float_in or f.family == "creation")
        for _, k in ipairs(schema.differentiable_fields) do
          if f[k] ~= nil and not op.is_float then
            err(e, k, string.format("'%s' is a differentiable-op field, but %s is not a float op " ..
              "(it must take and return float tensors)", k, f.name))
            ok = false
          end
        end
        if f.bound ~= nil and f.bound ~= "memory" and f.bound ~= "compute" then
          err(e, "bound", "expected 'memory' or 'compute', got '" .. show(f.bound) .. "'")
          ok = false
        end
        -- Autocast policy (docs/dtypes.md section 9): only ops with a float tensor input.
        op.autocast = f.autocast or "keep"
        if f.autocast ~= nil then
          local has_float = false
          for _, a in ipairs(op.args) do
            if a.t.tensor == "float" or a.t.list == "float" then has_float = true end
          end
          if f.autocast ~= "low" and f.autocast ~= "f32" and f.autocast ~= "keep" then
            err(e, "autocast", "expected 'low', 'f32' or 'keep', got '" .. show(f.autocast) .. "'")
            ok = false
          elseif not has_float then
            err(e, "autocast", "an autocast policy needs a float tensor argument to cast; " .. f.name .. " has none")
            ok = false
          end
        end
        -- A view hands back its input's storage: one tensor input of the result's class,
        -- first, and nothing for a kernel or a decomposition to do.
        if f.view == true then
          local ntensors = 0
          for _, a in ipairs(op.args) do
            if a.t.tensor or a.t.list then ntensors = ntensors + 1 end
          end
          if not (a1 and a1.t.tensor and a1.t.tensor == f.returns and ntensors == 1) then
            err(e, "view", "a view takes one tensor, as its first argument, of the class it returns")
            ok = false
          elseif f.decompose ~= nil then
            err(e, "view", "a view shares its input's storage: it has no decomposition")
            ok = false
          end
        end
        op.view = f.view == true
      end
      if ok then
        if f.returns == "none" then
          if f.shape ~= nil then err(e, "shape", "an op that returns none has no shape rule"); ok = false end
        elseif f.shape == nil then
          err(e, nil, "missing required field 'shape' (every op with a result names its shape rule)")
          ok = false
        else
          local rule, rargs = parse_call(f.shape)
          if not rule then
            err(e, "shape", "malformed shape rule '" .. show(f.shape) .. "'; expected rule(arg, ...)")
            ok = false
          elseif not schema.rules[rule] then
            err(e, "shape", "unknown shape rule '" .. show(rule) .. "'" .. suggest(rule, keys_of(schema.rules)))
            ok = false
          elseif #rargs ~= #schema.rules[rule] then
            err(e, "shape", string.format("rule '%s' takes %d arguments, got %d", rule, #schema.rules[rule], #rargs))
            ok = false
          else
            for i, rn in ipairs(rargs) do
              local arg = op.arg_by_name[rn]
              local want = schema.rules[rule][i]
              if not arg then
                err(e, "shape", string.format("rule '%s': '%s' is not an argument of %s", rule, show(rn), f.name))
                ok = false
              elseif (want == "dims" and arg.type ~= "dims") or (want ~= "dims" and schema.param_kind(arg.type) ~= want) then
                err(e, "shape", string.format("rule '%s': argument %d ('%s', a %s) must be a %s", rule, i, rn,
                  arg.type, want))
                ok = false
              end
            end
            op.rule = { name = rule, args = rargs }
          end
        end
      end
      if ok and f.quantized_arg ~= nil then
        local qa
        for i, a in ipairs(op.args) do
          if a.name == f.quantized_arg and i > 1 and a.t.tensor == "float" and op.args[1].t.tensor == "float" then qa = a end
        end
        if not qa then
          err(e, "quantized_arg", "'" .. show(f.quantized_arg) .. "' is not a float tensor argument after a first float tensor")
          ok = false
        else
          op.quantized_arg = qa.name
        end
      end
      if ok and f.dtype_twin ~= nil then
        -- A `_dtype` twin (docs/dtypes.md section 5): what it takes decides its kind.
        local kinds = { from_data = true, into_data = true, zeros = true, ones = true, full = true, convert = true,
          random = true }
        local tw = f.dtype_twin
        local cls = op.returns ~= "host" and op.returns or nil
        local host_in, host_out, scalars, tensors = nil, nil, {}, {}
        for _, a in ipairs(op.args) do
          if a.t.host_in then host_in = a end
          if a.t.host_out then host_out = a end
          if a.type == "f32" or a.type == "i32" then scalars[#scalars + 1] = a end
          if a.t.tensor or a.t.list then tensors[#tensors + 1] = a end
        end
        local problem
        if not kinds[tw] then
          problem = "unknown kind '" .. show(tw) .. "'; kinds: convert, from_data, full, into_data, ones, random, zeros"
        elseif tw == "into_data" then
          if not (host_out and #tensors == 1 and op.args[1].t.tensor) then problem = "an into_data twin's op reads one tensor into host data" end
          cls = op.args[1] and op.args[1].t.tensor
        elseif tw == "convert" then
          if not (#op.args == 1 and op.args[1].t.tensor and schema.classes[op.returns]) then
            problem = "a convert twin's op takes one tensor and returns a tensor"
          end
        elseif f.family ~= "creation" then
          problem = "a " .. tw .. " twin's op is a creation op"
        elseif tw == "random" then
          local n = { distribution = 0, f32 = 0, u64 = 0 }
          for _, a in ipairs(op.args) do if n[a.type] then n[a.type] = n[a.type] + 1 end end
          if not (n.distribution == 1 and n.f32 == 2 and n.u64 == 1 and op.returns == "float") then
            problem = "a random twin's op takes a distribution, two f32 parameters and a u64 seed, and returns a float tensor"
          end
        elseif tw == "from_data" and not host_in then
          problem = "a from_data twin's op takes host data"
        elseif tw == "full" and #scalars ~= 1 then
          problem = "a full twin's op takes one f32 or i32 value"
        elseif (tw == "zeros" or tw == "ones") and #scalars ~= 0 then
          problem = "a " .. tw .. " twin's op takes no value"
        end
        if not problem and (cls ~= "float" and cls ~= "int") then
          problem = "only float and int have more than one dtype"
        end
        if problem then err(e, "dtype_twin", problem); ok = false
        else op.dtype_twin = { kind = tw, class = cls } end
      end
      if f.examples ~= nil and not is_array(f.examples) then
        err(e, "examples", "expected an array of example tables")
        ok = false
      elseif ok and f.examples then
        for _, m in ipairs(examples.check(op, f.examples)) do err(e, "examples", m); ok = false end
      end
      if ok then
        -- The comparisons with the CPU: an NMSE for float results, a domain per tensor input.
        local float_out = op.returns == "float"
        for _, a in ipairs(op.args) do float_out = float_out or a.t.host_out == "f32" end
        if f.nmse ~= nil and not float_out then
          err(e, "nmse", "the result is not float; int and bool results are compared exactly")
        end
        if f.zero_sign ~= nil and not float_out then
          err(e, "zero_sign", "the result is not float; int and bool results have no signed zeros")
        end
        -- The per-dtype comparisons (gen/tdgen/emit_dtype_tests.lua): a bound per float
        -- dtype, and the degree of an int op in its ints.
        if type(f.dtype_nmse) == "table" then
          if not float_out then
            err(e, "dtype_nmse", "the result is not float; int and bool results are compared exactly")
          end
          for _, k in ipairs(sorted_keys(f.dtype_nmse)) do
            local row = type(k) == "string" and schema.dtype_by_name[k] or nil
            local v = f.dtype_nmse[k]
            if not row or row.class ~= "float" or row.default then
              err(e, "dtype_nmse", string.format("'%s' is not a float dtype other than f32", show(k)))
            elseif type(v) ~= "number" or not (v > 0 and v < 1) then
              err(e, "dtype_nmse", string.format("%s: expected a number between 0 and 1 (exclusive), got %s", k, show(v)))
            end
          end
        end
        if f.int_degree ~= nil then
          local ints = false
          for _, a in ipairs(op.args) do ints = ints or a.t.tensor == "int" or a.t.list == "int" end
          if f.int_degree ~= 1 and f.int_degree ~= 2 then
            err(e, "int_degree", "expected 1 or 2, got " .. show(f.int_degree))
          elseif not ints then
            err(e, "int_degree", "the op has no int tensor input")
          end
        end
        if type(f.domain) == "table" then
          for _, k in ipairs(sorted_keys(f.domain)) do
            local v = f.domain[k]
            local a = type(k) == "string" and op.arg_by_name[k] or nil
            local cls = a and (a.t.tensor or a.t.list)
            local classes = type(v) == "string" and schema.domains[v] or nil
            if not cls then
              err(e, "domain", string.format("'%s' is not a tensor input of %s", show(k), op.name))
            elseif not classes then
              err(e, "domain", string.format("%s: expected \"positive\", \"nonzero\" or \"index\", got '%s'%s", k,
                show(v), suggest(v, { "index", "nonzero", "positive" })))
            elseif not classes[cls] then
              err(e, "domain", string.format("%s: \"%s\" does not apply to %s tensors", k, v, cls))
            end
          end
        end
      end
      if ok and f.index_range ~= nil then
        for _, m in ipairs(check_index_range(op, f.index_range)) do err(e, "index_range", m); ok = false end
      end
      if ok then
        model.ops[#model.ops + 1] = op
        model.op_by_name[op.name] = op
      elseif type(f.name) == "string" and not model.op_by_name[f.name] then
        model.op_by_name[f.name] = { broken = true, file = e.file, line = e.line, name = f.name }
      end
    end
  end

  local names_of_ops
  local function op_names()
    if not names_of_ops then
      names_of_ops = {}
      for _, o in ipairs(model.ops) do names_of_ops[#names_of_ops + 1] = o.name end
    end
    return names_of_ops
  end

  for _, e in ipairs(entries) do
    if e.decl == "backend" then
      local f = e.fields
      local ok = check_fields(e, schema.backend_fields, schema.backend_required, err, suggest)
      if type(f.name) == "string" then
        if not f.name:match("^[a-z][a-z0-9_]*$") then
          err(e, "name", "'" .. show(f.name) .. "' is not a lower-case identifier"); ok = false
        elseif f.name == "autodiff" then
          err(e, "name", "'autodiff' is the built-in wrapping backend; choose another name"); ok = false
        elseif model.backend_by_name[f.name] then
          local prev = model.backend_by_name[f.name]
          err(e, "name", string.format("duplicate backend (first declared at %s:%d)", prev.file, prev.line))
          ok = false
        end
      end
      if ok and not check_id(e, f, "backend", schema.max_backend_id, backend_ids) then ok = false end
      if type(f.option) == "string" and not f.option:match("^[A-Z][A-Z0-9_]*$") then
        err(e, "option", "'" .. show(f.option) .. "' is not an upper-case CMake option name"); ok = false
      end
      if type(f.doc) == "string" and text_problem(f.doc) then err(e, "doc", text_problem(f.doc)) end
      -- CMake reads `--backends` lines split at '|' and includes <kernels>/backend.cmake.
      if type(f.kernels) == "string" and not f.kernels:match("^[%w_%-%.][%w_%-%./]*$") then
        err(e, "kernels", "'" .. show(f.kernels) .. "' is not a folder path (letters, digits, _ - . and /)"); ok = false
      elseif type(f.kernels) == "string" and opts.is_dir and e.dir and not opts.is_dir(e.dir .. "/" .. f.kernels) then
        -- Issue 23: said here, once, with the spec's line, instead of by CMake's include()
        -- of <kernels>/backend.cmake, once per library that includes it.
        local path = e.dir .. "/" .. f.kernels
        err(e, "kernels", string.format("kernels path '%s' %s (it is relative to the spec directory %s)", f.kernels,
          (opts.exists and opts.exists(path)) and "is not a folder" or "does not exist", e.dir))
        ok = false
      end
      local b = { name = f.name, id = f.id, dir = e.dir, doc = f.doc, option = f.option, default = f.default, kernels = f.kernels,
        collectives = f.collectives or false, convert = f.convert or false,
        accelerated = f.accelerated or false, dtypes = {}, ops = {}, file = e.file, line = e.line }
      -- The dtypes and the ops are checked whatever else is wrong with the entry (a typo in
      -- another field's name hides no unknown op); each only when the field is there with
      -- the right type (check_fields said so otherwise). Issue 23.
      do
        if f.dtypes == nil or type(f.dtypes) ~= "table" then
          ok = false
        elseif not is_array(f.dtypes) or #f.dtypes == 0 then
          err(e, "dtypes", "expected a non-empty array of dtypes (" .. table.concat(schema.dtype_order, ", ") .. ")"); ok = false
        else
          for _, d in ipairs(f.dtypes) do
            if not schema.dtypes[d] then
              err(e, "dtypes", "unknown dtype '" .. show(d) .. "'" ..
                suggest(d, schema.dtype_order) .. "; dtypes: " .. table.concat(schema.dtype_order, ", "))
              ok = false
            else
              b.dtypes[d] = true
            end
          end
        end
        if f.ops == nil or type(f.ops) ~= "table" then
          ok = false
        elseif not is_array(f.ops) then
          err(e, "ops", "expected an array of op names"); ok = false
        else
          for _, name in ipairs(f.ops) do
            local op = model.op_by_name[name]
            if type(name) ~= "string" then
              err(e, "ops", "expected op names (strings), got a " .. type(name)); ok = false
            elseif not op then
              err(e, "ops", "op '" .. show(name) .. "' is listed but not declared in any ops/*.lua" .. suggest(name, op_names()))
              ok = false
            elseif b.ops[name] then
              err(e, "ops", "op '" .. name .. "' is listed twice"); ok = false
            elseif not op.broken and op.family == "distributed" and not f.collectives then
              err(e, "ops", "op '" .. name .. "' is a collective: the backend must say collectives = true"); ok = false
            elseif not op.broken then
              b.ops[name] = true
            end
          end
        end
      end
      -- What its kernels compute (docs/dtypes.md section 3): per class, then per op; every
      -- dtype named is one the backend stores.
      if ok then
        local function dtype_list(field, list, cls, what)
          local set = {}
          if not is_array(list) or #list == 0 then
            err(e, field, what .. ": expected a non-empty array of dtype names"); return nil
          end
          for _, d in ipairs(list) do
            local row = schema.dtype_by_name[d]
            if not row then
              err(e, field, what .. ": unknown dtype '" .. show(d) .. "'" .. suggest(d, schema.dtype_order)); return nil
            elseif not b.dtypes[d] then
              err(e, field, what .. ": " .. d .. " is not one of the dtypes the backend stores"); return nil
            elseif cls and row.class ~= cls then
              err(e, field, what .. ": " .. d .. " is not " .. (cls == "int" and "an " or "a ") .. cls .. " dtype"); return nil
            end
            set[d] = true
          end
          return set
        end
        b.computes = {}
        if f.computes ~= nil then
          for _, k in ipairs(sorted_keys(f.computes)) do
            if not schema.classes[k] then
              err(e, "computes", "'" .. show(k) .. "' is not a class (float, int, bool)"); ok = false
            else
              local set = dtype_list("computes", f.computes[k], k, k)
              if set then b.computes[k] = set else ok = false end
            end
          end
        end
        for cls, def in pairs(schema.classes) do
          if not b.computes[cls] then
            -- missing: every dtype it stores of the class
            local set = {}
            for d in pairs(b.dtypes) do if schema.dtype_by_name[d].class == cls then set[d] = true end end
            b.computes[cls] = set
          end
          if b.dtypes[def] and not b.computes[cls][def] then
            err(e, "computes", cls .. ": the kernels compute the class default " .. def); ok = false
          end
        end
        b.op_dtypes = {}
        if f.op_dtypes ~= nil then
          for _, k in ipairs(sorted_keys(f.op_dtypes)) do
            if type(k) ~= "string" or not (is_array(f.ops) and b.ops[k]) then
              err(e, "op_dtypes", "'" .. show(k) .. "' is not an op the backend lists in ops"); ok = false
            else
              local set = dtype_list("op_dtypes", f.op_dtypes[k], nil, k)
              if set then b.op_dtypes[k] = set else ok = false end
            end
          end
        end
      end
      if ok then
        -- An op whose tensors or result need a dtype the backend lacks cannot be implemented.
        for _, name in ipairs(f.ops) do
          local op = model.op_by_name[name]
          if op and not op.broken then
            local need = {}
            for _, a in ipairs(op.args) do
              local cls = a.t.tensor or a.t.list
              if cls then need[schema.classes[cls]] = true end
            end
            if schema.classes[op.returns] then need[schema.classes[op.returns]] = true end
            for _, d in ipairs(schema.dtype_order) do
              if need[d] and not b.dtypes[d] then
                err(e, "ops", string.format("op '%s' needs dtype %s, which the backend does not list in dtypes", name, d))
                ok = false
              end
            end
          end
        end
      end
      if ok then
        model.backends[#model.backends + 1] = b
        model.backend_by_name[b.name] = b
      elseif type(f.name) == "string" and not model.backend_by_name[f.name] then
        model.backend_by_name[f.name] = { broken = true, file = e.file, line = e.line }
      end
    end
  end

  -- Derivatives: every float op that takes float tensors states its gradients or why it
  -- has none; formulas compile against the whole model.
  for _, op in ipairs(model.ops) do
    local f, e = op.fields, op.entry
    local takes_float = op.float_in
    if op.is_float and takes_float then
      if f.backward == nil and f.differentiable ~= false and f.decompose == nil then
        err(e, nil, "a float op needs 'backward' formulas, a 'decompose' (autodiff differentiates its pieces), " ..
          "or 'differentiable = false' with 'why'")
      elseif f.backward ~= nil and f.differentiable == false then
        err(e, "differentiable", "'differentiable = false' contradicts the 'backward' formulas")
      elseif f.differentiable == false and type(f.why) ~= "string" then
        err(e, "why", "'differentiable = false' needs 'why', a sentence saying why")
      elseif f.backward ~= nil then
        local okb = true
        for _, k in ipairs(sorted_keys(f.backward)) do
          local v = f.backward[k]
          local a = type(k) == "string" and op.arg_by_name[k] or nil
          if k == "shared" and not a then
            -- values computed once per node before the formulas: an array of "name = expr"
            local good = type(v) == "table" and #v > 0
            for kk, line in pairs(good and v or {}) do
              if math.type(kk) ~= "integer" or type(line) ~= "string" then good = false end
            end
            if not good then
              err(e, "backward", "'shared': expected an array of \"name = expression\" strings"); okb = false
            end
          elseif not a or not (a.t.tensor == "float" or a.t.list == "float") then
            err(e, "backward", string.format("'%s' is not a float tensor input of %s", show(k), op.name)); okb = false
          elseif type(v) ~= "string" then
            err(e, "backward", string.format("'%s': expected a formula string, got a %s", k, type(v))); okb = false
          end
        end
        for _, a in ipairs(op.args) do
          if (a.t.tensor == "float" or a.t.list == "float") and f.backward[a.name] == nil then
            err(e, "backward", string.format("no formula for input '%s'", a.name)); okb = false
          end
        end
        if okb then
          local plan, ferrs = formula.compile(op, model)
          if plan then op.backward = plan
          else for _, m in ipairs(ferrs) do err(e, "backward", m) end end
        end
      end
      for _, k in ipairs(sorted_keys(f.gradcheck or {})) do
        local v = f.gradcheck[k]
        local a = type(k) == "string" and op.arg_by_name[k] or nil
        if not a or a.t.tensor ~= "float" or (v ~= "positive" and v ~= "above_one") then
          err(e, "gradcheck", string.format("expected float input = \"positive\" or \"above_one\", got %s = %s", show(k), show(v)))
        end
      end
      if f.bound == nil and f.backward ~= nil then
        err(e, nil, "a differentiable op says whether it is bound = 'memory' or 'compute' (checkpointing)")
      end
    end
  end

  -- Decompositions: typed against the whole model, then no cycles, then per backend which
  -- ops are native, composite or unavailable (gen/tdgen/decomp.lua).
  for _, op in ipairs(model.ops) do
    if op.fields.decompose ~= nil then
      local plan, derrs = decomp.compile(op, model)
      if plan then op.decomp = plan
      else for _, m in ipairs(derrs) do err(op.entry, "decompose", m) end end
    end
  end
  for _, c in ipairs(decomp.check_cycles(model)) do err(c.op.entry, "decompose", c.msg) end
  for _, op in ipairs(model.ops) do
    -- A float op with a decomposition and no formulas: autodiff runs the decomposition on
    -- its own tensors, so the pieces are recorded and differentiated.
    op.ad_decomp = op.decomp ~= nil and op.is_float and op.float_in and op.backward == nil
      and op.fields.differentiable ~= false
  end
  decomp.availability(model)

  table.sort(model.backends, function(x, y) return x.id < y.id end)
  -- Ops in family order, then in declaration order.
  local fam_index = {}
  for i, fam in ipairs(schema.family_order) do fam_index[fam] = i end
  for i, op in ipairs(model.ops) do op.decl_index = i end
  table.sort(model.ops, function(x, y)
    if x.family ~= y.family then return fam_index[x.family] < fam_index[y.family] end
    return x.decl_index < y.decl_index
  end)
  for _, op in ipairs(model.ops) do
    for _, b in ipairs(model.backends) do
      if b.ops[op.name] then op.backends[#op.backends + 1] = b.name end
    end
  end
  -- Tuples (several ops' results together) refer to the ops.
  require("tdgen.tuple").validate(entries, model, err, check_fields, suggest, text_problem)
  -- What each backend can run of autodiff, for every emitter (gen/tdgen/needs.lua).
  if #queries == 0 then needs.analyze(model) end
  resolve_lines(queries)
  local errors = {}
  for i, q in ipairs(queries) do
    local entry = q.entry
    local name = type(entry.fields.name) == "string" and show(entry.fields.name)
      or ("<" .. entry.decl .. " without a name>")
    errors[i] = string.format("%s:%d: %s: %s%s", entry.file, q.line, name,
      q.field and (show(q.field) .. ": ") or "", q.msg)
  end
  return model, errors
end

return M
