backend {
  name = "cpu", id = 0,
  doc = "Test backend.",
  option = "TD_BACKEND_CPU",
  default = true,
  dtypes = { "f32", "i32", "bool" },
  kernels = ".",
  accelerated = "yes",
  ops = { "myexp", "myimul" },
}
