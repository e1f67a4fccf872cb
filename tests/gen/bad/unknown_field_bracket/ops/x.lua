op {
  name = "myop", id = 0,
  family = "unary_float",
  doc = "Elementwise -a.",
  args = { "float a" },
  returns = "float", differentiable = false, why = "a corpus fixture",
  shape = "same(a)",
  ["["] = 1,
  ["%"] = 2,
  ["(x"] = 3,
  -- a long comment line that the field-line search reads with the field's name as its pattern; a long comment line that the field-line search reads with the field's name as its pattern; a long comment line that the field-line search reads with the field's name as its pattern; 
}
