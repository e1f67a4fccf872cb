op {
  name = "myop", id = 0,
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}

op {
  name = "mk", id = 1,
  family = "creation",
  doc = "Zeros.",
  args = { "device device", "shape shape" },
  returns = "float",
  dtype_twin = "sideways",
  shape = "from_shape(shape)",
}

op {
  name = "neg2", id = 2,
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  dtype_twin = "zeros",
  shape = "same(a)",
}

op {
  name = "mm", id = 3,
  family = "binary_float",
  doc = "a @ b, a named as the quantized argument (only a later one may be).",
  args = { "float a", "float b" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  quantized_arg = "a",
  shape = "matmul(a, b)",
}
