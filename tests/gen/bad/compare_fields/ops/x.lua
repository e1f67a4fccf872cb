op {
  name = "mylog",
  family = "unary_float",
  doc = "Elementwise log a.",
  args = { "float a", "f32 base" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  nmse = -1,
  domain = { a = "postive", base = "positive", b = "nonzero" },
}

op {
  name = "myidiv",
  family = "binary",
  doc = "Elementwise a / b.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  nmse = 1e-6,
  domain = { a = "positive", b = "nonzero" },
}

op {
  name = "mynan",
  family = "unary_float",
  doc = "Elementwise a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  nmse = 0 / 0,
  domain = { "positive" },
}
