-- Writes the seed corpus of fuzz_api (tests/fuzz/corpus_api/*.bin): small programs in the
-- byte format of fuzz_api.c (opcodes and operand bytes are documented there).
-- Usage, from the repository root: lua5.4 tests/fuzz/make_corpus_api.lua [OUTDIR]
local outdir = arg[1] or "tests/fuzz/corpus_api"

local OP = {
  CREATE = 0, UNARY_FLOAT = 1, UNARY_OTHER = 2, BINARY_FLOAT = 3, BINARY_INT = 4, MASK = 5,
  REDUCE_DIM = 6, RESHAPE = 7, SWAP_DIMS = 8, PERMUTE = 9, EXPAND = 10, SLICE = 11,
  SLICE_ASSIGN = 12, CAT = 13, MATMUL = 14, TO_DEVICE = 15, REQUIRE_GRAD = 16, BACKWARD = 17,
  GRADS_GET = 18, RELEASE = 19, DETACH = 20, INTO_DATA = 21, SET_CONTEXT = 22, DUP = 23, OOM = 24,
  SYNC = 25, PROBE = 26, DROP_DEVICE = 27, LOOP = 28, MATMUL_T = 29,
}
local CPU, AD_NONE, AD_BAL, AD_NONE2 = 0, 1, 2, 3
-- creation subs
local C = { float_from_data = 0, int_from_data = 1, bool_from_data = 2, float_zeros = 3, int_zeros = 4,
  float_ones = 5, int_ones = 6, float_full = 7, int_full = 8, float_random = 9, int_arange = 10 }
-- unary_float subs
local UF = { neg = 0, abs = 1, exp = 2, log = 3, sqrt = 4, sin = 5, cos = 6, tanh = 7, sigmoid = 8, relu = 9,
  gelu = 10, powf_scalar = 11, clamp = 12, add_scalar = 13, mul_scalar = 14, sum = 15, into_int = 16 }
local UO = { int_sum = 0, int_into_float = 1, bool_into_float = 2, bool_into_int = 3, bool_not = 4 }
local BF = { add = 0, sub = 1, mul = 2, div = 3, powf = 4, maximum = 5, minimum = 6, equal = 7, greater = 8,
  greater_equal = 9, lower = 10, lower_equal = 11 }
local BI = { add = 0, sub = 1, mul = 2, div = 3, remainder = 4, equal = 5, greater = 6, lower = 7,
  bool_and = 8, bool_or = 9 }
local M = { float_mask_fill = 0, int_mask_fill = 1, float_mask_where = 2, int_mask_where = 3 }
local R = { sum_dim = 0, mean_dim = 1, max_dim = 2, min_dim = 3, argmax = 4, argmin = 5 }
-- indices into fuzz_api.c's fvals / ivals
local F = { zero = 0, one = 1, minus_one = 2, half = 3, m2_5 = 4, three = 5, inf = 9, nan = 11, two = 15 }
local I = { zero = 0, one = 1, minus_one = 2, two = 3, seven = 6, int_min = 10 }
local MATCH = 0 -- class byte: take the operand's class
local FLOAT, INT, BOOL = 0xC0, 0xC1, 0xC2

-- A small shape: dims 1..8.
local function shape(...)
  local dims = { ... }
  local t = { #dims }
  for _, d in ipairs(dims) do t[#t + 1] = d - 1 end
  return t
end
local function dim(v, nd) return v + nd + 2 end -- a dim byte for a tensor of nd dims
local function arange_i64(v) return v + 32 end   -- -32 <= v <= 31

local function flatten(prog)
  local bytes = {}
  local function add(x)
    if type(x) == "table" then
      for _, y in ipairs(x) do add(y) end
    else
      assert(x >= 0 and x <= 255, "byte out of range")
      bytes[#bytes + 1] = string.char(x)
    end
  end
  add(prog)
  return table.concat(bytes)
end

local function write(name, prog)
  local f = assert(io.open(outdir .. "/" .. name .. ".bin", "wb"))
  f:write(flatten(prog))
  f:close()
end

-- helpers, one per instruction: they return byte lists
local function create(sub, dev, shp, extra, dst)
  return { OP.CREATE, sub, dev, shp or {}, extra or {}, dst }
end
local function random(dev, shp, dst) return create(C.float_random, dev, shp, { 0, F.zero, F.one, 7 }, dst) end
local function uf(sub, a, dst, scalars) return { OP.UNARY_FLOAT, sub, a, scalars or {}, dst } end
local function bf(sub, a, b, dst) return { OP.BINARY_FLOAT, sub, a, b, dst } end
local function bi(sub, a, b, dst) return { OP.BINARY_INT, sub, a, b, dst } end
local function backward(root, g) return { OP.BACKWARD, 0, root, g } end
local function backward_seeded(root, seed, g) return { OP.BACKWARD, 1, root, seed, g } end
local function backward_retain(root, g) return { OP.BACKWARD, 5, root, g } end -- td_backward_ex
local function grads_get(g, t, dst) return { OP.GRADS_GET, g, t, dst } end
local function rg(a) return { OP.REQUIRE_GRAD, a } end

-- 1. An MLP step on autodiff(NONE): matmul, bias broadcast, relu, mean, backward, gradients.
write("mlp_none", {
  random(AD_NONE, shape(4, 3), 0),             -- x
  random(AD_NONE, shape(3, 2), 1), rg(1),       -- w
  create(C.float_full, AD_NONE, shape(2), { F.half }, 2), rg(2), -- bias [2]
  { OP.MATMUL, 0, 1, 3 },
  bf(BF.add, 3, 2, 3),                          -- [4,2] + [2]
  uf(UF.relu, 3, 4),
  { OP.REDUCE_DIM, R.mean_dim, 4, dim(0, 2), 5 }, -- [1,2]
  uf(UF.sum, 5, 5),
  backward(5, 0),
  grads_get(0, 1, 6), grads_get(0, 2, 7), grads_get(0, 0, 4),
})

-- 2. The same shape of graph on autodiff(BALANCED), with recomputed memory-bound ops.
write("mlp_balanced", {
  random(AD_BAL, shape(2, 4, 3), 0), rg(0),
  random(AD_BAL, shape(3, 3), 1), rg(1),
  { OP.MATMUL, 0, 1, 2 },                       -- batch broadcast [2,4,3] @ [3,3]
  uf(UF.tanh, 2, 3), uf(UF.sigmoid, 3, 3), uf(UF.mul_scalar, 3, 3, { F.two }),
  bf(BF.mul, 3, 0, 4),
  { OP.REDUCE_DIM, R.max_dim, 4, dim(-1, 3), 5 },
  uf(UF.exp, 5, 5), uf(UF.sum, 5, 6),
  backward(6, 1),
  grads_get(1, 0, 7), grads_get(1, 1, 5),
  { OP.INTO_DATA, MATCH, 7, 0 },
})

-- 3. Broadcasting binary ops on cpu: [2,1,3] with [4,1], comparisons, bool logic.
write("broadcast_cpu", {
  create(C.float_from_data, CPU, shape(2, 1, 3), { 3 }, 0),
  create(C.float_from_data, CPU, shape(4, 1), { 5 }, 1),
  bf(BF.add, 0, 1, 2), bf(BF.div, 2, 1, 2), bf(BF.powf, 0, 1, 3), bf(BF.maximum, 2, 3, 3),
  bf(BF.greater, 0, 1, 4), bf(BF.lower_equal, 1, 0, 5),
  bi(BI.bool_and, 4, 5, 6), bi(BI.bool_or, 6, 4, 6),
  { OP.UNARY_OTHER, UO.bool_not, 6, 7 }, { OP.UNARY_OTHER, UO.bool_into_float, 7, 7 },
  bf(BF.add, 0, 4, 5),                          -- float + bool: a kind error
})

-- 4. Layout ops: reshape (with -1), permute, swap_dims, expand, slice, slice_assign, cat.
write("layout", {
  create(C.float_from_data, AD_NONE, shape(2, 3, 4), { 1 }, 0), rg(0),
  { OP.RESHAPE, MATCH, 0, 3, 1, 2, 0x80, 1 },   -- 3 dims (divisor choices 2, 3), the last one -1
  { OP.PERMUTE, MATCH, 0, 1, 0, 0, 2 },         -- a shuffle of 3 dims
  { OP.SWAP_DIMS, MATCH, 2, dim(0, 3), dim(-1, 3), 3 },
  { OP.EXPAND, MATCH, 0, 1, 1, 0, 1, 1, 0, 4 }, -- one new leading dim of 2
  { OP.SLICE, MATCH, 0, 2, 1, 0, 1, 2, 0, 5 },  -- ranges over 2 dims
  { OP.SLICE_ASSIGN, MATCH, 0, 5, 0, 0, 0, 0, 6 },
  { OP.CAT, MATCH, 2, 0, 6, dim(1, 3), 7 },
  uf(UF.sum, 7, 7), backward(7, 0), grads_get(0, 0, 1),
})

-- 5. Int ops: arange, division by a tensor with a zero (an error), remainder, masks.
write("int_ops", {
  create(C.int_arange, CPU, nil, { arange_i64(-3), arange_i64(9), arange_i64(2) }, 0), -- [-3,-1,1,3,5,7]
  create(C.int_full, CPU, shape(6), { I.seven }, 1),
  bi(BI.div, 1, 0, 2), bi(BI.remainder, 1, 0, 3), bi(BI.mul, 2, 3, 2),
  create(C.int_zeros, CPU, shape(1), {}, 4),
  bi(BI.div, 1, 4, 5),                          -- zero divisor
  bi(BI.equal, 0, 1, 5), bi(BI.greater, 0, 4, 6),
  { OP.MASK, M.int_mask_fill, 0, 5, I.minus_one, 7 },
  { OP.MASK, M.int_mask_where, 0, 6, 1, 7 },
  { OP.UNARY_OTHER, UO.int_sum, 7, 3 }, { OP.UNARY_OTHER, UO.int_into_float, 7, 3 },
  create(C.int_full, CPU, shape(1), { I.int_min }, 4), create(C.int_full, CPU, shape(1), { I.minus_one }, 5),
  bi(BI.div, 4, 5, 6), bi(BI.remainder, 4, 5, 6),
})

-- 6. Backward with an explicit seed through cat, slice and expand.
write("seeded", {
  random(AD_NONE, shape(2, 3), 0), rg(0),
  random(AD_NONE, shape(1, 3), 1), rg(1),
  { OP.CAT, MATCH, 2, 0, 1, dim(0, 2), 2 },     -- [3,3]
  { OP.SLICE, MATCH, 2, 1, 1, 1, 0, 3 },        -- [2,3]
  { OP.EXPAND, MATCH, 3, 1, 0, 1, 1, 0, 4 },    -- [1,2,3]
  create(C.float_ones, CPU, { 0xA0 + 4 }, {}, 5), -- a plain seed of slot 4's shape
  backward_seeded(4, 5, 0),
  grads_get(0, 0, 6), grads_get(0, 1, 7),
  backward_seeded(4, 5, 1),                     -- released already: an error
})

-- 7. Contexts: the guard and a merge of two strategies.
write("contexts", {
  random(AD_NONE, shape(3), 0), random(AD_BAL, shape(3), 1),
  bf(BF.add, 0, 1, 2),                          -- NONE + BALANCED: an error
  { OP.SET_CONTEXT, 1, 1 },                      -- slot 1 becomes ENABLED(NONE)
  bf(BF.add, 0, 1, 2),
  { OP.SET_CONTEXT, 0, 0 },                      -- DISABLED on an autodiff float
  uf(UF.neg, 0, 3), rg(0), { OP.INTO_DATA, MATCH, 0, 0 },
  { OP.SET_CONTEXT, 0, 4 },                      -- an unknown strategy
  { OP.DETACH, 1, 4 }, rg(4), uf(UF.sum, 4, 5), backward(5, 0), grads_get(0, 4, 6),
})

-- 8. Devices: cpu with autodiff (a mismatch), to_device both ways, sync.
write("devices", {
  create(C.float_ones, CPU, shape(2, 2), {}, 0), random(AD_NONE, shape(2, 2), 1),
  bf(BF.sub, 0, 1, 2),
  { OP.TO_DEVICE, MATCH, 0, AD_BAL, 2 }, rg(2),
  { OP.TO_DEVICE, MATCH, 2, AD_NONE, 3 }, uf(UF.sum, 3, 4), backward(4, 0), grads_get(0, 2, 5),
  { OP.TO_DEVICE, MATCH, 1, CPU, 6 },
  create(C.int_ones, AD_NONE, shape(2), {}, 7), { OP.TO_DEVICE, MATCH, 7, CPU, 7 },
  { OP.SYNC, CPU }, { OP.SYNC, AD_BAL }, { OP.SYNC, 0x83 },
})

-- 9. Autodiff misuse: backward twice on one loss, require_grad on a result, a non-scalar loss.
write("autodiff_misuse", {
  random(AD_NONE, shape(2), 0), rg(0),
  uf(UF.sin, 0, 1), uf(UF.sum, 1, 2),
  backward(2, 0), backward(2, 1),
  rg(1), backward(1, 1),
  create(C.int_ones, AD_NONE, shape(2), {}, 3), rg(3),
  { OP.DUP, 0, 4 }, { OP.RELEASE, 0 }, { OP.RELEASE, 8 }, { OP.RELEASE, 9 },
})

-- 10. Allocation failures in the middle of a graph and of backward.
write("oom", {
  random(AD_BAL, shape(3, 3), 0), rg(0),
  { OP.OOM, 2 }, { OP.MATMUL, 0, 0, 1 },
  { OP.MATMUL, 0, 0, 1 }, uf(UF.cos, 1, 2), uf(UF.sum, 2, 3),
  { OP.OOM, 5 }, backward(3, 0),
  uf(UF.sum, 2, 3), { OP.OOM, 9 }, backward(3, 1),
  grads_get(1, 0, 4),
})

-- 11. Invalid shapes and sizes: < 1, 9 dims, far too many elements, bad reshape and expand.
write("bad_shapes", {
  create(C.float_zeros, CPU, { 0xC5, 1, 2, 0 }, {}, 0),      -- [-1, 3]
  create(C.float_zeros, CPU, { 0xE1 }, {}, 0),               -- 9 dims
  create(C.int_ones, AD_NONE, { 0xD1, 2, 2, 2 }, {}, 0),     -- 2^40 cubed
  create(C.float_ones, AD_NONE, { 0xB3, 1, 0, 1, 0, 1, 0, 1, 0 }, {}, 1), -- 8 dims
  { OP.RESHAPE, MATCH, 1, 0x80, 2, 1, 0, 3, 2 },             -- [-1, -1]
  { OP.EXPAND, MATCH, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xE3 + 4, 3 }, -- a dim of 2^41
  { OP.PERMUTE, MATCH, 1, 0, 0, 0, 0, 0, 0, 0, 0xD0, 4 },
  { OP.SWAP_DIMS, MATCH, 1, 0xC0, 0xE1, 5 },
  { OP.REDUCE_DIM, R.argmax, 1, dim(8, 8), 6 },
  create(C.float_random, CPU, shape(3), { 2, F.zero, F.one, 1 }, 7), -- an unknown distribution
  create(C.int_arange, CPU, nil, { arange_i64(5), arange_i64(5), arange_i64(1) }, 7), -- empty
  create(C.int_arange, CPU, nil, { arange_i64(0), arange_i64(5), arange_i64(0) }, 7), -- step 0
})

-- 12. mask_fill / mask_where on floats with broadcasting masks, argmin, into_int, clamp.
write("masks", {
  random(AD_NONE, shape(3, 4), 0), rg(0),
  create(C.bool_from_data, AD_NONE, shape(1, 4), { 0x5A }, 1),
  { OP.MASK, M.float_mask_fill, 0, 1, F.m2_5, 2 },
  random(AD_NONE, shape(3, 1), 3), rg(3),
  { OP.MASK, M.float_mask_where, 2, 1, 3, 4 },
  uf(UF.clamp, 4, 5, { F.minus_one, F.half }),
  { OP.REDUCE_DIM, R.argmin, 5, dim(1, 2), 6 }, uf(UF.into_int, 5, 7),
  uf(UF.sum, 5, 5), backward(5, 0), grads_get(0, 0, 1), grads_get(0, 3, 2),
})

-- 13. Everything at once, long: a loop of small steps over both autodiff strategies.
local long = {}
for i = 0, 5 do
  local dev = (i % 2 == 0) and AD_NONE or AD_BAL
  long[#long + 1] = { random(dev, shape(2, 3), 0), rg(0), random(dev, shape(3, 2), 1), rg(1),
    { OP.MATMUL, 0, 1, 2 }, uf(UF.gelu, 2, 2), uf(UF.powf_scalar, 2, 3, { F.two }), uf(UF.sum, 3, 3),
    backward(3, i % 2), grads_get(i % 2, 0, 4), grads_get(i % 2, 1, 5), bf(BF.add, 4, 5, 6) }
end
write("long_mix", long)
-- 14. Two losses over shared nodes: retain_graph lets the second one through, a third fails.
write("retain_graph", {
  random(AD_BAL, shape(3), 0), rg(0),
  uf(UF.tanh, 0, 1), uf(UF.sum, 1, 2),
  backward_retain(2, 0),
  bf(BF.mul, 1, 1, 3), uf(UF.sum, 3, 3), backward(3, 1), grads_get(1, 0, 4),
  uf(UF.sum, 1, 5), backward(5, 0),            -- through a released node: an error
  { OP.BACKWARD, 6, 3, 5, 0 },                 -- seeded, retained, on a released root
})

-- 15. Devices released while their tensors live on (and the second ad(NONE) device).
write("drop_device", {
  random(AD_NONE2, shape(2, 2), 0), rg(0), random(AD_NONE, shape(2, 2), 1),
  { OP.DROP_DEVICE, 2 }, { OP.DROP_DEVICE, 0 },  -- ad(NONE)#2, ad(NONE)
  bf(BF.add, 0, 1, 2), { OP.MATMUL, 2, 0, 3 }, uf(UF.sum, 3, 4),
  create(C.float_ones, AD_NONE, shape(2), {}, 5), -- a released device reads as NULL
  backward(4, 0), grads_get(0, 0, 6), { OP.TO_DEVICE, MATCH, 6, AD_NONE2, 7 },
  { OP.RELEASE, 0 }, { OP.RELEASE, 1 },
})
-- 16b. Matmuls by a transpose: a @ b^T and a^T @ c, through backward (each one's gradient
-- is the other), then inner sizes that do not match.
write("matmul_transposed", {
  random(AD_NONE, shape(4, 3), 0), rg(0),
  random(AD_NONE, shape(2, 3), 1), rg(1),
  { OP.MATMUL_T, 0, 0, 1, 2 },                  -- nt: [4,3] @ [2,3]^T -> [4,2]
  { OP.MATMUL_T, 1, 0, 2, 3 },                  -- tn: [4,3]^T @ [4,2] -> [3,2]
  uf(UF.tanh, 3, 3), uf(UF.sum, 3, 4),
  backward(4, 0), grads_get(0, 0, 5), grads_get(0, 1, 6),
  { OP.MATMUL_T, 0, 0, 0, 7 },                  -- nt: [4,3] @ [4,3]^T -> [4,4]
  { OP.MATMUL_T, 1, 0, 1, 7 },                  -- tn: [4,3]^T @ [2,3]: 4 and 2 differ
})
-- 16. Loops: a 100-node BALANCED chain through backward, a comb of 60 adds released unused.
local function loop(n, instr) return { OP.LOOP, n - 2, instr } end
write("loops", {
  random(AD_BAL, shape(4), 0), rg(0), uf(UF.neg, 0, 1),
  loop(100, uf(UF.sin, 1, 1)), uf(UF.sum, 1, 1), backward(1, 0), grads_get(0, 0, 3),
  random(AD_NONE, shape(2), 4), rg(4), uf(UF.neg, 4, 2),
  loop(60, bf(BF.add, 4, 2, 2)),               -- acc = x + acc
  { OP.RELEASE, 2 }, { OP.RELEASE, 4 },
})
print("wrote the seed corpus to " .. outdir)
