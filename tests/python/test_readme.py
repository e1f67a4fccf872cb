"""The README's Python snippet runs as written; the Python MLP example reaches the C
example's accuracy threshold (95%)."""
import os
import re
import subprocess
import sys

from conftest import REPO


def test_readme_python_snippet_runs(td, capsys):
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "README Python snippet" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0], "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "tensor shape=[2, 3]" in out and "do not broadcast" in out


def test_train_mlp_example_reaches_the_c_accuracy():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, os.path.join(REPO, "examples", "python", "train_mlp.py"), "--epochs", "600"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    acc = float(re.search(r"final training accuracy ([0-9.]+)", r.stdout).group(1))
    assert acc >= 0.95


def test_train_cnn_example_learns():
    """40 steps of the CNN (the full epoch, 85.9% here, is a manual run: about a minute)."""
    import pytest
    r = subprocess.run([sys.executable, os.path.join(REPO, "examples", "python", "train_cnn.py"), "--limit", "40",
                        "--min-accuracy", "0.5"], capture_output=True, text=True, timeout=300)
    if r.returncode == 77:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test accuracy:" in r.stdout
