-- Tuples: ops whose results come in pairs, as burn's `*_with_indices` do. Each calls its
-- parts with the same arguments (gen/tdgen/tuple.lua), so values and indices agree by the
-- parts' own rules: argmax/argmin take the first index on ties, sort and argsort are
-- stable, and NaN sorts as the largest value in both. Expected values are worked by hand
-- in the comments.

tuple {
  name = "float_max_dim_with_indices",
  doc = "The maximum along dim and its index (first one on ties), the reduced dim kept with size 1 (torch.max(a, dim, keepdim=True)); the values' gradient goes to that index only.",
  parts = { "values = float_max_dim_values", "indices = float_argmax" },
  examples = {
    -- rows {1, 5, 5} -> 5 first at 1; {7, -2, 0} -> 7 at 0
    { a = { shape = { 2, 3 }, data = { 1, 5, 5, 7, -2, 0 } }, dim = 1,
      values = { shape = { 2, 1 }, data = { 5, 7 } }, indices = { shape = { 2, 1 }, data = { 1, 0 } } },
    -- columns {1, 7} -> 7 at 1; {5, -2} -> 5 at 0; {5, 0} -> 5 at 0
    { a = { shape = { 2, 3 }, data = { 1, 5, 5, 7, -2, 0 } }, dim = 0,
      values = { shape = { 1, 3 }, data = { 7, 5, 5 } }, indices = { shape = { 1, 3 }, data = { 1, 0, 0 } } },
    -- no rows: nothing to reduce, two empty results
    { a = { shape = { 0, 3 }, data = {} }, dim = 1,
      values = { shape = { 0, 1 }, data = {} }, indices = { shape = { 0, 1 }, data = {} } },
  },
}

tuple {
  name = "float_min_dim_with_indices",
  doc = "The minimum along dim and its index (first one on ties), the reduced dim kept with size 1 (torch.min(a, dim, keepdim=True)); the values' gradient goes to that index only.",
  parts = { "values = float_min_dim_values", "indices = float_argmin" },
  examples = {
    -- rows {1, 5, 5} -> 1 at 0; {7, -2, 0} -> -2 at 1
    { a = { shape = { 2, 3 }, data = { 1, 5, 5, 7, -2, 0 } }, dim = 1,
      values = { shape = { 2, 1 }, data = { 1, -2 } }, indices = { shape = { 2, 1 }, data = { 0, 1 } } },
    -- dim -1 is dim 1; rows {2, 2} -> 2 first at 0; {3, -4} -> -4 at 1
    { a = { shape = { 2, 2 }, data = { 2, 2, 3, -4 } }, dim = -1,
      values = { shape = { 2, 1 }, data = { 2, -4 } }, indices = { shape = { 2, 1 }, data = { 0, 1 } } },
  },
}

tuple {
  name = "float_sort_with_indices",
  doc = "The values sorted along dim and the indices that sort them (torch.sort(a, dim, descending, stable=True)); ascending, or descending where descending is nonzero; stable, NaN sorts as the largest value.",
  parts = { "values = float_sort", "indices = float_argsort" },
  examples = {
    -- {3, 1, 2, 1, 0.5} ascending: 0.5 (4), 1 (1), 1 (3: after 1, stable), 2 (2), 3 (0)
    { a = { shape = { 5 }, data = { 3, 1, 2, 1, 0.5 } }, dim = 0, descending = 0,
      values = { shape = { 5 }, data = { 0.5, 1, 1, 2, 3 } }, indices = { shape = { 5 }, data = { 4, 1, 3, 2, 0 } } },
    -- descending: 3 (0), 2 (2), 1 (1), 1 (3), 0.5 (4)
    { a = { shape = { 5 }, data = { 3, 1, 2, 1, 0.5 } }, dim = 0, descending = 1,
      values = { shape = { 5 }, data = { 3, 2, 1, 1, 0.5 } }, indices = { shape = { 5 }, data = { 0, 2, 1, 3, 4 } } },
    -- along rows of a [2, 2]: {4, -1} -> {-1, 4} from {1, 0}; {0, 2} stays, {0, 1}
    { a = { shape = { 2, 2 }, data = { 4, -1, 0, 2 } }, dim = 1, descending = 0,
      values = { shape = { 2, 2 }, data = { -1, 4, 0, 2 } }, indices = { shape = { 2, 2 }, data = { 1, 0, 0, 1 } } },
  },
}

tuple {
  name = "float_topk_with_indices",
  doc = "The count largest values along dim in descending order, and their indices (torch.topk(a, count, dim)); NaN counts as the largest value.",
  parts = { "values = float_topk", "indices = float_argtopk" },
  examples = {
    -- rows {1, 5, 3} -> 5 (1), 3 (2); {4, -1, 6} -> 6 (2), 4 (0)
    { a = { shape = { 2, 3 }, data = { 1, 5, 3, 4, -1, 6 } }, count = 2, dim = 1,
      values = { shape = { 2, 2 }, data = { 5, 3, 6, 4 } }, indices = { shape = { 2, 2 }, data = { 1, 2, 2, 0 } } },
    -- count 0: an empty dim
    { a = { shape = { 3 }, data = { 1, 2, 3 } }, count = 0, dim = 0,
      values = { shape = { 0 }, data = {} }, indices = { shape = { 0 }, data = {} } },
  },
}

