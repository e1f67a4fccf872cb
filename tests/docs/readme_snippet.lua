-- Fails when the C block under README.md's "## Using it" differs from the example file it
-- shows (examples/readme_example.c, which the suite builds and runs).
-- usage: lua5.4 readme_snippet.lua README.md examples/readme_example.c
local readme_path, example_path = arg[1], arg[2]
if not readme_path or not example_path then
  io.stderr:write("usage: readme_snippet.lua README.md EXAMPLE.c\n")
  os.exit(2)
end
local function slurp(path)
  local f, err = io.open(path, "rb")
  if not f then
    io.stderr:write("readme_snippet: ", err, "\n")
    os.exit(1)
  end
  local s = f:read("a")
  f:close()
  return s
end
local readme, example = slurp(readme_path), slurp(example_path)

local section = readme:match("\n## Using it\n(.-)\n## ") or readme:match("\n## Using it\n(.*)$")
if not section then
  io.stderr:write("readme_snippet: ", readme_path, " has no '## Using it' section\n")
  os.exit(1)
end
local block = section:match("```c\n(.-\n)```")
if not block then
  io.stderr:write("readme_snippet: the '## Using it' section of ", readme_path, " has no ```c block\n")
  os.exit(1)
end
if block == example then
  print("ok - README.md's 'Using it' code is " .. example_path)
  os.exit(0)
end
local function lines(s)
  local t = {}
  for l in s:gmatch("([^\n]*)\n") do t[#t + 1] = l end
  return t
end
local a, b = lines(block), lines(example)
for i = 1, math.max(#a, #b) do
  if a[i] ~= b[i] then
    io.stderr:write(string.format("readme_snippet: README.md's 'Using it' code and %s differ at line %d:\n" ..
      "  README:  %s\n  example: %s\n(copy the example into the README, or the README's block into the example)\n",
      example_path, i, a[i] or "(end of block)", b[i] or "(end of file)"))
    break
  end
end
os.exit(1)
