op {
  name = "float_neg", id = 0,
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}
