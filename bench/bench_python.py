#!/usr/bin/env python3
"""bench/bench_python.py: what a call costs from Python. A 1-element float add through the
tdispatch module (td.float_add and the + operator) against the same through PyTorch
(torch.add), on the CPU, timed in one run, alternating rounds so that load from other
processes falls on both; prints the median per-call time of each and their ratios.
With --mlp-c PATH (the C examples/train_mlp, e.g. build/examples/train_mlp) it also times
the MLP training epoch from Python, the same ops in the same order as the C program's
(forward, the logsumexp loss, argmax and read-back for the accuracy, backward, SGD with
momentum), against that program's own "us per epoch", each a fresh process timed from after
its setup, runs alternating.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [--calls N] [--rounds R] [--mlp-c PATH]
"""
import argparse
import math
import re
import statistics
import subprocess
import sys
import time

import tdispatch as td


def per_call(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def python_mlp_epoch_us(epochs, hidden=64, lr=0.1, momentum=0.9, warmup=50, seed=1):
    """train_mlp.c's training loop from Python (its ops, in its order); us per epoch."""
    import numpy as np
    cpu = td.device("cpu")
    ad = td.autodiff(cpu)
    n = 400
    rng = np.random.default_rng(seed)
    t = np.repeat(np.arange(200) / 199.0, 2)
    c = np.tile([0, 1], 200)
    theta = 3 * math.pi * t + c * math.pi
    r = 0.15 + 0.85 * t
    x_np = np.stack([r * np.cos(theta), r * np.sin(theta)], 1).astype(np.float32)
    x_np += (0.04 * (rng.random((n, 2)) - 0.5)).astype(np.float32)
    x = td.tensor(x_np, device=ad)
    onehot = td.tensor(np.eye(2, dtype=np.float32)[c], device=ad)
    w1 = td.float_random(cpu, [2, hidden], "normal", 0.0, 3.0, seed * 4 + 1).to(ad).require_grad()
    b1 = td.float_random(cpu, [1, hidden], "uniform", -1.0, 1.0, seed * 4 + 2).to(ad).require_grad()
    w2 = td.float_random(cpu, [hidden, 2], "normal", 0.0, math.sqrt(1.0 / hidden), seed * 4 + 3).to(ad).require_grad()
    b2 = td.float_zeros(ad, [1, 2]).require_grad()
    opt = td.sgd([w1, b1, w2, b2], lr, momentum=momentum)
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        opt.set_lr(lr * min(1.0, epoch / warmup))
        logits = td.float_add(td.float_matmul(td.float_relu(td.float_add(td.float_matmul(x, w1), b1)), w2), b2)
        m = td.float_max_dim(logits, 1).detach()
        shifted = td.float_sub(logits, m)
        lse = td.float_log(td.float_sum_dim(td.float_exp(shifted), 1))
        loss = td.float_mul_scalar(td.float_sum(td.float_mul(td.float_sub(shifted, lse), onehot)), -1.0 / n)
        loss.item()
        td.int_into_data(td.float_argmax(logits, 1))
        opt.step(loss.backward())
    return (time.perf_counter() - start) * 1e6 / epochs


def c_mlp_epoch_us(path, epochs):
    # Its exit status says whether it reached its accuracy target; only the time is read here.
    out = subprocess.run([path, "--epochs", str(epochs), "--no-plot", "--csv", "/dev/null"],
                         capture_output=True, text=True).stdout
    return float(re.search(r"\(([0-9.]+) us per epoch\)", out).group(1))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=20000, help="calls per round [20000]")
    p.add_argument("--rounds", type=int, default=9, help="rounds, alternating the contenders [9]")
    p.add_argument("--mlp-c", metavar="PATH", help="the C train_mlp: also compare the MLP epoch from Python with it")
    p.add_argument("--mlp-epochs", type=int, default=1000, help="epochs per MLP run [1000]")
    p.add_argument("--mlp-child", action="store_true", help=argparse.SUPPRESS)  # one Python MLP run, then exit
    a = p.parse_args(argv)
    if a.mlp_child:
        print(f"{python_mlp_epoch_us(a.mlp_epochs):.3f}")
        return 0
    try:
        import torch
    except ImportError:
        print("bench_python: PyTorch is not installed (apt-get install python3-torch): nothing to compare with",
              file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    cpu = td.device("cpu")
    x, y = td.tensor([1.5], device=cpu), td.tensor([2.5], device=cpu)
    tx, ty = torch.tensor([1.5]), torch.tensor([2.5])
    contenders = {
        "td.float_add(x, y)": lambda: td.float_add(x, y),
        "x + y (td.Tensor)": lambda: x + y,
        "torch.add(x, y)": lambda: torch.add(tx, ty),
        "x + y (torch.Tensor)": lambda: tx + ty,
    }
    for fn in contenders.values():  # warm up
        per_call(fn, 1000)
    times = {k: [] for k in contenders}
    for _ in range(a.rounds):
        for k, fn in contenders.items():
            times[k].append(per_call(fn, a.calls))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"1-element float add from Python, median of {a.rounds} rounds of {a.calls} calls (torch {torch.__version__},"
          f" 1 thread):")
    for k, v in med.items():
        print(f"  {k:24s} {v * 1e9:8.0f} ns/call")
    print(f"ratio td.float_add / torch.add: {med['td.float_add(x, y)'] / med['torch.add(x, y)']:.2f}")
    print(f"ratio td + / torch +:           {med['x + y (td.Tensor)'] / med['x + y (torch.Tensor)']:.2f}")
    if a.mlp_c:
        py, c = [], []
        for _ in range(5):
            c.append(c_mlp_epoch_us(a.mlp_c, a.mlp_epochs))
            # A fresh process as the C program is, timed from after its setup as the C one.
            py.append(float(subprocess.run([sys.executable, __file__, "--mlp-child", "--mlp-epochs",
                                            str(a.mlp_epochs)], check=True, capture_output=True,
                                           text=True).stdout))
        print(f"MLP epoch (train_mlp.c's ops, {a.mlp_epochs} epochs, median of 5 alternating runs): "
              f"Python {statistics.median(py):.0f} us, C {statistics.median(c):.0f} us; "
              f"ratio Python / C: {statistics.median(py) / statistics.median(c):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
