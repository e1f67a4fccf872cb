#!/usr/bin/env python3
"""bench/bench_python.py: what a call costs from Python. A 1-element float add through the
tdispatch module (td.float_add and the + operator) against the same through PyTorch
(torch.add), on the CPU, timed in one run, alternating rounds so that load from other
processes falls on both; prints the median per-call time of each and their ratios.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [--calls N] [--rounds R]
"""
import argparse
import statistics
import sys
import time

import tdispatch as td


def per_call(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=20000, help="calls per round [20000]")
    p.add_argument("--rounds", type=int, default=9, help="rounds, alternating the contenders [9]")
    a = p.parse_args(argv)
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
