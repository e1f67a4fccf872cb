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

tuple {
  name = "one_part", doc = "A tuple of one op.",
  parts = { "r = neg" },
}

tuple {
  name = "unknown_part", doc = "A part nobody declared.",
  parts = { "r = neg", "s = frobnicate" },
}

tuple {
  name = "other_args", doc = "Parts that take different arguments.",
  parts = { "r = neg", "s = add" },
}

tuple {
  name = "same_result", doc = "Two results of one name.",
  parts = { "r = neg", "r = into_int" },
}

tuple {
  name = "bad_part", doc = "A part that is not 'result = op'.",
  parts = { "neg", "s = into_int" },
}

tuple {
  name = "neg", doc = "The name of an op.",
  parts = { "r = neg", "s = into_int" },
}

tuple {
  name = "short_example", doc = "An example without one of its results.",
  parts = { "r = neg", "s = into_int" },
  examples = { { a = { shape = { 1 }, data = { 1 } }, r = { shape = { 1 }, data = { -1 } } } },
}
