op {
  name = "int_neg",
  family = "unary",
  doc = "Elementwise -a.",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
}
