"""The f32 safetensors reader the PyTorch reference scripts share (gpt_torch.py,
generate_torch.py): our files are the exchange between tdispatch and PyTorch, and the
`safetensors` package is not assumed. The format: an 8-byte little-endian header length,
a JSON header naming each tensor's dtype, shape and byte range, then the raw bytes.
"""

import json
import struct


def read_f32(path, torch, prog):
    """Returns ({name: torch.Tensor}, metadata) for a file of F32 tensors; any other dtype
    ends the program with a message naming `prog`."""
    import numpy  # PyTorch's own dependency; imported here so a missing torch is reported first

    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + hlen].decode("utf-8"))
    base = 8 + hlen
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise SystemExit(f"{prog}: {name} is {info['dtype']}, not F32")
        begin, end = info["data_offsets"]
        # numpy.frombuffer, not struct: a tuple per value takes gigabytes for a large model
        values = numpy.frombuffer(data, dtype="<f4", count=(end - begin) // 4, offset=base + begin)
        tensors[name] = torch.from_numpy(values.astype(numpy.float32)).reshape(info["shape"])
    return tensors, header.get("__metadata__", {})
