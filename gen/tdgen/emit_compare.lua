-- Emits the many-shape comparisons of one backend against the CPU (in test_ops_<backend>.c):
-- for every op, a table of cases derived from its shape rule (0-d to 4-d, 1 to more than
-- 65,000 elements, odd sizes, every broadcasting pattern the rule allows, attributes
-- derived from the shapes) that tdt_compare (tests/common/tdt.c) runs on both backends
-- with random inputs, edge values mixed in, and compares: NMSE for floats, exact for ints
-- and bools, NaN and infinity positions exactly.
local util = require("tdgen.util")
local schema = require("tdgen.schema")

local M = {}

-- The NMSE tolerance of an op whose spec sets no `nmse`: one element off by 100% in
-- 10,007 gives about 1e-4, a whole tensor off by 0.03% about 1e-7.
M.DEFAULT_NMSE = 1e-7

-- Input fills (tdt.h): random values bounded away from 0; the same with edge values
-- mixed in (NaN, +-inf, +-0 for floats; INT32_MIN, INT32_MAX, -1, 0, 1 for ints); ties
-- (a handful of repeated values, their zeros -0 and +0 alike); and for an op whose spec sets
-- zero_sign, zeros (-0 and +0 only: each ties case again), so that a backend that picks the
-- other zero of a tie differs.
local C, E, T = "CLEAN", "EDGES", "TIES"

-- The shapes of one-tensor rules: 0-d to 4-d, sizes 1 to 65,537, odd ones, each with a
-- fill (the big ones with several); the largest pass the CPU's threading threshold
-- (TD_CPU_PAR_MIN, 32,768 elements), so the reference runs threaded and not.
local SHAPES = {
  { {}, C }, { {}, E }, { { 1 }, T }, { { 7 }, C }, { { 33 }, E }, { { 129 }, C }, { { 1000 }, T },
  { { 10007 }, C }, { { 10007 }, E }, { { 10007 }, T }, { { 65537 }, C },
  { { 1, 1 }, C }, { { 3, 1 }, E }, { { 7, 33 }, T }, { { 129, 7 }, C }, { { 100, 101 }, E }, { { 100, 101 }, T },
  { { 2, 3, 4 }, T }, { { 1, 7, 1 }, C }, { { 3, 7, 33 }, E }, { { 10, 33, 31 }, C }, { { 5, 129, 101 }, E },
  { { 2, 3, 4, 5 }, C }, { { 1, 7, 1, 33 }, T }, { { 3, 5, 7, 97 }, E }, { { 3, 5, 7, 97 }, C },
}

-- Two broadcasting tensors: equal shapes, a scalar or one element with a big one (both
-- ways), [3,1] x [1,4], leading-dim, middle-dim and mixed 4-d broadcasts.
local PAIRS = {
  { {}, {}, E }, { { 1 }, { 1 }, C }, { { 7 }, { 7 }, T }, { { 129 }, { 129 }, C }, { { 1000 }, { 1000 }, E },
  { { 10007 }, { 10007 }, C }, { { 10007 }, { 10007 }, E }, { { 65537 }, { 65537 }, C }, { { 7, 33 }, { 7, 33 }, T },
  { { 100, 101 }, { 100, 101 }, C }, { { 3, 7, 33 }, { 3, 7, 33 }, E }, { { 2, 3, 4, 5 }, { 2, 3, 4, 5 }, T },
  { { 3, 5, 7, 97 }, { 3, 5, 7, 97 }, C },
  { {}, { 10007 }, C }, { { 10007 }, {}, E }, { { 1 }, { 129, 7 }, T }, { { 3, 5, 7, 97 }, { 1 }, C },
  { { 3, 1 }, { 1, 4 }, C }, { { 1, 4 }, { 3, 1 }, E }, { { 129, 1 }, { 1, 100 }, C }, { { 257, 1 }, { 1, 257 }, E },
  { { 33 }, { 7, 33 }, T }, { { 7, 33 }, { 3, 7, 33 }, C }, { { 5, 7, 97 }, { 3, 5, 7, 97 }, E },
  { { 5, 1, 7 }, { 5, 3, 7 }, C }, { { 2, 1, 4, 1 }, { 3, 1, 5 }, E }, { { 1, 7, 1, 33 }, { 3, 1, 5, 1 }, C },
}

-- Three broadcasting tensors (mask_where: a, mask, value).
local TRIPLES = {
  { {}, {}, {}, E }, { { 7 }, { 7 }, { 7 }, C }, { { 10007 }, { 10007 }, { 10007 }, C },
  { { 10007 }, { 10007 }, { 10007 }, E }, { { 7, 33 }, { 7, 33 }, { 7, 33 }, T },
  { { 3, 5, 7, 97 }, { 3, 5, 7, 97 }, { 3, 5, 7, 97 }, E },
  { { 2, 3 }, { 2, 1 }, { 3 }, C }, { { 3 }, { 2, 3 }, {}, T }, { { 129, 100 }, { 129, 1 }, {}, C },
  { { 100 }, { 129, 1 }, { 1, 100 }, E }, { {}, { 1000 }, { 1 }, C }, { { 1, 7, 1, 33 }, { 3, 1, 5, 1 }, { 33 }, C },
  { { 10007 }, { 1 }, { 10007 }, T }, { { 3, 1, 33 }, { 7, 1 }, { 3, 1, 1 }, E }, { { 257, 1 }, { 1, 257 }, {}, C },
}

-- A tensor and a mask that broadcasts to its shape (mask_fill).
local MASKED = {
  { {}, {}, E }, { { 7 }, { 7 }, C }, { { 10007 }, { 10007 }, C }, { { 10007 }, { 10007 }, E },
  { { 7, 33 }, { 7, 1 }, T }, { { 7, 33 }, { 33 }, C }, { { 100, 101 }, { 1 }, E }, { { 100, 101 }, {}, C },
  { { 3, 7, 33 }, { 7, 1 }, C }, { { 3, 5, 7, 97 }, { 3, 1, 7, 1 }, E }, { { 2, 3, 4, 5 }, { 4, 5 }, T },
  { { 10, 33, 31 }, { 10, 33, 31 }, C }, { { 1000 }, {}, T },
  { { 5, 129, 101 }, { 129, 1 }, C },
}

local function numel(s)
  local n = 1
  for _, d in ipairs(s) do n = n * d end
  return n
end

local function copy(t)
  local r = {}
  for i, x in ipairs(t) do r[i] = x end
  return r
end

-- The smallest factor of n above 1 (n itself when prime; 1 for 1).
local function factor(n)
  for p = 2, math.floor(math.sqrt(n)) do
    if n % p == 0 then return p end
  end
  return n
end

-- Case generators per shape rule: P names the rule's arguments (op.rule.args); each case
-- is { fill = ..., v = { [argument name] = value } }, values as in the spec examples
-- (a tensor is its shape; a list, an array of shapes).
local R = {}

