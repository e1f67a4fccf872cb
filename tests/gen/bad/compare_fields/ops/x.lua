op {
  name = "mylog", id = 0,
  family = "unary_float",
  doc = "Elementwise log a.",
  args = { "float a", "f32 base" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  nmse = -1,
  domain = { a = "postive", base = "positive", b = "nonzero" },
}

op {
  name = "myidiv", id = 1,
  family = "binary",
  doc = "Elementwise a / b.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  nmse = 1e-6,
  zero_sign = true,
  domain = { a = "positive", b = "nonzero" },
}

op {
  name = "mynan", id = 2,
  family = "unary_float",
  doc = "Elementwise a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  nmse = 0 / 0,
  domain = { "positive" },
}
