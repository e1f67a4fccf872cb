op {
  name = "myop", id = 0,
  family = "binary_float",
  doc = "Elementwise a + b.",
  args = { "float a", "float b" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "broadcast(a)",
}
