-- Issue 23: the kernel folder is checked when the specs are validated, with the spec's
-- line, instead of by CMake's include() of <kernels>/backend.cmake.
backend {
  name = "toy", id = 32,
  doc = "A kernel folder that exists (relative to the spec directory).",
  option = "TD_BACKEND_TOY", default = false, dtypes = { "f32" },
  kernels = "toy",
  ops = { "float_neg" },
}

backend {
  name = "typo", id = 33,
  doc = "A misspelt kernel folder.",
  option = "TD_BACKEND_TYPO", default = false, dtypes = { "f32" },
  kernels = "toyy",
  ops = { "float_neg" },
}

backend {
  name = "file", id = 34,
  doc = "A file, not a folder.",
  option = "TD_BACKEND_FILE", default = false, dtypes = { "f32" },
  kernels = "ops/x.lua",
  ops = { "float_neg" },
}

backend {
  name = "relative", id = 35,
  doc = "Relative to the spec directory, not to backends/.",
  option = "TD_BACKEND_RELATIVE", default = false, dtypes = { "f32" },
  kernels = "../toy",
  ops = { "float_neg" },
}
