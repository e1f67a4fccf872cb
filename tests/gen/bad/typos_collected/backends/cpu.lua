-- Issue 23: a misspelt field name and a misspelt op in one backend are both reported.
backend {
  name = "cpu", id = 0,
  doc = "Test backend.",
  option = "TD_BACKEND_CPU",
  default = true,
  dtype = { "f32" },
  kernels = ".",
  ops = { "float_neg", "float_abz" },
}
