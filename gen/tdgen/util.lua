-- Small helpers: an output buffer, atomic write-if-changed, directories, message text.
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

-- Spec text quoted in a message: control characters escaped, long text cut; a value of
-- another type is named by its type (never by an address, so messages stay the same from
-- run to run). It calls no string methods: it also runs while a spec does, when strings
-- have none.
function M.show(v, max)
  if type(v) ~= "string" then
    if v ~= v then return "nan" end
    if v == math.huge or v == -math.huge then return v > 0 and "inf" or "-inf" end
    if type(v) == "number" or type(v) == "boolean" or v == nil then return tostring(v) end
    return "(a " .. type(v) .. ")"
  end
  max = max or 200
  if #v > max then v = string.sub(v, 1, max) .. "..." end
  return (string.gsub(v, "%c", function(c) return string.format("\\%d", string.byte(c)) end))
end

-- Directories are listed and created by the shell, but a path never becomes shell text:
-- it is written, NUL-terminated, to a temporary file that `xargs -0` reads and hands to a
-- fixed script as "$1". Quotes, $(...) and backquotes in a path are only characters.
local function shell_on_path(script, path)
  if path:find("\0", 1, true) then return nil end
  local tmp = os.tmpname()
  if not tmp:match("^[%w/._-]+$") then
    os.remove(tmp)
    error("unexpected temporary file name " .. tmp, 0)
  end
  local f = io.open(tmp, "wb")
  if not f then
    os.remove(tmp)
    return nil
  end
  f:write(path, "\0")
  f:close()
  local p = io.popen("xargs -0 sh -c '" .. script .. "' sh < " .. tmp .. " 2>/dev/null")
  local out = p and p:read("a")
  local ok = p and p:close()
  os.remove(tmp)
  return out, ok
end

-- Lists the *.lua files of a directory, sorted (none when it does not exist); nil when
-- the shell could not list it.
function M.list_lua(dir)
  local out, ok = shell_on_path('for f in "$1"/*.lua; do [ -e "$f" ] && printf "%s\\0" "${f##*/}"; done; true', dir)
  if not out or not ok then return nil end
  local files = {}
  for name in out:gmatch("([^\0]*)\0") do files[#files + 1] = dir .. "/" .. name end
  table.sort(files)
  return files
end

-- Creates a directory and its parents; true when it exists afterwards.
function M.make_dir(path)
  if not M.is_dir(path) then shell_on_path('mkdir -p -- "$1"', path) end
  return M.is_dir(path)
end

-- Pure Lua: a directory opens for reading, and reading it fails with EISDIR (21). "/."
-- makes a FIFO or a file fail at once instead.
function M.is_dir(path)
  if path:find("\0", 1, true) then return false end
  local f = io.open(path .. "/.", "rb")
  if not f then return false end
  local ok, _, code = f:read(0)
  f:close()
  return ok == nil and code == 21
end

-- Whether something (a file, a folder) is at path.
function M.exists(path)
  if path:find("\0", 1, true) then return false end
  local f = io.open(path, "rb")
  if not f then return false end
  f:close()
  return true
end

-- Whether t is a table holding exactly the keys 1..#t (a Lua array).
function M.is_array(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

function M.upper(s) return (s:upper():gsub("[^%w]", "_")) end

-- A Lua string as a C string literal.
function M.c_string(s)
  return '"' .. s:gsub('[\\"]', "\\%0"):gsub("\n", "\\n") .. '"'
end

return M
