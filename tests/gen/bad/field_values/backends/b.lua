backend {
  name = "other", id = 0,
  doc = "Kernels in a folder CMake cannot read.",
  option = "TD_BACKEND_OTHER",
  default = false,
  dtypes = { "f32" },
  kernels = "runtime/other|ON;$(x)",
  ops = {},
}
