-- Validates loaded spec entries and builds the model the emitters walk.
-- Every error names file:line, the entry and the field; all are collected.
local schema = require("tdgen.schema")
local formula = require("tdgen.formula")

local M = {}

local function field_line(entry, field)
  local lines = entry.lines
  local stop = entry.next_line or (#lines + 1)
  local pat = "^%s*" .. field .. "%s*="
  for i = entry.line, stop - 1 do
    if lines[i] and lines[i]:match(pat) then return i end
  end
  for i = entry.line, stop - 1 do -- fields written on the declaration line
    if lines[i] and lines[i]:match("[{,]%s*" .. field .. "%s*=") then return i end
  end
  return entry.line
end

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

local function suggest(word, candidates)
  local best, bestd
  for _, c in ipairs(candidates) do
    local d = distance(word, c)
    if d <= 2 and (not bestd or d < bestd) then best, bestd = c, d end
  end
  return best and (" (did you mean '" .. best .. "'?)") or ""
end

local function keys_of(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

local function is_array(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

-- Checks the fields of an entry against a field table; returns false when the entry
-- lacks what the rest of the validation needs.
local function check_fields(entry, label, fields, required, err)
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
    if f[k] ~= nil and type(f[k]) ~= fields[k] then
      err(entry, k, string.format("expected a %s, got a %s", fields[k], type(f[k])))
      ok = false
    end
  end
  return ok
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

function M.validate(entries)
  local errors = {}
  local function err(entry, field, msg)
    local name = type(entry.fields.name) == "string" and entry.fields.name or ("<" .. entry.decl .. " without a name>")
    local line = field and field_line(entry, field) or entry.line
    errors[#errors + 1] = string.format("%s:%d: %s: %s%s", entry.file, line, name,
      field and (field .. ": ") or "", msg)
  end

  -- Each entry's span ends where the next one of the same file starts.
  for i, e in ipairs(entries) do
    local n = entries[i + 1]
    if n and n.file == e.file then e.next_line = n.line end
  end

  local model = { backends = {}, ops = {}, op_by_name = {}, backend_by_name = {} }

  -- Ops first: backends refer to them.
  for _, e in ipairs(entries) do
    if e.decl == "op" then
      local f = e.fields
      local ok = check_fields(e, "op", schema.op_fields, schema.op_required, err)
      if type(f.name) == "string" and not f.name:match("^[a-z][a-z0-9_]*$") then
        err(e, "name", "'" .. f.name .. "' is not a lower-case identifier")
        ok = false
      end
      if ok and model.op_by_name[f.name] then
        local prev = model.op_by_name[f.name]
        err(e, "name", string.format("duplicate op (first declared at %s:%d)", prev.file, prev.line))
        ok = false
      end
      local op = { name = f.name, family = f.family, doc = f.doc, returns = f.returns, file = e.file,
        line = e.line, args = {}, arg_by_name = {}, examples = f.examples, tolerance = f.tolerance or 1e-5,
        semantics = f.semantics, backends = {}, entry = e, fields = f }
      if ok then
        if not schema.families[f.family] then
          err(e, "family", "unknown family '" .. f.family .. "'" .. suggest(f.family, schema.family_order) ..
            "; families: " .. table.concat(schema.family_order, ", "))
          ok = false
        end
        if not schema.returns[f.returns] then
          err(e, "returns", "unknown result '" .. f.returns .. "'; expected float, int, bool, host or none")
          ok = false
        end
        if not is_array(f.args) then
          err(e, "args", "expected an array of \"type name\" strings")
          ok = false
        else
          for i, a in ipairs(f.args) do
            local ty, name = nil, nil
            if type(a) == "string" then ty, name = a:match("^%s*([%a_][%w_]*)%s+([%a_][%w_]*)%s*$") end
            if not ty then
              err(e, "args", string.format("argument %d: malformed argument %s; expected \"type name\"", i,
                type(a) == "string" and ("'" .. a .. "'") or ("(a " .. type(a) .. ")")))
              ok = false
            elseif not schema.types[ty] then
              err(e, "args", string.format("argument %d: unknown type or primitive kind '%s'%s", i, ty,
                suggest(ty, keys_of(schema.types))))
              ok = false
            elseif schema.reserved_names[name] or name:match("^td_") then
              err(e, "args", string.format("argument %d: the name '%s' is reserved", i, name))
              ok = false
            elseif op.arg_by_name[name] then
              err(e, "args", string.format("argument %d: duplicate argument name '%s'", i, name))
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
          err(e, "bound", "expected 'memory' or 'compute', got '" .. tostring(f.bound) .. "'")
          ok = false
        end
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
            err(e, "shape", "malformed shape rule '" .. f.shape .. "'; expected rule(arg, ...)")
            ok = false
          elseif not schema.rules[rule] then
            err(e, "shape", "unknown shape rule '" .. rule .. "'" .. suggest(rule, keys_of(schema.rules)))
            ok = false
          elseif #rargs ~= #schema.rules[rule] then
            err(e, "shape", string.format("rule '%s' takes %d arguments, got %d", rule, #schema.rules[rule], #rargs))
            ok = false
          else
            for i, rn in ipairs(rargs) do
              local arg = op.arg_by_name[rn]
              local want = schema.rules[rule][i]
              if not arg then
                err(e, "shape", string.format("rule '%s': '%s' is not an argument of %s", rule, rn, f.name))
                ok = false
              elseif schema.param_kind(arg.type) ~= want then
                err(e, "shape", string.format("rule '%s': argument %d ('%s', a %s) must be a %s", rule, i, rn,
                  arg.type, want))
                ok = false
              end
            end
            op.rule = { name = rule, args = rargs }
          end
        end
      end
      if f.examples ~= nil and not is_array(f.examples) then
        err(e, "examples", "expected an array of example tables")
        ok = false
      elseif ok and f.examples then
        for i, ex in ipairs(f.examples) do
          if type(ex) ~= "table" then
            err(e, "examples", string.format("example %d: expected a table", i)); ok = false
          else
            for k in pairs(ex) do
              if k ~= "out" and not op.arg_by_name[k] then
                err(e, "examples", string.format("example %d: '%s' is not an argument of %s", i, tostring(k), f.name))
                ok = false
              end
            end
            if ex.out == nil then err(e, "examples", string.format("example %d: no 'out'", i)); ok = false end
          end
        end
      end
      if ok then
        model.ops[#model.ops + 1] = op
        model.op_by_name[op.name] = op
      elseif type(f.name) == "string" and not model.op_by_name[f.name] then
        model.op_by_name[f.name] = { broken = true, file = e.file, line = e.line, name = f.name }
      end
    end
  end

  for _, e in ipairs(entries) do
    if e.decl == "backend" then
      local f = e.fields
      local ok = check_fields(e, "backend", schema.backend_fields, schema.backend_required, err)
      if type(f.name) == "string" then
        if not f.name:match("^[a-z][a-z0-9_]*$") then
          err(e, "name", "'" .. f.name .. "' is not a lower-case identifier"); ok = false
        elseif f.name == "autodiff" then
          err(e, "name", "'autodiff' is the built-in wrapping backend; choose another name"); ok = false
        elseif model.backend_by_name[f.name] then
          local prev = model.backend_by_name[f.name]
          err(e, "name", string.format("duplicate backend (first declared at %s:%d)", prev.file, prev.line))
          ok = false
        end
      end
      if type(f.option) == "string" and not f.option:match("^[A-Z][A-Z0-9_]*$") then
        err(e, "option", "'" .. f.option .. "' is not an upper-case CMake option name"); ok = false
      end
      local b = { name = f.name, doc = f.doc, option = f.option, default = f.default, kernels = f.kernels,
        collectives = f.collectives or false, dtypes = {}, ops = {}, file = e.file, line = e.line }
      if ok then
        if not is_array(f.dtypes) or #f.dtypes == 0 then
          err(e, "dtypes", "expected a non-empty array of dtypes (f32, i32, bool)"); ok = false
        else
          for _, d in ipairs(f.dtypes) do
            if not schema.dtypes[d] then
              err(e, "dtypes", "unknown dtype '" .. tostring(d) .. "'" ..
                suggest(tostring(d), schema.dtype_order) .. "; dtypes: f32, i32, bool")
              ok = false
            else
              b.dtypes[d] = true
            end
          end
        end
        if not is_array(f.ops) then
          err(e, "ops", "expected an array of op names"); ok = false
        else
          for _, name in ipairs(f.ops) do
            local op = model.op_by_name[name]
            if type(name) ~= "string" then
              err(e, "ops", "expected op names (strings), got a " .. type(name)); ok = false
            elseif not op then
              local names = {}
              for _, o in ipairs(model.ops) do names[#names + 1] = o.name end
              err(e, "ops", "op '" .. name .. "' is listed but not declared in any ops/*.lua" .. suggest(name, names))
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
      if f.backward == nil and f.differentiable ~= false then
        err(e, nil, "a float op needs 'backward' formulas, or 'differentiable = false' with 'why'")
      elseif f.backward ~= nil and f.differentiable == false then
        err(e, "differentiable", "'differentiable = false' contradicts the 'backward' formulas")
      elseif f.differentiable == false and type(f.why) ~= "string" then
        err(e, "why", "'differentiable = false' needs 'why', a sentence saying why")
      elseif f.backward ~= nil then
        local okb = true
        for k, v in pairs(f.backward) do
          local a = type(k) == "string" and op.arg_by_name[k] or nil
          if not a or not (a.t.tensor == "float" or a.t.list == "float") then
            err(e, "backward", string.format("'%s' is not a float tensor input of %s", tostring(k), op.name)); okb = false
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
      for k, v in pairs(f.gradcheck or {}) do
        local a = type(k) == "string" and op.arg_by_name[k] or nil
        if not a or a.t.tensor ~= "float" or v ~= "positive" then
          err(e, "gradcheck", string.format("expected float input = \"positive\", got %s = %s", tostring(k), tostring(v)))
        end
      end
      if f.bound == nil and f.backward ~= nil then
        err(e, nil, "a differentiable op says whether it is bound = 'memory' or 'compute' (checkpointing)")
      end
    end
  end

  table.sort(model.backends, function(x, y) return x.name < y.name end)
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
  return model, errors
end

return M
