backend {
  name = "cpu", id = 0,
  doc = "Test backend.",
  option = "TD_BACKEND_CPU",
  default = "yes",
  dtypes = { "f32" },
  kernels = ".",
  ops = { "myop" },
}
