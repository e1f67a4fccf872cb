"""examples/generate (the C program: KV cache, greedy with --temperature 0) against a decode
written here in PyTorch without a cache (the whole text run again each token), from a tiny
random GPT that this test writes as safetensors itself (numpy + struct + json: no library code
on the way in). The program is found beside the module in the build tree (<build>/python ->
<build>/examples/generate); skipped, saying why, without torch or without the program."""
import json
import math
import os
import struct
import subprocess

import numpy as np
import pytest

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # skipped, saying why
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (apt-get install python3-torch)")

L, H, D, T = 2, 2, 16, 32
VOCAB = "abcdefghijklmnopqrst"
BLOCK = [("ln1.weight", (D,)), ("ln1.bias", (D,)), ("attn.q.weight", (D, D)), ("attn.q.bias", (D,)),
         ("attn.k.weight", (D, D)), ("attn.k.bias", (D,)), ("attn.v.weight", (D, D)), ("attn.v.bias", (D,)),
         ("attn.proj.weight", (D, D)), ("attn.proj.bias", (D,)), ("ln2.weight", (D,)), ("ln2.bias", (D,)),
         ("mlp.fc.weight", (D, 4 * D)), ("mlp.fc.bias", (4 * D,)), ("mlp.fc2.weight", (4 * D, D)),
         ("mlp.fc2.bias", (D,))]


def write_model(path):
    """train_gpt --save's names and metadata; weights [in, out]; little-endian f32."""
    rng = np.random.default_rng(7)
    w = {}
    for l in range(L):
        for name, shape in BLOCK:
            scale = 1.0 / math.sqrt(shape[0]) if len(shape) == 2 else 0.1
            w[f"blocks.{l}.{name}"] = (rng.standard_normal(shape) * scale + (1.0 if name.startswith("ln")
                                       and name.endswith("weight") else 0.0)).astype("<f4")
    w["wte"] = rng.standard_normal((len(VOCAB), D)).astype("<f4")
    w["wpe"] = rng.standard_normal((T, D)).astype("<f4")
    w["ln_f.weight"] = (1.0 + 0.1 * rng.standard_normal(D)).astype("<f4")
    w["ln_f.bias"] = (0.1 * rng.standard_normal(D)).astype("<f4")
    w["head.weight"] = (rng.standard_normal((D, len(VOCAB))) * 4.0 / math.sqrt(D)).astype("<f4")
    header = {"__metadata__": {"format": "tdispatch train_gpt", "vocab_size": str(len(VOCAB)), "context": str(T),
                               "layers": str(L), "heads": str(H), "width": str(D), "vocab": VOCAB}}
    blobs, offset = [], 0
    for name, a in w.items():
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    return {k: torch.from_numpy(v.astype(np.float32)) for k, v in w.items()}


def logits_of(w, ids):
    """The last position's logits of the whole text, causal attention, no cache."""
    n, E = len(ids), D // H
    x = F.embedding(torch.tensor([ids]), w["wte"]) + w["wpe"][:n]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    for l in range(L):
        p = lambda k: w[f"blocks.{l}.{k}"]
        h = F.layer_norm(x, (D,), p("ln1.weight"), p("ln1.bias"), 1e-5)
        q, k, v = ((h @ p(f"attn.{c}.weight") + p(f"attn.{c}.bias")).view(1, n, H, E).transpose(1, 2) for c in "qkv")
        att = ((q @ k.transpose(-2, -1)) / math.sqrt(E)).masked_fill(mask, float("-inf")).softmax(-1)
        x = x + (att @ v).transpose(1, 2).reshape(1, n, D) @ p("attn.proj.weight") + p("attn.proj.bias")
        h = F.layer_norm(x, (D,), p("ln2.weight"), p("ln2.bias"), 1e-5)
        x = x + F.gelu(h @ p("mlp.fc.weight") + p("mlp.fc.bias")) @ p("mlp.fc2.weight") + p("mlp.fc2.bias")
    x = F.layer_norm(x[0, -1], (D,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
    return (x @ w["head.weight"]).double()


@needs_torch
def test_generate_greedy_matches_torch_without_cache(td, tmp_path):
    program = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(td.__file__))), "examples", "generate")
    if not os.access(program, os.X_OK):
        pytest.skip(f"{program} is not built (the examples are off in this build?)")
    path = str(tmp_path / "tiny.safetensors")
    w = write_model(path)
    prompt, steps = "abc", 24  # 27 positions: within the context, no re-run of the window
    out = subprocess.run([program, "--model", path, "--prompt", prompt, "--tokens", str(steps), "--temperature", "0"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    ours = out.stdout.rstrip("\n")
    ids = [VOCAB.index(c) for c in prompt]
    gaps = []
    with torch.no_grad():
        for _ in range(steps):
            lg = logits_of(w, ids)
            top = torch.topk(lg, 2).values
            gaps.append(float(top[0] - top[1]))
            ids.append(int(lg.argmax()))
    theirs = "".join(VOCAB[i] for i in ids)
    # no near tie that rounding could flip: the comparison is meaningful, and the text is not constant
    assert min(gaps) > 1e-3, gaps
    assert len(set(theirs[len(prompt):])) > 3, theirs
    assert ours == theirs, (ours, theirs)
