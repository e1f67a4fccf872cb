op {
  name = "myop",
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "flaot a" },
  returns = "float",
  shape = "same(a)",
}
