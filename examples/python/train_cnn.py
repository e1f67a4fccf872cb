#!/usr/bin/env python3
"""examples/python/train_cnn.py: the C train_cnn's CNN on Fashion-MNIST from Python.

Model and recipe as examples/train_cnn.c: 1x28x28 -> conv2d 1->8 3x3 padding 1 -> relu ->
max_pool 2 -> conv2d 8->16 3x3 padding 1 -> relu -> max_pool 2 -> flatten (784) -> linear
784->10 -> mean cross-entropy; He-normal convs, linear weights uniform in +-1/sqrt(784),
zero biases; SGD lr 0.05, momentum 0.9, batch 64, one shuffle per epoch from the seed.
Prints the test accuracy after each epoch (the C program ends its first epoch around
85% +- 1) and the median step time. Reads Debian's dataset-fashion-mnist; exits 77 when
the files are missing. Exits 1 when --min-accuracy is given and not reached.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_cnn.py [--device cpu] [--epochs 1] [--limit N]
"""
import argparse
import gzip
import math
import os
import statistics
import sys
import time

import numpy as np

import tdispatch as td

DATA = "/usr/share/datasets/fashion-mnist"


def idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def load(data, kind):
    images = idx(os.path.join(data, f"{kind}-images-idx3-ubyte.gz"), 16).reshape(-1, 1, 28, 28)
    labels = idx(os.path.join(data, f"{kind}-labels-idx1-ubyte.gz"), 8).astype(np.int32)
    return (images.astype(np.float32) / 255.0), labels


def forward(p, x):
    w1, b1, w2, b2, w3, b3 = p
    h = td.float_relu(td.float_conv2d(x, w1, b1, (1, 1), (1, 1), (1, 1), 1))
    h = td.float_max_pool2d(h, (2, 2), (2, 2), (0, 0), (1, 1))
    h = td.float_relu(td.float_conv2d(h, w2, b2, (1, 1), (1, 1), (1, 1), 1))
    h = td.float_max_pool2d(h, (2, 2), (2, 2), (0, 0), (1, 1))
    return td.float_linear(td.float_reshape(h, (h.shape[0], 784)), w3, b3)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", help="backend[:index] under autodiff [cpu]")
    ap.add_argument("--epochs", type=int, default=1, help="epochs [1]")
    ap.add_argument("--limit", type=int, default=0, help="at most N steps per epoch and N * 64 test images [all]")
    ap.add_argument("--seed", type=int, default=1, help="initialization and shuffle seed [1]")
    ap.add_argument("--data", default=DATA, help=f"the IDX files' folder [{DATA}]")
    ap.add_argument("--min-accuracy", type=float, default=0.0, help="exit 1 below this final test accuracy [0]")
    a = ap.parse_args(argv)
    if not os.path.exists(os.path.join(a.data, "train-images-idx3-ubyte.gz")):
        print(f"train_cnn.py: no Fashion-MNIST under {a.data} (apt-get install dataset-fashion-mnist)",
              file=sys.stderr)
        return 77
    train_x, train_y = load(a.data, "train")
    test_x, test_y = load(a.data, "t10k")
    inner = td.device(a.device)
    dev = td.autodiff(inner)
    s = a.seed
    p = [td.float_random(dev, [8, 1, 3, 3], "normal", 0.0, math.sqrt(2 / 9), s * 8 + 1),
         td.float_zeros(dev, [8]),
         td.float_random(dev, [16, 8, 3, 3], "normal", 0.0, math.sqrt(2 / 72), s * 8 + 2),
         td.float_zeros(dev, [16]),
         td.float_random(dev, [784, 10], "uniform", -1 / 28, 1 / 28, s * 8 + 3),
         td.float_zeros(dev, [10])]
    for t in p:
        t.require_grad()
    opt = td.sgd(p, 0.05, momentum=0.9)
    rng = np.random.default_rng(a.seed)
    batch = 64
    steps = len(train_x) // batch
    if a.limit:
        steps = min(steps, a.limit)
    ntest = min(len(test_x), a.limit * batch) if a.limit else len(test_x)
    acc = 0.0
    for epoch in range(1, a.epochs + 1):
        order = rng.permutation(len(train_x))
        times, losses = [], []
        t_epoch = time.perf_counter()
        for step in range(steps):
            idx_b = order[step * batch:(step + 1) * batch]
            t0 = time.perf_counter()
            x = td.tensor(train_x[idx_b], device=dev)
            y = td.tensor(train_y[idx_b], device=dev)
            loss = td.float_cross_entropy(forward(p, x), y)
            opt.step(loss.backward())
            losses.append(loss.item())
            times.append(time.perf_counter() - t0)
            if (step + 1) % 200 == 0:
                print(f"epoch {epoch} step {step + 1}/{steps}: running loss {np.mean(losses[-200:]):.4f}")
        values = [t.value() for t in p]
        correct = 0
        for first in range(0, ntest, 1000):
            xb = td.tensor(test_x[first:first + 1000][:ntest - first], device=inner)
            pred = np.asarray(td.float_argmax(forward(values, xb), 1)).reshape(-1)
            correct += int((pred == test_y[first:first + len(pred)]).sum())
        acc = correct / ntest
        print(f"epoch {epoch}: test accuracy: {100 * acc:.2f}% ({ntest} images), {time.perf_counter() - t_epoch:.1f} s")
        print(f"step median: {1000 * statistics.median(times):.3f} ms")
    if acc < a.min_accuracy:
        print(f"train_cnn.py: test accuracy {acc:.4f} below {a.min_accuracy}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
