op {
  name = "neg", id = 0, family = "unary_float", doc = "Elementwise -a.",
  args = { "float a" }, returns = "float", shape = "same(a)", differentiable = false, why = "A test.",
}

op {
  name = "add", id = 1, family = "binary_float", doc = "Elementwise a + b.",
  args = { "float a", "float b" }, returns = "float", shape = "broadcast(a, b)",
  differentiable = false, why = "A test.",
}

op {
  name = "greater", id = 2, family = "binary_float", doc = "Elementwise a > b.",
  args = { "float a", "float b" }, returns = "bool", shape = "broadcast(a, b)",
}

op {
  name = "into_int", id = 3, family = "unary_float", doc = "Casts to int.",
  args = { "float a" }, returns = "int", shape = "same(a)",
}

op {
  name = "unknown_piece", id = 4, family = "unary_float", doc = "Calls an op nobody declared.",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = "float_frobnicate(a)",
}

op {
  name = "wrong_types", id = 5, family = "binary_float", doc = "Passes a bool where a float goes.",
  args = { "float a", "float b" }, returns = "float", shape = "broadcast(a, b)",
  decompose = { "m = greater(a, b)", "add(a, m)" },
}

op {
  name = "wrong_result", id = 6, family = "unary_float", doc = "Returns an int for a float op.",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = "into_int(a)",
}

op {
  name = "last_assigns", id = 7, family = "unary_float", doc = "Ends in an assignment.",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = { "m = neg(a)", "r = neg(m)" },
}

op {
  name = "shadows", id = 8, family = "unary_float", doc = "Names a local like an argument.",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = { "a = neg(a)", "a" },
}

op {
  name = "ping", id = 9, family = "unary_float", doc = "Half of a cycle.",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = "pong(a)",
}

op {
  name = "pong", id = 10, family = "unary_float", doc = "The other half.",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = "neg(ping(a))",
}

op {
  name = "scalar_result", id = 11, family = "unary_float", doc = "Results in a number.",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = "numel(a) * 2",
}

op {
  name = "bool_math", id = 12, family = "binary_float", doc = "Adds bools.",
  args = { "float a", "float b" }, returns = "bool", shape = "broadcast(a, b)",
  decompose = "greater(a, b) + greater(b, a)",
}

op {
  name = "wrong_kind", id = 13, family = "unary_float", doc = "A decompose of the wrong type.",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = 42,
}

op {
  name = "float_array", id = 14, family = "unary_float", doc = "Puts a float in an array.",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = { "s = array(1, 2.5)", "a" },
}

op {
  name = "at_tensor", id = 15, family = "unary_float", doc = "Indexes a tensor with at().",
  args = { "float a" }, returns = "float", shape = "same(a)",
  decompose = { "s = at(a, 0)", "a" },
}
