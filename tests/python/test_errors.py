"""Errors: td.Error subclasses per td_status, with the library's message; no bad call
crashes the interpreter."""
import pytest


def test_hierarchy(td):
    assert issubclass(td.ShapeError, td.Error) and issubclass(td.ShapeError, ValueError)
    assert issubclass(td.OutOfMemoryError, MemoryError)
    assert issubclass(td.RangeError, IndexError)
    assert issubclass(td.KindError, TypeError)
    assert issubclass(td.UnsupportedError, NotImplementedError)
    assert issubclass(td.Error, Exception)


def test_shape_error_carries_message(td):
    with pytest.raises(td.ShapeError) as e:
        td.float_add(td.tensor([1.0, 2.0, 3.0]), td.tensor([1.0, 2.0]))
    assert "float_add" in str(e.value) and "broadcast" in str(e.value)
    assert e.value.status == "TD_E_SHAPE"
    with pytest.raises(ValueError):
        td.float_matmul(td.tensor([[1.0, 2.0]]), td.tensor([[1.0, 2.0]]))


def test_kind_range_invalid(td, cpu):
    with pytest.raises(td.KindError):
        td.float_exp(td.tensor([1, 2]))  # an int tensor to a float op
    with pytest.raises(td.RangeError):
        td.float_sum_dim(td.tensor([1.0, 2.0]), 3)
    with pytest.raises(td.Error):
        td.int_remainder(td.tensor([1, 2]), td.tensor([0, 1]))  # a zero divisor
    with pytest.raises(td.ShapeError):
        td.float_zeros(cpu, [-1])


def test_out_of_memory_is_memory_error(td, cpu):
    with pytest.raises(MemoryError) as e:
        td.float_zeros(cpu, [1 << 40])  # 4 TiB: more than one CPU tensor may hold, nothing allocated
    assert isinstance(e.value, td.Error)


def test_bad_arguments_raise(td, cpu):
    t = td.tensor([1.0])
    for call in (lambda: td.float_add(t), lambda: td.float_add(t, None), lambda: td.float_add(t, [1.0]),
                 lambda: td.float_add(t, t, t), lambda: td.float_add(t, c=t), lambda: td.float_zeros(None, [1]),
                 lambda: td.float_zeros(cpu, "ab"), lambda: td.float_zeros(cpu, [1.5]),
                 lambda: td.float_from_data(cpu, [1.0, 2.0], [3]), lambda: td.float_cat(3, 0),
                 lambda: td.float_cat([t, 3], 0), lambda: td.float_random(cpu, [2], "cauchy", 0.0, 1.0, 1),
                 lambda: td.float_random(cpu, [2], "uniform", 0.0, 1.0, -1), lambda: td.int_full(cpu, [1], 1 << 40),
                 lambda: td.tensor("text"), lambda: td.tensor([1, 2], dtype="float64"),
                 lambda: td.device("nope"), lambda: td.device("cpu:x"), lambda: td.autodiff(cpu, checkpoint="all"),
                 lambda: t + "a", lambda: -td.tensor([True]), lambda: td.grads if False else t.backward()):
        with pytest.raises((TypeError, ValueError, OverflowError, td.Error)):
            call()


def test_no_device(td):
    with pytest.raises(td.Error):
        td.device("cpu:5")
    with pytest.raises((td.DeviceError, td.Error)):
        td.device("vulkan:99")


def test_backend_mismatch(td, cpu):
    ad = td.autodiff(cpu)
    a = td.tensor([1.0], device=ad)
    with pytest.raises(td.Error):
        td.float_add(a, td.tensor([1.0]))


def test_every_op_survives_wrong_arguments(td, cpu, spec_ops):
    """Every op called with no arguments, with None, and with a tensor of each dtype in every
    position either runs or raises an exception: nothing crashes the interpreter."""
    import inspect
    samples = [td.tensor([[1.0, -2.0], [0.5, 3.0]]), td.tensor([[1, 0], [2, 1]], dtype="int32"),
               td.tensor([[True, False], [False, True]]), td.tensor(2.0), cpu, None, 1, -1, [0, 1], "x"]
    ok = failed = 0
    for name in spec_ops:
        fn = getattr(td, name)
        n = len(inspect.signature(fn).parameters)
        with pytest.raises(TypeError):
            fn()
        for s in samples:
            try:
                fn(*([s] * n))
                ok += 1
            except (TypeError, ValueError, OverflowError, IndexError, NotImplementedError, MemoryError,
                    RuntimeError, td.Error):
                failed += 1
    assert ok > 50 and failed > 1000