tuple {
  name = "float_topk_smallest_with_indices",
  doc = "The count smallest values along dim in ascending order, and their indices (torch.topk(a, count, dim, largest=False)); NaN counts as the largest value.",
  parts = { "values = float_topk_smallest", "indices = float_argtopk_smallest" },
  examples = {
    -- rows {1, 5, 3} -> 1 (0), 3 (2); {4, -1, 6} -> -1 (1), 4 (0)
    { a = { shape = { 2, 3 }, data = { 1, 5, 3, 4, -1, 6 } }, count = 2, dim = 1,
      values = { shape = { 2, 2 }, data = { 1, 3, -1, 4 } }, indices = { shape = { 2, 2 }, data = { 0, 2, 1, 0 } } },
  },
}

tuple {
  name = "int_topk_with_indices",
  doc = "The count largest values of an int tensor along dim in descending order, and their indices (torch.topk(a, count, dim)).",
  parts = { "values = int_topk", "indices = int_argtopk" },
  examples = {
    -- rows {1, 5, 3} -> 5 (1), 3 (2); {4, -1, 6} -> 6 (2), 4 (0)
    { a = { shape = { 2, 3 }, data = { 1, 5, 3, 4, -1, 6 } }, count = 2, dim = 1,
      values = { shape = { 2, 2 }, data = { 5, 3, 6, 4 } }, indices = { shape = { 2, 2 }, data = { 1, 2, 2, 0 } } },
  },
}

tuple {
  name = "int_topk_smallest_with_indices",
  doc = "The count smallest values of an int tensor along dim in ascending order, and their indices (torch.topk(a, count, dim, largest=False)).",
  parts = { "values = int_topk_smallest", "indices = int_argtopk_smallest" },
  examples = {
    -- {1, 5, 3} -> 1 (0), 3 (2); {4, -1, 6} -> -1 (1), 4 (0)
    { a = { shape = { 2, 3 }, data = { 1, 5, 3, 4, -1, 6 } }, count = 2, dim = 1,
      values = { shape = { 2, 2 }, data = { 1, 3, -1, 4 } }, indices = { shape = { 2, 2 }, data = { 0, 2, 1, 0 } } },
  },
}

tuple {
  name = "int_max_dim_with_indices",
  doc = "The maximum along dim and its index (first one on ties), the reduced dim kept with size 1 (torch.max(a, dim, keepdim=True)).",
  parts = { "values = int_max_dim", "indices = int_argmax" },
  examples = {
    -- rows {1, 5, 5} -> 5 first at 1; {7, -2, 0} -> 7 at 0
    { a = { shape = { 2, 3 }, data = { 1, 5, 5, 7, -2, 0 } }, dim = 1,
      values = { shape = { 2, 1 }, data = { 5, 7 } }, indices = { shape = { 2, 1 }, data = { 1, 0 } } },
  },
}

tuple {
  name = "int_min_dim_with_indices",
  doc = "The minimum along dim and its index (first one on ties), the reduced dim kept with size 1 (torch.min(a, dim, keepdim=True)).",
  parts = { "values = int_min_dim", "indices = int_argmin" },
  examples = {
    -- rows {1, 5, 1} -> 1 first at 0; {7, -2, 0} -> -2 at 1
    { a = { shape = { 2, 3 }, data = { 1, 5, 1, 7, -2, 0 } }, dim = 1,
      values = { shape = { 2, 1 }, data = { 1, -2 } }, indices = { shape = { 2, 1 }, data = { 0, 1 } } },
  },
}

tuple {
  name = "int_sort_with_indices",
  doc = "The values sorted along dim and the indices that sort them; ascending, or descending where descending is nonzero; stable (torch.sort(a, dim, descending, stable=True)).",
  parts = { "values = int_sort", "indices = int_argsort" },
  examples = {
    -- {3, 1, 2, 1, 0} ascending: 0 (4), 1 (1), 1 (3), 2 (2), 3 (0)
    { a = { shape = { 5 }, data = { 3, 1, 2, 1, 0 } }, dim = 0, descending = 0,
      values = { shape = { 5 }, data = { 0, 1, 1, 2, 3 } }, indices = { shape = { 5 }, data = { 4, 1, 3, 2, 0 } } },
  },
}

tuple {
  name = "float_max_pool2d_with_indices",
  doc = "2-D max pooling and the place of each maximum in its input plane (torch.nn.functional.max_pool2d with return_indices=True).",
  parts = { "values = float_max_pool2d", "indices = float_max_pool2d_indices" },
  examples = {
    -- x = [[1,5,3],[4,2,6],[9,8,7]], 2x2 windows: maxima 5, 6, 9, 8 at 1, 5, 6, 7.
    { x = { shape = { 1, 1, 3, 3 }, data = { 1, 5, 3, 4, 2, 6, 9, 8, 7 } },
      kernel = { 2, 2 }, stride = { 1, 1 }, padding = { 0, 0 }, dilation = { 1, 1 },
      values = { shape = { 1, 1, 2, 2 }, data = { 5, 6, 9, 8 } }, indices = { shape = { 1, 1, 2, 2 }, data = { 1, 5, 6, 7 } } },
  },
}

tuple {
  name = "float_max_pool1d_with_indices",
  doc = "1-D max pooling and the place of each maximum in its row (torch.nn.functional.max_pool1d with return_indices=True).",
  parts = { "values = float_max_pool1d", "indices = float_max_pool1d_indices" },
  examples = {
    -- windows [1,5] [5,3] [3,4] [4,2]: maxima 5, 5, 4, 4 at 1, 1, 3, 3.
    { x = { shape = { 1, 1, 5 }, data = { 1, 5, 3, 4, 2 } }, kernel = 2, stride = 1, padding = 0, dilation = 1,
      values = { shape = { 1, 1, 4 }, data = { 5, 5, 4, 4 } }, indices = { shape = { 1, 1, 4 }, data = { 1, 1, 3, 3 } } },
  },
}
