op {
  name = "fadd", id = 0,
  family = "binary_float",
  doc = "Elementwise a + b.",
  args = { "float a", "float b" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "broadcast(a, b)",
  examples = {
    -- fine
    { a = { shape = { 2 }, data = { 1, "inf" } }, b = { shape = {}, data = { 0.5 } },
      out = { shape = { 2 }, data = { 1.5, "inf" } } },
    -- three values for a shape of two; b missing; an unknown key
    { a = { shape = { 2 }, data = { 1, 2, 3 } }, c = 1, out = { shape = { 2 }, data = { 1, 2 } } },
    -- nine dimensions; a string that is no float; data that is not an array
    { a = { shape = { 1, 1, 1, 1, 1, 1, 1, 1, 1 }, data = { 1 } }, b = { shape = { 1 }, data = { "one" } },
      out = { shape = { 1 }, data = { x = 1 } } },
    -- not finite numbers (write "inf" and "nan"); a negative size; an extra key
    { a = { shape = { 1 }, data = { 1 / 0 } }, b = { shape = { -1 }, data = {} },
      out = { shape = { 1 }, data = { 0 / 0 } , dtype = "f32" } },
    -- a tensor that is a number; out missing
    { a = 1, b = { shape = { 1 }, data = { 1e39 } } },
  },
}

op {
  name = "make", id = 1,
  family = "creation",
  doc = "Creates an int tensor from host data.",
  args = { "device device", "i32_data data", "shape shape", "distribution dist", "u64 seed", "dim d0" },
  returns = "int",
  shape = "from_shape(shape)",
  examples = {
    { data = { 1, 2, 3 }, shape = { 3 }, dist = "normal", seed = 7, d0 = -1,
      out = { shape = { 3 }, data = { 1, 2, 3 } } },
    -- four values for a shape of three; a device value; 2^31; a bool for an int
    { data = { 1, 2, 3, 4 }, shape = { 3 }, device = "cpu", dist = "uniform", seed = 0, d0 = 0,
      out = { shape = { 3 }, data = { 2147483648, true, 1.5 } } },
    -- an unknown distribution; a negative u64; a fractional dim; a shape that is no array
    { data = { 1 }, shape = { n = 1 }, dist = "gauss", seed = -1, d0 = 0.5,
      out = { shape = { 1 }, data = { 1 } } },
  },
}

op {
  name = "cat", id = 2,
  family = "multi",
  doc = "Joins tensors along a dimension.",
  args = { "floats xs", "dim dim" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "cat(xs, dim)",
  examples = {
    -- no tensors; a list with a hole
    { xs = {}, dim = 0, out = { shape = { 0 }, data = {} } },
    { xs = { [1] = { shape = { 1 }, data = { 1 } }, [3] = { shape = { 1 }, data = { 2 } } }, dim = 0,
      out = { shape = { 2 }, data = { 1, 2 } } },
  },
}

op {
  name = "into", id = 3,
  family = "unary_float",
  doc = "Copies a float tensor to host memory.",
  args = { "float a", "f32_out dst" },
  returns = "host",
  shape = "host_out(a, dst)",
  examples = {
    -- a value for the host output; out with a shape and an int
    { a = { shape = { 1 }, data = { 1 } }, dst = { 0 }, out = { shape = { 1 }, data = { "1" } } },
  },
}

op {
  name = "sync", id = 4,
  family = "device",
  doc = "Waits.",
  args = { "device device" },
  returns = "none",
  examples = { { out = {} } },
}