local function over_shapes(P, f)
  local cases = {}
  for i, s in ipairs(SHAPES) do
    local list = f(s[1], i) or {}
    for _, v in ipairs(list) do
      v[P[1]] = v[P[1]] or s[1]
      cases[#cases + 1] = { fill = s[2], v = v }
    end
  end
  return cases
end

function R.same(P) return over_shapes(P, function() return { {} } end) end
R.reduce_all = R.same
R.reduce_all_nonempty = R.same
R.host_out = R.same

function R.broadcast(P)
  local cases = {}
  for _, p in ipairs(PAIRS) do cases[#cases + 1] = { fill = p[3], v = { [P[1]] = p[1], [P[2]] = p[2] } } end
  return cases
end

function R.broadcast3(P)
  local cases = {}
  for _, t in ipairs(TRIPLES) do
    cases[#cases + 1] = { fill = t[4], v = { [P[1]] = t[1], [P[2]] = t[2], [P[3]] = t[3] } }
  end
  return cases
end

function R.mask_fill(P)
  local cases = {}
  for _, m in ipairs(MASKED) do cases[#cases + 1] = { fill = m[3], v = { [P[1]] = m[1], [P[2]] = m[2] } } end
  return cases
end

-- Creation: the shapes themselves.
function R.from_shape(P)
  local cases = {}
  for _, s in ipairs(SHAPES) do cases[#cases + 1] = { fill = s[2], v = { [P[1]] = copy(s[1]) } } end
  return cases
end

function R.random(P)
  local cases = {}
  local params = { { "uniform", -1, 3 }, { "normal", 0.5, 2 }, { "uniform", 0, 1 }, { "normal", -3, 0.25 } }
  for i, s in ipairs({ {}, { 7 }, { 129 }, { 1000 }, { 10007 }, { 100, 101 }, { 3, 5, 7, 97 }, { 1, 7, 1, 33 } }) do
    local p = params[(i - 1) % #params + 1]
    cases[#cases + 1] = { fill = C, v = { [P[1]] = s, [P[2]] = p[1], [P[3]] = p[2], [P[4]] = p[3] } }
  end
  return cases
end

function R.arange(P)
  local cases = {}
  for _, r in ipairs({ { 0, 1, 1 }, { 0, 7, 1 }, { -3, 8, 3 }, { 5, -4, -3 }, { 0, 10007, 1 }, { -5000, 5007, 1 },
    { 1000, -1000, -7 }, { -2147483648, 2147483647, 1048573 }, { 2147483000, 2147483647, 1 },
    { 7, 8, 1000000 } }) do
    cases[#cases + 1] = { fill = C, v = { [P[1]] = r[1], [P[2]] = r[2], [P[3]] = r[3] } }
  end
  return cases
end

-- Flatten, and a split in two factors (the second one inferred on every other shape).
function R.reshape(P)
  return over_shapes(P, function(s, i)
    local n = numel(s)
    local p = factor(n)
    return { { [P[2]] = { -1 } }, { [P[2]] = i % 2 == 0 and { p, -1 } or { p, n // p } } }
  end)
end

-- First and last dims; the two middle ones of 4-d shapes; 0 and -1 of a 0-d tensor.
function R.swap_dims(P)
  return over_shapes(P, function(s, i)
    if #s == 0 then return { { [P[2]] = 0, [P[3]] = -1 } } end
    local out = { { [P[2]] = i % 2 == 0 and 0 or -1, [P[3]] = i % 2 == 0 and -1 or 0 } }
    if #s == 4 then out[2] = { [P[2]] = 1, [P[3]] = 2 } end
    return out
  end)
end

-- Reversed dims; a rotation of 3-d and 4-d shapes, every other entry negative.
function R.permute(P)
  return over_shapes(P, function(s)
    local rev, rot = {}, {}
    for d = 1, #s do
      rev[d] = #s - d
      rot[d] = d % #s - (d % 2 == 0 and #s or 0)
    end
    local out = { { [P[2]] = rev } }
    if #s >= 3 then out[2] = { [P[2]] = rot } end
    return out
  end)
end

-- A new leading dim with size-1 dims stretched (-1 keeps the others on every other
-- shape); shapes with size-1 dims also stretch them without a new dim; 0-d to [7, 33].
function R.expand(P)
  return over_shapes(P, function(s, i)
    if #s == 0 then return { { [P[2]] = { 7, 33 } } } end
    local lead, stretch, ones = { 2 }, {}, false
    for d, n in ipairs(s) do
      local keep = i % 2 == 0 and -1 or n
      lead[d + 1] = n == 1 and 3 or keep
      stretch[d] = n == 1 and 5 or keep
      ones = ones or n == 1
    end
    local out = { { [P[2]] = lead } }
    if ones then out[2] = { [P[2]] = stretch } end
    return out
  end)
end

-- An interior range of every dim (sizes 1 and 2: what there is), and of the first dim only.
local function interior(s, k)
  local starts, ends = {}, {}
  for d = 1, k do
    local n = s[d]
    starts[d] = n >= 2 and 1 or 0
    ends[d] = n >= 3 and n - 1 or n
  end
  return starts, ends
end

local function slices(s)
  local out = { { interior(s, #s) } }
  if #s >= 2 then out[2] = { interior(s, 1) } end
  return out
end

function R.slice(P)
  return over_shapes(P, function(s)
    local out = {}
    for _, r in ipairs(slices(s)) do out[#out + 1] = { [P[2]] = r[1], [P[3]] = r[2] } end
    return out
  end)
end

function R.slice_assign(P)
  return over_shapes(P, function(s)
    local out = {}
    for _, r in ipairs(slices(s)) do
      local region = copy(s)
      for d = 1, #r[1] do region[d] = r[2][d] - r[1][d] end
      out[#out + 1] = { [P[2]] = region, [P[3]] = r[1], [P[4]] = r[2] }
    end
    return out
  end)
end

-- 2 and 3 pieces along every dim of small shapes, and along the first and last dim of big ones.
function R.cat(P)
  local cases = {}
  local fills = { C, E, T }
  local bases = { { { 7 }, "all" }, { { 1000 }, "all" }, { { 7, 33 }, "all" }, { { 3, 7, 33 }, "all" },
    { { 2, 3, 4, 5 }, "all" }, { { 1, 7, 1, 33 }, "all" }, { { 10007 }, "all" }, { { 100, 101 }, "ends" },
    { { 3, 5, 7, 97 }, "ends" } }
  for _, b in ipairs(bases) do
    local s = b[1]
    for d = 1, #s do
      if b[2] == "all" or d == 1 or d == #s then
        local k = #cases
        local sizes = k % 2 == 0 and { s[d], 1 } or { 1, s[d], 2 }
        local items = {}
        for j, n in ipairs(sizes) do
          items[j] = copy(s)
          items[j][d] = n
        end
        local dim = k % 2 == 0 and d - 1 or d - 1 - #s
        cases[#cases + 1] = { fill = fills[k % 3 + 1], v = { [P[1]] = items, [P[2]] = dim } }
      end
    end
  end
  return cases
end

-- Every dim of every shape (the last one as -1 on every other shape); 0 or -1 of 0-d ones.
function R.reduce_dim(P)
  return over_shapes(P, function(s, i)
    if #s == 0 then return { { [P[2]] = i % 2 == 0 and -1 or 0 } } end
    local out = {}
    for d = 1, #s do out[d] = { [P[2]] = (d == #s and i % 2 == 0) and -1 or d - 1 } end
    return out
  end)
end

-- Cross-entropy: logits [N, C] and targets [N] (targets of the "index" domain lie in
-- [0, 7), so every C is at least 7); 1 to 4096 rows, wide and narrow, some past the CPU's
-- threading threshold.
function R.cross_entropy(P)
  local cases = {}
  for _, s in ipairs({ { 1, 7, C }, { 3, 7, E }, { 7, 10, T }, { 129, 7, C }, { 100, 101, E }, { 1000, 33, C },
    { 33, 1000, T }, { 4096, 17, E }, { 2, 65537, C } }) do
    cases[#cases + 1] = { fill = s[3], v = { [P[1]] = { s[1], s[2] }, [P[2]] = { s[1] } } }
  end
  return cases
end

-- reduce / cumulative / sort group: the whole-tensor and per-dim reductions that have no
-- identity take the same shapes; ops along a dim also take dim 0 / -1 of 0-d shapes; topk
-- keeps 1, about half and all of the dim.

function R.along_dim(P)
  return over_shapes(P, function(s, i)
    if #s == 0 then return { { [P[2]] = i % 2 == 0 and -1 or 0 } } end
    local out = {}
    for d = 1, #s do out[d] = { [P[2]] = (d == #s and i % 2 == 0) and -1 or d - 1 } end
    return out
  end)
end

function R.topk(P)
  return over_shapes(P, function(s, i)
    if #s == 0 then return { { [P[2]] = 1, [P[3]] = 0 } } end
    local out = {}
    for d = 1, #s do
      local n = s[d]
      local dim = (d == #s and i % 2 == 0) and -1 or d - 1
      out[#out + 1] = { [P[2]] = ({ 1, (n + 1) // 2, n })[(i + d) % 3 + 1], [P[3]] = dim }
    end
    return out
  end)
end
R.reduce_dim_nonempty = R.reduce_dim

-- m, k, n in {1, 7, 64, 129} (each m with each n, k cycling), batched, broadcast batches,
-- one large enough for the CPU's threaded matmul, and a k of more than 2^20 (more than
-- 65535 tiles of 16: lavapipe's loop limit; ties, so that the sum is exact in any order).
function R.matmul(P)
  local cases = {}
  local sizes = { 1, 7, 64, 129 }
  for i, m in ipairs(sizes) do
    for j, n in ipairs(sizes) do
      local k = sizes[(i + j) % 4 + 1]
      cases[#cases + 1] = { fill = (i + j) % 5 == 0 and E or C, v = { [P[1]] = { m, k }, [P[2]] = { k, n } } }
    end
  end
  for _, p in ipairs({
    { { 2, 7, 64 }, { 2, 64, 33 }, C }, { { 3, 129, 7 }, { 3, 7, 1 }, T }, { { 2, 1, 7, 64 }, { 3, 64, 7 }, C },
    { { 64, 129 }, { 4, 129, 7 }, E }, { { 5, 7, 1 }, { 1, 64 }, C }, { { 1, 3, 1, 7 }, { 2, 1, 7, 129 }, C },
    { { 129, 257 }, { 257, 129 }, C }, { { 1, 1048600 }, { 1048600, 1 }, T },
  }) do
    cases[#cases + 1] = { fill = p[3], v = { [P[1]] = p[1], [P[2]] = p[2] } }
  end
  return cases
end

-- a @ b^T and a^T @ b: matmul's cases (R.matmul's or Z.matmul's) with argument `which` (2:
-- b, 1: a) given transposed over its last two dims.
local function transposed(cases, P, which)
  for _, c in ipairs(cases) do
    local s = c.v[P[which]]
    local t = { table.unpack(s) }
    t[#t - 1], t[#t] = s[#s], s[#s - 1]
    c.v[P[which]] = t
  end
  return cases
end
function R.matmul_nt(P) return transposed(R.matmul(P), P, 2) end
function R.matmul_tn(P) return transposed(R.matmul(P), P, 1) end

-- int ops (issue 10): the nonempty reductions take the cases of their plain rules (no
-- case has a zero size); random_int the random shapes with a few [low, high) ranges.
function R.random_int(P)
  local cases = {}
  local ranges = { { 0, 10 }, { -5, 5 }, { -2147483648, 2147483647 }, { 7, 8 } }
  for i, s in ipairs({ {}, { 7 }, { 129 }, { 1000 }, { 10007 }, { 100, 101 }, { 3, 5, 7, 97 }, { 1, 7, 1, 33 } }) do
    local r = ranges[(i - 1) % #ranges + 1]
    cases[#cases + 1] = { fill = C, v = { [P[1]] = s, [P[2]] = r[1], [P[3]] = r[2] } }
  end
  return cases
end

-- Indexing and layout rules (issue 10). The index rules take their indices from the
-- "index" domain (ints in [0, 7)), so the indexed dim is one of size >= 7: the first such
-- dim (as a negative dim on every other shape), with indices the shape of a but 5 long
-- there (or as long), and one shorter in the other dims of size >= 2 on the second case.
local function index_dim(s)
  for d, n in ipairs(s) do if n >= 7 then return d end end
end

local function index_cases(P, f)
  return over_shapes(P, function(s, i)
    local d = index_dim(s)
    if not d or numel(s) > 65537 then return nil end
    local dim = i % 2 == 0 and d - 1 - #s or d - 1
    local same, other = copy(s), copy(s)
    same[d] = i % 2 == 0 and 5 or s[d]
    for e, n in ipairs(s) do
      if e == d then other[e] = 2 elseif n >= 2 then other[e] = n - 1 end
    end
    return { f(s, d, dim, same), f(s, d, dim, other) }
  end)
end

function R.gather(P)
  return index_cases(P, function(_, _, dim, idx) return { [P[2]] = dim, [P[3]] = idx } end)
end

-- value as indices, or one longer in its first dim.
function R.scatter(P)
  return index_cases(P, function(_, _, dim, idx)
    local value = copy(idx)
    if dim % 2 == 0 then value[1] = value[1] + 1 end
    return { [P[2]] = dim, [P[3]] = idx, [P[4]] = value }
  end)
end

-- 1-d indices of 4 entries, or 1.
function R.select(P)
  return index_cases(P, function(s, d, dim, idx)
    return { [P[2]] = dim, [P[3]] = { idx[d] == 2 and 1 or 4 } }
  end)
end

function R.select_add(P)
  return index_cases(P, function(s, d, dim, idx)
    local k = idx[d] == 2 and 1 or 4
    local value = copy(s)
    value[d] = k
    return { [P[2]] = dim, [P[3]] = { k }, [P[4]] = value }
  end)
end

-- argwhere: the random mask's true elements; mask_select: a mask of a's shape, of its
-- trailing dims, or with a broadcast 1.
R.argwhere = R.same
function R.mask_select(P)
  return over_shapes(P, function(s)
    local cases = { { [P[2]] = s } }
    if #s >= 2 then
      local tail = {}
      for i = 2, #s do tail[#tail + 1] = s[i] end
      cases[#cases + 1] = { [P[2]] = tail }
      local one = copy(s)
      one[#one] = 1
      cases[#cases + 1] = { [P[2]] = one }
    end
    return cases
  end)
end

function R.one_hot(P)
  return over_shapes(P, function(s, i)
    if numel(s) > 10007 then return nil end
    return { { [P[2]] = i % 2 == 0 and 7 or 9 } }
  end)
end

-- One dim, the last one (negative), and every dim of 2-d and larger shapes.
function R.flip(P)
  return over_shapes(P, function(s)
    if #s == 0 then return { { [P[2]] = {} } } end
    local out = { { [P[2]] = { 0 } }, { [P[2]] = { -1 } } }
    if #s >= 2 then
      local all = {}
      for d = 1, #s do all[d] = d - 1 end
      out[3] = { [P[2]] = all }
    end
    return out
  end)
end

function R.repeat_dim(P)
  return over_shapes(P, function(s)
    if #s == 0 then return nil end
    return { { [P[2]] = 0, [P[3]] = 2 }, { [P[2]] = -1, [P[3]] = numel(s) <= 10007 and 3 or 1 } }
  end)
end

function R.transpose(P)
  return over_shapes(P, function(s) if #s >= 2 then return { {} } end end)
end

-- An interior range of the first dim, and the last entry of the last dim (negative start).
function R.narrow(P)
  return over_shapes(P, function(s)
    if #s == 0 then return nil end
    local n = s[1]
    return { { [P[2]] = 0, [P[3]] = n >= 3 and 1 or 0, [P[4]] = n >= 3 and n - 2 or n },
      { [P[2]] = -1, [P[3]] = -1, [P[4]] = 1 } }
  end)
end

-- 2 and 3 tensors of one shape, at every position of small shapes and at both ends of big ones.
function R.stack(P)
  local cases = {}
  local fills = { C, E, T }
  for _, s in ipairs({ {}, { 7 }, { 1000 }, { 7, 33 }, { 3, 7, 33 }, { 1, 7, 1, 33 }, { 10007 }, { 100, 101 } }) do
    for d = 0, #s do
      if #s <= 3 or d == 0 or d == #s then
        local k = #cases
        local items = {}
        for j = 1, k % 2 == 0 and 2 or 3 do items[j] = copy(s) end
        cases[#cases + 1] = { fill = fills[k % 3 + 1], v = { [P[1]] = items, [P[2]] = k % 2 == 0 and d or d - #s - 1 } }
      end
    end
  end
  return cases
end

-- Overlapping windows of 2 along the first dim; windows of 3 (or all) with step 2 along the last.
function R.unfold(P)
  return over_shapes(P, function(s)
    if #s == 0 or numel(s) > 10007 then return nil end
    local last = s[#s]
    return { { [P[2]] = 0, [P[3]] = s[1] >= 2 and 2 or 1, [P[4]] = 1 },
      { [P[2]] = -1, [P[3]] = last >= 3 and 3 or last, [P[4]] = 2 } }
  end)
end

function R.pad(P)
  return over_shapes(P, function(s)
    if #s == 0 then return { { [P[2]] = {} } } end
    local out = { { [P[2]] = { 1, 2 } } }
    if #s >= 2 then out[2] = { [P[2]] = { 0, 1, 2, 0 } } end
    return out
  end)
end

function R.tri_mask(P)
  local cases = {}
  for _, s in ipairs(SHAPES) do
    if #s[1] >= 2 then cases[#cases + 1] = { fill = s[2], v = { [P[1]] = copy(s[1]) } } end
  end
  return cases
end

-- Vectors along the last, the first and a middle dim; broadcasts of one or more vectors.
function R.cross(P)
  local cases = {}
  for _, c in ipairs({
    { { 3 }, { 3 }, 0, E }, { { 7, 3 }, { 7, 3 }, -1, C }, { { 3, 5 }, { 3, 5 }, 0, T }, { { 10007, 3 }, { 10007, 3 }, 1, C },
    { { 10007, 3 }, { 10007, 3 }, -1, E }, { { 2, 3, 33 }, { 2, 3, 33 }, 1, C }, { { 3 }, { 129, 3 }, -1, C },
    { { 129, 1, 3 }, { 7, 3 }, 2, E }, { { 3, 1 }, { 3, 100 }, 0, T }, { { 5, 3, 7, 97 }, { 5, 3, 7, 97 }, 1, C },
  }) do
    cases[#cases + 1] = { fill = c[4], v = { [P[1]] = c[1], [P[2]] = c[2], [P[3]] = c[3] } }
  end
  return cases
end

-- linear (x @ w + b): in and out in {1, 7, 64, 129} against 1 to 129 rows, batched x,
-- and one large enough for the CPU's threaded matmul and bias loop.
function R.linear(P)
  local cases = {}
  local sizes = { 1, 7, 64, 129 }
  for i, k in ipairs(sizes) do
    for j, n in ipairs(sizes) do
      local m = sizes[(i + j) % 4 + 1]
      cases[#cases + 1] = { fill = (i + j) % 5 == 0 and E or C, v = { [P[1]] = { m, k }, [P[2]] = { k, n }, [P[3]] = { n } } }
    end
  end
  for _, p in ipairs({
    { { 2, 7, 64 }, 33, C }, { { 3, 1, 129, 7 }, 1, T }, { { 5, 7, 1 }, 64, E }, { { 300, 257 }, 129, C },
  }) do
    local k = p[1][#p[1]]
    cases[#cases + 1] = { fill = p[3], v = { [P[1]] = p[1], [P[2]] = { k, p[2] }, [P[3]] = { p[2] } } }
  end
  return cases
end

-- Module ops (NCHW). Conv geometries: { n, c, h, w, o, kh, kw, stride, padding, dilation,
-- groups, fill }: 1x1 and odd kernels, padding, stride, dilation, groups and depthwise, an
-- output of one pixel, and batches large enough for the CPU's threaded loops.
local CONVS = {
  { 1, 1, 3, 3, 1, 2, 2, { 1, 1 }, { 0, 0 }, { 1, 1 }, 1, C },
  { 2, 3, 7, 5, 4, 1, 1, { 1, 1 }, { 0, 0 }, { 1, 1 }, 1, E },
  { 1, 2, 9, 9, 3, 3, 3, { 1, 1 }, { 1, 1 }, { 1, 1 }, 1, T },
  { 3, 4, 11, 8, 6, 3, 2, { 2, 1 }, { 1, 0 }, { 1, 2 }, 2, C },
  { 2, 6, 10, 10, 6, 3, 3, { 2, 2 }, { 2, 1 }, { 2, 2 }, 6, E },
  { 1, 1, 5, 5, 2, 5, 5, { 1, 1 }, { 0, 0 }, { 1, 1 }, 1, C },
  { 4, 3, 16, 16, 8, 3, 3, { 3, 3 }, { 1, 1 }, { 1, 1 }, 1, T },
  { 8, 8, 28, 28, 16, 3, 3, { 1, 1 }, { 1, 1 }, { 1, 1 }, 1, C },
  { 16, 1, 28, 28, 8, 3, 3, { 1, 1 }, { 1, 1 }, { 1, 1 }, 1, E },
}

local function conv_out(in_, k, s, p, d) return (in_ + 2 * p - d * (k - 1) - 1) // s + 1 end

local function conv_cases(P, kind)
  local cases = {}
  for _, g in ipairs(CONVS) do
    local n, c, h, w, o, kh, kw, st, pd, dl, gr = table.unpack(g, 1, 11)
    local x, wt = { n, c, h, w }, { o, c // gr, kh, kw }
    local y = { n, o, conv_out(h, kh, st[1], pd[1], dl[1]), conv_out(w, kw, st[2], pd[2], dl[2]) }
    local v = { [P[4]] = st, [P[5]] = pd, [P[6]] = dl, [P[7]] = gr }
    if kind == "forward" then v[P[1]], v[P[2]], v[P[3]] = x, wt, { o }
    elseif kind == "input" then v[P[1]], v[P[2]], v[P[3]] = y, wt, x
    else v[P[1]], v[P[2]], v[P[3]] = y, x, wt end
    cases[#cases + 1] = { fill = g[12], v = v }
  end
  return cases
end

function R.conv2d(P) return conv_cases(P, "forward") end
function R.conv2d_backward_input(P) return conv_cases(P, "input") end
function R.conv2d_backward_weight(P) return conv_cases(P, "weight") end

-- Pool geometries: { n, c, h, w, kernel, stride, padding, dilation, fill }.
local POOLS = {
  { 1, 1, 3, 3, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 1, 1 }, C },
  { 2, 3, 8, 8, { 2, 2 }, { 2, 2 }, { 0, 0 }, { 1, 1 }, E },
  { 1, 2, 7, 9, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, T },
  { 2, 2, 10, 7, { 3, 2 }, { 1, 2 }, { 1, 1 }, { 2, 1 }, C },
  { 1, 1, 1, 1, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 1, 1 }, E },
  { 3, 5, 9, 11, { 4, 3 }, { 3, 2 }, { 2, 1 }, { 1, 1 }, C },
  { 2, 4, 6, 6, { 3, 3 }, { 3, 3 }, { 0, 0 }, { 1, 1 }, E },
  { 64, 8, 28, 28, { 2, 2 }, { 2, 2 }, { 0, 0 }, { 1, 1 }, T },
}

local function pool_cases(P, kind, dilated)
  local cases = {}
  for _, g in ipairs(POOLS) do
    local n, c, h, w, k, st, pd, dl = table.unpack(g, 1, 8)
    if not dilated then dl = { 1, 1 } end
    local x = { n, c, h, w }
    local y = { n, c, conv_out(h, k[1], st[1], pd[1], dl[1]), conv_out(w, k[2], st[2], pd[2], dl[2]) }
    local v, i = {}, 1
    if kind == "forward" then v[P[1]] = x; i = 2 else v[P[1]], v[P[2]] = x, y; i = 3 end
    v[P[i]], v[P[i + 1]], v[P[i + 2]] = k, st, pd
    if dilated then v[P[i + 3]] = dl else v[P[i + 3]] = #cases % 2 end -- count_include_pad
    cases[#cases + 1] = { fill = g[9], v = v }
  end
  return cases
end

function R.max_pool2d(P) return pool_cases(P, "forward", true) end
function R.max_pool2d_backward(P) return pool_cases(P, "backward", true) end
function R.avg_pool2d(P) return pool_cases(P, "forward", false) end
function R.avg_pool2d_backward(P) return pool_cases(P, "backward", false) end

-- nn module composites (specs/ops/module_nn.lua). Layer norm: x with the normalized shape
-- (weight and bias) its last dim or last two, rows of 1 to 1000 elements, some large.
function R.layer_norm(P)
  local cases = {}
  for _, c in ipairs({ { { 7 }, { 7 }, C }, { { 3, 7 }, { 7 }, E }, { { 1, 1 }, { 1 }, C }, { { 129, 33 }, { 33 }, T },
    { { 2, 3, 4 }, { 3, 4 }, C }, { { 100, 101 }, { 101 }, E }, { { 5, 7, 97 }, { 97 }, C }, { { 4, 1000 }, { 1000 }, T },
    { { 3, 5, 7, 97 }, { 7, 97 }, E }, { { 300, 257 }, { 257 }, C } }) do
    cases[#cases + 1] = { fill = c[3], v = { [P[1]] = c[1], [P[2]] = c[2], [P[3]] = c[2] } }
  end
  return cases
end

-- Its backward ops (grad, x, weight): the same shapes, grad with x's.
local function layer_norm_backward_cases(P)
  local cases = {}
  for _, c in ipairs(R.layer_norm({ "x", "w", "b" })) do
    cases[#cases + 1] = { fill = c.fill, v = { [P[1]] = c.v.x, [P[2]] = c.v.x, [P[3]] = c.v.w } }
  end
  return cases
end
R.layer_norm_backward = layer_norm_backward_cases
R.layer_norm_backward_weight = layer_norm_backward_cases

-- Group and batch norm: x [N, C, *] of 2 to 4 dims (num_groups: 1, C, and between).
local NORMS = { { { 2, 4 }, 2, C }, { { 1, 6, 7 }, 3, E }, { { 3, 8, 33 }, 4, T }, { { 2, 6, 5, 7 }, 2, C },
  { { 4, 32, 16, 16 }, 8, E }, { { 1, 3, 10007 }, 1, C }, { { 5, 4, 3, 3 }, 4, T }, { { 16, 64, 64 }, 32, C },
  { { 100, 101 }, 101, E } }
function R.group_norm(P)
  local cases = {}
  for _, c in ipairs(NORMS) do
    local ch = { c[1][2] }
    cases[#cases + 1] = { fill = c[3], v = { [P[1]] = c[1], [P[2]] = c[2], [P[3]] = ch, [P[4]] = ch } }
  end
  return cases
end

function R.batch_norm_infer(P)
  local cases = {}
  for _, c in ipairs(NORMS) do
    local ch = { c[1][2] }
    cases[#cases + 1] = { fill = c[3], v = { [P[1]] = c[1], [P[2]] = ch, [P[3]] = ch, [P[4]] = ch, [P[5]] = ch } }
  end
  return cases
end

function R.batch_norm_train(P)
  local cases = {}
  for _, c in ipairs(NORMS) do
    local ch = { c[1][2] }
    cases[#cases + 1] = { fill = c[3], v = { [P[1]] = c[1], [P[2]] = ch, [P[3]] = ch } }
  end
  return cases
end

-- Embedding: indices from the index domain ([0, 7)), so tables of at least 7 rows; 0-d to
-- 3-d indices, rows of 1 to 300 values.
function R.embedding(P)
  local cases = {}
  for _, c in ipairs({ { { 7, 1 }, { 1 }, C }, { { 7, 4 }, { 3 }, E }, { { 8, 7 }, {}, T }, { { 10, 33 }, { 5, 7 }, C },
    { { 100, 64 }, { 2, 3, 4 }, E }, { { 7, 129 }, { 129 }, T }, { { 1000, 16 }, { 10007 }, C }, { { 50, 300 }, { 4, 64 }, E } }) do
    cases[#cases + 1] = { fill = c[3], v = { [P[1]] = c[1], [P[2]] = c[2] } }
  end
  return cases
end

-- Attention geometries: { B, H, L, S, E, Ev, causal, fill }: one query and key, L < S and
-- L > S (causal is top-left aligned), heads, and a few large enough for threaded matmuls.
local ATTENTIONS = {
  { 1, 1, 1, 1, 1, 1, 0, C }, { 2, 3, 5, 7, 4, 6, 1, E }, { 1, 2, 16, 16, 8, 8, 1, T }, { 2, 4, 33, 17, 16, 16, 0, C },
  { 1, 1, 129, 129, 64, 64, 1, E }, { 3, 2, 7, 100, 5, 3, 0, C }, { 4, 8, 64, 64, 32, 32, 1, C }, { 1, 1, 1, 300, 7, 1, 0, T },
}
-- Masks per geometry (cycling): [L, S], [B, 1, L, S], [1, H, 1, S], 0-d, [B, H, L, S], [S].
local function attention_mask(g, i)
  local b, h, l, s = g[1], g[2], g[3], g[4]
  local masks = { { l, s }, { b, 1, l, s }, { 1, h, 1, s }, {}, { b, h, l, s }, { s } }
  return masks[(i - 1) % #masks + 1]
end
local function attention_cases(P, masked)
  local cases = {}
  for i, g in ipairs(ATTENTIONS) do
    local b, h, l, s, e, ev, causal = table.unpack(g, 1, 7)
    local v = { [P[1]] = { b, h, l, e }, [P[2]] = { b, h, s, e }, [P[3]] = { b, h, s, ev } }
    if masked then v[P[4]], v[P[5]] = attention_mask(g, i), causal else v[P[4]] = causal end
    cases[#cases + 1] = { fill = g[8], v = v }
  end
  return cases
end
function R.attention(P) return attention_cases(P, false) end
function R.attention_masked(P) return attention_cases(P, true) end
-- The backward ops: the same geometries with output and grad [B, H, L, Ev]; CLEAN or TIES
-- only (no NaN or inf, see their semantics: which masked products are 0 * inf is not fixed).
local function attention_backward_cases(P)
  local cases = {}
  for _, g in ipairs(ATTENTIONS) do
    local b, h, l, s, e, ev, causal = table.unpack(g, 1, 7)
    local o = { b, h, l, ev }
    cases[#cases + 1] = { fill = g[8] == E and C or g[8],
      v = { [P[1]] = { b, h, l, e }, [P[2]] = { b, h, s, e }, [P[3]] = { b, h, s, ev }, [P[4]] = o, [P[5]] = o,
        [P[6]] = causal } }
  end
  return cases
end
R.attention_backward = attention_backward_cases
R.attention_backward_query = attention_backward_cases
R.attention_backward_key = attention_backward_cases
R.attention_backward_value = attention_backward_cases
-- Spatial module ops (specs/ops/module_spatial.lua). 1-d convs { n, c, l, o, k, stride,
-- padding, dilation, groups, fill } and pools { n, c, l, kernel, stride, padding, dilation,
-- fill }: the geometries of the 2-d ones along one dim, and long rows for the threaded loops.
local CONV1DS = {
  { 1, 1, 5, 1, 2, 1, 0, 1, 1, C }, { 2, 3, 7, 4, 1, 1, 0, 1, 1, E }, { 1, 2, 9, 3, 3, 1, 1, 1, 1, T },
  { 3, 4, 11, 6, 3, 2, 1, 2, 2, C }, { 2, 6, 10, 6, 3, 2, 2, 2, 6, E }, { 1, 1, 5, 2, 5, 1, 0, 1, 1, C },
  { 8, 8, 300, 16, 5, 3, 2, 1, 1, T }, { 4, 3, 1000, 8, 3, 1, 1, 1, 1, C },
}

function R.conv1d(P)
  local cases = {}
  for _, g in ipairs(CONV1DS) do
    local n, c, l, o, k, st, pd, dl, gr = table.unpack(g, 1, 9)
    cases[#cases + 1] = { fill = g[10], v = { [P[1]] = { n, c, l }, [P[2]] = { o, c // gr, k }, [P[3]] = { o },
      [P[4]] = st, [P[5]] = pd, [P[6]] = dl, [P[7]] = gr } }
  end
  return cases
end

local POOL1DS = {
  { 1, 1, 3, 2, 1, 0, 1, C }, { 2, 3, 8, 2, 2, 0, 1, E }, { 1, 2, 9, 3, 2, 1, 1, T }, { 2, 2, 10, 3, 1, 1, 2, C },
  { 1, 1, 1, 1, 1, 0, 1, E }, { 3, 5, 11, 4, 3, 2, 1, C }, { 2, 4, 6, 3, 3, 0, 1, E }, { 64, 8, 784, 2, 2, 0, 1, T },
}

local function pool1d_cases(P, dilated)
  local cases = {}
  for _, g in ipairs(POOL1DS) do
    local n, c, l, k, st, pd, dl = table.unpack(g, 1, 7)
    cases[#cases + 1] = { fill = g[8], v = { [P[1]] = { n, c, l }, [P[2]] = k, [P[3]] = st, [P[4]] = pd,
      [P[5]] = dilated and dl or #cases % 2 } } -- count_include_pad
  end
  return cases
end

function R.max_pool1d(P) return pool1d_cases(P, true) end
function R.avg_pool1d(P) return pool1d_cases(P, false) end

-- Resizes { n, c, h, w, oh, ow, fill }: sizes that divide and that do not, down and up,
-- to and from 1, the same size, and large ones.
local RESIZES = {
  { 1, 1, 3, 3, 2, 2, C }, { 2, 3, 8, 8, 4, 4, E }, { 1, 2, 7, 9, 3, 4, T }, { 2, 2, 5, 7, 10, 13, C },
  { 1, 1, 1, 1, 3, 2, E }, { 3, 5, 9, 11, 1, 1, C }, { 2, 4, 6, 6, 6, 6, E }, { 1, 3, 13, 5, 5, 13, T },
  { 16, 8, 28, 28, 7, 9, C }, { 2, 3, 33, 64, 64, 33, E },
}

local function resize_cases(P, flag)
  local cases = {}
  for _, g in ipairs(RESIZES) do
    local v = { [P[1]] = { g[1], g[2], g[3], g[4] }, [P[2]] = { g[5], g[6] } }
    if flag then v[P[3]] = #cases % 2 end -- align_corners
    cases[#cases + 1] = { fill = g[7], v = v }
  end
  return cases
end

function R.adaptive_avg_pool2d(P) return resize_cases(P) end
function R.interpolate2d(P) return resize_cases(P) end
function R.interpolate2d_bilinear(P) return resize_cases(P, true) end

function R.adaptive_avg_pool1d(P)
  local cases = {}
  for _, g in ipairs(RESIZES) do
    cases[#cases + 1] = { fill = g[7], v = { [P[1]] = { g[1], g[2], g[4] }, [P[2]] = g[6] } }
  end
  return cases
end

-- Transposed convs { n, c, h, w, o, kh, kw, stride, padding, output_padding, dilation,
-- groups, fill } (c input channels, o output channels).
local CONVTS = {
  { 1, 1, 2, 2, 1, 2, 2, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 1, 1 }, 1, C },
  { 2, 3, 5, 4, 4, 1, 1, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 1, 1 }, 1, E },
  { 1, 2, 4, 4, 3, 3, 3, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 1, T },
  { 3, 4, 5, 6, 6, 3, 2, { 2, 1 }, { 1, 0 }, { 1, 0 }, { 1, 2 }, 2, C },
  { 2, 6, 4, 4, 6, 3, 3, { 3, 2 }, { 2, 1 }, { 2, 0 }, { 2, 2 }, 6, E },
  { 4, 8, 7, 7, 3, 4, 4, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 1, 1 }, 1, T },
  { 8, 16, 14, 14, 8, 3, 3, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 1, 1 }, 1, C },
  { 2, 1, 1, 1, 2, 5, 5, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 1, 1 }, 1, E },
}

function R.conv_transpose2d(P)
  local cases = {}
  for _, g in ipairs(CONVTS) do
    local n, c, h, w, o, kh, kw, st, pd, op, dl, gr = table.unpack(g, 1, 12)
    cases[#cases + 1] = { fill = g[13], v = { [P[1]] = { n, c, h, w }, [P[2]] = { c, o // gr, kh, kw }, [P[3]] = { o },
      [P[4]] = st, [P[5]] = pd, [P[6]] = op, [P[7]] = dl, [P[8]] = gr } }
  end
  return cases
end


-- Zero-size cases per shape rule (the generated test_<op>_empty, on every backend and on
-- autodiff): empty inputs ([0], [2,0,3], a 0 broadcast against a 1), empty results of
-- non-empty inputs (a slice of length 0, expand to 0), non-empty results of empty inputs
-- (sums, matmul with an empty inner dim, cat). Each case says what the result must be:
-- `shape` (worked out by hand from PyTorch's rules), or `status`, the error the rule must
-- give on every backend (max over an empty dim, 0 against 3 in a broadcast).
local Z = {}
local function zc(v, want) return { fill = C, v = v, want = want } end
local function shp(s) return { shape = s } end
local function err(st) return { status = st or "TD_E_SHAPE" } end

-- One tensor, its result shaped like it (or as `f` says).
local function one_tensor(P, f)
  local out = {}
  for _, s in ipairs({ { 0 }, { 2, 0, 3 }, { 0, 1 }, { 3, 0 } }) do
    out[#out + 1] = zc({ [P[1]] = s }, f and f(s) or shp(s))
  end
  return out
end
function Z.same(P) return one_tensor(P) end
Z.host_out = Z.same
function Z.reduce_all(P) return one_tensor(P, function() return shp({}) end) end
function Z.reduce_all_nonempty(P) return one_tensor(P, function() return err() end) end

function Z.broadcast(P)
  local out = {}
  for _, p in ipairs({ { { 0 }, { 0 }, { 0 } }, { { 2, 0, 3 }, { 2, 0, 3 }, { 2, 0, 3 } }, { { 0, 1 }, { 1, 4 }, { 0, 4 } },
    { { 1, 4 }, { 0, 1 }, { 0, 4 } }, { { 0 }, { 1 }, { 0 } }, { {}, { 0, 3 }, { 0, 3 } }, { { 2, 0, 3 }, { 3 }, { 2, 0, 3 } },
    { { 0 }, { 3 } }, { { 2, 0 }, { 2, 2 } } }) do
    out[#out + 1] = zc({ [P[1]] = p[1], [P[2]] = p[2] }, p[3] and shp(p[3]) or err())
  end
  return out
end

function Z.broadcast3(P)
  local out = {}
  for _, t in ipairs({ { { 0 }, { 0 }, { 0 }, { 0 } }, { { 2, 0, 3 }, { 1, 3 }, {}, { 2, 0, 3 } },
    { { 0, 1 }, { 1, 4 }, { 4 }, { 0, 4 } }, { { 3 }, { 0, 1 }, { 1 }, { 0, 3 } }, { { 0 }, { 3 }, { 1 } } }) do
    out[#out + 1] = zc({ [P[1]] = t[1], [P[2]] = t[2], [P[3]] = t[3] }, t[4] and shp(t[4]) or err())
  end
  return out
end

function Z.mask_fill(P)
  local out = {}
  for _, m in ipairs({ { { 0 }, { 0 }, true }, { { 2, 0, 3 }, { 3 }, true }, { { 0, 4 }, { 1, 4 }, true },
    { { 0, 3 }, {}, true }, { { 3 }, { 0, 3 } } }) do
    out[#out + 1] = zc({ [P[1]] = m[1], [P[2]] = m[2] }, m[3] and shp(m[1]) or err())
  end
  return out
end

function Z.from_shape(P)
  local out = {}
  for _, s in ipairs({ { 0 }, { 2, 0, 3 }, { 0, 0 }, { 5, 0 } }) do out[#out + 1] = zc({ [P[1]] = s }, shp(s)) end
  return out
end

function Z.random(P)
  return { zc({ [P[1]] = { 0 }, [P[2]] = "uniform", [P[3]] = -1, [P[4]] = 3 }, shp({ 0 })),
    zc({ [P[1]] = { 2, 0, 3 }, [P[2]] = "normal", [P[3]] = 0, [P[4]] = 1 }, shp({ 2, 0, 3 })) }
end

function Z.arange(P)
  local out = {}
  for _, r in ipairs({ { 3, 3, 1 }, { -2, -2, -5 }, { 0, 0, 7 } }) do
    out[#out + 1] = zc({ [P[1]] = r[1], [P[2]] = r[2], [P[3]] = r[3] }, shp({ 0 }))
  end
  out[#out + 1] = zc({ [P[1]] = 5, [P[2]] = 2, [P[3]] = 1 }, err())
  return out
end

function Z.reshape(P)
  local out = {}
  for _, r in ipairs({ { { 2, 0, 3 }, { 0, 6 }, { 0, 6 } }, { { 2, 0, 3 }, { -1, 3 }, { 0, 3 } }, { { 0 }, { 5, 0, 2 }, { 5, 0, 2 } },
    { { 2, 0, 3 }, { -1 }, { 0 } }, { { 0, 4 }, { 4, -1, 0 } }, { { 2, 0 }, {} } }) do
    out[#out + 1] = zc({ [P[1]] = r[1], [P[2]] = r[2] }, r[3] and shp(r[3]) or err())
  end
  return out
end

function Z.swap_dims(P)
  return { zc({ [P[1]] = { 2, 0, 3 }, [P[2]] = 0, [P[3]] = 1 }, shp({ 0, 2, 3 })),
    zc({ [P[1]] = { 0 }, [P[2]] = 0, [P[3]] = -1 }, shp({ 0 })),
    zc({ [P[1]] = { 3, 1, 0 }, [P[2]] = -1, [P[3]] = 0 }, shp({ 0, 1, 3 })) }
end

function Z.permute(P)
  return { zc({ [P[1]] = { 2, 0, 3 }, [P[2]] = { 2, 0, 1 } }, shp({ 3, 2, 0 })),
    zc({ [P[1]] = { 0, 1 }, [P[2]] = { 1, 0 } }, shp({ 1, 0 })), zc({ [P[1]] = { 0 }, [P[2]] = { 0 } }, shp({ 0 })) }
end

function Z.expand(P)
  local out = {}
  for _, r in ipairs({ { { 0 }, { 2, 0 }, { 2, 0 } }, { { 1, 3 }, { 0, 3 }, { 0, 3 } }, { { 0, 1 }, { 0, 4 }, { 0, 4 } },
    { { 2, 0, 1 }, { -1, -1, 5 }, { 2, 0, 5 } }, { {}, { 0 }, { 0 } }, { { 0 }, { 3 } } }) do
    out[#out + 1] = zc({ [P[1]] = r[1], [P[2]] = r[2] }, r[3] and shp(r[3]) or err())
  end
  return out
end

-- a, starts, ends, the result (nil: a range error).
local SLICES = { { { 3, 4 }, { 1 }, { 1 }, { 0, 4 } }, { { 3, 4 }, { 0, 2 }, { 3, 2 }, { 3, 0 } },
  { { 2, 0, 3 }, { 1 }, { 2 }, { 1, 0, 3 } }, { { 0 }, { 0 }, { 0 }, { 0 } }, { { 3, 4 }, { 3, 4 }, { 3, 4 }, { 0, 0 } },
  { { 3 }, { 2 }, { 1 } } }
function Z.slice(P)
  local out = {}
  for _, r in ipairs(SLICES) do
    out[#out + 1] = zc({ [P[1]] = r[1], [P[2]] = r[2], [P[3]] = r[3] }, r[4] and shp(r[4]) or err("TD_E_RANGE"))
  end
  return out
end

function Z.slice_assign(P)
  local out = {}
  for _, r in ipairs(SLICES) do
    if r[4] then out[#out + 1] = zc({ [P[1]] = r[1], [P[2]] = r[4], [P[3]] = r[2], [P[4]] = r[3] }, shp(r[1])) end
  end
  out[#out + 1] = zc({ [P[1]] = { 3, 4 }, [P[2]] = { 1, 4 }, [P[3]] = { 1 }, [P[4]] = { 1 } }, err())
  return out
end

-- PyTorch skips 1-d empty inputs ([0]) whatever the other shapes.
function Z.cat(P)
  local out = {}
  for _, r in ipairs({ { { { 2, 3 }, { 0 }, { 1, 3 } }, 0, { 3, 3 } }, { { { 2, 0 }, { 2, 3 } }, 1, { 2, 3 } },
    { { { 0, 3 }, { 0, 3 } }, 0, { 0, 3 } }, { { { 0 }, { 0 } }, 0, { 0 } }, { { { 2, 0, 3 }, { 2, 1, 3 } }, -2, { 2, 1, 3 } },
    { { { 0 }, { 4 } }, -1, { 4 } }, { { { 2, 3 }, { 0 } }, 1, { 2, 3 } }, { { { 0, 2 }, { 2, 3 } }, 0 } }) do
    out[#out + 1] = zc({ [P[1]] = r[1], [P[2]] = r[2] }, r[3] and shp(r[3]) or err())
  end
  return out
end

local REDUCE_DIMS = { { { 2, 0, 3 }, 1, { 2, 1, 3 }, true }, { { 2, 0, 3 }, 0, { 1, 0, 3 } }, { { 0 }, 0, { 1 }, true },
  { { 0, 4 }, -1, { 0, 1 } }, { { 0, 4 }, -2, { 1, 4 }, true } }
function Z.reduce_dim(P)
  local out = {}
  for _, r in ipairs(REDUCE_DIMS) do out[#out + 1] = zc({ [P[1]] = r[1], [P[2]] = r[2] }, shp(r[3])) end
  return out
end

-- No identity: reducing an empty dim is an error; the other dims of an empty tensor are fine.
function Z.reduce_dim_nonempty(P)
  local out = {}
  for _, r in ipairs(REDUCE_DIMS) do out[#out + 1] = zc({ [P[1]] = r[1], [P[2]] = r[2] }, r[4] and err() or shp(r[3])) end
  return out
end

function Z.matmul(P)
  local out = {}
  for _, r in ipairs({ { { 2, 0 }, { 0, 3 }, { 2, 3 } }, { { 0, 4 }, { 4, 5 }, { 0, 5 } }, { { 3, 4 }, { 4, 0 }, { 3, 0 } },
    { { 2, 3, 0 }, { 0, 4 }, { 2, 3, 4 } }, { { 0, 2, 3 }, { 3, 4 }, { 0, 2, 4 } }, { { 0, 3 }, { 3, 0 }, { 0, 0 } },
    { { 2, 0 }, { 3, 4 } } }) do
    out[#out + 1] = zc({ [P[1]] = r[1], [P[2]] = r[2] }, r[3] and shp(r[3]) or err())
  end
  return out
end

function Z.matmul_nt(P) return transposed(Z.matmul(P), P, 2) end
function Z.matmul_tn(P) return transposed(Z.matmul(P), P, 1) end

-- Rows { values by argument position, the result shape (or an error status) }.
local function rows(P, list)
  local out = {}
  for _, r in ipairs(list) do
    local v = {}
    for i, x in pairs(r[1]) do v[P[i]] = x end
    out[#out + 1] = zc(v, type(r[2]) == "string" and err(r[2]) or shp(r[2]))
  end
  return out
end

-- argwhere gives [count, ndim]: an empty input has nothing true (a 0-d input is left out:
-- its result, [1, 0] or [0, 0], depends on the data).
function Z.argwhere(P)
  return rows(P, { { { { 0 } }, { 0, 1 } }, { { { 2, 0, 3 } }, { 0, 3 } }, { { { 0, 1 } }, { 0, 2 } },
    { { { 3, 0 } }, { 0, 2 } } })
end

-- mask_select of an empty a is empty, whatever the mask; a mask that does not broadcast to
-- a's shape is an error even then.
function Z.mask_select(P)
  return rows(P, { { { { 0 }, { 0 } }, { 0 } }, { { { 2, 0, 3 }, { 3 } }, { 0 } }, { { { 0, 3 }, { 1, 3 } }, { 0 } },
    { { { 2, 0 }, { 3 } }, "TD_E_SHAPE" }, { { { 3 }, { 0 } }, "TD_E_SHAPE" } })
end

-- softmax and friends: the shape of a; a dim out of range is still an error.
function Z.along_dim(P)
  return rows(P, { { { { 0 }, 0 }, { 0 } }, { { { 2, 0, 3 }, 1 }, { 2, 0, 3 } }, { { { 2, 0, 3 }, -1 }, { 2, 0, 3 } },
    { { { 0, 4 }, 0 }, { 0, 4 } }, { { { 0 }, 1 }, "TD_E_RANGE" } })
end

-- count 0 of a non-empty dim gives an empty result; count past an empty dim is out of range.
-- PyTorch keeps a 0-d input 0-d even for count 0 (its sizes have no dim to set to 0);
-- tdispatch refuses that case instead (TD_E_SHAPE), a deliberate difference.
function Z.topk(P)
  return rows(P, { { { { 2, 0, 3 }, 0, 1 }, { 2, 0, 3 } }, { { { 2, 0, 3 }, 2, -1 }, { 2, 0, 2 } },
    { { { 3, 4 }, 0, 1 }, { 3, 0 } }, { { { 0 }, 0, 0 }, { 0 } }, { { { 0 }, 1, 0 }, "TD_E_RANGE" },
    { { {}, 0, 0 }, "TD_E_SHAPE" } })
end

-- torch.randint: an empty shape is fine; low < high is checked even then.
function Z.random_int(P)
  return rows(P, { { { { 0 }, 0, 10 }, { 0 } }, { { { 2, 0, 3 }, -5, 5 }, { 2, 0, 3 } }, { { { 0 }, 5, 5 }, "TD_E_INVALID" } })
end

-- F.cross_entropy over 0 rows is a 0-d result (PyTorch's mean over no rows: NaN); 0 classes too.
-- Rows over 0 classes have no valid target (PyTorch: out of bounds), but the backends that
-- run the decomposition do not check targets (the spec says so): no case for them here.
function Z.cross_entropy(P)
  return rows(P, { { { { 0, 7 }, { 0 } }, {} }, { { { 0, 0 }, { 0 } }, {} }, { { { 0, 7 }, { 3 } }, "TD_E_SHAPE" },
    { { { 0 }, { 0 } }, "TD_E_SHAPE" } })
end

-- Index rules: indices from the index domain ([0, 7)), so a non-empty index tensor only
-- meets a dim of at least 7; empty indices give empty results, or a's shape (scatter).
-- Any index into an empty dim is out of range (a data error, TD_E_RANGE, as PyTorch's)
-- where the result has elements. Where it has none (scatter and select_add into an empty
-- a) no kernel runs, so index values go unchecked: a deliberate difference from PyTorch's
-- scatter_add, which checks them (its index_add on the CPU skips them too).
function Z.gather(P)
  return rows(P, { { { { 2, 7 }, 1, { 2, 0 } }, { 2, 0 } }, { { { 0, 7 }, 1, { 0, 3 } }, { 0, 3 } },
    { { { 3, 0 }, 0, { 2, 0 } }, { 2, 0 } }, { { { 2, 0, 7 }, -1, { 2, 0, 4 } }, { 2, 0, 4 } },
    { { { 0, 7 }, 1, { 1, 3 } }, "TD_E_SHAPE" }, { { { 2, 0 }, 1, { 2, 3 } }, "TD_E_RANGE" } })
end

function Z.scatter(P)
  return rows(P, { { { { 2, 7 }, 1, { 2, 0 }, { 2, 0 } }, { 2, 7 } }, { { { 0, 7 }, 1, { 0, 3 }, { 0, 3 } }, { 0, 7 } },
    { { { 2, 0, 7 }, -1, { 2, 0, 5 }, { 2, 0, 5 } }, { 2, 0, 7 } }, { { { 7, 3 }, 0, { 0, 3 }, { 1, 3 } }, { 7, 3 } },
    { { { 7, 4 }, 0, { 2, 4 }, { 2, 0 } }, "TD_E_SHAPE" } })
end

-- torch.index_select / index_add: dim takes the length of the indices (0 for [0]).
function Z.select(P)
  return rows(P, { { { { 3, 7 }, 1, { 0 } }, { 3, 0 } }, { { { 0, 7 }, 1, { 4 } }, { 0, 4 } },
    { { { 2, 0, 7 }, -1, { 2 } }, { 2, 0, 2 } }, { { { 0 }, 0, { 0 } }, { 0 } }, { { { 7, 3 }, 0, { 2, 2 } }, "TD_E_SHAPE" },
    { { { 3, 0 }, 1, { 2 } }, "TD_E_RANGE" } })
end

function Z.select_add(P)
  return rows(P, { { { { 3, 7 }, 1, { 0 }, { 3, 0 } }, { 3, 7 } }, { { { 0, 7 }, 1, { 4 }, { 0, 4 } }, { 0, 7 } },
    { { { 2, 0, 7 }, -1, { 2 }, { 2, 0, 2 } }, { 2, 0, 7 } }, { { { 7, 3 }, 0, { 0 }, { 1, 3 } }, "TD_E_SHAPE" } })
end

-- F.one_hot of an empty index tensor with num_classes given; num_classes 0 is an error
-- (PyTorch: it cannot infer the count from an empty tensor).
function Z.one_hot(P)
  return rows(P, { { { { 0 }, 7 }, { 0, 7 } }, { { { 2, 0 }, 9 }, { 2, 0, 9 } }, { { { 0, 3 }, 1 }, { 0, 3, 1 } },
    { { { 0 }, 0 }, "TD_E_INVALID" } })
end

function Z.flip(P)
  return rows(P, { { { { 0 }, { 0 } }, { 0 } }, { { { 2, 0, 3 }, { 0, 1, 2 } }, { 2, 0, 3 } }, { { { 0, 1 }, { -1 } }, { 0, 1 } },
    { { { 3, 0 }, {} }, { 3, 0 } }, { { { 0 }, { 1 } }, "TD_E_RANGE" } })
end

-- times 0 empties the dim; negative times is an error.
function Z.repeat_dim(P)
  return rows(P, { { { { 2, 0, 3 }, 1, 2 }, { 2, 0, 3 } }, { { { 2, 3 }, 0, 0 }, { 0, 3 } }, { { { 0 }, 0, 3 }, { 0 } },
    { { { 2, 0, 3 }, -1, 2 }, { 2, 0, 6 } }, { { { 0 }, 0, -1 }, "TD_E_INVALID" } })
end

function Z.transpose(P)
  return rows(P, { { { { 2, 0, 3 } }, { 2, 3, 0 } }, { { { 0, 1 } }, { 1, 0 } }, { { { 3, 0 } }, { 0, 3 } },
    { { { 0 } }, "TD_E_SHAPE" } })
end

-- torch.narrow: length 0 anywhere in [0, size], start may equal the size.
function Z.narrow(P)
  return rows(P, { { { { 3, 4 }, 0, 1, 0 }, { 0, 4 } }, { { { 2, 0, 3 }, 1, 0, 0 }, { 2, 0, 3 } }, { { { 0 }, 0, 0, 0 }, { 0 } },
    { { { 3, 4 }, 1, 4, 0 }, { 3, 0 } }, { { { 2, 0, 3 }, 2, -1, 1 }, { 2, 0, 1 } }, { { { 0 }, 0, 0, 1 }, "TD_E_RANGE" } })
end

function Z.stack(P)
  return rows(P, { { { { { 0 }, { 0 } }, 0 }, { 2, 0 } }, { { { { 0 }, { 0 } }, 1 }, { 0, 2 } },
    { { { { 2, 0, 3 }, { 2, 0, 3 }, { 2, 0, 3 } }, -1 }, { 2, 0, 3, 3 } }, { { { { 0, 3 }, { 0, 3 } }, 1 }, { 0, 2, 3 } },
    { { { { 0 }, { 1 } }, 0 }, "TD_E_SHAPE" } })
end

-- Tensor.unfold: windows of size 0 are allowed ((n - 0) / step + 1 of them).
function Z.unfold(P)
  return rows(P, { { { { 2, 0, 3 }, 1, 0, 1 }, { 2, 1, 3, 0 } }, { { { 2, 0, 3 }, 0, 2, 1 }, { 1, 0, 3, 2 } },
    { { { 0 }, 0, 0, 2 }, { 1, 0 } }, { { { 3, 4 }, 1, 0, 2 }, { 3, 3, 0 } }, { { { 2, 0, 3 }, 1, 1, 1 }, "TD_E_RANGE" } })
end

-- Constant padding: an empty dim padded is no longer empty.
function Z.pad(P)
  return rows(P, { { { { 0 }, { 1, 2 } }, { 3 } }, { { { 2, 0, 3 }, { 0, 1, 2, 0 } }, { 2, 2, 4 } },
    { { { 0, 4 }, { 1, 1 } }, { 0, 6 } }, { { { 2, 0, 3 }, {} }, { 2, 0, 3 } }, { { { 0 }, { 1 } }, "TD_E_INVALID" } })
end

function Z.tri_mask(P)
  return rows(P, { { { { 0, 0 } }, { 0, 0 } }, { { { 2, 0, 3 } }, { 2, 0, 3 } }, { { { 3, 0 } }, { 3, 0 } },
    { { { 0 } }, "TD_E_SHAPE" } })
end

function Z.cross(P)
  return rows(P, { { { { 0, 3 }, { 0, 3 }, -1 }, { 0, 3 } }, { { { 2, 3, 0 }, { 2, 3, 0 }, 1 }, { 2, 3, 0 } },
    { { { 0, 3 }, { 1, 3 }, 1 }, { 0, 3 } }, { { { 3, 0 }, { 3, 1 }, 0 }, { 3, 0 } }, { { { 0 }, { 0 }, 0 }, "TD_E_SHAPE" } })
end

-- F.linear (w as [in, out]): 0 rows, 0 out, and an empty inner dim (the bias alone).
function Z.linear(P)
  return rows(P, { { { { 0, 4 }, { 4, 5 }, { 5 } }, { 0, 5 } }, { { { 3, 0 }, { 0, 5 }, { 5 } }, { 3, 5 } },
    { { { 3, 4 }, { 4, 0 }, { 0 } }, { 3, 0 } }, { { { 2, 0, 4 }, { 4, 5 }, { 5 } }, { 2, 0, 5 } },
    { { { 3, 0 }, { 4, 5 }, { 5 } }, "TD_E_SHAPE" } })
end

-- Convolutions: a batch of 0 is fine (a weight gradient of zeros); PyTorch needs at least
-- `groups` output channels and a kernel no larger than the padded input.
local ONE, TWO, ZERO = { 1, 1 }, { 2, 2 }, { 0, 0 }
function Z.conv2d(P)
  return rows(P, { { { { 0, 3, 5, 5 }, { 4, 3, 3, 3 }, { 4 }, ONE, ZERO, ONE, 1 }, { 0, 4, 3, 3 } },
    { { { 0, 4, 6, 6 }, { 4, 2, 3, 3 }, { 4 }, TWO, ONE, ONE, 2 }, { 0, 4, 3, 3 } },
    { { { 2, 3, 5, 5 }, { 0, 3, 3, 3 }, { 0 }, ONE, ZERO, ONE, 1 }, "TD_E_SHAPE" },
    { { { 2, 3, 0, 5 }, { 4, 3, 3, 3 }, { 4 }, ONE, ONE, ONE, 1 }, "TD_E_SHAPE" } })
end

function Z.conv2d_backward_input(P)
  return rows(P, { { { { 0, 4, 3, 3 }, { 4, 3, 3, 3 }, { 0, 3, 5, 5 }, ONE, ZERO, ONE, 1 }, { 0, 3, 5, 5 } },
    { { { 0, 4, 3, 3 }, { 4, 2, 3, 3 }, { 0, 4, 6, 6 }, TWO, ONE, ONE, 2 }, { 0, 4, 6, 6 } },
    { { { 2, 0, 3, 3 }, { 0, 3, 3, 3 }, { 2, 3, 5, 5 }, ONE, ZERO, ONE, 1 }, "TD_E_SHAPE" } })
end

function Z.conv2d_backward_weight(P)
  return rows(P, { { { { 0, 4, 3, 3 }, { 0, 3, 5, 5 }, { 4, 3, 3, 3 }, ONE, ZERO, ONE, 1 }, { 4, 3, 3, 3 } },
    { { { 0, 4, 3, 3 }, { 0, 4, 6, 6 }, { 4, 2, 3, 3 }, TWO, ONE, ONE, 2 }, { 4, 2, 3, 3 } },
    { { { 2, 0, 3, 3 }, { 2, 3, 5, 5 }, { 0, 3, 3, 3 }, ONE, ZERO, ONE, 1 }, "TD_E_SHAPE" } })
end

-- Pools: only the batch may be empty (PyTorch's "optional 0 dim batch size"); empty
-- channels or spatial dims are errors even where padding would give a window.
function Z.max_pool2d(P)
  return rows(P, { { { { 0, 3, 4, 4 }, TWO, TWO, ZERO, ONE }, { 0, 3, 2, 2 } },
    { { { 0, 1, 5, 7 }, { 3, 3 }, TWO, ONE, TWO }, { 0, 1, 2, 3 } },
    { { { 2, 0, 4, 4 }, TWO, TWO, ZERO, ONE }, "TD_E_SHAPE" }, { { { 1, 2, 0, 4 }, TWO, ONE, ONE, ONE }, "TD_E_SHAPE" } })
end

function Z.max_pool2d_backward(P)
  return rows(P, { { { { 0, 3, 4, 4 }, { 0, 3, 2, 2 }, TWO, TWO, ZERO, ONE }, { 0, 3, 4, 4 } },
    { { { 0, 1, 5, 7 }, { 0, 1, 2, 3 }, { 3, 3 }, TWO, ONE, TWO }, { 0, 1, 5, 7 } },
    { { { 2, 0, 4, 4 }, { 2, 0, 2, 2 }, TWO, TWO, ZERO, ONE }, "TD_E_SHAPE" } })
end

function Z.avg_pool2d(P)
  return rows(P, { { { { 0, 3, 4, 4 }, TWO, TWO, ZERO, 0 }, { 0, 3, 2, 2 } }, { { { 0, 2, 5, 5 }, { 3, 3 }, TWO, ONE, 1 }, { 0, 2, 3, 3 } },
    { { { 3, 0, 4, 4 }, TWO, TWO, ZERO, 0 }, "TD_E_SHAPE" }, { { { 1, 2, 4, 0 }, TWO, ONE, ONE, 1 }, "TD_E_SHAPE" } })
end

function Z.avg_pool2d_backward(P)
  return rows(P, { { { { 0, 3, 4, 4 }, { 0, 3, 2, 2 }, TWO, TWO, ZERO, 0 }, { 0, 3, 4, 4 } },
    { { { 0, 2, 5, 5 }, { 0, 2, 3, 3 }, { 3, 3 }, TWO, ONE, 1 }, { 0, 2, 5, 5 } },
    { { { 3, 0, 4, 4 }, { 3, 0, 2, 2 }, TWO, TWO, ZERO, 0 }, "TD_E_SHAPE" } })
end

-- nn module composites. F.layer_norm: empty rows or an empty normalized shape keep x's
-- shape; a normalized shape that is not x's tail, or a bias unlike weight, is an error.
function Z.layer_norm(P)
  return rows(P, { { { { 0, 4 }, { 4 }, { 4 } }, { 0, 4 } }, { { { 2, 0, 3 }, { 3 }, { 3 } }, { 2, 0, 3 } },
    { { { 3, 0 }, { 0 }, { 0 } }, { 3, 0 } }, { { { 2, 0 }, { 2, 0 }, { 2, 0 } }, { 2, 0 } },
    { { { 0, 4 }, { 3 }, { 3 } }, "TD_E_SHAPE" }, { { { 0, 4 }, { 4 }, { 0 } }, "TD_E_SHAPE" } })
end

-- Layer norm's backward ops (grad, x, weight): x's shape, or weight's (the weight's gradient
-- of no rows is zeros); grad unlike x, or a weight that is not x's tail, is an error.
local function layer_norm_backward_empty(P, of_weight)
  local function want(x, w) return of_weight and w or x end
  return rows(P, { { { { 0, 4 }, { 0, 4 }, { 4 } }, want({ 0, 4 }, { 4 }) },
    { { { 2, 0, 3 }, { 2, 0, 3 }, { 3 } }, want({ 2, 0, 3 }, { 3 }) },
    { { { 3, 0 }, { 3, 0 }, { 0 } }, want({ 3, 0 }, { 0 }) },
    { { { 0, 4 }, { 0, 4 }, { 3 } }, "TD_E_SHAPE" }, { { { 0, 3 }, { 0, 4 }, { 4 } }, "TD_E_SHAPE" } })
end
function Z.layer_norm_backward(P) return layer_norm_backward_empty(P, false) end
function Z.layer_norm_backward_weight(P) return layer_norm_backward_empty(P, true) end

-- F.group_norm: an empty batch, no channels (0 divides into any groups) or an empty spatial
-- dim keep x's shape; groups that do not divide C, or fewer than 1, are errors.
function Z.group_norm(P)
  return rows(P, { { { { 0, 4, 3 }, 2, { 4 }, { 4 } }, { 0, 4, 3 } }, { { { 2, 0, 3 }, 2, { 0 }, { 0 } }, { 2, 0, 3 } },
    { { { 2, 4, 0 }, 4, { 4 }, { 4 } }, { 2, 4, 0 } }, { { { 0, 4, 3 }, 3, { 4 }, { 4 } }, "TD_E_SHAPE" },
    { { { 0, 4 }, 0, { 4 }, { 4 } }, "TD_E_INVALID" } })
end

-- F.batch_norm: empty batches, channels or spatial dims keep x's shape; parameters of
-- the wrong length, or a 1-d x, are errors.
function Z.batch_norm_infer(P)
  return rows(P, { { { { 0, 3 }, { 3 }, { 3 }, { 3 }, { 3 } }, { 0, 3 } },
    { { { 2, 0, 5 }, { 0 }, { 0 }, { 0 }, { 0 } }, { 2, 0, 5 } },
    { { { 4, 3, 0, 2 }, { 3 }, { 3 }, { 3 }, { 3 } }, { 4, 3, 0, 2 } },
    { { { 0, 3 }, { 3 }, { 4 }, { 3 }, { 3 } }, "TD_E_SHAPE" }, { { { 0 }, { 0 }, { 0 }, { 0 }, { 0 } }, "TD_E_SHAPE" } })
end

-- Training also refuses one value per channel (PyTorch: "Expected more than 1 value per
-- channel when training"), an empty batch is fine.
function Z.batch_norm_train(P)
  return rows(P, { { { { 0, 3 }, { 3 }, { 3 } }, { 0, 3 } }, { { { 2, 0, 5 }, { 0 }, { 0 } }, { 2, 0, 5 } },
    { { { 0, 3, 4 }, { 3 }, { 3 } }, { 0, 3, 4 } }, { { { 1, 3 }, { 3 }, { 3 } }, "TD_E_SHAPE" },
    { { { 1, 2, 1, 1 }, { 2 }, { 2 } }, "TD_E_SHAPE" }, { { { 0 }, { 0 }, { 0 } }, "TD_E_SHAPE" } })
end

-- F.embedding: empty indices give [..., D] with no rows; D = 0 empty rows. (An index into
-- an empty table is out of range, TD_E_RANGE from float_select, the piece that reads it:
-- no case, as its message names the piece.)
function Z.embedding(P)
  return rows(P, { { { { 7, 4 }, { 0 } }, { 0, 4 } }, { { { 7, 4 }, { 2, 0 } }, { 2, 0, 4 } },
    { { { 7, 0 }, { 3 } }, { 3, 0 } }, { { { 0, 4 }, { 0 } }, { 0, 4 } }, { { { 7 }, { 3 } }, "TD_E_SHAPE" } })
end

-- F.scaled_dot_product_attention: no queries, no batch or an empty value dim give empty
-- results; no keys (S = 0) give zeros (an empty sum); E = 0 gives NaN (0 / sqrt(0)).
local function attention_zero(P, masked)
  local list = {
    { { { 2, 3, 0, 4 }, { 2, 3, 5, 4 }, { 2, 3, 5, 6 }, 1 }, { 2, 3, 0, 6 } },
    { { { 2, 3, 4, 4 }, { 2, 3, 0, 4 }, { 2, 3, 0, 6 }, 1 }, { 2, 3, 4, 6 } },
    { { { 0, 3, 4, 4 }, { 0, 3, 5, 4 }, { 0, 3, 5, 6 }, 0 }, { 0, 3, 4, 6 } },
    { { { 2, 1, 4, 4 }, { 2, 1, 5, 4 }, { 2, 1, 5, 0 }, 0 }, { 2, 1, 4, 0 } },
    { { { 1, 2, 3, 0 }, { 1, 2, 5, 0 }, { 1, 2, 5, 2 }, 1 }, { 1, 2, 3, 2 } },
    { { { 2, 3, 0, 4 }, { 2, 3, 5, 4 }, { 2, 3, 4, 6 }, 0 }, "TD_E_SHAPE" },
    { { { 3, 0, 4 }, { 3, 0, 4 }, { 3, 0, 4 }, 0 }, "TD_E_SHAPE" },
    { { { 2, 3, 0, 4 }, { 2, 3, 5, 4 }, { 2, 3, 5, 6 }, 2 }, "TD_E_INVALID" },
  }
  if masked then
    for _, r in ipairs(list) do
      local q, k = r[1][1], r[1][2]
      local l, s = q[3] or 0, k[3] or 0
      r[1] = { q, k, r[1][3], #q == 4 and { l, s } or {}, r[1][4] }
    end
    list[#list + 1] = { { { 2, 3, 0, 4 }, { 2, 3, 5, 4 }, { 2, 3, 5, 6 }, { 2, 5 }, 0 }, "TD_E_SHAPE" }
  end
  return rows(P, list)
end
function Z.attention(P) return attention_zero(P, false) end
function Z.attention_masked(P) return attention_zero(P, true) end
-- The backward ops: attention's cases with output and grad of its result's shape (B, H and
-- L of query, Ev of value); the gradient of query, key or value has that input's shape, so
-- no queries give a zero key and value gradient, no keys a zero query gradient.
local function attention_backward_zero(P, which)
  local list = {
    { { 2, 3, 0, 4 }, { 2, 3, 5, 4 }, { 2, 3, 5, 6 }, 1 },
    { { 2, 3, 4, 4 }, { 2, 3, 0, 4 }, { 2, 3, 0, 6 }, 1 },
    { { 0, 3, 4, 4 }, { 0, 3, 5, 4 }, { 0, 3, 5, 6 }, 0 },
    { { 2, 1, 4, 4 }, { 2, 1, 5, 4 }, { 2, 1, 5, 0 }, 0 },
    { { 1, 2, 3, 0 }, { 1, 2, 5, 0 }, { 1, 2, 5, 2 }, 1 },
  }
  local out = {}
  for _, r in ipairs(list) do
    local q, k, v = r[1], r[2], r[3]
    local o = { q[1], q[2], q[3], v[4] }
    local function numel(sh) local n = 1; for _, d in ipairs(sh) do n = n * d end; return n end
    local packed = { numel(q) + numel(k) + numel(v) } -- float_attention_backward: all three, flat
    out[#out + 1] = { { q, k, v, o, o, r[4] }, ({ q, k, v, packed })[which] }
  end
  out[#out + 1] = { { { 2, 3, 0, 4 }, { 2, 3, 5, 4 }, { 2, 3, 4, 6 }, { 2, 3, 0, 6 }, { 2, 3, 0, 6 }, 0 }, "TD_E_SHAPE" }
  out[#out + 1] = { { { 2, 3, 0, 4 }, { 2, 3, 5, 4 }, { 2, 3, 5, 6 }, { 2, 3, 0, 6 }, { 2, 3, 1, 6 }, 0 }, "TD_E_SHAPE" }
  out[#out + 1] = { { { 2, 3, 0, 4 }, { 2, 3, 5, 4 }, { 2, 3, 5, 6 }, { 2, 3, 0, 6 }, { 2, 3, 0, 6 }, 2 }, "TD_E_INVALID" }
  return rows(P, out)
end
function Z.attention_backward(P) return attention_backward_zero(P, 4) end
function Z.attention_backward_query(P) return attention_backward_zero(P, 1) end
function Z.attention_backward_key(P) return attention_backward_zero(P, 2) end
function Z.attention_backward_value(P) return attention_backward_zero(P, 3) end
-- Spatial module ops: as the 2-d ones, an empty batch is fine; pools, adaptive pools and
-- interpolation need non-empty channels and spatial dims (PyTorch's "non-empty ... tensor
-- expected"); an output size of 0 is an error.
function Z.conv1d(P)
  return rows(P, { { { { 0, 3, 5 }, { 4, 3, 3 }, { 4 }, 1, 0, 1, 1 }, { 0, 4, 3 } },
    { { { 0, 4, 6 }, { 4, 2, 3 }, { 4 }, 2, 1, 1, 2 }, { 0, 4, 3 } },
    { { { 2, 3, 5 }, { 0, 3, 3 }, { 0 }, 1, 0, 1, 1 }, "TD_E_SHAPE" },
    { { { 2, 3, 0 }, { 4, 3, 3 }, { 4 }, 1, 1, 1, 1 }, "TD_E_SHAPE" } })
end

function Z.max_pool1d(P)
  return rows(P, { { { { 0, 3, 4 }, 2, 2, 0, 1 }, { 0, 3, 2 } }, { { { 0, 1, 7 }, 3, 2, 1, 2 }, { 0, 1, 3 } },
    { { { 2, 0, 4 }, 2, 2, 0, 1 }, "TD_E_SHAPE" }, { { { 1, 2, 0 }, 2, 1, 1, 1 }, "TD_E_SHAPE" } })
end

function Z.avg_pool1d(P)
  return rows(P, { { { { 0, 3, 4 }, 2, 2, 0, 0 }, { 0, 3, 2 } }, { { { 0, 2, 5 }, 3, 2, 1, 1 }, { 0, 2, 3 } },
    { { { 3, 0, 4 }, 2, 2, 0, 0 }, "TD_E_SHAPE" }, { { { 1, 2, 0 }, 2, 1, 1, 1 }, "TD_E_SHAPE" } })
end

function Z.adaptive_avg_pool1d(P)
  return rows(P, { { { { 0, 3, 5 }, 3 }, { 0, 3, 3 } }, { { { 0, 2, 2 }, 5 }, { 0, 2, 5 } },
    { { { 2, 0, 4 }, 2 }, "TD_E_SHAPE" }, { { { 1, 2, 0 }, 2 }, "TD_E_SHAPE" }, { { { 1, 2, 4 }, 0 }, "TD_E_INVALID" } })
end

local function resize_empty(P, flag)
  local list = { { { { 0, 3, 5, 5 }, { 2, 3 } }, { 0, 3, 2, 3 } }, { { { 0, 1, 2, 3 }, { 4, 1 } }, { 0, 1, 4, 1 } },
    { { { 2, 0, 4, 4 }, { 2, 2 } }, "TD_E_SHAPE" }, { { { 1, 1, 0, 3 }, { 2, 2 } }, "TD_E_SHAPE" },
    { { { 1, 1, 3, 3 }, { 0, 1 } }, "TD_E_INVALID" } }
  if flag then
    for i, r in ipairs(list) do r[1][3] = i % 2 end
  end
  return rows(P, list)
end
function Z.adaptive_avg_pool2d(P) return resize_empty(P) end
function Z.interpolate2d(P) return resize_empty(P) end
function Z.interpolate2d_bilinear(P) return resize_empty(P, true) end

-- (h - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1: 2 + 2 + 1 = 5;
-- 4 - 2 + 2 + 1 + 1 = 6.
function Z.conv_transpose2d(P)
  return rows(P, { { { { 0, 4, 3, 3 }, { 4, 3, 3, 3 }, { 3 }, ONE, ZERO, ZERO, ONE, 1 }, { 0, 3, 5, 5 } },
    { { { 0, 4, 3, 3 }, { 4, 1, 3, 3 }, { 2 }, TWO, ONE, ONE, ONE, 2 }, { 0, 2, 6, 6 } },
    { { { 2, 4, 0, 3 }, { 4, 3, 3, 3 }, { 3 }, ONE, ZERO, ZERO, ONE, 1 }, "TD_E_SHAPE" },
    { { { 2, 3, 3, 3 }, { 4, 3, 3, 3 }, { 3 }, ONE, ZERO, ZERO, ONE, 1 }, "TD_E_SHAPE" } })
end

-- A rule without its own zero-size cases (Z): its first cases with a tensor of 1 dim or
-- more, with the leading dim of the tensors of the most dims (so that broadcasts still line
-- up) and of every list item set to 0. What the result must be is not known here: the CPU's
-- result, or its error, is the reference on every backend (`want = { as_reference = true }`).
local function derived_empty(rule, P)
  local kinds = schema.rules[rule] or {}
  local out = {}
  for _, c in ipairs(R[rule](P)) do
    local v, any, top = {}, false, 0
    for k, x in pairs(c.v) do v[k] = x end
    for i, kind in ipairs(kinds) do
      if kind == "tensor" and c.v[P[i]] then top = math.max(top, #c.v[P[i]]) end
    end
    for i, kind in ipairs(kinds) do
      local x = c.v[P[i]]
      if kind == "tensor" and x and #x > 0 and #x == top then
        v[P[i]] = copy(x)
        v[P[i]][1] = 0
        any = true
      elseif kind == "list" and x then
        local items = {}
        for k, item in ipairs(x) do
          items[k] = copy(item)
          if #item > 0 then items[k][1] = 0; any = true end
        end
        v[P[i]] = items
      end
    end
    if any then out[#out + 1] = { fill = c.fill, v = v, want = { as_reference = true } } end
    if #out >= 3 then break end
  end
  return out
end

M.Z_for_tests = Z -- the zero-size case generators (tests/gen/test_compare.lua swaps one out)

-- The zero-size cases of op, completed like the others (nil when its rule has no cases).
function M.empty_cases(op)
  if not op.rule then return nil end
  local cases
  if Z[op.rule.name] then
    cases = Z[op.rule.name](op.rule.args)
  elseif R[op.rule.name] then
    cases = derived_empty(op.rule.name, op.rule.args)
  else
    return nil
  end
  M.complete(op, cases)
  return cases
end

-- A case's value for each argument the rule does not name: from the examples (cycling),
-- a tensor the shape of the first tensor, a seed per case, else a fixed default.
function M.complete(op, cases)
  local exs = op.examples or {}
  for ci, c in ipairs(cases) do
    local first
    for _, a in ipairs(op.args) do
      if a.t.tensor and c.v[a.name] then first = first or c.v[a.name] end
    end
    for _, a in ipairs(op.args) do
      local t = a.t
      if c.v[a.name] == nil and not (t.device or t.host_in or t.host_out) then
        local ex = #exs > 0 and exs[(ci - 1) % #exs + 1] or {}
        local v
        if t.tensor then v = first or {}
        elseif ex[a.name] ~= nil then v = ex[a.name]
        elseif a.type == "u64" then v = 1000 + 7919 * ci
        elseif a.type == "f32" then v = 1.5
        elseif a.type == "i32" then v = 3
        elseif a.type == "distribution" then v = "uniform"
        elseif t.array then v = {}
        else v = 0 end
        c.v[a.name] = v
      end
    end
  end
end

-- Limits of tdt_case (tests/common/tdt.h).
local LIMITS = { t = 5, a = 4, i = 4, f = 4 }
local LIMIT_NAMES = { t = "tensors", a = "dims or shape arguments", i = "integer arguments", f = "f32 arguments" }

local FILL = { CLEAN = "TDT_FILL_CLEAN", EDGES = "TDT_FILL_EDGES", TIES = "TDT_FILL_TIES", ZEROS = "TDT_FILL_ZEROS" }
local DOMAIN = { positive = "TDT_DOMAIN_POSITIVE", nonzero = "TDT_DOMAIN_NONZERO", index = "TDT_DOMAIN_INDEX" }

local function ints(list)
  local parts = {}
  for i, x in ipairs(list) do parts[i] = string.format("%d", math.tointeger(x) or math.floor(x)) end
  if #parts == 0 then parts[1] = "0" end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

local function c_i64(x)
  x = math.tointeger(x) or math.floor(x)
  if x == math.mininteger then return "INT64_MIN" end
  return string.format("INT64_C(%d)", x)
end

-- A float (an example may write "nan", "inf" or "-inf").
local function c_f32(x)
  if x == "nan" or x ~= x then return "NAN" end
  if x == "inf" then x = math.huge elseif x == "-inf" then x = -math.huge end
  if x == math.huge then return "INFINITY" end
  if x == -math.huge then return "-INFINITY" end
  local s = string.format("%.9g", x)
  if not s:find("[%.eEn]") then s = s .. ".0" end
  return s .. "f"
end

-- The C row of one case; nil and a reason when it does not fit tdt_case.
local function case_row(op, c)
  local ts, as, is, fs, hn = {}, {}, {}, {}, nil
  local shape_arg
  for _, a in ipairs(op.args) do
    local t, v = a.t, c.v[a.name]
    if t.tensor then ts[#ts + 1] = v
    elseif t.list then for _, s in ipairs(v) do ts[#ts + 1] = s end
    elseif t.array then
      as[#as + 1] = v
      if a.type == "shape" then shape_arg = shape_arg or v end
    elseif a.type == "f32" then fs[#fs + 1] = c_f32(v)
    elseif a.type == "distribution" then is[#is + 1] = v == "normal" and "TD_NORMAL" or "TD_UNIFORM"
    elseif t.scalar then is[#is + 1] = c_i64(v)
    end
  end
  for _, a in ipairs(op.args) do
    if a.t.host_in then hn = numel(shape_arg or {}) end
  end
  local have = { t = ts, a = as, i = is, f = fs }
  for _, k in ipairs({ "t", "a", "i", "f" }) do
    if #have[k] > LIMITS[k] then
      return nil, string.format("a case needs %d %s; tdt_case holds %d", #have[k], LIMIT_NAMES[k], LIMITS[k])
    end
  end
  local parts = { ".fill = " .. FILL[c.fill] }
  if c.route then parts[#parts + 1] = ".route = " .. c.route end
  if #ts > 0 then
    local tt = {}
    for i, s in ipairs(ts) do tt[i] = string.format("{ %d, %s }", #s, ints(s)) end
    parts[#parts + 1] = string.format(".nt = %d, .t = { %s }", #ts, table.concat(tt, ", "))
  end
  if #as > 0 then
    local lens, vals = {}, {}
    for i, x in ipairs(as) do lens[i] = tostring(#x); vals[i] = ints(x) end
    parts[#parts + 1] = string.format(".alen = { %s }, .a = { %s }", table.concat(lens, ", "), table.concat(vals, ", "))
  end
  if #is > 0 then parts[#parts + 1] = ".i = { " .. table.concat(is, ", ") .. " }" end
  if #fs > 0 then parts[#parts + 1] = ".f = { " .. table.concat(fs, ", ") .. " }" end
  if hn then parts[#parts + 1] = ".hn = " .. hn end
  local w = c.want
  if w and w.status then parts[#parts + 1] = ".want_status = " .. w.status end
  if w and w.as_reference then parts[#parts + 1] = ".as_reference = true" end
  if w and w.shape then
    parts[#parts + 1] = string.format(".want_shape = true, .want_ndim = %d, .want_dims = %s", #w.shape, ints(w.shape))
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- The call of the op from a tdt_call `c`.
local function call_exprs(op)
  local exprs, k, na, ni, nf = {}, 0, 0, 0, 0
  for _, a in ipairs(op.args) do
    local t = a.t
    if t.tensor then
      exprs[#exprs + 1] = string.format("c->ins[%d]", k)
      k = k + 1
    elseif t.list then
      exprs[#exprs + 1] = "c->ins"
      exprs[#exprs + 1] = "c->nins"
    elseif t.device then
      exprs[#exprs + 1] = "c->dev"
    elseif t.array then
      exprs[#exprs + 1] = string.format("c->cs->a[%d], c->cs->alen[%d]", na, na)
      na = na + 1
    elseif t.host_in then
      exprs[#exprs + 1] = "c->host_in"
    elseif t.host_out then
      exprs[#exprs + 1] = "c->host_out, c->host_out_len"
    elseif a.type == "f32" then
      exprs[#exprs + 1] = string.format("c->cs->f[%d]", nf)
      nf = nf + 1
    elseif a.type == "i32" then
      exprs[#exprs + 1] = string.format("(int32_t)c->cs->i[%d]", ni)
      ni = ni + 1
    elseif a.type == "u64" then
      exprs[#exprs + 1] = string.format("(uint64_t)c->cs->i[%d]", ni)
      ni = ni + 1
    elseif a.type == "distribution" then
      exprs[#exprs + 1] = string.format("(td_distribution)c->cs->i[%d]", ni)
      ni = ni + 1
    else
      exprs[#exprs + 1] = string.format("c->cs->i[%d]", ni)
      ni = ni + 1
    end
  end
  if schema.classes[op.returns] then exprs[#exprs + 1] = "c->out" end
  return table.concat(exprs, ", ")
end

-- FNV-1a of the op's name: its inputs' seed, stable when other ops come and go.
function M.seed_of(name)
  local h = 2166136261
  for i = 1, #name do h = ((h ~ name:byte(i)) * 16777619) & 0xffffffff end
  return h
end

-- Why the backend cannot run the comparison of op (nil when it can).
local function why_not(model, be, op)
  local cpu = model.backend_by_name.cpu
  if not cpu.runs[op.name] then
    return string.format("no reference: the cpu backend does not run %s", op.name)
  end
  if not op.rule then return nil end
  if not R[op.rule.name] then
    return string.format("no many-shape cases for the shape rule '%s' (gen/tdgen/emit_compare.lua)", op.rule.name)
  end
  for _, a in ipairs(op.args) do
    local cls = a.t.tensor or a.t.list
    if cls and not be.runs[cls .. "_from_data"] and not cpu.runs[cls .. "_to_device"] then
      return string.format("%s cannot make %s inputs: it lacks %s_from_data and the cpu backend lacks %s_to_device",
        be.name, cls, cls, cls)
    end
  end
  local rc = op.returns
  if schema.classes[rc] and not be.runs[rc .. "_into_data"] and not be.runs[rc .. "_to_device"] then
    return string.format("%s cannot read its %s results back: it lacks %s_into_data and %s_to_device", be.name, rc,
      rc, rc)
  end
  return nil
end

-- Whether the comparison of op against the CPU belongs in be's tests: a backend other than
-- the CPU that runs an op with a result (natively or as a composite), outside the
-- distributed family.
function M.applies(model, be, op)
  return be.name ~= "cpu" and model.backend_by_name.cpu ~= nil and be.runs[op.name] == true
    and op.family ~= "distributed" and (schema.classes[op.returns] ~= nil or op.returns == "host")
end

-- Whether the CPU's tests hold its native kernel of op against the op's decomposition
-- (run on the CPU too, through td_device_set_composites).
function M.applies_composite(model, be, op)
  return be.name == "cpu" and be.ops[op.name] == true and op.decomp ~= nil
end

-- The case rows of op, or nil and why they do not fit tdt_case.
local function rows_of(op, cases)
  local rows = {}
  for i, c in ipairs(cases) do
    local row, err = case_row(op, c)
    if not row then return nil, err end
    rows[i] = row
  end
  return rows
end

local function emit_skip(b, op, name, why, test)
  b:put("")
  b:put("static void %s(void **state)", test(name))
  b:put("{")
  b:put("    (void)state;")
  b:put("    tdt_compare_skip(%s, %s);", util.c_string(op.name), util.c_string(why))
  b:put("}")
end

-- The op's call from a tdt_call (emitted once per op and test file); with `composite`,
-- also cmpc_<op>, which runs the op's decomposition on the device the call is made on.
local function emit_call(b, op, emitted, composite)
  if not emitted[op.name] then
    emitted[op.name] = true
    b:put("")
    b:put("static td_status cmp_%s(const tdt_call *c)", op.name)
    b:put("{")
    b:put("    return td_%s(%s);", op.name, call_exprs(op))
    b:put("}")
  end
  if composite and not emitted["composite " .. op.name] then
    emitted["composite " .. op.name] = true
    b:put("")
    b:put("static td_status cmpc_%s(const tdt_call *c)", op.name)
    b:put("{")
    b:put("    td_status st = td_device_set_composites(c->dev, true);")
    b:put("    if (st == TD_OK)")
    b:put("        st = td_%s(%s);", op.name, call_exprs(op))
    b:put("    td_device_set_composites(c->dev, false);")
    b:put("    return st;")
    b:put("}")
  end
end

-- The static tdt_op_desc `desc` of op (inside a test function); `composite`: the device
-- under test runs the decomposition (run_test).
local function emit_desc(b, op, composite)
  local dtypes, domains = {}, {}
  local dom = op.fields.domain or {}
  for _, a in ipairs(op.args) do
    local cls = a.t.tensor or a.t.list
    if cls then
      local n = a.t.list and LIMITS.t - #dtypes or 1
      for _ = 1, n do
        dtypes[#dtypes + 1] = schema.dtypes[schema.classes[cls]]
        domains[#domains + 1] = DOMAIN[dom[a.name]] or "TDT_DOMAIN_ANY"
      end
    end
  end
  local host_in, out_dtype, out_host
  for _, a in ipairs(op.args) do
    if a.t.host_in then host_in = schema.dtypes[a.t.host_in] end
    if a.t.host_out then out_dtype, out_host = schema.dtypes[a.t.host_out], true end
  end
  if schema.classes[op.returns] then out_dtype = schema.dtypes[schema.classes[op.returns]] end
  b:put("    static const tdt_op_desc desc = {")
  b:put("        .name = %s,", util.c_string(op.name))
  b:put("        .run = cmp_%s,", op.name)
  if composite then b:put("        .run_test = cmpc_%s,", op.name) end
  if #dtypes > 0 then
    b:put("        .dtype = { %s },", table.concat(dtypes, ", "))
    b:put("        .domain = { %s },", table.concat(domains, ", "))
  end
  if host_in then b:put("        .host_in = true, .host_dtype = %s,", host_in) end
  b:put("        .out_dtype = %s,%s", out_dtype, out_host and " .out_host = true," or "")
  local names = { input = {}, array = {}, int = {}, float = {} }
  for _, a in ipairs(op.args) do
    local q = util.c_string(a.name)
    if a.t.tensor or a.t.list then names.input[#names.input + 1] = q
    elseif a.t.array then names.array[#names.array + 1] = q
    elseif a.type == "f32" then names.float[#names.float + 1] = q
    elseif a.t.scalar then names.int[#names.int + 1] = q end
  end
  for _, k in ipairs({ "input", "array", "int", "float" }) do
    if #names[k] > 0 then b:put("        .%s_names = { %s },", k, table.concat(names[k], ", ")) end
  end
  b:put("        .nmse = %s,", string.format("%.9g", op.fields.nmse or M.DEFAULT_NMSE))
  if op.fields.zero_sign then b:put("        .zero_sign = true,") end
  b:put("        .seed = %du,", M.seed_of(op.name))
  b:put("    };")
end

-- Emits test_<op>_vs_cpu into b (test(name) registers it): the op's case table, its call,
-- and the test that runs them, or a test that reports why it is skipped. With `composite`,
-- test_<op>_composite_vs_native instead: the CPU's native kernel (the reference) against
-- the op's decomposition on the CPU.
function M.emit(b, model, be, op, test, emitted, composite)
  emitted = emitted or {}
  local name = "test_" .. op.name .. (composite and "_composite_vs_native" or "_vs_cpu")
  local why = why_not(model, be, op)
  local rows
  if not why then
    local cases = R[op.rule.name](op.rule.args)
    M.complete(op, cases)
    -- zero_sign: every ties case again with -0 and +0 only, so that extremes, clamps and
    -- maxima are zeros tied with zeros (the ties fill's values rarely leave a zero on top)
    if op.fields.zero_sign then
      local n = #cases
      for i = 1, n do
        if cases[i].fill == T and not cases[i].want then
          local z = {}
          for k, v in pairs(cases[i]) do z[k] = v end
          z.fill = "ZEROS"
          cases[#cases + 1] = z
        end
      end
    end
    if op.family == "to_device" then
      for i, c in ipairs(cases) do
        c.route = ({ "TDT_ROUTE_SAME", "TDT_ROUTE_TO_CPU", "TDT_ROUTE_FROM_CPU" })[(i - 1) % 3 + 1]
      end
    end
    rows, why = rows_of(op, cases)
  end
  if why then return emit_skip(b, op, name, why, test) end
  emit_call(b, op, emitted, composite)
  local tab = (composite and "ccases_" or "cases_") .. op.name
  if not emitted["cases " .. tab] then
    emitted["cases " .. tab] = true
    b:put("")
    b:put("static const tdt_case %s[] = {", tab)
    for _, r in ipairs(rows) do b:put("    %s,", r) end
    b:put("};")
  end
  b:put("")
  b:put("static void %s(void **state)", test(name))
  b:put("{")
  b:put("    (void)state;")
  emit_desc(b, op, composite)
  b:put("    tdt_compare(dev, %s, &desc, %s, (int)(sizeof %s / sizeof %s[0]));", composite and "dev" or "cpu_dev",
    tab, tab, tab)
  b:put("}")
end

-- Whether op gets the zero-size test on be: it implements it, outside the distributed and
-- device families, with a result.
function M.applies_empty(be, op)
  return be.runs[op.name] == true and op.family ~= "distributed" and op.family ~= "device"
    and (schema.classes[op.returns] ~= nil or op.returns == "host")
end

-- Emits test_<op>_empty: the zero-size cases (M.empty_cases) run on the device under test
-- and on autodiff over it, each against `ref` (the CPU device; the device itself where the
-- model has no CPU backend), with the result shape or the error each case names.
function M.emit_empty(b, model, be, op, test, ref, emitted)
  emitted = emitted or {}
  local name = "test_" .. op.name .. "_empty"
  local why
  if model.backend_by_name.cpu and be.name ~= "cpu" then why = why_not(model, be, op) end
  local cases = not why and M.empty_cases(op) or nil
  if not why and not cases then
    why = string.format("no zero-size cases for the shape rule '%s' (gen/tdgen/emit_compare.lua)",
      op.rule and op.rule.name or "(none)")
  end
  local rows
  if not why then
    if #cases == 0 then
      why = string.format("the cases of the shape rule '%s' have no tensor of 1 dim or more to empty", op.rule.name)
    else
      if op.family == "to_device" then
        for i, c in ipairs(cases) do
          c.route = ({ "TDT_ROUTE_SAME", "TDT_ROUTE_TO_CPU", "TDT_ROUTE_FROM_CPU" })[(i - 1) % 3 + 1]
        end
      end
      rows, why = rows_of(op, cases)
    end
  end
  if why then return emit_skip(b, op, name, why, test) end
  emit_call(b, op, emitted)
  b:put("")
  b:put("static const tdt_case empty_%s[] = {", op.name)
  for _, r in ipairs(rows) do b:put("    %s,", r) end
  b:put("};")
  b:put("")
  b:put("static void %s(void **state)", test(name))
  b:put("{")
  b:put("    (void)state;")
  emit_desc(b, op)
  b:put("    const int n = (int)(sizeof empty_%s / sizeof empty_%s[0]);", op.name, op.name)
  b:put("    tdt_compare(dev, %s, &desc, empty_%s, n);", ref, op.name)
  b:put("    tdt_compare(ad_dev, %s, &desc, empty_%s, n);", ref, op.name)
  b:put("}")
end

-- A zero-size case for the gradient check of op: the first that must succeed, with a float
-- input; nil when there is none. Values as in the spec examples (tensors as { shape, data }).
function M.empty_gradcheck_case(op)
  local cases = M.empty_cases(op)
  if not cases then return nil end
  for _, c in ipairs(cases) do
    if c.want and c.want.shape then
      local ex, floats = {}, 0
      for _, a in ipairs(op.args) do
        local v = c.v[a.name]
        local function tensor(shape, cls)
          local data = {}
          for i = 1, numel(shape) do
            data[i] = cls == "bool" and (i % 2 == 1) or (cls == "int" and 0 or 0.5 * (i % 3) - 0.25)
          end
          return { shape = shape, data = data }
        end
        if a.t.tensor then
          ex[a.name] = tensor(v, a.t.tensor)
          if a.t.tensor == "float" then floats = floats + 1 end
        elseif a.t.list then
          local items = {}
          for i, s in ipairs(v) do items[i] = tensor(s, a.t.list) end
          ex[a.name] = items
          if a.t.list == "float" then floats = floats + 1 end
        elseif v ~= nil then
          ex[a.name] = v
        end
      end
      if floats > 0 then return ex end
    end
  end
  return nil
end

-- Hooks for the per-dtype comparisons (gen/tdgen/emit_dtype_tests.lua), which reuse this
-- file's cases, case rows, calls and descriptions unchanged.
M.why_not = why_not
M.case_row = case_row
M.emit_call = emit_call
M.emit_desc = emit_desc
M.numel = numel

-- The many-shape cases of op, completed (nil when its rule has none).
function M.cases_of(op)
  if not op.rule or not R[op.rule.name] then return nil end
  local cases = R[op.rule.name](op.rule.args)
  M.complete(op, cases)
  return cases
end

return M
