"""float_attention's value and gradients on the CPU (its blocked kernel and fused backward
ops) against PyTorch's autograd in float64 on the textbook formula softmax(q k^T / sqrt(E) +
causal mask) v (torch 1.13 has no scaled_dot_product_attention). Shapes cross the kernel's
64-row blocks, L != S, causal. tests/runtime/test_attention.c holds the kernel against the
decomposition and a naive reference in C."""
import numpy as np
import pytest

try:
    import torch
except ImportError:  # the tests skip, saying why
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (apt-get install python3-torch)")

# B, H, L, S, E, Ev, causal
SHAPES = [
    (1, 1, 3, 3, 2, 2, 0),
    (2, 3, 70, 70, 16, 8, 1),
    (1, 2, 65, 130, 5, 7, 1),   # L < S: causal rows see keys 0..i
    (1, 2, 150, 40, 8, 3, 1),   # L > S: rows past S see every key
    (2, 1, 129, 67, 32, 32, 0),
]


def torch_reference(q, k, v, w, causal):
    tq, tk, tv = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (q, k, v))
    s = tq @ tk.transpose(-1, -2) / np.sqrt(q.shape[-1])
    if causal:
        L, S = q.shape[2], k.shape[2]
        mask = torch.ones(L, S, dtype=torch.bool).triu(1)
        s = s.masked_fill(mask, float("-inf"))
    out = torch.softmax(s, -1) @ tv
    (out * torch.tensor(w, dtype=torch.float64)).sum().backward()
    return out.detach().numpy(), tq.grad.numpy(), tk.grad.numpy(), tv.grad.numpy()


@needs_torch
@pytest.mark.parametrize("shape", SHAPES)
def test_attention_matches_torch(td, cpu, shape):
    B, H, L, S, E, Ev, causal = shape
    rng = np.random.default_rng(L * 1000 + S)
    q = rng.standard_normal((B, H, L, E)).astype(np.float32)
    k = rng.standard_normal((B, H, S, E)).astype(np.float32)
    v = rng.standard_normal((B, H, S, Ev)).astype(np.float32)
    w = rng.standard_normal((B, H, L, Ev)).astype(np.float32)  # loss = sum(out * w): grad = w
    dev = td.autodiff(cpu)
    tq, tk, tv = (td.tensor(x, device=dev).require_grad() for x in (q, k, v))
    out = td.float_attention(tq, tk, tv, causal)
    td.float_sum(out * td.tensor(w, device=dev)).backward()
    want = torch_reference(q, k, v, w, causal)
    got = [np.asarray(out.detach()), np.asarray(tq.grad), np.asarray(tk.grad), np.asarray(tv.grad)]
    for name, g, r in zip(("out", "dq", "dk", "dv"), got, want):
        assert g.shape == r.shape, name
        np.testing.assert_allclose(g, r, rtol=2e-4, atol=2e-5, err_msg=name)
