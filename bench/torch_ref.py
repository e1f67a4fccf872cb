#!/usr/bin/python3
"""PyTorch's time for the training steps the C benches time, printed for them to read.

  --model=cnn       bench/cnn.c's step: batch 64, 1x28x28; conv 1->8 (3x3, pad 1), relu,
                    max-pool 2x2, conv 8->16 (3x3, pad 1), relu, max-pool 2x2, linear
                    784->10; softmax cross-entropy against one-hot targets (mean over the
                    batch); backward; SGD lr 0.01 momentum 0.9; the loss read back.
  --model=mlp       bench/autodiff.c's MLP step "+ SGD update": batch 64, 64->32 (relu)
                    ->10 as matmul + add (biases [1, n]), MSE loss (mean), backward, SGD
                    lr 0.01 without momentum.
  --model=mlp_grad  the same MLP step without the update (forward + backward + grads).
  --model=matmul_bf16, matmul_f32
                    bench/bench_dtypes.c's matmul: torch.matmul of two 1024 x 1024 random
                    tensors of that dtype (bf16 result for bf16, as the C side's).

Where they differ from the C benches: the cross-entropy is F.cross_entropy on class indices
(what a PyTorch user writes; the C bench spells out max, sub, exp, sum, log, mul by the
one-hot, sum, scale: the same value); nn.Linear keeps its weight as [out, in] (the C side
multiplies by [in, out]: the same products); gradients are reset with zero_grad(set_to_none)
where the C side gets fresh gradients from each backward; the MLP's update is torch.optim.SGD
in place where the C bench makes new leaves from the updated values.

Prints one line per model:
  torch_ref <model> <threads> step_ms <median> <min> <max>
(medians over rounds of the mean step time of each round), after a line naming the torch
version and thread count. Inputs are random (seeded); times only, values are not compared.
"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64


def cnn_step_fn():
    torch.manual_seed(1)
    net = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(784, 10))
    x = torch.rand(BATCH, 1, 28, 28)
    y = torch.arange(BATCH) % 10  # the C bench's one-hot rows: class i % 10
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def mlp_step_fn(update):
    torch.manual_seed(2)
    x = torch.randn(BATCH, 64)
    target = torch.rand(BATCH, 10)
    w1 = (torch.randn(64, 32) * 0.1).requires_grad_()
    b1 = (torch.randn(1, 32) * 0.1).requires_grad_()
    w2 = (torch.randn(32, 10) * 0.1).requires_grad_()
    b2 = (torch.randn(1, 10) * 0.1).requires_grad_()
    params = [w1, b1, w2, b2]
    opt = torch.optim.SGD(params, lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        h = torch.relu(torch.matmul(x, w1) + b1)
        out = torch.matmul(h, w2) + b2
        d = out - target
        loss = (d * d).sum() * (1.0 / (BATCH * 10))
        loss.backward()
        if update:
            opt.step()
        return loss.item()
    return step


def matmul_step_fn(dtype):
    torch.manual_seed(3)
    a = torch.rand(1024, 1024).to(dtype)
    b = torch.rand(1024, 1024).to(dtype)

    def step():
        return torch.matmul(a, b)
    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["cnn", "mlp", "mlp_grad", "matmul_bf16", "matmul_f32"], required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    if a.rounds < 1 or a.iters < 1 or a.threads < 1:
        ap.error("--rounds, --iters and --threads must be positive")
    torch.set_num_threads(a.threads)
    if a.model == "cnn":
        step = cnn_step_fn()
    elif a.model.startswith("matmul_"):
        step = matmul_step_fn(torch.bfloat16 if a.model == "matmul_bf16" else torch.float32)
    else:
        step = mlp_step_fn(a.model == "mlp")
    for _ in range(max(2, a.iters // 5)):  # warm up
        step()
    per = []
    for _ in range(a.rounds):
        t0 = time.perf_counter()
        for _ in range(a.iters):
            step()
        per.append((time.perf_counter() - t0) * 1e3 / a.iters)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"torch_ref {a.model} {torch.get_num_threads()} step_ms "
          f"{statistics.median(per):.4f} {min(per):.4f} {max(per):.4f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
