backend {
  name = "one", id = 3,
  doc = "A backend.", option = "TD_BACKEND_ONE", default = true, dtypes = { "f32" }, kernels = ".",
  ops = { "op_a" },
}
backend {
  name = "two", id = 3,
  doc = "A backend.", option = "TD_BACKEND_TWO", default = true, dtypes = { "f32" }, kernels = ".",
  ops = { "op_a" },
}
backend {
  name = "three", id = 63,
  doc = "A backend.", option = "TD_BACKEND_THREE", default = true, dtypes = { "f32" }, kernels = ".",
  ops = { "op_a" },
}
