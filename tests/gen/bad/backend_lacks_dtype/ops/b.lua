op {
  name = "int_neg", id = 1,
  family = "unary",
  doc = "Elementwise -a.",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
}
