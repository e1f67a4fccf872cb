op {
  name = "myexp", id = 0,
  family = "unary_float",
  doc = "Elementwise exp a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  dtype_nmse = { f16 = 2, f32 = 1e-6, q9 = 1e-3, bf16 = "big", i64 = 1e-3 },
  int_degree = 1,
}

op {
  name = "myimul", id = 1,
  family = "binary",
  doc = "Elementwise a * b.",
  args = { "int a", "int b" },
  returns = "int",
  shape = "broadcast(a, b)",
  dtype_nmse = { f16 = 1e-6 },
  int_degree = 3,
}

