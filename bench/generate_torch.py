#!/usr/bin/python3
"""PyTorch's side of bench/bench_generate: greedy generation with a KV cache from a GPT that
examples/train_gpt (or bench_generate) saved, timed per token, for the C bench to read.

    /usr/bin/python3 bench/generate_torch.py --model FILE --prompt 3,1,4 --positions 1024
        [--threads 2] [--window 16] [--compare FILE]

The model is examples/train_gpt.c's (its top comment): token + position embeddings, pre-norm
blocks of causal self-attention and a GELU (erf) MLP, a final layer norm, a head without bias;
weights [in, out] (x @ w). The file is safetensors, read by torch_safetensors.py (beside this script,
shared with gpt_torch.py; the model's shape is in its __metadata__).

The decode loop is written here, not taken from the C side: the prompt runs once with a
causal mask; then each step feeds the last token at position p, appends its keys and values to
each layer's cache (torch.cat along the positions, as the C side's float_cat) and attends its
one query to the p + 1 cached positions. Greedy: the next token is the argmax of the logits.
Torch 1.13 (Debian's) has no scaled_dot_product_attention: attention is written out.

Prints, after a line naming torch and its threads:
    generate_torch step <position> <seconds>     every generated step, in order
    generate_torch total <seconds> <steps>       the generation after the prompt
and with --compare FILE (written by bench_generate: int32 n, int32 vocab, n int32 tokens, n x
vocab f32 logits, little-endian; its greedy tokens after the prompt and the logits that chose
each), its own greedy tokens and logits against those:
    generate_torch greedy <agreeing> <n> <largest logit difference over the agreeing steps>
"""
import argparse
import math

import struct
import sys
import time

import torch_safetensors


def read_compare(path):
    with open(path, "rb") as f:
        data = f.read()
    n, vocab = struct.unpack("<ii", data[:8])
    tokens = list(struct.unpack(f"<{n}i", data[8:8 + 4 * n]))
    flat = struct.unpack(f"<{n * vocab}f", data[8 + 4 * n:8 + 4 * n + 4 * n * vocab])
    return tokens, [flat[i * vocab:(i + 1) * vocab] for i in range(n)]


class Model:
    def __init__(self, torch, w, meta):
        self.torch = torch
        self.w = w
        self.L, self.H, self.D = int(meta["layers"]), int(meta["heads"]), int(meta["width"])
        self.T, self.V = int(meta["context"]), int(meta["vocab_size"])
        self.blocks = [{k[len(f"blocks.{l}."):]: v for k, v in w.items() if k.startswith(f"blocks.{l}.")}
                       for l in range(self.L)]

    def step(self, ids, p, cache):
        """Runs ids (a list) at positions p.. p + len - 1; appends to cache[l] = (k, v); the last logits."""
        torch, F = self.torch, self.torch.nn.functional
        n, H, D = len(ids), self.H, self.D
        E = D // H
        x = F.embedding(torch.tensor([ids]), self.w["wte"]) + self.w["wpe"][p:p + n]
        for l, b in enumerate(self.blocks):
            h = F.layer_norm(x, (D,), b["ln1.weight"], b["ln1.bias"], 1e-5)
            q = (h @ b["attn.q.weight"] + b["attn.q.bias"]).view(1, n, H, E).transpose(1, 2)
            k = (h @ b["attn.k.weight"] + b["attn.k.bias"]).view(1, n, H, E).transpose(1, 2)
            v = (h @ b["attn.v.weight"] + b["attn.v.bias"]).view(1, n, H, E).transpose(1, 2)
            if cache[l] is not None:
                k = torch.cat([cache[l][0], k], 2)
                v = torch.cat([cache[l][1], v], 2)
            cache[l] = (k, v)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(E))
            if n > 1:  # the prompt: causal (p is 0 then)
                att = att.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
            a = (att.softmax(-1) @ v).transpose(1, 2).reshape(1, n, D)
            x = x + a @ b["attn.proj.weight"] + b["attn.proj.bias"]
            h = F.layer_norm(x, (D,), b["ln2.weight"], b["ln2.bias"], 1e-5)
            x = x + F.gelu(h @ b["mlp.fc.weight"] + b["mlp.fc.bias"]) @ b["mlp.fc2.weight"] + b["mlp.fc2.bias"]
        x = F.layer_norm(x[:, -1], (D,), self.w["ln_f.weight"], self.w["ln_f.bias"], 1e-5)
        return (x @ self.w["head.weight"])[0]

    def generate(self, prompt, positions):
        """Greedy from prompt until the text holds positions + 1 tokens (steps at positions len(prompt)
        .. positions - 1, as bench_generate's): the tokens after the prompt, the logits that chose
        each, and each step's (position, seconds)."""
        cache = [None] * self.L
        logits = self.step(prompt, 0, cache)
        text = list(prompt)
        times, all_logits = [], []
        while True:
            nxt = int(logits.argmax())
            all_logits.append(logits)
            text.append(nxt)
            p = len(text) - 1
            if p >= positions:
                break
            t0 = time.perf_counter()
            logits = self.step([nxt], p, cache)
            times.append((p, time.perf_counter() - t0))
        return text[len(prompt):], all_logits, times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt", required=True, help="token ids, comma-separated")
    ap.add_argument("--positions", type=int, required=True, help="generate until the text holds this many tokens")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=32, help="steps of an untimed generation first")
    ap.add_argument("--compare", help="bench_generate's greedy tokens and logits")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("generate_torch: skipped: python3-torch is not installed")
        return 77
    torch.set_num_threads(a.threads)
    w, meta = torch_safetensors.read_f32(a.model, torch, "generate_torch")
    m = Model(torch, w, meta)
    prompt = [int(t) for t in a.prompt.split(",")]
    if not 1 <= len(prompt) < a.positions <= m.T or not all(0 <= t < m.V for t in prompt):
        raise SystemExit(f"generate_torch: bad prompt or positions for a context of {m.T} and {m.V} tokens")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {m.L} layers, {m.H} heads, width {m.D}, "
          f"context {m.T}, vocabulary {m.V}", flush=True)
    with torch.inference_mode():
        m.generate(prompt, min(a.positions, len(prompt) + a.warmup))
        t0 = time.perf_counter()
        tokens, logits, times = m.generate(prompt, a.positions)
        total = time.perf_counter() - t0
    for p, s in times:
        print(f"generate_torch step {p} {s:.9f}")
    print(f"generate_torch total {total:.9f} {len(tokens)}")
    if a.compare:
        ours, our_logits = read_compare(a.compare)
        n = min(len(ours), len(tokens))
        agree, worst = 0, 0.0
        while agree < n and ours[agree] == tokens[agree]:
            worst = max(worst, max(abs(x - y) for x, y in zip(our_logits[agree], logits[agree].tolist())))
            agree += 1
        print(f"generate_torch greedy {agree} {n} {worst:.6g}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
