-- Out of tree (tests/gen/test_cli.lua passes this directory with --extra-specs): ids 32-62.
backend {
  name = "seven", id = 7,
  doc = "Test backend.", option = "TD_BACKEND_SEVEN", default = false, dtypes = { "f32" },
  kernels = ".", ops = { "float_neg" },
}

backend {
  name = "low", id = 31,
  doc = "Test backend.", option = "TD_BACKEND_LOW", default = false, dtypes = { "f32" },
  kernels = ".", ops = { "float_neg" },
}

backend {
  name = "first", id = 32,
  doc = "Test backend.", option = "TD_BACKEND_FIRST", default = false, dtypes = { "f32" },
  kernels = ".", ops = { "float_neg" },
}

backend {
  name = "last", id = 62,
  doc = "Test backend.", option = "TD_BACKEND_LAST", default = false, dtypes = { "f32" },
  kernels = ".", ops = { "float_neg" },
}

backend {
  name = "over", id = 63,
  doc = "Test backend.", option = "TD_BACKEND_OVER", default = false, dtypes = { "f32" },
  kernels = ".", ops = { "float_neg" },
}
