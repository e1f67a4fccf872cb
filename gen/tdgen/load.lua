-- Loads spec files in a sandbox: the only globals are the declaration functions, and
-- each run is bounded in time and memory.
local util = require("tdgen.util")

local M = {}

-- The bounds of one spec file. Callers may pass smaller ones (the fuzzer does).
M.limits = {
  bytes = 16 * 1024 * 1024,  -- size of the file
  instructions = 2000000,    -- VM instructions (the largest spec in specs/ runs about 3200)
  memory = 64 * 1024 * 1024, -- bytes the run may allocate and keep
  seconds = 5,               -- CPU time, for what instructions do not count (below)
}

-- Lua names the chunk in its messages ("spec:12: ..."); the path is put back afterwards,
-- so a long path or one with ':' in it still gives "path:line:".
local CHUNK = "spec"
-- A function has at most 255 registers; one concatenation joins some of them.
local MAX_REGISTERS = 255
-- Objects the run may not see in its own heap growth (bookkeeping of the loader).
local SLACK = 1024
-- Bytes an instruction's work may grow with (copying or comparing strings, moving the
-- stack) between two looks at the clock.
local CHECK_WORK = 16 * 1024 * 1024

-- The count hook that bounds one run; `fail(msg)` raises the run's error. It runs before
-- every instruction of the spec and of the declaration functions it calls.
--
-- Time: instructions are counted, so a runaway loop stops at the same place on every run;
-- CPU time is the backstop for instructions whose cost grows with their operands
-- (copying or comparing long strings) and for the memory checks' own work.
-- Memory: the heap may not grow past the limit, and neither may the next instruction.
-- Only a concatenation can multiply memory in one instruction, and its result is at most
-- the sum of the strings in the running function's registers, so those are summed when
-- the heap (or the source, which holds the constants) is large enough for it to matter.
local function guard(limits, srclen, fail)
  local gc, getinfo, getlocal, clock = collectgarbage, debug.getinfo, debug.getlocal, os.clock
  local max_used, max_mem = limits.instructions, limits.memory
  local frame_size = setmetatable({}, { __mode = "k" })
  -- While the heap has grown less than this, no instruction can pass the limit: even a
  -- concatenation of every register, each holding the biggest string there can be, fits.
  local fast = math.min(max_mem - MAX_REGISTERS * (srclen + SLACK),
    (max_mem - MAX_REGISTERS * SLACK) / (MAX_REGISTERS + 1))
  local function too_much()
    fail(string.format("the spec uses too much memory (more than %d MiB)", max_mem // (1024 * 1024)))
  end
  collectgarbage("collect")
  local base = gc("count") * 1024
  local deadline = clock() + limits.seconds
  local used, next_check = 0, 0
  return function()
    used = used + 1
    if used > max_used then fail("the spec ran too long (runaway loop?)") end
    local grown = gc("count") * 1024 - base
    if used < next_check and grown <= fast then return end
    local biggest = (grown > srclen and grown or srclen) + SLACK
    if used >= next_check then
      if clock() > deadline then fail("the spec ran too long (runaway loop?)") end
      -- Every 1024 instructions, or sooner when the strings and stack an instruction
      -- can touch are large.
      next_check = used + math.max(1, math.min(1024, CHECK_WORK // biggest))
    end
    if grown <= fast then return end
    if grown > max_mem then
      collectgarbage("collect") -- garbage does not count
      grown = gc("count") * 1024 - base
      if grown > max_mem then too_much() end
      biggest = (grown > srclen and grown or srclen) + SLACK
    end
    if grown + MAX_REGISTERS * biggest <= max_mem then return end
    local f = getinfo(2, "f").func
    local n = frame_size[f]
    if not n then
      n = 0
      while getlocal(2, n + 1) ~= nil do n = n + 1 end
      frame_size[f] = n
    end
    if grown + n * biggest <= max_mem then return end
    local sum = 0
    for i = 1, n do
      local _, v = getlocal(2, i)
      if type(v) == "string" then sum = sum + #v end
    end
    if grown + sum > max_mem then
      collectgarbage("collect")
      if gc("count") * 1024 - base + sum > max_mem then too_much() end
    end
  end
end

-- The line of the innermost spec function on a (failed) coroutine's stack.
local function spec_line(co)
  local level = 0
  while true do
    local info = debug.getinfo(co, level, "Sl")
    if not info then return 1 end
    if info.source == "=" .. CHUNK and info.currentline and info.currentline > 0 then return info.currentline end
    level = level + 1
  end
end

-- Runs the text of one spec file, named `path` in messages. Returns a list of entries
-- {decl, file, line, fields, source} and a list of error strings ("file:line: message").
-- `source` is shared by the entries of a file: { text = the file's text }.
function M.load_text(src, path, allowed_decl, limits)
  limits = limits or M.limits
  local entries = {}
  if #src > limits.bytes then
    return {}, { string.format("%s:1: the spec file is too large (%d bytes; at most %d)", path, #src, limits.bytes) }
  end
  local source = { text = src }

  local function declare(decl)
    return function(fields)
      local info = debug.getinfo(2, "Sl")
      if not info or info.source ~= "=" .. CHUNK then
        -- `return op { ... }` at the top of a file leaves no caller to take the line from.
        error(string.format("write %s { ... } as a statement, not as a returned value", decl), 0)
      end
      local line = info.currentline
      if type(fields) ~= "table" then
        error(string.format("%s expects a table: %s { name = ..., ... }", decl, decl), 2)
      end
      if decl ~= allowed_decl and not (decl == "tuple" and allowed_decl == "op") then
        local home = { backend = "backends/*.lua", op = "ops/*.lua", tuple = "ops/*.lua", dtype = "dtypes.lua" }
        error(string.format("'%s' declarations belong in %s, not in %s", decl, home[decl], home[allowed_decl]), 2)
      end
      entries[#entries + 1] = { decl = decl, file = path, line = line, fields = fields, source = source }
    end
  end

  local env = { op = declare("op"), backend = declare("backend"), tuple = declare("tuple"), dtype = declare("dtype") }
  setmetatable(env, {
    __index = function(_, name)
      error(string.format("'%s' is not available in a spec: specs are data, loaded in a sandbox " ..
        "without io, os, require, load or any other global", util.show(name)), 2)
    end,
    __newindex = function(_, name)
      error(string.format("a spec may not set the global '%s'", util.show(name)), 2)
    end,
  })

  local chunk, err = load(src, "=" .. CHUNK, "t", env)
  if not chunk then
    -- Lua says "spec:line: message"; keep the location first, like every other error.
    local line, what = tostring(err):match("^" .. CHUNK .. ":(%d+): (.*)$")
    return {}, { string.format("%s:%s: syntax error: %s", path, line or "1", util.show(what or err, 500)) }
  end
  -- Strings keep no methods while a spec runs (no ("x"):rep(1e12)), and the hook bounds
  -- the run. The hook itself uses no string methods.
  local smt = getmetatable("")
  local saved_index = smt.__index
  local co = coroutine.create(chunk)
  local hook = guard(limits, #src, function(msg) error(msg, 0) end)
  smt.__index = nil
  debug.sethook(co, hook, "", 1)
  local ok, rerr = coroutine.resume(co)
  smt.__index = saved_index
  if not ok then
    local msg = tostring(rerr)
    local line, what = msg:match("^" .. CHUNK .. ":(%d+): (.*)$")
    return {}, { string.format("%s:%s: %s", path, line or spec_line(co), util.show(what or msg, 500)) }
  end
  return entries, {}
end

-- Reads and runs one spec file; see load_text.
function M.load_file(path, allowed_decl, limits)
  limits = limits or M.limits
  local f = io.open(path, "rb")
  local size = f and f:seek("end")
  if not size then
    if f then f:close() end
    return {}, { path .. ":1: cannot read the file" }
  end
  if size > limits.bytes then
    f:close()
    return {}, { string.format("%s:1: the spec file is too large (%d bytes; at most %d)", path, size, limits.bytes) }
  end
  f:seek("set")
  local src = f:read("a")
  f:close()
  if not src then return {}, { path .. ":1: cannot read the file" } end
  return M.load_text(src, path, allowed_decl, limits)
end

return M
