-- check_table.lua LUA ROOT FUZZ_OPS_C SPECDIR...: the generated fuzz table (FUZZ_OPS_C)
-- names exactly the ops and tuples `tdgen --list` prints for these spec directories.
local lua, root, table_c = arg[1], arg[2], arg[3]
local specs = {}
for i = 4, #arg do specs[#specs + 1] = "--specs '" .. arg[i] .. "'" end
local p = assert(io.popen(string.format("'%s' '%s/gen/tdgen.lua' %s --list", lua, root, table.concat(specs, " "))))
local listed, n = {}, 0
for line in p:lines() do
  local name = line:match("^(%S+)")
  if name then listed[name] = true; n = n + 1 end
end
assert(p:close(), "tdgen --list failed")
local f = assert(io.open(table_c, "rb"))
local text = f:read("a")
f:close()
local have, m, bad = {}, 0, 0
for name in text:gmatch('\n    { "([%w_]+)", ') do have[name] = true; m = m + 1 end
for name in pairs(listed) do
  if not have[name] then print("not in the fuzz table: " .. name); bad = bad + 1 end
end
for name in pairs(have) do
  if not listed[name] then print("in the fuzz table but not in the specs: " .. name); bad = bad + 1 end
end
print(string.format("check_table: %d ops and tuples listed, %d table entries, %d problems", n, m, bad))
os.exit(bad == 0 and 0 or 1)
