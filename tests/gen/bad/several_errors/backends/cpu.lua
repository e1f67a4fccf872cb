backend {
  name = "cpu", id = 0,
  doc = "Test backend.",
  option = "TD_BACKEND_CPU",
  default = true,
  dtypes = { "f32", "f17" },
  kernels = ".",
  ops = { "float_neg", "float_abs", "float_exp", "float_gone" },
}
