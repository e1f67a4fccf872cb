op {
  name = "shaped", id = 0, family = "unary_float", doc = "A view with a non-boolean flag.",
  args = { "float a", "shape shape" }, returns = "float", shape = "reshape(a, shape)", view = "yes",
  differentiable = false, why = "A test.",
}

op {
  name = "two_in", id = 1, family = "binary_float", doc = "Two tensors cannot be one storage.",
  args = { "float a", "float b" }, returns = "float", shape = "broadcast(a, b)", view = true,
  differentiable = false, why = "A test.",
}

op {
  name = "cast_view", id = 2, family = "unary_float", doc = "Another class is another storage.",
  args = { "float a" }, returns = "int", shape = "same(a)", view = true,
}

op {
  name = "decomposed", id = 3, family = "unary_float", doc = "A view has nothing to decompose.",
  args = { "float a", "shape shape" }, returns = "float", shape = "reshape(a, shape)", view = true,
  decompose = "ok_view(a, shape)", differentiable = false, why = "A test.",
}

op {
  name = "ok_view", id = 4, family = "unary_float", doc = "A good view.",
  args = { "float a", "shape shape" }, returns = "float", shape = "reshape(a, shape)", view = true,
  differentiable = false, why = "A test.",
}
