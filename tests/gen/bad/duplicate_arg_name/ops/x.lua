op {
  name = "myop", id = 0,
  family = "binary_float",
  doc = "Elementwise a + a.",
  args = { "float a", "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "broadcast(a, a)",
}
