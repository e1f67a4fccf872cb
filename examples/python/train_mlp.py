#!/usr/bin/env python3
"""examples/python/train_mlp.py: the C train_mlp's model and task from Python.

A 2-layer MLP, logits = relu(x W1 + b1) W2 + b2, trained full-batch with SGD and heavy-ball
momentum (td.sgd, the learning rate warming up linearly) on two interleaved spirals of 400
points, on an autodiff device over the chosen backend. The spirals and initialization
follow examples/train_mlp.c (the same formulas; the noise comes from NumPy here, so the
points are not bit-identical). Exits 1 when the final training accuracy is below 95%, as
the C program does.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_mlp.py [--device cpu] [--epochs 1000]
"""
import argparse
import math
import sys
import time

import numpy as np

import tdispatch as td

CLASSES, PER_CLASS = 2, 200


def spirals(seed):
    rng = np.random.default_rng(seed)
    x = np.zeros((CLASSES * PER_CLASS, 2), np.float32)
    labels = np.zeros(CLASSES * PER_CLASS, np.int32)
    for c in range(CLASSES):
        t = np.arange(PER_CLASS) / (PER_CLASS - 1)
        r = 0.15 + 0.85 * t
        theta = 3 * math.pi * t + c * math.pi
        k = slice(c * PER_CLASS, (c + 1) * PER_CLASS)
        x[k, 0] = r * np.cos(theta) + 0.04 * (rng.random(PER_CLASS) - 0.5)
        x[k, 1] = r * np.sin(theta) + 0.04 * (rng.random(PER_CLASS) - 0.5)
        labels[k] = c
    return x, labels


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu", help="backend[:index] under autodiff [cpu]")
    p.add_argument("--epochs", type=int, default=1000, help="full-batch steps [1000]")
    p.add_argument("--hidden", type=int, default=64, help="hidden units [64]")
    p.add_argument("--lr", type=float, default=0.1, help="learning rate after the warmup [0.1]")
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum [0.9]")
    p.add_argument("--warmup", type=int, default=50, help="epochs of linear learning-rate warmup [50]")
    p.add_argument("--seed", type=int, default=1, help="data and initialization seed [1]")
    p.add_argument("--strategy", default="none", choices=["none", "balanced"], help="checkpointing [none]")
    a = p.parse_args(argv)

    inner = td.device(a.device)
    dev = td.autodiff(inner, checkpoint=a.strategy)
    x_np, labels = spirals(a.seed)
    x = td.tensor(x_np, device=dev)
    targets = td.tensor(labels, device=dev)

    h, s = a.hidden, a.seed
    params = [
        td.float_random(inner, [2, h], "normal", 0.0, 3.0, s * 4 + 1),
        td.float_random(inner, [1, h], "uniform", -1.0, 1.0, s * 4 + 2),
        td.float_random(inner, [h, CLASSES], "normal", 0.0, math.sqrt(1.0 / h), s * 4 + 3),
        td.float_zeros(inner, [1, CLASSES]),
    ]
    w1, b1, w2, b2 = [v.to(dev).require_grad() for v in params]
    opt = td.sgd([w1, b1, w2, b2], a.lr, momentum=a.momentum)

    start = time.perf_counter()
    acc = 0.0
    for epoch in range(1, a.epochs + 1):
        lr = a.lr * min(1.0, epoch / a.warmup) if a.warmup > 0 else a.lr
        opt.set_lr(lr)
        logits = td.float_relu(x @ w1 + b1) @ w2 + b2
        loss = td.float_cross_entropy(logits, targets)
        pred = np.asarray(td.float_argmax(logits, 1).value()).reshape(-1)
        acc = float((pred == labels).mean())
        opt.step(loss.backward())
        if epoch == 1 or epoch % 100 == 0 or epoch == a.epochs:
            print(f"epoch {epoch:5d}  loss {loss.item():.5f}  accuracy {acc:.4f}  lr {lr:.4f}")
    took = time.perf_counter() - start
    print(f"trained {a.epochs} epochs on autodiff({a.device}) in {took:.2f} s; final training accuracy {acc:.4f}")
    if acc < 0.95:
        print("train_mlp.py: the final training accuracy is below 95%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
