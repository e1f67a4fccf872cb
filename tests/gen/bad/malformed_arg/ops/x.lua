op {
  name = "op_noname", id = 0,
  family = "unary_float",
  doc = "An argument without a name.",
  args = { "float" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}

op {
  name = "op_number", id = 1,
  family = "unary_float",
  doc = "An argument that is a number.",
  args = { 3 },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}
