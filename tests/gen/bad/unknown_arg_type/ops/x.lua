op {
  name = "myop", id = 0,
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "flaot a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}
