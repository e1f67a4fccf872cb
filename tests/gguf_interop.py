#!/usr/bin/env python3
"""An independent GGUF v3 writer and reader (stdlib struct only) for the interop test of
tdispatch's runtime/io/td_gguf, built from the format's specification.

  gguf_interop.py write DIR   writes py_*.gguf: the content below, laid out as ggml does
                              (py_all, py_save) and in another legal layout (py_reordered)
  gguf_interop.py check DIR   reads every lib_*.gguf tdispatch wrote in DIR with the reader
                              below, checks its values, and compares it byte for byte with
                              the file this script builds from the same content

The values come from formulas that tests/test_gguf_interop.c computes again in C; neither
side asks the library what they should be. f16 bits come from struct's 'e' format, bf16 bits
from the top half of struct's 'f': independent of the library's converters.
"""
import math
import os
import struct
import sys

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?", U64: "<Q",
       I64: "<q", F64: "<d"}
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0, GGML_BF16 = 0, 1, 2, 8, 30
BLOCK = {GGML_F32: (1, 4), GGML_F16: (1, 2), GGML_Q4_0: (32, 18), GGML_Q8_0: (32, 34), GGML_BF16: (1, 2)}

# ---- the content (test_gguf_interop.c has the same) ----

KVS = [
    ("general.architecture", STR, "tdgpt"),
    ("general.alignment", U32, 64),
    ("t.u8", U8, 200),
    ("t.i8", I8, -100),
    ("t.u16", U16, 60000),
    ("t.i16", I16, -30000),
    ("t.u32", U32, 4000000000),
    ("t.i32", I32, -2000000000),
    ("t.f32", F32, 1.5),
    ("t.bool", BOOL, True),
    ("t.str", STR, "h\u00e9llo \u2713"),
    ("t.u64", U64, 2**63 + 5),
    ("t.i64", I64, -(2**62)),
    ("t.f64", F64, -0.1),
    ("t.arr_i32", ARR, (I32, [1, -2, 3])),
    ("t.arr_f32", ARR, (F32, [0.5, -0.25])),
    ("t.arr_str", ARR, (STR, ["a", "", "ccc"])),
    ("t.arr_bool", ARR, (BOOL, [True, False])),
    ("t.arr_u64", ARR, (U64, [])),
]


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def f32_value(i):
    return (i - 7) * 0.375


def f16_value(i):
    return (i - 3) * 0.5


def bf16_value(i):
    return i * 1.25 - 2


