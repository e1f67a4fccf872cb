-- Collectives over a process group (MPI). Only backends whose spec says
-- `collectives = true` implement them; every other backend's arm returns TD_E_UNSUPPORTED.
-- All ranks must call a collective with tensors of one dtype and shape: when they do not,
-- every rank gets TD_E_DISTRIBUTED instead of corrupt memory.

op {
  name = "float_all_reduce",
  id = 93,
  family = "distributed",
  doc = "Combines a across the ranks of group with op (sum, mean, max or min); every rank gets the result.",
  args = { "float a", "group group", "reduce_op op" },
  returns = "float",
  shape = "same(a)",
  backward = { a = "all_reduce_grad(grad, a, result, group, op)" },
  bound = "compute",
  semantics = "backward: sum and mean all-reduce the gradient the same way; max and min send it to the ranks holding the extreme",
}

op {
  name = "float_broadcast",
  id = 94,
  family = "distributed",
  doc = "Every rank of group gets root's a.",
  args = { "float a", "group group", "i32 root" },
  returns = "float",
  shape = "same(a)",
  backward = { a = "broadcast_grad(grad, group, root)" },
  bound = "compute",
  semantics = "backward: root receives the sum of every rank's gradient, the other ranks zero",
}

op {
  name = "float_all_gather",
  id = 95,
  family = "distributed",
  doc = "Concatenates every rank's a along dim 0, in rank order; all ranks pass one shape.",
  args = { "float a", "group group" },
  returns = "float",
  shape = "all_gather(a, group)",
  backward = { a = "all_gather_grad(grad, group)" },
  bound = "compute",
}

op {
  name = "int_all_reduce",
  id = 96,
  family = "distributed",
  doc = "Combines a across the ranks of group with op (sum, max or min; sum wraps around); every rank gets the result.",
  args = { "int a", "group group", "reduce_op op" },
  returns = "int",
  shape = "same(a)",
}
