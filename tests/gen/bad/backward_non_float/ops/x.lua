op {
  name = "int_neg", id = 0,
  family = "unary",
  doc = "Elementwise -a.",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
  backward = { a = "-grad" },
}
