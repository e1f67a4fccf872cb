backend {
  name = "cpu", id = 0,
  doc = "Test backend.",
  option = "TD_BACKEND_CPU",
  default = true,
  dtypes = { "f32" },
  kernels = ".",
  ops = { "mul2", "mul3" },
}
