-- Creation ops: a device (plus host data or attributes) -> a new tensor.
--
-- Schema of an op spec (one `op { ... }` per op):
--   name      string   required  lower-case identifier; the C entry is td_<name>
--   id        integer  required  the value of TD_OP_<NAME>, stable forever (0-4095);
--                                a new op takes the next free one, never a used one
--   family    string   required  creation | unary | unary_float | binary | binary_float | module |
--                                multi | to_device | device
--   doc       string   required  one sentence; becomes the prototype's doc comment
--   args      array    required  "type name" strings, in C parameter order. Types:
--                                tensors  float int bool        (one tensor)
--                                lists    floats ints bools     (array + count)
--                                scalars  f32 i32 i64 u64 dim distribution device
--                                arrays   dims shape            (int64 array + count)
--                                host in  f32_data i32_data bool_data (numel of `shape`)
--                                host out f32_out i32_out bool_out    (array + capacity)
--   returns   string   required  float | int | bool (a new tensor) | host | none
--   shape     string   required  for tensor and host results: a shape rule call over
--                                argument names, e.g. "broadcast(a, b)"; the rules
--                                are listed in gen/tdgen/rules.lua
--   examples  array    optional  known-value cases for the generated tests; each maps
--                                argument names to values ({shape=..., data=...} for
--                                tensors, numbers or arrays for the rest) and `out`
--                                to the expected result
--   tolerance number   optional  absolute + relative tolerance of the examples (1e-5)
--   dtype_twin string  optional  emit td_<name>_dtype, the op with a td_dtype argument
--                                (docs/dtypes.md section 5): "from_data" / "into_data"
--                                (host data in the dtype's storage format, as void *),
--                                "zeros" / "ones", "full" (the value as double / int64_t,
--                                rounded once) or "convert" (a cross-class conversion to
--                                any dtype of the result's class)
--   nmse      number   optional  float results: the largest normalized mean squared error,
--                                sum((got - want)^2) / sum(want^2), accepted when the generated
--                                many-shape comparisons hold a backend against the CPU (1e-7)
--   domain    table    optional  tensor input name -> "positive" (floats > 0), "nonzero"
--                                (ints or floats without 0) or "index" (ints in [0, 7), no
--                                edge values): where the comparisons' random values lie
--                                (edge values are mixed in all the same, except for "index")
--   dtype_nmse table   optional  float dtype name -> the NMSE bound of the per-dtype
--                                comparisons (test_dtypes_<backend>.c) in that dtype, replacing
--                                specs/dtypes.lua's; for ops that round several times (say why)
--   int_degree number  optional  1 or 2: the result is homogeneous of that degree in the int
--                                inputs (sums and comparisons 1, products 2); the i64
--                                comparisons then scale the inputs by 2^32 / 2^16 (past 2^31)
--   semantics string   optional  where results differ from PyTorch's, says how
--   decompose string|array optional  how the op is computed from other ops (a composite):
--                                one expression, or statements "name = expr" ending in
--                                the result expression. Calls name ops in full with their
--                                arguments in spec order; builtins device(x), shape(x),
--                                size(x, d), ndim(x), numel(x); + - * / and unary - on
--                                float/int tensors and scalars. A backend that does not
--                                list the op runs it by this decomposition when it runs
--                                every piece (SUPPORT.md: native / composite / -); autodiff
--                                differentiates the pieces unless the op has `backward`.
--                                Checked like formulas (types, known ops, no cycles); see
--                                gen/tdgen/decomp.lua

op {
  name = "float_from_data",
  id = 0,
  family = "creation",
  doc = "Creates a float tensor of the given shape from row-major host data.",
  args = { "device device", "f32_data data", "shape shape" },
  returns = "float",
  dtype_twin = "from_data",
  shape = "from_shape(shape)",
  examples = {
    { data = { 1.5, -2, 0, 3.25, 0.001, -7 }, shape = { 2, 3 },
      out = { shape = { 2, 3 }, data = { 1.5, -2, 0, 3.25, 0.001, -7 } } },
    { data = { 4.5 }, shape = {},
      out = { shape = {}, data = { 4.5 } } },
    -- zero-size: no elements, and the data may be empty
    { data = {}, shape = { 2, 0 },
      out = { shape = { 2, 0 }, data = {} } },
  },
}

op {
  name = "int_from_data",
  id = 1,
  family = "creation",
  doc = "Creates an int tensor of the given shape from row-major host data.",
  args = { "device device", "i32_data data", "shape shape" },
  returns = "int",
  dtype_twin = "from_data",
  shape = "from_shape(shape)",
  examples = {
    { data = { 1, -2, 0, 2147483647, -2147483648, 7 }, shape = { 3, 2 },
      out = { shape = { 3, 2 }, data = { 1, -2, 0, 2147483647, -2147483648, 7 } } },
    { data = { -9 }, shape = {},
      out = { shape = {}, data = { -9 } } },
  },
}

op {
  name = "bool_from_data",
  id = 2,
  family = "creation",
  doc = "Creates a bool tensor of the given shape from row-major host data.",
  args = { "device device", "bool_data data", "shape shape" },
  returns = "bool",
  shape = "from_shape(shape)",
  examples = {
    { data = { true, false, false, true }, shape = { 2, 1, 2 },
      out = { shape = { 2, 1, 2 }, data = { true, false, false, true } } },
  },
}

op {
  name = "float_zeros",
  id = 3,
  family = "creation",
  doc = "Creates a float tensor filled with 0.",
  args = { "device device", "shape shape" },
  returns = "float",
  dtype_twin = "zeros",
  shape = "from_shape(shape)",
  decompose = "float_full(device, shape, 0.0)",
  examples = {
    { shape = { 2, 3 },
      out = { shape = { 2, 3 }, data = { 0, 0, 0, 0, 0, 0 } } },
    { shape = {},
      out = { shape = {}, data = { 0 } } },
    -- zero-size: a dim of 0
    { shape = { 0, 3 },
      out = { shape = { 0, 3 }, data = {} } },
  },
}

op {
  name = "int_zeros",
  id = 4,
  family = "creation",
  doc = "Creates an int tensor filled with 0.",
  args = { "device device", "shape shape" },
  returns = "int",
  dtype_twin = "zeros",
  shape = "from_shape(shape)",
  decompose = "int_full(device, shape, 0)",
  examples = {
    { shape = { 3, 1 },
      out = { shape = { 3, 1 }, data = { 0, 0, 0 } } },
  },
}

op {
  name = "float_ones",
  id = 5,
  family = "creation",
  doc = "Creates a float tensor filled with 1.",
  args = { "device device", "shape shape" },
  returns = "float",
  dtype_twin = "ones",
  shape = "from_shape(shape)",
  decompose = "float_full(device, shape, 1.0)",
  examples = {
    { shape = { 2, 2 },
      out = { shape = { 2, 2 }, data = { 1, 1, 1, 1 } } },
    { shape = {},
      out = { shape = {}, data = { 1 } } },
  },
}

op {
  name = "int_ones",
  id = 6,
  family = "creation",
  doc = "Creates an int tensor filled with 1.",
  args = { "device device", "shape shape" },
  returns = "int",
  dtype_twin = "ones",
  shape = "from_shape(shape)",
  decompose = "int_full(device, shape, 1)",
  examples = {
    { shape = { 1, 3 },
      out = { shape = { 1, 3 }, data = { 1, 1, 1 } } },
  },
}

op {
  name = "float_full",
  id = 7,
  family = "creation",
  doc = "Creates a float tensor filled with value.",
  args = { "device device", "shape shape", "f32 value" },
  returns = "float",
  dtype_twin = "full",
  shape = "from_shape(shape)",
  examples = {
    { shape = { 2, 3 }, value = -2.5,
      out = { shape = { 2, 3 }, data = { -2.5, -2.5, -2.5, -2.5, -2.5, -2.5 } } },
    { shape = {}, value = 7,
      out = { shape = {}, data = { 7 } } },
  },
}

op {
  name = "int_full",
  id = 8,
  family = "creation",
  doc = "Creates an int tensor filled with value.",
  args = { "device device", "shape shape", "i32 value" },
  returns = "int",
  dtype_twin = "full",
  shape = "from_shape(shape)",
  examples = {
    { shape = { 3 }, value = -4,
      out = { shape = { 3 }, data = { -4, -4, -4 } } },
    { shape = { 2, 1 }, value = 2147483647,
      out = { shape = { 2, 1 }, data = { 2147483647, 2147483647 } } },
    -- zero-size: a dim of 0
    { shape = { 2, 0, 1 }, value = 5,
      out = { shape = { 2, 0, 1 }, data = {} } },
  },
}

op {
  name = "float_random",
  id = 9,
  family = "creation",
  doc = "Creates a float tensor of random values: uniform in [p0, p1) or normal with mean p0 and standard deviation p1; the same seed gives the same values on every backend. p0 and p1 must be finite, with p0 <= p1 (and p1 - p0 finite) for uniform and p1 >= 0 for normal, else TD_E_INVALID.",
  args = { "device device", "shape shape", "distribution dist", "f32 p0", "f32 p1", "u64 seed" },
  returns = "float",
  -- td_float_random_dtype: f32 the op itself, f16 / bf16 its values rounded once, f64 53-bit
  -- uniforms of the same hash (docs/dtypes.md section 5)
  dtype_twin = "random",
  shape = "random(shape, dist, p0, p1)",
  semantics = "counter-based generator (splitmix64 of seed and element index), so results do not depend on threading",
}

op {
  name = "int_arange",
  id = 10,
  family = "creation",
  doc = "Creates the 1-D int tensor start, start + step, ... up to but excluding end.",
  args = { "device device", "i64 start", "i64 end", "i64 step" },
  returns = "int",
  shape = "arange(start, end, step)",
  examples = {
    { start = 0, ["end"] = 5, step = 1,
      out = { shape = { 5 }, data = { 0, 1, 2, 3, 4 } } },
    { start = -3, ["end"] = 8, step = 3,
      out = { shape = { 4 }, data = { -3, 0, 3, 6 } } },
    { start = 5, ["end"] = -4, step = -3,
      out = { shape = { 3 }, data = { 5, 2, -1 } } },
    -- zero-size: start == end is an empty range (PyTorch)
    { start = 3, ["end"] = 3, step = 1,
      out = { shape = { 0 }, data = {} } },
  },
}
