op {
  name = "myop",
  family = "unary_float",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
}
