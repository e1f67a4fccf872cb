backend {
  name = "cpu", id = 0,
  doc = "Test backend.",
  option = "TD_BACKEND_CPU",
  default = true,
  dtypes = { "f32" },
  kernels = ".",
  ops = { "myop" },
}

op {
  name = "other", id = 1,
  family = "unary_float",
  doc = "Declared in the wrong folder.",
  args = { "float a" },
  returns = "float",
  shape = "same(a)",
}
