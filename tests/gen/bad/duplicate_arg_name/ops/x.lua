op {
  name = "myop",
  family = "binary_float",
  doc = "Elementwise a + a.",
  args = { "float a", "float a" },
  returns = "float",
  shape = "broadcast(a, a)",
}
