-- Writes the C program docs/tutorial.md shows: its ```c blocks, in order, one after the
-- other (each preceded by a #line naming the tutorial, so compiler messages point there).
-- usage: lua5.4 tutorial_code.lua docs/tutorial.md OUT.c
local md_path, out_path = arg[1], arg[2]
if not md_path or not out_path then
  io.stderr:write("usage: tutorial_code.lua TUTORIAL.md OUT.c\n")
  os.exit(2)
end
local f, err = io.open(md_path, "rb")
if not f then
  io.stderr:write("tutorial_code: ", err, "\n")
  os.exit(1)
end
local text = f:read("a")
f:close()
local parts, line, n = {}, 1, 0
local pos = 1
while true do
  local s, e = text:find("\n```c\n", pos, true)
  if not s then break end
  local close = text:find("\n```\n", e, true) or text:find("\n```$", e)
  if not close then
    io.stderr:write("tutorial_code: ", md_path, ": a ```c block is not closed\n")
    os.exit(1)
  end
  local _, before = text:sub(1, e):gsub("\n", "")
  n = n + 1
  parts[#parts + 1] = string.format('#line %d "%s"\n', before + 1, md_path)
  parts[#parts + 1] = text:sub(e + 1, close)
  pos = close + 1
end
if n == 0 then
  io.stderr:write("tutorial_code: ", md_path, " has no ```c block\n")
  os.exit(1)
end
local body = table.concat(parts)
local old = io.open(out_path, "rb")
if old then
  local same = old:read("a") == body
  old:close()
  if same then os.exit(0) end
end
local o, oerr = io.open(out_path, "wb")
if not o then
  io.stderr:write("tutorial_code: ", oerr, "\n")
  os.exit(1)
end
o:write(body)
o:close()
