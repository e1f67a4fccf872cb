-- Every row below but f32, i32 and bool is wrong in its own way.
dtype { name = "f32", id = 0, class = "float", size = 4, block = 1, c_type = "float", default = true, doc = "binary32" }
dtype { name = "i32", id = 1, class = "int", size = 4, block = 1, c_type = "int32_t", default = true, safetensors = "I32", doc = "int" }
dtype { name = "bool", id = 2, class = "bool", size = 1, block = 1, c_type = "bool", default = true, doc = "bool" }
dtype { name = "f32", id = 3, class = "float", size = 4, block = 1, c_type = "float", doc = "a duplicate name" }
dtype { name = "f16", id = 0, class = "float", size = 2, block = 1, c_type = "uint16_t", doc = "a taken id" }
dtype { name = "c64", id = 4, class = "complex", size = 8, block = 1, c_type = "float", doc = "an unknown class" }
dtype { name = "q2", id = 5, class = "float", size = 10, block = 32, c_type = "uint8_t", doc = "blocks, not quantized" }
dtype { name = "i4", id = 6, class = "int", size = 1, block = 1, c_type = "nibble", doc = "an unknown C type" }
dtype { name = "bf16", id = 7, class = "float", size = 2, block = 1, c_type = "uint16_t", doc = "x", colour = "red" }
dtype { name = "i16", id = 8, class = "int", size = 2, block = 1, c_type = "int32_t" }
dtype { name = "Big", id = 99, class = "int", size = 0, block = 1, c_type = "int32_t", doc = "x" }
dtype { name = "u16", id = 9, class = "int", size = 2, block = 1, c_type = "int32_t", safetensors = "I32", doc = "taken name" }
dtype { name = "f8", id = 10, class = "float", size = 1, block = 1, c_type = "uint8_t", nmse = 2, doc = "nmse out of range" }
