-- A 4 MiB unknown field name: the "did you mean" search must not compare it letter by letter.
local name = "tolerance"
for _ = 1, 19 do name = name .. name end
op {
  name = "myop", id = 0,
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  [name] = 1,
  tolerence = 1e-4,
}
