-- Small helpers: an output buffer, sorted iteration, atomic write-if-changed.
local M = {}

-- A buffer of lines: b:put(fmt, ...) appends one formatted line; b:text() joins them.
function M.buffer()
  local parts = {}
  local b = {}
  function b:put(fmt, ...)
    if select("#", ...) > 0 then
      parts[#parts + 1] = string.format(fmt, ...)
    else
      parts[#parts + 1] = fmt
    end
    parts[#parts + 1] = "\n"
  end
  function b:raw(s) parts[#parts + 1] = s end
  function b:text() return table.concat(parts) end
  return b
end

function M.read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- Writes content to path through a temporary file and a rename, and only when the
-- content differs, so an unchanged file keeps its timestamp (no needless rebuilds).
function M.write_if_changed(path, content)
  if M.read_file(path) == content then return false end
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error("cannot write " .. tmp .. ": " .. tostring(err), 0) end
  f:write(content)
  f:close()
  local ok, rerr = os.rename(tmp, path)
  if not ok then
    os.remove(tmp)
    error("cannot rename " .. tmp .. " to " .. path .. ": " .. tostring(rerr), 0)
  end
  return true
end

-- Lists the *.lua files of a directory, sorted; nil and a message when it cannot be read.
function M.list_lua(dir)
  local p = io.popen('ls -1 "' .. dir:gsub('"', '\\"') .. '" 2>/dev/null')
  if not p then return nil end
  local files = {}
  for line in p:lines() do
    if line:match("%.lua$") then files[#files + 1] = dir .. "/" .. line end
  end
  p:close()
  table.sort(files)
  return files
end

function M.is_dir(path)
  local p = io.popen('test -d "' .. path:gsub('"', '\\"') .. '" && echo yes')
  if not p then return false end
  local r = p:read("a")
  p:close()
  return r:match("yes") ~= nil
end

function M.upper(s) return (s:upper():gsub("[^%w]", "_")) end

-- A Lua string as a C string literal.
function M.c_string(s)
  return '"' .. s:gsub('[\\"]', "\\%0"):gsub("\n", "\\n") .. '"'
end

return M
