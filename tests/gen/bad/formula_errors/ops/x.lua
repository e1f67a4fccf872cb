op {
  name = "myop", id = 0,
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
  backward = { a = "-grad * cosh(a)" },
  bound = "memory",
}

op {
  name = "mul2", id = 1,
  family = "binary_float",
  doc = "Elementwise a * b.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  backward = { a = "grad * c", b = "grad * (a" },
  bound = "compute",
}
