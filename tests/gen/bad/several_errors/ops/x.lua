op {
  name = "float_neg", id = 0,
  family = "unary_flaot",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}

op {
  name = "float_abs", id = 1,
  family = "unary_float",
  doc = 42,
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}

op {
  name = "float_exp", id = 2,
  family = "unary_float",
  doc = "Elementwise e^a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(b)",
}
