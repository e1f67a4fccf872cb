op {
  name = "myop", id = 0,
  family = "unary_float",
  doc = "Elementwise -a. */ int injected(void); /*",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a | breaks | the table",
  shape = "same(a)",
  semantics = "two\nlines",
  tolerance = -1,
}

op {
  name = "mydist", id = 1,
  family = "unary_float",
  doc = "Not a collective.",
  args = { "float a", "group g", "reduce_op r" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  tolerance = 0 / 0,
}

op {
  name = "myhost", id = 2,
  family = "unary_float",
  doc = "Host data without a host output.",
  args = { "float a" },
  returns = "host",
  shape = "same(a)",
}

op {
  name = "kw", id = 3,
  family = "binary_float",
  doc = "Names the generated C uses.",
  args = { "float int", "float i" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(int)",
}

op {
  name = "clash", id = 4,
  family = "unary_float",
  doc = "An argument named like the length of another.",
  args = { "float x", "dims x_len" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(x)",
}

op {
  name = "withlist", id = 5,
  family = "unary_float",
  doc = "A tensor list that is not the first argument of a multi op.",
  args = { "float a", "floats xs" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  examples = {
    { a = { shape = { 1 }, data = { 1 } }, xs = { { shape = { 1 }, data = { 2 } } }, out = { shape = { 1 }, data = { 1 } } },
  },
}
