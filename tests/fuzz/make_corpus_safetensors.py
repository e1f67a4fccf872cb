#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_safetensors (tests/fuzz/corpus_safetensors): good files of
every dtype and layout, and one of each kind of hostile file the unit tests check.
  python3 tests/fuzz/make_corpus_safetensors.py tests/fuzz/corpus_safetensors
Stdlib only; the output is the same on every run."""
import json
import os
import struct
import sys


def file_bytes(header, data=b"", declared=None, pad=True):
    text = header if isinstance(header, bytes) else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-(8 + len(text)) % 8)
    n = len(text) if declared is None else declared
    return struct.pack("<Q", n) + text + data


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


F = struct.pack("<6f", 1.5, -2.0, 0.0, -0.0, float("inf"), float("nan"))
I = struct.pack("<4i", -(2**31), -1, 0, 2**31 - 1)
B = bytes([1, 0, 0, 1])

SEEDS = {
    "good_all_dtypes": file_bytes(
        {"__metadata__": {"format": "pt"}, "w": entry("F32", [2, 3], 0, 24), "ids": entry("I32", [4], 24, 40),
         "mask": entry("BOOL", [2, 2], 40, 44)}, F + I + B),
    "good_reordered": file_bytes(
        {"mask": entry("BOOL", [4], 40, 44), "w": entry("F32", [6], 0, 24), "ids": entry("I32", [2, 2], 24, 40)},
        F + I + B),
    "good_scalar_and_empty": file_bytes(
        {"s": entry("F32", [], 0, 4), "e": entry("I32", [0, 3], 4, 4), "b": entry("BOOL", [3, 0], 4, 4)},
        struct.pack("<f", 0.5)),
    "good_empty_file": file_bytes({}),
    "good_indented": file_bytes(json.dumps({"x": entry("I32", [1], 0, 4)}, indent=2).encode(), struct.pack("<i", 7)),
    "bad_header_past_file": file_bytes({"x": entry("F32", [1], 0, 4)}, b"\0" * 4, declared=4096),
    "bad_header_over_cap": file_bytes(b"{}", declared=100000001, pad=False),
    "bad_json": file_bytes(b'{"x":{"dtype":', pad=False),
    "bad_trailing": file_bytes(b"{} {}", pad=False),
    "bad_not_object": file_bytes(b"[1,2]", pad=False),
    "bad_missing_field": file_bytes({"x": {"dtype": "F32", "shape": [1]}}, b"\0" * 4),
    "bad_extra_field": file_bytes({"x": dict(entry("F32", [1], 0, 4), strides=[1])}, b"\0" * 4),
    "bad_unknown_dtype": file_bytes({"x": entry("Q9", [1], 0, 4)}, b"\0" * 4),
    "bad_unsupported_dtype": file_bytes({"x": entry("F16", [2], 0, 4)}, b"\0" * 4),
    "bad_negative_dim": file_bytes({"x": entry("F32", [-1], 0, 4)}, b"\0" * 4),
    "bad_overflow_dims": file_bytes({"x": entry("F32", [4294967296, 4294967296], 0, 0)}),
    "bad_size_mismatch": file_bytes({"x": entry("F32", [3], 0, 8)}, b"\0" * 8),
    "bad_offsets_outside": file_bytes({"x": entry("F32", [4], 0, 16)}, b"\0" * 8),
    "bad_end_before_begin": file_bytes({"x": entry("F32", [2], 8, 0)}, b"\0" * 8),
    "bad_overlap": file_bytes({"a": entry("F32", [2], 0, 8), "b": entry("F32", [2], 4, 12)}, b"\0" * 12),
    "bad_gap": file_bytes({"a": entry("F32", [1], 0, 4), "b": entry("F32", [1], 8, 12)}, b"\0" * 12),
    "bad_duplicate_name": file_bytes(b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                     b'"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', b"\0" * 8),
    "bad_empty_name": file_bytes({"": entry("F32", [1], 0, 4)}, b"\0" * 4),
    "bad_metadata": file_bytes({"__metadata__": {"k": 1}}),
    "bad_bool_byte": file_bytes({"m": entry("BOOL", [2], 0, 2)}, bytes([1, 2])),
    "bad_truncated": file_bytes({"x": entry("F32", [2], 0, 8)}, b"\0" * 5),
}


def main(argv):
    if len(argv) != 2:
        raise SystemExit("usage: make_corpus_safetensors.py DIR")
    os.makedirs(argv[1], exist_ok=True)
    for name, data in sorted(SEEDS.items()):
        with open(os.path.join(argv[1], name), "wb") as f:
            f.write(data)
    print(f"make_corpus_safetensors.py: {len(SEEDS)} seeds in {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
