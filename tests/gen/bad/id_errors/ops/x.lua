-- Ids are stable public values: each op names its own, once, in range.
op {
  name = "op_a", id = 7,
  family = "unary_float", doc = "Elementwise -a.", args = { "float a" }, returns = "float",
  differentiable = false, why = "a corpus fixture", shape = "same(a)",
}
op {
  name = "op_b", id = 7,
  family = "unary_float", doc = "Elementwise -a.", args = { "float a" }, returns = "float",
  differentiable = false, why = "a corpus fixture", shape = "same(a)",
}
op {
  name = "op_c",
  family = "unary_float", doc = "Elementwise -a.", args = { "float a" }, returns = "float",
  differentiable = false, why = "a corpus fixture", shape = "same(a)",
}
op {
  name = "op_d",
  id = 1.5,
  family = "unary_float", doc = "Elementwise -a.", args = { "float a" }, returns = "float",
  differentiable = false, why = "a corpus fixture", shape = "same(a)",
}
op {
  name = "op_e", id = 5000,
  family = "unary_float", doc = "Elementwise -a.", args = { "float a" }, returns = "float",
  differentiable = false, why = "a corpus fixture", shape = "same(a)",
}
