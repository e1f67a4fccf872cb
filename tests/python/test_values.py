"""Values of a representative set of generated op functions against NumPy on generated
inputs (NumPy computes the references; float32 tolerances)."""
import numpy as np
import pytest

RNG = np.random.default_rng(24)


def rand(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def close(got, want, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


UNARY = {
    "float_neg": np.negative, "float_abs": np.abs, "float_exp": np.exp, "float_sin": np.sin,
    "float_cos": np.cos, "float_tanh": np.tanh, "float_floor": np.floor, "float_ceil": np.ceil,
    "float_square": np.square, "float_sign": np.sign, "float_trunc": np.trunc,
    "float_relu": lambda x: np.maximum(x, 0), "float_sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "float_atan": np.arctan, "float_sinh": np.sinh, "float_cosh": np.cosh,
}
POSITIVE = {"float_log": np.log, "float_sqrt": np.sqrt, "float_recip": np.reciprocal, "float_log1p": np.log1p}
BINARY = {
    "float_add": np.add, "float_sub": np.subtract, "float_mul": np.multiply, "float_div": np.divide,
    "float_maximum": np.maximum, "float_minimum": np.minimum, "float_atan2": np.arctan2, "float_hypot": np.hypot,
}
COMPARE = {
    "float_equal": np.equal, "float_not_equal": np.not_equal, "float_greater": np.greater,
    "float_lower": np.less, "float_greater_equal": np.greater_equal, "float_lower_equal": np.less_equal,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(td, cpu, name):
    x = rand(3, 5)
    close(getattr(td, name)(td.tensor(x, device=cpu)), UNARY[name](x.astype(np.float64)), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_unary_positive(td, cpu, name):
    x = rand(4, 3, lo=0.1, hi=5.0)
    close(getattr(td, name)(td.tensor(x)), POSITIVE[name](x.astype(np.float64)), rtol=2e-6)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasting(td, cpu, name):
    a, b = rand(2, 3, 4), rand(3, 1, lo=0.5, hi=2.0)
    close(getattr(td, name)(td.tensor(a), td.tensor(b)), BINARY[name](a.astype(np.float64), b))


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons(td, name):
    a = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    b = np.array([3, 2, 1], np.float32)
    got = getattr(td, name)(td.tensor(a), td.tensor(b))
    assert got.dtype == "bool"
    assert got.tolist() == COMPARE[name](a, b).tolist()


def test_reductions(td):
    x = rand(4, 6)
    t = td.tensor(x)
    close(td.float_sum(t), x.sum(dtype=np.float64), rtol=1e-5)
    close(td.float_mean(t), x.mean(dtype=np.float64), rtol=1e-5)
    close(td.float_sum_dim(t, 1), x.sum(axis=1, keepdims=True))
    close(td.float_mean_dim(t, -2), x.mean(axis=0, keepdims=True))
    close(td.float_max_dim_values(t, 1), x.max(axis=1, keepdims=True))
    assert td.float_argmax(t, 1).tolist() == x.argmax(axis=1)[:, None].tolist()
    close(td.float_cumsum(t, 1), np.cumsum(x, axis=1), rtol=1e-5)
    close(td.float_softmax(t, 1), np.exp(x) / np.exp(x).sum(axis=1, keepdims=True))


def test_matmul_and_linear(td):
    a, b, bias = rand(5, 7), rand(7, 3), rand(3)
    close(td.float_matmul(td.tensor(a), td.tensor(b)), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    close(td.tensor(a) @ td.tensor(b), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    close(td.float_linear(td.tensor(a), td.tensor(b), td.tensor(bias)), a.astype(np.float64) @ b + bias,
          rtol=1e-5, atol=1e-5)
    batch = rand(2, 4, 7)
    close(td.float_matmul(td.tensor(batch), td.tensor(b)), batch.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_layout(td, cpu):
    x = rand(2, 3, 4)
    t = td.tensor(x)
    close(td.float_reshape(t, [4, -1]), x.reshape(4, -1))
    close(td.float_permute(t, [2, 0, 1]), x.transpose(2, 0, 1))
    close(td.float_transpose(t), np.swapaxes(x, -1, -2))
    close(td.float_swap_dims(t, 0, 2), np.swapaxes(x, 0, 2))
    close(td.float_slice(t, [1, 0], [2, -1]), x[1:2, 0:-1])
    close(td.float_cat([t, t], 1), np.concatenate([x, x], axis=1))
    close(td.float_stack((t, t, t), 0), np.stack([x, x, x]))
    close(td.float_flip(t, [0, 2]), x[::-1, :, ::-1])
    close(td.float_pad(t, [1, 2], 0.5), np.pad(x, [(0, 0), (0, 0), (1, 2)], constant_values=0.5))


def test_creation(td, cpu):
    assert td.float_zeros(cpu, [2, 3]).tolist() == np.zeros((2, 3)).tolist()
    assert td.float_full(cpu, (2,), 1.5).tolist() == [1.5, 1.5]
    assert td.int_arange(cpu, 2, 11, 3).tolist() == list(range(2, 11, 3))
    assert td.float_from_data(cpu, [1, 2, 3, 4], [2, 2]).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    r = td.float_random(cpu, [1000], "uniform", -1.0, 1.0, 7)
    v = np.asarray(r)
    assert v.min() >= -1.0 and v.max() < 1.0 and abs(v.mean()) < 0.1
    assert td.float_random(cpu, [5], "normal", 0.0, 1.0, 7).tolist() == \
        td.float_random(cpu, [5], 1, 0.0, 1.0, 7).tolist()  # an enum by name or by value


def test_int_and_bool_ops(td):
    a = np.array([[7, -7, 5], [0, 9, -3]], np.int32)
    b = np.array([2, 3, -4], np.int32)
    ta, tb = td.tensor(a), td.tensor(b)
    assert ta.dtype == "int32"
    assert td.int_add(ta, tb).tolist() == (a + b).tolist()
    assert (ta * tb).tolist() == (a * b).tolist()
    assert td.int_remainder(ta, tb).tolist() == np.remainder(a, b).tolist()  # sign of the divisor, as NumPy
    assert td.int_matmul(ta, td.tensor(a.T.copy())).tolist() == (a @ a.T).tolist()
    m = td.int_greater(ta, tb)
    assert td.bool_not(m).tolist() == (~(a > b)).tolist()
    assert td.bool_and(m, td.int_lower(ta, tb)).tolist() == np.zeros((2, 3), bool).tolist()
    assert td.int_into_float(ta).tolist() == a.astype(np.float32).tolist()


def test_tuples(td):
    x = rand(3, 5)
    vals, idx = td.float_max_dim_with_indices(td.tensor(x), 1)
    close(vals, x.max(axis=1, keepdims=True))
    assert idx.tolist() == x.argmax(axis=1)[:, None].tolist()
    s, order = td.float_sort_with_indices(td.tensor(x), 1, 0)
    close(s, np.sort(x, axis=1))
    assert order.tolist() == np.argsort(x, axis=1, kind="stable").tolist()


def test_conv2d_against_direct_sum(td):
    x, w, b = rand(1, 2, 5, 5), rand(3, 2, 3, 3), rand(3)
    got = np.asarray(td.float_conv2d(td.tensor(x), td.tensor(w), td.tensor(b), stride=(1, 1), padding=(1, 1),
                                     dilation=(1, 1), groups=1))
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
    want = np.zeros((1, 3, 5, 5))
    for o in range(3):
        for i in range(5):
            for j in range(5):
                want[0, o, i, j] = (xp[0, :, i:i + 3, j:j + 3] * w[o]).sum() + b[o]
    close(got, want, rtol=1e-4, atol=1e-4)


def test_operators_with_scalars(td):
    x = rand(2, 2, lo=0.5, hi=2.0)
    t = td.tensor(x)
    close(t + 1, x + 1)
    close(2 * t, 2 * x)
    close(1 - t, 1 - x)
    close(t / 4, x / 4)
    close(3 / t, 3 / x, rtol=1e-6)
    close(t ** 2, x ** 2, rtol=1e-6)
    close(t ** td.tensor(x), x ** x, rtol=1e-5)
    close(-t, -x)
    assert (t > 1.0).tolist() == (x > 1.0).tolist()
    assert (t == t).tolist() == [[True, True], [True, True]]
    assert len({t: 1, td.tensor(x): 2}) == 2  # hashable by identity, as torch.Tensor


def test_repr_is_numpys_layout(td):
    small = np.array([[1.5, -2.0, 3.25], [0.0, 1e-3, 7.0]], np.float32)
    big = np.arange(3000, dtype=np.float32).reshape(30, 100)
    for x in (small, big):
        text = repr(td.tensor(x))
        head, values = text.split("\n", 1)
        assert head.startswith("tensor shape=[")
        assert values == np.array2string(x)
    assert "..." in repr(td.tensor(big))


def test_item_tolist_len(td):
    t = td.tensor([[1, 2], [3, 4]], dtype="float32")
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert len(t) == 2 and t.ndim == 2 and t.numel() == 4 and t.shape == (2, 2)
    assert td.float_sum(t).item() == 10.0
    assert float(td.float_sum(t)) == 10.0
    assert td.tensor(3).item() == 3 and td.tensor(True).item() is True
    with pytest.raises(ValueError):
        t.item()


def test_tensor_copies_its_data(td):
    x = np.array([1.0, 2.0, 3.0])  # float64: converted
    t = td.tensor(x)
    x[0] = 100
    assert t.dtype == "float32" and t.tolist() == [1.0, 2.0, 3.0]
    y = np.array([1.0, 2.0], np.float32)
    u = td.tensor(y)
    y[0] = 5
    assert u.tolist() == [1.0, 2.0]
    assert td.tensor([[1, 0], [2, 3]], dtype="bool").tolist() == [[True, False], [True, True]]
    assert td.tensor(np.arange(6).reshape(2, 3)[:, ::2]).tolist() == [[0, 2], [3, 5]]  # strided input
    with pytest.raises(ValueError):
        td.tensor([[1, 2], [3]])


def test_indexing(td):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = td.tensor(x)
    for k in (1, -1, (0, 1), (slice(None), 2), slice(0, 1), (1, slice(1, 3), -1), (slice(1, None), slice(-2, None)),
              slice(5, 9), (0, 2, 3)):
        np.testing.assert_array_equal(np.asarray(t[k]), x[k], err_msg=str(k))
    assert t[td.tensor(x > 10)].tolist() == x[x > 10].tolist()  # a bool mask: mask_select
    np.testing.assert_array_equal(np.asarray(t[td.tensor([1, 0, 1], dtype="int32")]), x[[1, 0, 1]])
    ti = td.tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert ti[1, 1:].tolist() == [4, 5] and ti[-1].dtype == "int32"
    assert [row.tolist() for row in ti] == [[0, 1, 2], [3, 4, 5]]  # iteration by index
    for bad in ((0, 0, 0, 0), 5, -3, slice(None, None, 2), "a", 1.5, td.tensor([1.0])):
        with pytest.raises(IndexError):
            t[bad]
