-- Doubling a string: 2^40 bytes unless the loader stops it.
local s = "x"
for i = 1, 40 do
  s = s .. s
end
