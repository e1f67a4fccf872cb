-- Rows that pass one by one; the table as a whole breaks the cross-row rules.
dtype { name = "f32", id = 0, class = "float", size = 4, block = 1, c_type = "float", default = true, doc = "binary32" }
dtype { name = "i32", id = 1, class = "int", size = 4, block = 1, c_type = "int32_t", doc = "not the default" }
dtype { name = "i64", id = 6, class = "int", size = 8, block = 1, c_type = "int64_t", default = true, doc = "a default the runtime does not make" }
dtype { name = "bool", id = 2, class = "bool", size = 1, block = 1, c_type = "bool", default = true, doc = "bool" }
dtype { name = "f16", id = 3, class = "float", size = 2, block = 1, c_type = "uint16_t", via = "f64", doc = "via an unknown dtype" }
dtype { name = "bf16", id = 4, class = "float", size = 2, block = 1, c_type = "uint16_t", via = "i32", doc = "via another class" }
