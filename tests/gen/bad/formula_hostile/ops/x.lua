-- Formulas built to cost time or stack: 200 nested parentheses, 131072 digits, and a
-- number no float holds.
local open, close = "", ""
for _ = 1, 200 do
  open = open .. "("
  close = close .. ")"
end
local digits = "1"
for _ = 1, 17 do digits = digits .. digits end

op {
  name = "myop", id = 0,
  family = "binary_float",
  doc = "Elementwise a * b.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  backward = { a = "grad * " .. open .. "b" .. close, b = "grad * " .. digits .. "x" },
  bound = "memory",
}

op {
  name = "myop2", id = 1,
  family = "binary_float",
  doc = "Elementwise a * b.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  backward = { a = "grad * 1e999", b = "grad * a" },
  bound = "memory",
}
