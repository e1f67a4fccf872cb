-- Moves between devices: same backend copies, different backends stage through host memory.

op {
  name = "float_to_device",
  id = 90,
  family = "to_device",
  doc = "Copies a float tensor to device (any backend).",
  args = { "float a", "device device" },
  returns = "float",
  shape = "same(a)",
  examples = {
    { a = { shape = { 2, 2 }, data = { 1.5, -2, "nan", "inf" } },
      out = { shape = { 2, 2 }, data = { 1.5, -2, "nan", "inf" } } },
    -- zero-size: nothing to move
    { a = { shape = { 0, 2 }, data = {} },
      out = { shape = { 0, 2 }, data = {} } },
  },
  backward = { a = "to_input_device(grad)" },
  bound = "memory",
}

op {
  name = "int_to_device",
  id = 91,
  family = "to_device",
  doc = "Copies an int tensor to device (any backend).",
  args = { "int a", "device device" },
  returns = "int",
  shape = "same(a)",
  examples = {
    { a = { shape = { 3 }, data = { 1, -2, 2147483647 } },
      out = { shape = { 3 }, data = { 1, -2, 2147483647 } } },
  },
}

op {
  name = "bool_to_device",
  id = 92,
  family = "to_device",
  doc = "Copies a bool tensor to device (any backend).",
  args = { "bool a", "device device" },
  returns = "bool",
  shape = "same(a)",
  examples = {
    { a = { shape = { 2, 1 }, data = { true, false } },
      out = { shape = { 2, 1 }, data = { true, false } } },
  },
}
