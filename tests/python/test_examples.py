"""Every op's examples (the specs' hand-written known-value cases, the same ones the
generated C tests check) run through the generated Python functions, with the spec's
argument names as keywords, on the CPU, on Vulkan (lavapipe) where the module has it, and
on autodiff(cpu); results are compared with the examples' expected values under the C
tests' rules (tests/common/tdt.c tdt_close: a float within tol * (1 + |want|), NaN where
NaN, an infinity exactly, -0 equal to 0; int32 and bool exact; dtype and shape exact).

The examples come from tdispatch_examples.py, which the generator emits next to the module
(build/python); the op list they are checked against comes from `tdgen.lua --list`. An op
of the list with no example run through Python must be in NO_EXAMPLES with its reason."""
import math
import os

import numpy as np
import pytest

try:
    import tdispatch_examples as EX  # beside the module in the build tree
except ImportError:  # a module installed by pip: the committed snapshot (checked fresh by CTest)
    import sys
    from conftest import REPO
    sys.path.append(os.path.join(REPO, "generated"))
    import tdispatch_examples as EX

# Ops whose values cannot be checked through the binding, with the reason. An op with no
# examples and no entry here fails test_every_op_has_examples_or_a_reason.
NO_EXAMPLES = {
    "float_random": "random values: the spec has no known-value example (its C tests check statistics)",
    "sync": "returns nothing (waits for the device's queued work): no value to compare",
    "float_all_reduce": "distributed: needs an MPI process group (tests/dist runs it under mpirun)",
    "float_broadcast": "distributed: needs an MPI process group (tests/dist runs it under mpirun)",
    "float_all_gather": "distributed: needs an MPI process group (tests/dist runs it under mpirun)",
    "int_all_reduce": "distributed: needs an MPI process group (tests/dist runs it under mpirun)",
}

DEVICES = ["cpu", "vulkan", "autodiff(cpu)"]
NP_DTYPE = {"f32": np.float32, "i32": np.int32, "bool": np.bool_}
TD_DTYPE = {"f32": "float32", "i32": "int32", "bool": "bool"}
WITH_EXAMPLES = sorted(n for n, e in EX.OPS.items() if e["examples"])

# What ran, for the summary conftest.py prints: device -> {op: examples run}.
RAN = {d: {} for d in DEVICES}


def summary_lines():
    lines = ["examples through the Python binding (tests/python/test_examples.py, from %s):" % EX.__file__]
    for d in DEVICES:
        if RAN[d]:
            lines.append("  %-14s %d ops, %d examples" % (d, len(RAN[d]), sum(RAN[d].values())))
        else:
            lines.append("  %-14s none run" % d)
    lines.append("  %d ops listed without examples run (NO_EXAMPLES):" % len(NO_EXAMPLES))
    for name in sorted(NO_EXAMPLES):
        lines.append("    %s: %s" % (name, NO_EXAMPLES[name]))
    return lines


_DEVICES = {}


def get_device(td, name):
    """The device named, or a pytest.skip with the reason it is not there."""
    if name not in _DEVICES:
        try:
            if name == "cpu":
                dev = td.device("cpu")
            elif name == "vulkan":
                dev = td.device("vulkan:0")
            else:
                dev = td.autodiff(td.device("cpu"))
            _DEVICES[name] = (dev, None)
        except Exception as e:  # no Vulkan in this build, or no Vulkan device
            _DEVICES[name] = (None, "%s: no such device here (%s: %s)" % (name, type(e).__name__, e))
    dev, why = _DEVICES[name]
    if dev is None:
        pytest.skip(why)
    return dev


def make_tensor(td, dev, dtype, value):
    arr = np.array(value["data"], dtype=NP_DTYPE[dtype]).reshape(value["shape"])
    return td.tensor(arr, device=dev, dtype=TD_DTYPE[dtype])


def call_args(td, dev, entry, ex):
    kw = {}
    for name, kind, dtype in entry["args"]:
        if kind == "host_out":
            continue
        if kind == "device":
            kw[name] = dev
        elif kind == "tensor":
            kw[name] = make_tensor(td, dev, dtype, ex[name])
        elif kind == "list":
            kw[name] = [make_tensor(td, dev, dtype, v) for v in ex[name]]
        elif kind == "host_in":
            kw[name] = list(ex[name])
        elif kind in ("scalar", "u64", "enum", "array"):
            kw[name] = ex[name]
        else:
            raise AssertionError("argument %s: kind %s has no example values" % (name, kind))
    return kw


def close(got, want, tol):
    """tdt_close of tests/common/tdt.c, in float32 as there."""
    got, want = np.float32(got), np.float32(want)
    if math.isnan(want):
        return bool(np.isnan(got))
    if math.isinf(want):
        return bool(got == want)
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(abs(got - want) <= np.float32(tol) * (np.float32(1) + abs(want)))


def expect_values(what, got, want, dtype, tol):
    assert len(got) == len(want), "%s: %d values, want %d" % (what, len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        ok = close(g, w, tol) if dtype == "f32" else (bool(g) == w if dtype == "bool" else g == w)
        assert ok, "%s: element %d: got %r, want %r (tolerance %g)" % (what, i, g, w, tol)


def expect_tensor(what, t, dtype, want, tol):
    assert t.dtype == TD_DTYPE[dtype], "%s: dtype %s, want %s" % (what, t.dtype, TD_DTYPE[dtype])
    assert list(t.shape) == list(want["shape"]), "%s: shape %s, want %s" % (what, t.shape, want["shape"])
    flat = np.asarray(t.tolist(), dtype=NP_DTYPE[dtype]).reshape(-1).tolist()
    expect_values(what, flat, want["data"], dtype, tol)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
@pytest.mark.parametrize("device", DEVICES)
def test_examples(td, device, name):
    entry = EX.OPS[name]
    backend = "cpu" if device == "autodiff(cpu)" else device
    dev = get_device(td, device)
    if backend not in entry["backends"]:
        pytest.skip("%s: the %s backend does not run it (the specs say so)" % (name, backend))
    fn = getattr(td, name)
    for i, ex in enumerate(entry["examples"], 1):
        what = "%s example %d on %s" % (name, i, device)
        got = fn(**call_args(td, dev, entry, ex))
        if entry["host"] is not None:
            expect_values(what, got, ex["out"]["data"], entry["host"], entry["tolerance"])
        elif len(entry["results"]) == 1:
            rname, dtype = entry["results"][0]
            expect_tensor(what, got, dtype, ex[rname], entry["tolerance"])
        else:
            assert isinstance(got, tuple) and len(got) == len(entry["results"]), what
            for t, (rname, dtype) in zip(got, entry["results"]):
                expect_tensor("%s, result %s" % (what, rname), t, dtype, ex[rname], entry["tolerance"])
    RAN[device][name] = len(entry["examples"])


def test_every_op_has_examples_or_a_reason(spec_ops):
    ops = set(spec_ops)
    assert set(EX.OPS) == ops, "tdispatch_examples.py is not the generator's op list (stale module build?)"
    missing = sorted(n for n in ops if not EX.OPS[n]["examples"] and n not in NO_EXAMPLES)
    assert missing == [], "ops with no example run through Python and no reason in NO_EXAMPLES: %s" % missing
    stale = sorted(n for n in NO_EXAMPLES if n not in ops or EX.OPS[n]["examples"])
    assert stale == [], "NO_EXAMPLES lists ops that are gone or now have examples: %s" % stale
    assert all(len(r) > 20 for r in NO_EXAMPLES.values())
    assert len(WITH_EXAMPLES) + len(NO_EXAMPLES) == len(ops)
