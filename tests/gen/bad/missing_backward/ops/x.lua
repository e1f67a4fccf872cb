op {
  name = "myop",
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
}
