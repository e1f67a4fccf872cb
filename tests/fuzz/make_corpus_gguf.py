#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_gguf (tests/fuzz/corpus_gguf): good files of every value
type, tensor type and layout, and one of each kind of hostile file the unit tests check.
  python3 tests/fuzz/make_corpus_gguf.py tests/fuzz/corpus_gguf
Stdlib only (struct); the output is the same on every run."""
import os
import struct
import sys

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<B", U64: "<Q",
       I64: "<q", F64: "<d"}


def s(text):
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b


def value(t, v):
    if t == STR:
        return s(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(value(et, x) for x in items)
    return struct.pack(FMT[t], v)


def kv(key, t, v):
    return s(key) + struct.pack("<I", t) + value(t, v)


def info(name, dims, gtype, offset):
    return s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims) + \
        struct.pack("<IQ", gtype, offset)


def pad(b, a):
    return b + b"\0" * (-len(b) % a)


def gguf(kvs=(), infos=(), data=b"", align=32, counts=None, version=3, magic=b"GGUF"):
    nt, nkv = counts if counts is not None else (len(infos), len(kvs))
    head = magic + struct.pack("<IQQ", version, nt, nkv) + b"".join(kvs) + b"".join(infos)
    return pad(head, align) + data


F4 = struct.pack("<4f", 1.5, -2.0, float("inf"), float("nan"))
H4 = struct.pack("<4e", 1.0, -2.0, 0.5, 65504.0)
B4 = b"".join(struct.pack("<f", x)[2:] for x in (1.0, -1.5, 3.140625, 0.0))
Q8 = struct.pack("<e", 0.5) + bytes(range(32))
Q4 = struct.pack("<e", 1.0) + bytes(range(0, 256, 16))

ALL_KVS = [kv("a.u8", U8, 200), kv("a.i8", I8, -100), kv("a.u16", U16, 60000), kv("a.i16", I16, -30000),
           kv("a.u32", U32, 4000000000), kv("a.i32", I32, -2000000000), kv("a.f32", F32, 1.5),
           kv("a.bool", BOOL, 1), kv("a.str", STR, "h\u00e9llo"), kv("a.u64", U64, 2**63 + 5),
           kv("a.i64", I64, -(2**62)), kv("a.f64", F64, -0.1), kv("a.arr", ARR, (I32, [1, -2, 3])),
           kv("a.strs", ARR, (STR, ["a", "", "ccc"])), kv("a.bools", ARR, (BOOL, [1, 0])),
           kv("a.empty", ARR, (U8, []))]

SEEDS = {
    "good_empty": gguf(),
    "good_all_values": gguf(ALL_KVS),
    "good_tensors": gguf([kv("general.architecture", STR, "tdgpt")],
                         [info("f", [4], 0, 0), info("h", [2, 2], 1, 32), info("b", [4], 30, 64),
                          info("q8", [32], 8, 96), info("q4", [32], 2, 160), info("s", [], 0, 192)],
                         pad(F4, 32) + pad(H4, 32) + pad(B4, 32) + pad(Q8, 64) + pad(Q4, 32) + struct.pack("<f", 7)),
    "good_align64": gguf([kv("general.alignment", U32, 64)], [info("x", [2], 0, 0), info("y", [0], 0, 64)],
                         pad(F4[:8], 64), align=64),
    "good_gaps_reordered": gguf([], [info("b", [2], 0, 64), info("a", [2], 0, 0)], pad(F4[:8], 64) + F4[:8]),
    "bad_magic": gguf(magic=b"GGUG"),
    "bad_version2": gguf(version=2),
    "bad_bigendian": gguf(version=0x03000000),
    "bad_short": b"GGUF\x03\x00\x00",
    "bad_kv_count": gguf(counts=(0, 2**62)),
    "bad_tensor_count": gguf(counts=(2**64 - 1, 0)),
    "bad_key_len": gguf(counts=(0, 1)) + struct.pack("<Q", 2**64 - 1) + b"abc",
    "bad_empty_key": gguf([kv("", U8, 1) + b"\0"]),
    "bad_value_type": gguf([s("k") + struct.pack("<IB", 13, 0)]),
    "bad_nested_array": gguf([s("k") + struct.pack("<IIQIQ", ARR, ARR, 1, U8, 0)]),
    "bad_array_count": gguf([s("k") + struct.pack("<IIQ", ARR, F32, 2**61) + b"\0" * 4]),
    "bad_bool": gguf([kv("k", BOOL, 2)]),
    "bad_duplicate_key": gguf([kv("a", U8, 1), kv("a", U8, 2)]),
    "bad_alignment_type": gguf([kv("general.alignment", U64, 32)]),
    "bad_alignment_value": gguf([kv("general.alignment", U32, 12)]),
    "bad_name_long": gguf([], [info("n" * 65, [1], 0, 0)], b"\0" * 4),
    "bad_ndims": gguf([], [info("t", [1, 1, 1, 1, 1], 0, 0)], b"\0" * 4),
    "bad_dims_overflow": gguf([], [info("t", [2**32, 2**32], 0, 0)]),
    "bad_type": gguf([], [info("t", [1], 4, 0)], b"\0" * 4),
    "bad_block": gguf([], [info("t", [33], 8, 0)], b"\0" * 64),
    "bad_offset_unaligned": gguf([], [info("t", [1], 0, 8)], b"\0" * 64),
    "bad_offset_outside": gguf([], [info("t", [2], 0, 2**62)], b"\0" * 8),
    "bad_truncated_data": gguf([], [info("t", [4], 0, 0)], b"\0" * 8),
    "bad_overlap": gguf([], [info("a", [12], 0, 0), info("b", [4], 0, 32)], b"\0" * 64),
    "bad_duplicate_name": gguf([], [info("a", [2], 0, 0), info("a", [2], 0, 32)], b"\0" * 64),
    "bad_no_data_section": gguf(counts=(1, 0)) + info("t", [0], 0, 0),
}


def main(argv):
    if len(argv) != 2:
        raise SystemExit("usage: make_corpus_gguf.py DIR")
    os.makedirs(argv[1], exist_ok=True)
    for name, data in sorted(SEEDS.items()):
        with open(os.path.join(argv[1], name), "wb") as f:
            f.write(data)
    print(f"make_corpus_gguf.py: {len(SEEDS)} seeds in {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
