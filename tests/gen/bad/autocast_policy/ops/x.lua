-- autocast policies (docs/dtypes.md section 9): a value that is none of low / f32 / keep,
-- and a policy on an op without a float tensor to cast.
op {
  name = "mylow", id = 0,
  family = "unary_float",
  doc = "Negates a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  autocast = "bf16",
}

op {
  name = "myint", id = 1,
  family = "unary",
  doc = "Negates an int tensor.",
  args = { "int a" },
  returns = "int",
  shape = "same(a)",
  autocast = "f32",
}