def q8_0_bytes(shape):
    out = b""
    for b in range(numel(shape) // 32):
        out += struct.pack("<e", 0.5 * (b + 1))
        out += bytes(((i * 7 + b * 3) % 256) for i in range(32))  # the 32 int8 quants, as bytes
    return out


def q4_0_bytes(shape):
    out = b""
    for b in range(numel(shape) // 32):
        out += struct.pack("<e", 1.0) + bytes(((i * 17 + 3 + b) & 0xFF) for i in range(16))
    return out


def tensor_bytes(gtype, shape, fn):
    n = numel(shape)
    if gtype == GGML_F32:
        return b"".join(struct.pack("<f", fn(i)) for i in range(n))
    if gtype == GGML_F16:
        return b"".join(struct.pack("<e", fn(i)) for i in range(n))
    if gtype == GGML_BF16:
        return b"".join(struct.pack("<f", fn(i))[2:4] for i in range(n))
    return fn(shape)


# (name, ggml type, shape in tdispatch's row-major order, value function or byte maker)
TENSORS = [
    ("w.f32", GGML_F32, [3, 5], f32_value),
    ("w.f16", GGML_F16, [2, 4], f16_value),
    ("w.bf16", GGML_BF16, [4], bf16_value),
    ("w.q8_0", GGML_Q8_0, [2, 32], q8_0_bytes),
    ("w.q4_0", GGML_Q4_0, [32], q4_0_bytes),
    ("scalar", GGML_F32, [], lambda i: 2.5),
]
SAVE_TENSORS = [("a", GGML_F32, [2, 3], f32_value), ("b", GGML_F32, [], lambda i: -1.0)]

# ---- the writer ----


def gstr(text):
    b = text.encode("utf-8") if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b


def gvalue(t, v):
    if t == STR:
        return gstr(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(gvalue(et, x) for x in items)
    return struct.pack(FMT[t], v)


def pad(n, align):
    return b"\0" * (-n % align)


def build(kvs, tensors, order=None):
    """ggml's layout: tensors in the order given, each at the running offset, padded to the
    alignment. order (a permutation of the tensors) lays the data out in that order instead,
    with a gap of one alignment unit before each tensor."""
    align = 32
    for key, t, v in kvs:
        if key == "general.alignment":
            align = v
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    head += b"".join(gstr(k) + struct.pack("<I", t) + gvalue(t, v) for k, t, v in kvs)
    datas = [tensor_bytes(g, s, fn) for _, g, s, fn in tensors]
    offsets, off = [0] * len(tensors), 0
    for i in order if order is not None else range(len(tensors)):
        if order is not None:
            off += align
        offsets[i] = off
        off += len(datas[i]) + len(pad(len(datas[i]), align))
    for (name, g, shape, _), o in zip(tensors, offsets):
        dims = list(reversed(shape))  # innermost first
        head += gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        head += struct.pack("<IQ", g, o)
    head += pad(len(head), align)
    data = bytearray(off)
    for d, o in zip(datas, offsets):
        data[o:o + len(d)] = d
    return bytes(head) + bytes(data)


def write(directory):
    files = {
        "py_all.gguf": build(KVS, TENSORS),
        "py_save.gguf": build([], SAVE_TENSORS),
        # default alignment, data in reverse order with gaps: legal, but not how ggml writes
        "py_reordered.gguf": build(KVS[2:6], TENSORS, order=list(reversed(range(len(TENSORS))))),
    }
    for name, data in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)


# ---- the reader ----


class Reader:
    def __init__(self, raw, path):
        self.raw, self.pos, self.path = raw, 0, path

    def take(self, n):
        if self.pos + n > len(self.raw):
            fail(self.path, f"truncated at byte {self.pos} (need {n})")
        b = self.raw[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self):
        return self.take(self.unpack("<Q")).decode("utf-8")

    def value(self, t):
        if t == STR:
            return self.string()
        if t == ARR:
            et, n = self.unpack("<I"), self.unpack("<Q")
            return (et, [self.value(et) for _ in range(n)])
        return self.unpack(FMT[t])


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    r = Reader(raw, path)
    if r.take(4) != b"GGUF" or r.unpack("<I") != 3:
        fail(path, "not a GGUF v3 file")
    nt, nkv = r.unpack("<Q"), r.unpack("<Q")
    kvs = []
    for _ in range(nkv):
        key = r.string()
        t = r.unpack("<I")
        kvs.append((key, t, r.value(t)))
    align = dict((k, v) for k, _, v in kvs).get("general.alignment", 32)
    infos = []
    for _ in range(nt):
        name = r.string()
        dims = [r.unpack("<Q") for _ in range(r.unpack("<I"))]
        infos.append((name, dims, r.unpack("<I"), r.unpack("<Q")))
    start = r.pos + (-r.pos % align)
    tensors = {}
    for name, dims, g, off in infos:
        if off % align:
            fail(path, f"{name}: offset {off} is not a multiple of {align}")
        block, size = BLOCK[g]
        nbytes = numel(dims) // block * size
        if start + off + nbytes > len(raw):
            fail(path, f"{name}: data past the end of the file")
        tensors[name] = (g, list(reversed(dims)), raw[start + off:start + off + nbytes])
    return raw, kvs, tensors


def fail(path, msg):
    raise SystemExit(f"gguf_interop.py: {path}: {msg}")


def same(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def check_file(path, kvs, tensors):
    raw, got_kvs, got_tensors = read(path)
    if [(k, t) for k, t, _ in got_kvs] != [(k, t) for k, t, _ in kvs]:
        fail(path, f"keys {[(k, t) for k, t, _ in got_kvs]}, want {[(k, t) for k, t, _ in kvs]}")
    for (k, t, v), (_, _, w) in zip(got_kvs, kvs):
        if t == F32:
            w = struct.unpack("<f", struct.pack("<f", w))[0]
        if not same(v, w):
            fail(path, f"{k}: {v!r}, want {w!r}")
    for name, g, shape, fn in tensors:
        if name not in got_tensors:
            fail(path, f"no tensor {name}")
        gg, gs, data = got_tensors[name]
        if gg != g or gs != shape:
            fail(path, f"{name}: type {gg} shape {gs}, want {g} {shape}")
        want = tensor_bytes(g, shape, fn)
        if data != want:
            fail(path, f"{name}: bytes {data.hex()} differ from {want.hex()}")
    expected = build(kvs, tensors)
    if raw != expected:
        at = next((i for i in range(min(len(raw), len(expected))) if raw[i] != expected[i]), None)
        fail(path, f"{len(raw)} bytes, want {len(expected)}; first difference at byte {at}")
    return len(raw)


def check(directory):
    wants = {"lib_all.gguf": (KVS, TENSORS), "lib_save.gguf": ([], SAVE_TENSORS)}
    for name, (kvs, tensors) in wants.items():
        n = check_file(os.path.join(directory, name), kvs, tensors)
        print(f"gguf_interop.py: {name}: {len(kvs)} key/values, {len(tensors)} tensors, {n} bytes, "
              f"identical to the independently built file")


def main(argv):
    if len(argv) != 3 or argv[1] not in ("write", "check"):
        raise SystemExit("usage: gguf_interop.py write|check DIR")
    (write if argv[1] == "write" else check)(argv[2])


if __name__ == "__main__":
    main(sys.argv)
