"""Autodiff from Python against hand-computed gradients; devices and reference counts;
the GIL is released while a kernel runs."""
import gc
import sys
import threading
import time

import numpy as np
import pytest


@pytest.mark.parametrize("checkpoint", ["none", "balanced"])
def test_gradient_of_a_small_expression(td, cpu, checkpoint):
    dev = td.autodiff(cpu, checkpoint=checkpoint)
    x = td.tensor([1.0, 2.0, 3.0], device=dev).require_grad()
    loss = td.float_sum(x * x * 3.0 + x)  # d/dx = 6x + 1
    grads = loss.backward()
    assert x.grad.tolist() == [7.0, 13.0, 19.0]
    assert grads[x].tolist() == [7.0, 13.0, 19.0]
    assert x.grad.device == cpu  # gradients live on the inner device


def test_gradient_through_matmul(td, cpu):
    dev = td.autodiff(cpu)
    w = td.tensor([[1.0, 2.0], [3.0, 4.0]], device=dev).require_grad()
    v = td.tensor([[1.0], [-1.0]], device=dev)
    loss = td.float_sum(td.float_tanh(w @ v))  # w @ v = [-1, -1]; d/dw[i][j] = (1 - tanh(-1)^2) v[j]
    loss.backward()
    d = 1 - np.tanh(-1.0) ** 2
    np.testing.assert_allclose(np.asarray(w.grad), [[d, -d], [d, -d]], rtol=1e-6)


def test_second_backward_without_retain_fails(td, cpu):
    dev = td.autodiff(cpu)
    x = td.tensor([2.0], device=dev).require_grad()
    y = td.float_mul(x, x)
    l1, l2 = td.float_sum(y), td.float_mean(y)
    l1.backward(retain_graph=True)
    l2.backward()
    assert x.grad.tolist() == [4.0]
    with pytest.raises(td.AutodiffError):
        l1.backward()


def test_devices_lists_the_cpu(td):
    ds = td.devices()
    assert any(d["backend"] == "cpu" for d in ds)
    assert all({"backend", "index", "name", "driver", "type", "memory_bytes", "software"} <= set(d) for d in ds)


def test_tensors_keep_their_device_alive(td):
    base = td._live_objects()
    dev = td.autodiff(td.device("cpu"))
    t = td.tensor([1.0, 2.0], device=dev)
    del dev
    gc.collect()
    assert td.float_sum(t).item() == 3.0
    assert repr(t.device) == "device('autodiff(cpu:0)')"
    del t
    gc.collect()
    assert td._live_objects() == base


def test_reference_counts(td, cpu):
    a, b = td.tensor([1.0, 2.0]), td.tensor([3.0, 4.0])
    ra, rb, rc = sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(cpu)
    base = td._live_objects()
    for _ in range(100):
        c = td.float_add(a, b)
        d = a + 1.0
        e = td.float_cat([a, b, c], 0)
        f = td.float_from_data(cpu, [1.0], [1])
        g = td.float_max_dim_with_indices(e, 0)
        h = td.float_into_data(e)
        try:
            td.float_add(a, td.tensor([1.0, 2.0, 3.0]))
        except td.ShapeError:
            pass
        del c, d, e, f, g, h
    assert (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(cpu)) == (ra, rb, rc)
    gc.collect()
    assert td._live_objects() == base


def test_gil_released_while_a_kernel_runs(td, cpu):
    n = 1400
    a = td.float_random(cpu, [n, n], "uniform", -1.0, 1.0, 1)
    spans = []

    def work():
        for _ in range(3):
            start = time.perf_counter()
            td.float_matmul(a, a)
            spans.append((start, time.perf_counter()))

    th = threading.Thread(target=work)
    ticks = []
    th.start()
    while th.is_alive():
        ticks.append(time.perf_counter())
    th.join()
    long_spans = [(s, e) for (s, e) in spans if e - s > 0.04]
    assert long_spans, "the kernels ran too fast to tell"
    # Ticks of this thread in the middle half of a matmul call: with the GIL held through the
    # call this thread runs at most one switch interval (5 ms) after the call begins, before
    # the worker takes the GIL back; released, this loop runs all along.
    inside = [t for t in ticks if any(s + (e - s) / 4 < t < e - (e - s) / 4 for (s, e) in long_spans)]
    assert len(inside) > 100, (len(inside), [e - s for (s, e) in spans])


def test_threads_share_tensors(td, cpu):
    a = td.tensor(np.ones((64, 64), np.float32))
    out = []

    def work():
        s = 0.0
        for _ in range(50):
            s += td.float_sum(td.float_matmul(a, a)).item()
        out.append(s)

    ths = [threading.Thread(target=work) for _ in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert out == [50 * 64 * 64 * 64.0] * 4


def test_gradient_on_vulkan(td):
    if not any(d["backend"] == "vulkan" for d in td.devices()):
        pytest.skip("no Vulkan device in this build or on this machine (td.devices() lists none)")
    vk = td.device("vulkan:0")
    dev = td.autodiff(vk)
    x = td.tensor([1.0, 2.0, 3.0], device=dev).require_grad()
    td.float_sum(x * x * 3.0 + x).backward()
    assert x.grad.device == vk
    assert x.grad.tolist() == [7.0, 13.0, 19.0]
