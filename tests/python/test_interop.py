"""Zero-copy interop: the buffer protocol, __array_interface__ and DLPack with NumPy and
PyTorch. Shared memory is shown by writing through one side and reading the other."""
import gc

import numpy as np
import pytest

try:
    import torch
except ImportError:  # the torch tests skip, saying why
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (apt-get install python3-torch)")


def test_buffer_protocol_shares_memory(td):
    t = td.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    m = memoryview(t)
    assert m.format == "f" and m.shape == (2, 3) and m.strides == (12, 4) and not m.readonly
    m[1, 2] = -1.0
    assert t.tolist()[1][2] == -1.0
    m.release()
    ti = td.tensor([[1, 2], [3, 4]], dtype="int32")
    assert memoryview(ti).format == "i"
    assert np.frombuffer(td.tensor([True, False], dtype="bool"), dtype=np.bool_).tolist() == [True, False]


def test_array_interface_shares_memory(td):
    t = td.tensor(np.zeros((3, 2), np.float32))
    ai = t.__array_interface__
    assert ai["shape"] == (3, 2) and ai["typestr"] == "<f4" and ai["version"] == 3
    a = np.asarray(t)
    assert a.__array_interface__["data"][0] == ai["data"][0]  # the same address, no copy
    a[2, 1] = 7.5
    assert t.tolist()[2][1] == 7.5
    assert t.numpy().__array_interface__["data"][0] == ai["data"][0]


def test_array_keeps_tensor_memory_alive(td, cpu):
    t = td.tensor(np.arange(1000, dtype=np.float32), device=cpu)  # cpu stays open: counts only the tensor
    a = np.asarray(t)
    base = td._live_objects()
    del t
    gc.collect()
    assert td._live_objects() == base  # still held by the array
    assert a[999] == 999.0
    del a
    gc.collect()
    assert td._live_objects() == base - 1


def test_numpy_from_dlpack_shares_memory(td, cpu):
    t = td.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device=cpu)
    assert t.__dlpack_device__() == (1, 0)
    x = np.from_dlpack(t)  # read-only in NumPy 1.24: write through the tensor's buffer instead
    np.asarray(t)[1, 1] = -5.0
    assert x[1, 1] == -5.0 and x.shape == (2, 3) and x.dtype == np.float32
    ti = td.tensor(np.arange(4, dtype=np.int32))
    xi = np.from_dlpack(ti)
    memoryview(ti)[0] = 11
    assert xi.dtype == np.int32 and xi[0] == 11
    base = td._live_objects()
    del t
    gc.collect()
    assert x[1, 1] == -5.0 and td._live_objects() == base  # the capsule's consumer keeps the tensor


def test_from_dlpack_numpy_shares_memory(td):
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    t = td.from_dlpack(a)
    a[0, 1] = 42.0
    assert t.tolist()[0][1] == 42.0 and t.shape == (3, 2)
    np.asarray(t)[2, 0] = -1.0
    assert a[2, 0] == -1.0
    i = np.arange(3, dtype=np.int32)
    ti = td.from_dlpack(i)
    i[2] = 9
    assert ti.tolist() == [0, 1, 9]
    del a
    gc.collect()
    assert t.tolist()[0][1] == 42.0  # the tensor keeps the array's memory
    assert td.float_sum(t).item() == pytest.approx(0 + 42 + 2 + 3 - 1 + 5)


def test_from_dlpack_rejects_what_it_cannot_share(td):
    with pytest.raises(BufferError):
        td.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2])  # strided
    with pytest.raises(BufferError):
        td.from_dlpack(np.arange(3, dtype=np.float64))  # no float64 tensors
    with pytest.raises(TypeError):
        td.from_dlpack(3)


def test_capsule_used_once(td):
    t = td.tensor([1.0, 2.0])
    cap = t.__dlpack__()
    u = td.from_dlpack(cap)
    assert u.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        td.from_dlpack(cap)  # consumed: renamed used_dltensor


@needs_torch
def test_torch_from_dlpack_shares_memory(td):
    t = td.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = torch.from_dlpack(t)
    y[0, 0] = 42.0
    assert t.tolist()[0][0] == 42.0
    z = torch.utils.dlpack.from_dlpack(t.__dlpack__())
    np.asarray(t)[1, 2] = -3.0
    assert z[1, 2].item() == -3.0 and y[1, 2].item() == -3.0
    del t
    gc.collect()
    assert y[0, 0].item() == 42.0


@needs_torch
def test_td_from_torch_shares_memory(td):
    z = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    w = td.from_dlpack(z)
    z[1, 3] = 99.0
    assert w.tolist()[1][3] == 99.0
    np.asarray(w)[0, 0] = -8.0
    assert z[0, 0].item() == -8.0
    zi = torch.tensor([5, 6, 7], dtype=torch.int32)
    wi = td.from_dlpack(zi)
    zi[0] = -1
    assert wi.tolist() == [-1, 6, 7]
    assert td.int_sum(wi).item() == 12
    del z
    gc.collect()
    assert w.tolist()[1][3] == 99.0
    with pytest.raises(BufferError):
        td.from_dlpack(torch.arange(6, dtype=torch.float32).reshape(2, 3).t())  # a transposed view


@needs_torch
def test_torch_round_trip(td):
    z = torch.linspace(-1, 1, 10)
    back = torch.from_dlpack(td.from_dlpack(z))
    back[3] = 123.0
    assert z[3].item() == 123.0


def vulkan_or_skip(td):
    if not any(d["backend"] == "vulkan" for d in td.devices()):
        pytest.skip("no Vulkan device in this build or on this machine (td.devices() lists none)")
    return td.device("vulkan:0")


def test_vulkan_tensors_copy_not_share(td):
    vk = vulkan_or_skip(td)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = td.tensor(x, device=vk)
    assert t.device == vk and t.device.backend == "vulkan"
    np.testing.assert_array_equal(t.numpy(), x)  # read back: a copy
    np.testing.assert_allclose(np.asarray(td.float_exp(t).to(td.device("cpu"))), np.exp(x), rtol=1e-5)
    with pytest.raises(BufferError):
        memoryview(t)
    with pytest.raises(BufferError):
        t.__dlpack__()
    with pytest.raises(AttributeError):
        t.__array_interface__
    with pytest.raises(td.BackendMismatchError):
        td.float_add(t, td.tensor(x))


def test_exports_of_a_parameter_survive_its_update(td, cpu):
    """A NumPy view or DLPack export of an autodiff leaf holds the value it saw: an optimizer
    step (td_tensor_assign) replaces the leaf's value without freeing memory still viewed."""
    ad = td.autodiff(cpu)
    w = td.tensor(np.arange(4096, dtype=np.float32), device=ad).require_grad()
    view = np.asarray(w)
    exported = np.from_dlpack(w)
    opt = td.sgd([w], 1.0)
    for _ in range(3):
        opt.step(td.float_sum(w).backward())  # w -= 1 each step: a new value each time
        filler = [td.tensor(np.full(4096, 7.0, np.float32)) for _ in range(4)]  # reuse freed blocks
    assert view[10] == 10.0 and exported[10] == 10.0  # the old value, alive and unchanged
    assert w.tolist()[10] == 7.0 and np.asarray(w)[10] == 7.0
    with pytest.raises(AttributeError):
        w.__array_interface__
    del filler
