-- Loads spec files in a sandbox: the only globals are the declaration functions.
local util = require("tdgen.util")

local M = {}

local INSTRUCTION_LIMIT = 10000000

-- Runs one spec file. Returns a list of entries {decl, file, line, fields, lines}
-- and a list of error strings ("file:line: message").
function M.load_file(path, allowed_decl)
  local errors, entries = {}, {}
  local src = util.read_file(path)
  if not src then
    return entries, { path .. ":1: cannot read the file" }
  end
  local lines = {}
  for l in (src .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end

  local function declare(decl)
    return function(fields)
      local line = debug.getinfo(2, "l").currentline
      if type(fields) ~= "table" then
        error(string.format("%s expects a table: %s { name = ..., ... }", decl, decl), 2)
      end
      if decl ~= allowed_decl then
        error(string.format("'%s' declarations belong in %s, not in %s", decl,
          decl == "op" and "ops/*.lua" or "backends/*.lua", decl == "op" and "backends/*.lua" or "ops/*.lua"), 2)
      end
      entries[#entries + 1] = { decl = decl, file = path, line = line, fields = fields, lines = lines }
    end
  end

  local env = { op = declare("op"), backend = declare("backend") }
  setmetatable(env, {
    __index = function(_, name)
      error(string.format("'%s' is not available in a spec: specs are data, loaded in a sandbox " ..
        "without io, os, require, load or any other global", tostring(name)), 2)
    end,
    __newindex = function(_, name)
      error(string.format("a spec may not set the global '%s'", tostring(name)), 2)
    end,
  })

  local chunk, err = load(src, "@" .. path, "t", env)
  if not chunk then
    -- Lua says "path:line: message"; keep the location first, like every other error.
    local where, what = err:match("^(.-:%d+): (.*)$")
    return {}, { where and (where .. ": syntax error: " .. what) or (path .. ":1: syntax error: " .. err) }
  end
  -- Strings keep no methods while a spec runs (no ("x"):rep(1e12)), and runaway loops stop.
  local smt = getmetatable("")
  local saved_index = smt.__index
  smt.__index = nil
  local co = coroutine.create(chunk)
  debug.sethook(co, function() error("the spec ran too long (runaway loop?)", 2) end, "", INSTRUCTION_LIMIT)
  local ok, rerr = coroutine.resume(co)
  smt.__index = saved_index
  if not ok then
    local msg = tostring(rerr)
    if not msg:match("^[^:]+:%d+:") then msg = path .. ":1: " .. msg end
    return {}, { msg }
  end
  return entries, errors
end

return M
