-- Issue 23: a misspelt field name and a wrong value in one entry are both reported.
op {
  name = "float_neg", id = 0,
  familly = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "flaot", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}

op {
  name = "float_abs", id = 1,
  family = "unary_float",
  doc = "Elementwise |a|.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}
