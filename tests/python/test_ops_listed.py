"""Every op and tuple of the specs is a function of the module, with the spec's argument
names as its keywords and the spec's doc as its doc string. The reference lists come from
the generator's --list and from reading specs/ops/*.lua here, not from the module."""
import glob
import inspect
import os
import re

from conftest import REPO

# The module's own (hand-written) functions and types, which are not ops.
HANDWRITTEN = {"device", "autodiff", "devices", "tensor", "from_dlpack", "group_world", "_live_objects",
               "sgd", "adam"}


def spec_entries():
    """name -> (args, doc) for every `op { ... }` of specs/ops, read with regexes."""
    out = {}
    for path in sorted(glob.glob(os.path.join(REPO, "specs", "ops", "*.lua"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for block in re.split(r"\n(?:op|tuple)\s*\{", text)[1:]:
            name = re.search(r'\bname\s*=\s*"([a-z0-9_]+)"', block)
            doc = re.search(r'\bdoc\s*=\s*"((?:[^"\\]|\\.)*)"', block)
            args = re.search(r"\bargs\s*=\s*\{([^}]*)\}", block)
            if name is None:
                continue
            arg_list = re.findall(r'"([a-z0-9_]+)\s+([a-z0-9_]+)"', args.group(1)) if args else None
            out[name.group(1)] = (arg_list, doc.group(1).replace('\\"', '"') if doc else None)
    return out


def test_module_functions_are_the_generators_ops(td, spec_ops):
    funcs = {n for n in dir(td) if callable(getattr(td, n)) and not n.startswith("__")
             and not isinstance(getattr(td, n), type)}
    ops = set(spec_ops)
    assert len(ops) > 300
    assert ops - funcs == set(), "ops of the specs missing from the module"
    assert funcs - ops - HANDWRITTEN == set(), "module functions that are no op of the specs"
    assert td.op_count == len(ops)


def test_every_op_has_its_spec_doc_and_keywords(td, spec_ops):
    specs = spec_entries()
    checked = 0
    for name in spec_ops:
        fn = getattr(td, name)
        assert fn.__doc__ and len(fn.__doc__) > 20, name
        if name not in specs:
            continue
        args, doc = specs[name]
        if doc is not None:
            assert doc in fn.__doc__, name
        if args is not None:  # host outputs (f32_out ...) are results in Python
            want = [n for (t, n) in args if not t.endswith("_out")]
            assert list(inspect.signature(fn).parameters) == want, name
            checked += 1
    assert checked > 280


def test_stub_lists_every_op(td, spec_ops):
    stub = os.path.join(os.path.dirname(td.__file__), "tdispatch.pyi")
    with open(stub, encoding="utf-8") as f:
        text = f.read()
    for name in spec_ops:
        assert re.search(r"^def %s\(" % name, text, re.M), name
    compile(text, stub, "exec")  # valid Python syntax


def test_every_op_passes_its_argument_types(td, spec_ops):
    """An argument type the emitter cannot pass makes the function raise NotImplementedError
    at once; every op's function instead parses its arguments (here: too few, TypeError)."""
    for name in spec_ops:
        try:
            getattr(td, name)()
        except NotImplementedError as e:
            raise AssertionError("%s: %s" % (name, e))
        except TypeError:
            pass
