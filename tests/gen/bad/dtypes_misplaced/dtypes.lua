-- An op declared in the dtype table.
dtype { name = "f32", id = 0, class = "float", size = 4, block = 1, c_type = "float", default = true, doc = "binary32" }
op { name = "myop2", id = 1, family = "unary_float", doc = "x", args = { "float a" }, returns = "float" }
