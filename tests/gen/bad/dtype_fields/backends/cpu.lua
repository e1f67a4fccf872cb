backend {
  name = "cpu", id = 0,
  doc = "Test backend.",
  option = "TD_BACKEND_CPU",
  default = true,
  dtypes = { "f32", "i32", "f16" },
  computes = { float = { "f16", "f64" }, complex = { "c64" }, int = { "f32" } },
  op_dtypes = { myop = { "u8" }, other = { "f32" } },
  kernels = ".",
  ops = { "myop" },
}
