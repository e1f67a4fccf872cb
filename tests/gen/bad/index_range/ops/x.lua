op {
  name = "mypick", id = 0,
  family = "unary_float",
  doc = "Picks rows of a at indices along dim.",
  args = { "float a", "dim dim", "int indices", "f32 scale" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "select(a, dim, indices)",
  index_range = { a = "size(a, dim)", indices = "size(b, dim)", scale = "size(a, 0)" },
}

op {
  name = "myhot", id = 1,
  family = "unary",
  doc = "One-hot of indices.",
  args = { "int indices", "i64 classes", "f32 scale" },
  returns = "int",
  shape = "one_hot(indices, classes)",
  index_range = { indices = "size(indices, classes)" },
}

op {
  name = "myhot2", id = 2,
  family = "unary",
  doc = "One-hot of indices.",
  args = { "int indices", "i64 classes", "f32 scale" },
  returns = "int",
  shape = "one_hot(indices, classes)",
  index_range = { indices = "scale" },
}
