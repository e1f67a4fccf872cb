-- The dtype table (docs/dtypes.md section 2): one `dtype { ... }` per element type.
-- The generator emits td_dtypes.h/.c from it (the td_dtype enum and a table of these
-- fields); the row converters stay hand-written in runtime/core (td_dtype_traits).
--
-- Schema of a dtype row:
--   name       string   required  lower-case identifier, used in backend specs and messages
--   id         integer  required  the value of TD_<NAME> in td_dtype, stable forever (0-63);
--                                 f32, i32, bool keep 0, 1, 2
--   class      string   required  "float", "int" or "bool": the primitive class, which is
--                                 what an op's signature names
--   size       integer  required  bytes per block (per element when block is 1)
--   block      integer  required  values per block: 1 for scalars, 32 for q8_0 / q4_0
--   c_type     string   required  the host-side C type of one block's storage
--   default    boolean  optional  the class's default dtype (exactly one per class): what
--                                 the functions without a dtype argument make
--   quantized  boolean  optional  a block-quantized float dtype (only a few ops accept it)
--   safetensors string  optional  the safetensors dtype name, when the format has one
--   ggml       integer  optional  the GGML_TYPE_* id (GGUF), when ggml has the type
--   nmse       number   optional  float dtypes: the NMSE bound of the generated per-dtype
--                                 comparisons (test_dtypes_<backend>.c; docs/comparisons.md
--                                 "Per dtype"): of an op's cases pooled, against the CPU's
--                                 f32 result rounded to the dtype (f64: its f64 result, or on
--                                 the CPU itself its f32 kernel's). f16 5e-8 and bf16 3e-6 lie
--                                 about 5x below what a kernel that truncates instead of
--                                 rounding gives (2.4e-7, 1.5e-5: half its results 1 ulp off);
--                                 a kernel that rounds once gives 0, and so does a composite:
--                                 in f16 / bf16 it runs in f32 and rounds once (docs/composites.md).
--                                 An op that must round several times sets its own (`dtype_nmse`)
--   via        string   optional  the dtype a kernel that lacks this one computes in (f32 for
--                                 f16 / bf16 / quantized); none for f64 (it would lose precision)
--   doc        string   required  one line, shown in the docs

dtype { name = "f32", id = 0, class = "float", size = 4, block = 1, c_type = "float", default = true,
  safetensors = "F32", ggml = 0, nmse = 1e-7, doc = "IEEE binary32" }
dtype { name = "i32", id = 1, class = "int", size = 4, block = 1, c_type = "int32_t", default = true,
  safetensors = "I32", ggml = 26, doc = "32-bit two's complement" }
dtype { name = "bool", id = 2, class = "bool", size = 1, block = 1, c_type = "bool", default = true,
  safetensors = "BOOL", doc = "one byte, 0 or 1" }
dtype { name = "f16", id = 3, class = "float", size = 2, block = 1, c_type = "uint16_t",
  safetensors = "F16", ggml = 1, nmse = 5e-8, via = "f32", doc = "IEEE binary16 (bits in a uint16_t)" }
dtype { name = "bf16", id = 4, class = "float", size = 2, block = 1, c_type = "uint16_t",
  safetensors = "BF16", ggml = 30, nmse = 3e-6, via = "f32", doc = "bfloat16: the top half of a binary32 (bits in a uint16_t)" }
dtype { name = "f64", id = 5, class = "float", size = 8, block = 1, c_type = "double",
  safetensors = "F64", ggml = 28, nmse = 1e-12, doc = "IEEE binary64" }
dtype { name = "i64", id = 6, class = "int", size = 8, block = 1, c_type = "int64_t",
  safetensors = "I64", ggml = 27, doc = "64-bit two's complement" }
dtype { name = "i8", id = 7, class = "int", size = 1, block = 1, c_type = "int8_t",
  safetensors = "I8", ggml = 24, doc = "8-bit two's complement" }
dtype { name = "u8", id = 8, class = "int", size = 1, block = 1, c_type = "uint8_t",
  safetensors = "U8", doc = "8-bit unsigned" }
dtype { name = "q8_0", id = 9, class = "float", size = 34, block = 32, c_type = "uint8_t", quantized = true,
  ggml = 8, nmse = 1e-3, via = "f32", doc = "ggml block_q8_0: an f16 scale and 32 signed bytes" }
dtype { name = "q4_0", id = 10, class = "float", size = 18, block = 32, c_type = "uint8_t", quantized = true,
  ggml = 2, nmse = 1e-2, via = "f32", doc = "ggml block_q4_0: an f16 scale and 32 4-bit values" }
