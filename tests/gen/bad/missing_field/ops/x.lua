op {
  name = "myop", id = 0,
  family = "unary_float",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}
