#!/usr/bin/env python3
"""The PyTorch reference of examples/train_gpt: the same character-level GPT, recipe and batches.

    python3 bench/gpt_torch.py --init FILE [--steps N] [--seed S] [...]    the reference alone
    python3 bench/gpt_torch.py --ours build/examples/train_gpt [...]      both, in one run

--init FILE starts from the weights train_gpt --init-out wrote (safetensors, read by
torch_safetensors.py beside this script, which generate_torch.py shares). --ours BIN runs train_gpt first (with
--init-out into a temporary folder and the same options), then this reference from those
weights, and prints: the first losses of both and their largest relative difference, both
final validation losses and their relative difference, and both median step times and
their ratio (ours / PyTorch's). Both on --threads threads (2): TD_NUM_THREADS for ours,
torch.set_num_threads for PyTorch; both inherit the environment, so OMP_WAIT_POLICY=passive
(what a busy machine wants, see the README's "Threads on a busy machine") applies to both.
Needs python3-torch (Debian's 1.13: no scaled_dot_product_attention, so attention is
written out as nanoGPT's "slow" path). Run it with /usr/bin/python3 where another python3
(a pyenv one) comes first on PATH without torch.

Model and recipe: see the comment at the top of examples/train_gpt.c; the weights there are
[in, out] (x @ w), as here. Batches: splitmix64 seeded with --seed, window b of step s starts
at next() mod (ntrain - T - 1), drawn in order; validation windows at k * ((nval - T - 1) // W).
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import torch_safetensors

MASK64 = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def read_text(path):
    if path is not None:
        with open(path, "rb") as f:
            return f.read()
    raw = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    out = []
    for line in raw.split(b"\n"):
        i = line.find(b" ")
        out.append(line[i + 1:] if i >= 0 else line)
    return b"\n".join(out)


def lr_at(args, step):
    warm = args.warmup
    if step <= warm:
        return args.lr * step / warm
    frac = (step - warm) / (args.steps - warm)
    lo = args.lr / 10.0
    return lo + 0.5 * (args.lr - lo) * (1.0 + math.cos(math.pi * frac))


def run_reference(args):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    text = read_text(args.text)
    if args.chars:
        text = text[:args.chars]
    vocab = sorted(set(text))
    ids = {c: i for i, c in enumerate(vocab)}
    tokens = torch.tensor([ids[c] for c in text], dtype=torch.long)
    n = len(text)
    ntrain, nval = n - n // 10, n // 10
    T = args.context
    train, val = tokens[:ntrain], tokens[ntrain:]

    w, meta = torch_safetensors.read_f32(args.init, torch, "gpt_torch")
    L, H, D = int(meta["layers"]), int(meta["heads"]), int(meta["width"])
    if int(meta["vocab_size"]) != len(vocab) or int(meta["context"]) != T:
        raise SystemExit("gpt_torch: the init file's vocabulary or context differ from this text's")
    for t in w.values():
        t.requires_grad_(True)

    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)

    def forward(idx, targets):
        b, t = idx.shape
        x = F.embedding(idx, w["wte"]) + w["wpe"][:t]
        for l in range(L):
            p = lambda k: w[f"blocks.{l}.{k}"]
            h = F.layer_norm(x, (D,), p("ln1.weight"), p("ln1.bias"), 1e-5)
            q = (h @ p("attn.q.weight") + p("attn.q.bias")).view(b, t, H, D // H).transpose(1, 2)
            k = (h @ p("attn.k.weight") + p("attn.k.bias")).view(b, t, H, D // H).transpose(1, 2)
            v = (h @ p("attn.v.weight") + p("attn.v.bias")).view(b, t, H, D // H).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D // H))
            att = att.masked_fill(mask[:t, :t], float("-inf")).softmax(-1)
            a = (att @ v).transpose(1, 2).reshape(b, t, D)
            x = x + a @ p("attn.proj.weight") + p("attn.proj.bias")
            h = F.layer_norm(x, (D,), p("ln2.weight"), p("ln2.bias"), 1e-5)
            f = F.gelu(h @ p("mlp.fc.weight") + p("mlp.fc.bias"))
            x = x + f @ p("mlp.fc2.weight") + p("mlp.fc2.bias")
        x = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
        logits = x.reshape(b * t, D) @ w["head.weight"]
        return F.cross_entropy(logits, targets.reshape(b * t))

    decay = [t for t in w.values() if t.dim() == 2]
    no_decay = [t for t in w.values() if t.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.99), eps=1e-8)

    windows = min(args.eval_windows, nval - T - 1)
    stride = (nval - T - 1) // windows

    def evaluate():
        total = 0.0
        with torch.no_grad():
            for first in range(0, windows, 32):
                b = min(32, windows - first)
                starts = [(first + i) * stride for i in range(b)]
                x = torch.stack([val[s:s + T] for s in starts])
                y = torch.stack([val[s + 1:s + T + 1] for s in starts])
                total += forward(x, y).item() * b
        return total / windows

    ln2 = math.log(2.0)
    print(f"gpt_torch: torch {torch.__version__}, {torch.get_num_threads()} threads; {n} characters, "
          f"vocabulary {len(vocab)}; {L} layers, {H} heads, width {D}, context {T}; {args.steps} steps of "
          f"{args.batch}", flush=True)
    state = args.seed
    losses, times, val_bpc = [], [], float("nan")
    for s in range(args.steps):
        starts = []
        for _ in range(args.batch):
            state, r = splitmix64(state)
            starts.append(r % (ntrain - T - 1))
        t0 = time.perf_counter()
        x = torch.stack([train[i:i + T] for i in starts])
        y = torch.stack([train[i + 1:i + T + 1] for i in starts])
        for g in opt.param_groups:
            g["lr"] = lr_at(args, s + 1)
        loss = forward(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
        last = s + 1 == args.steps
        if last or (args.eval_every and (s + 1) % args.eval_every == 0):
            val_bpc = evaluate() / ln2
            print(f"step {s + 1}/{args.steps}  loss {losses[-1] / ln2:.4f} bpc  validation {val_bpc:.4f} bpc",
                  flush=True)
    times.sort()
    print(f"final: validation {val_bpc:.4f} bpc over {windows} windows")
    print(f"step median: {1e3 * times[len(times) // 2]:.3f} ms")
    return losses, val_bpc, times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--init", help="initial weights written by train_gpt --init-out")
    ap.add_argument("--ours", help="train_gpt to run first, from whose initial weights this one starts")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--text")
    ap.add_argument("--chars", type=int, default=0)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--eval-windows", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--write-losses", help="every step's loss (nats), one a line")
    ap.add_argument("--check", type=float, default=0.0,
                    help="with --ours: exit 1 unless the first 10 losses agree to this relative difference")
    args = ap.parse_args()
    if (args.init is None) == (args.ours is None):
        ap.error("give --init FILE or --ours BIN")
    try:
        import torch  # noqa: F401
    except ImportError:
        print("gpt_torch: skipped: python3-torch is not installed")
        return 77

    ours = None
    tmp = None
    if args.ours:
        tmp = tempfile.TemporaryDirectory()
        args.init = os.path.join(tmp.name, "init.safetensors")
        loss_file = os.path.join(tmp.name, "losses.txt")
        cmd = [args.ours, "--steps", str(args.steps), "--seed", str(args.seed), "--batch", str(args.batch),
               "--context", str(args.context), "--layers", str(args.layers), "--heads", str(args.heads),
               "--width", str(args.width), "--lr", repr(args.lr), "--warmup", str(args.warmup),
               "--eval-every", str(args.eval_every),
               "--eval-windows", str(args.eval_windows), "--init-out", args.init, "--write-losses", loss_file,
               "--csv", os.path.join(tmp.name, "loss.csv"), "--no-plot"]
        if args.text:
            cmd += ["--text", args.text]
        if args.chars:
            cmd += ["--chars", str(args.chars)]
        env = dict(os.environ, TD_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
        print("ours:", " ".join(cmd), flush=True)
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
        sys.stdout.write(out.stdout)
        if out.returncode == 77:
            print("gpt_torch: skipped: train_gpt has no text (apt-get install bible-kjv)")
            return 77
        if out.returncode != 0:
            print(f"gpt_torch: train_gpt failed ({out.returncode})")
            return 1
        with open(loss_file) as f:
            our_losses = [float(v) for v in f.read().split()]
        our_val = float(re.search(r"^final: .* validation ([0-9.]+) bpc", out.stdout, re.M).group(1))
        our_step = float(re.search(r"step median: ([0-9.]+) ms", out.stdout).group(1)) / 1e3
        ours = (our_losses, our_val, our_step)

    losses, val_bpc, step = run_reference(args)
    if args.write_losses:
        with open(args.write_losses, "w") as f:
            f.write("".join(f"{v:.9g}\n" for v in losses))
    if ours is not None:
        our_losses, our_val, our_step = ours
        k = min(10, len(losses))
        worst = max(abs(a - b) / abs(b) for a, b in zip(our_losses[:k], losses[:k]))
        print(f"first {k} losses (nats), ours / PyTorch:")
        for a, b in zip(our_losses[:k], losses[:k]):
            print(f"  {a:.7f}  {b:.7f}")
        print(f"largest relative difference over the first {k} steps: {worst:.2e}")
        print(f"validation after {args.steps} steps: ours {our_val:.4f} bpc, PyTorch {val_bpc:.4f} bpc, "
              f"relative difference {abs(our_val - val_bpc) / val_bpc * 100:.2f}%")
        print(f"step median on {args.threads} threads: ours {our_step * 1e3:.1f} ms, PyTorch {step * 1e3:.1f} ms, "
              f"ratio {our_step / step:.2f}x (target <= 0.6x)")
        print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))
        if args.check > 0 and not worst <= args.check:
            print(f"gpt_torch: the first losses differ by more than {args.check:g}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
