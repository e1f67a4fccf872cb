-- A declaration returned from the file: Lua keeps no caller to take its line from.
return op {
  name = "myop",
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
}
