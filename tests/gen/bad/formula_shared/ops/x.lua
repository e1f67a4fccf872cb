op {
  name = "mul2", id = 1,
  family = "binary_float",
  doc = "Elementwise a * b.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  backward = { shared = { "g2 = grad * i", "a = grad", "g3 grad", "g4 = unpacked(grad)" }, a = "g2 * b", b = "g5 * a" },
  bound = "compute",
}

op {
  name = "mul3", id = 2,
  family = "binary_float",
  doc = "Elementwise a * b.",
  args = { "float a", "float b" },
  returns = "float",
  shape = "broadcast(a, b)",
  backward = { shared = "all = grad", a = "all * b", b = "all * a" },
  bound = "compute",
}
