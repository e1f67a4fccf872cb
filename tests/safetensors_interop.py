#!/usr/bin/env python3
"""An independent safetensors writer and reader (stdlib struct + json only) for the interop
tests of tdispatch's runtime/io.

  safetensors_interop.py write DIR   writes py_*.safetensors with the values below
  safetensors_interop.py check DIR   checks every lib_*.safetensors tdispatch wrote in DIR

The values come from formulas that tests/test_safetensors_interop.c computes again in C;
neither side asks the library what they should be.
"""
import json
import math
import os
import struct
import sys

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
FLT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
F32_SPECIALS = {0: -0.0, 1: math.inf, 2: -math.inf, 3: math.nan, 4: 1e-45, 5: FLT_MAX}


def f32_value(i):
    return F32_SPECIALS.get(i, (i - 7) * 0.375)


def i32_value(i):
    if i == 0:
        return INT32_MIN
    if i == 1:
        return INT32_MAX
    u = (i * 2654435761) % 2**32
    return u - 2**32 if u >= 2**31 else u


def bool_value(i):
    return i % 3 == 0


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def encode(dtype, shape, fn):
    n = numel(shape)
    if dtype == "F32":
        return b"".join(struct.pack("<f", fn(i)) for i in range(n))
    if dtype == "I32":
        return b"".join(struct.pack("<i", fn(i)) for i in range(n))
    if dtype == "BOOL":
        return bytes(1 if fn(i) else 0 for i in range(n))
    raise ValueError(dtype)


# name -> (dtype, shape, value function): what py_all holds and what the C side saves as lib_*.
TENSORS = [
    ("f32", "F32", [3, 5], f32_value),
    ("i32", "I32", [2, 2, 3], i32_value),
    ("bool", "BOOL", [7], bool_value),
    ("scalar", "F32", [], lambda i: 2.5),
    ("empty_f32", "F32", [0, 4], f32_value),
    ("empty_bool", "BOOL", [3, 0], bool_value),
]
METADATA = {"format": "pt", "note": "written by safetensors_interop.py", "unicode": "h\u00e9llo \u2713"}
LIB_METADATA = {"writer": "tdispatch", "quote\"key": "back\\slash"}


def write_file(path, tensors, metadata, header_order=None, indent=None):
    """tensors in data order; the header lists them in header_order (names) when given."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    entries = {}
    for name, dtype, shape, fn in tensors:
        data = encode(dtype, shape, fn)
        entries[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    for name in header_order or [t[0] for t in tensors]:
        header[name] = entries[name]
    text = json.dumps(header, indent=indent, ensure_ascii=False).encode("utf-8")
    text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def write(directory):
    write_file(os.path.join(directory, "py_all.safetensors"), TENSORS, METADATA)
    # the header in another order than the data, indented JSON, no metadata
    order = ["empty_bool", "scalar", "bool", "f32", "empty_f32", "i32"]
    write_file(os.path.join(directory, "py_reordered.safetensors"), TENSORS, None, order, indent=2)


def fail(path, msg):
    raise SystemExit(f"safetensors_interop.py: {path}: {msg}")


def check_file(path, want_metadata):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        fail(path, "shorter than 8 bytes")
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        fail(path, f"header length {n} runs past the file ({len(raw)} bytes)")
    if (8 + n) % 8:
        fail(path, f"the data starts at byte {8 + n}, not a multiple of 8")
    text = raw[8 : 8 + n].decode("utf-8")
    if not text.startswith("{"):
        fail(path, "the header does not start with '{'")
    stripped = text.rstrip(" ")
    header = json.loads(stripped)
    if not isinstance(header, dict):
        fail(path, "the header is not an object")
    data = raw[8 + n :]
    meta = header.pop("__metadata__", None)
    if meta != want_metadata:
        fail(path, f"metadata {meta!r}, want {want_metadata!r}")
    want = {name: (dtype, shape, fn) for name, dtype, shape, fn in TENSORS}
    if sorted(header) != sorted(want):
        fail(path, f"tensors {sorted(header)}, want {sorted(want)}")
    spans = []
    for name, entry in header.items():
        if sorted(entry) != ["data_offsets", "dtype", "shape"]:
            fail(path, f"{name}: fields {sorted(entry)}")
        dtype, shape, fn = want[name]
        if entry["dtype"] != dtype or entry["shape"] != shape:
            fail(path, f"{name}: {entry['dtype']} {entry['shape']}, want {dtype} {shape}")
        begin, end = entry["data_offsets"]
        expected = encode(dtype, shape, fn)
        if data[begin:end] != expected:
            fail(path, f"{name}: bytes {data[begin:end].hex()} differ from {expected.hex()}")
        spans.append((begin, end, name))
    at = 0
    for begin, end, name in sorted(spans):
        if begin != at:
            fail(path, f"{name} starts at {begin}, the data before it ends at {at}")
        at = end
    if at != len(data):
        fail(path, f"the tensors end at {at}, the data buffer is {len(data)} bytes")
    return len(header)


def check(directory):
    files = sorted(f for f in os.listdir(directory) if f.startswith("lib_") and f.endswith(".safetensors"))
    if not files:
        raise SystemExit(f"safetensors_interop.py: no lib_*.safetensors in {directory}")
    for name in files:
        count = check_file(os.path.join(directory, name), LIB_METADATA)
        print(f"safetensors_interop.py: {name}: {count} tensors, header and bytes as expected")


def main(argv):
    if len(argv) != 3 or argv[1] not in ("write", "check"):
        raise SystemExit("usage: safetensors_interop.py write|check DIR")
    (write if argv[1] == "write" else check)(argv[2])


if __name__ == "__main__":
    main(sys.argv)
