op {
  name = "myop", id = 1,
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}
