"""pytest setup for the tdispatch Python module: the module comes from the build tree
(PYTHONPATH=<build>/python, as .ci/test sets it); numpy is required, torch optional."""
import os
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def td():
    import tdispatch
    return tdispatch


@pytest.fixture(scope="session")
def cpu(td):
    return td.device("cpu")


@pytest.fixture(scope="session")
def spec_ops():
    """The generator's op and tuple names (`tdgen.lua --list`), not the module's."""
    lua = os.environ.get("TD_LUA") or shutil.which("lua5.4") or shutil.which("lua")
    if lua is None:
        pytest.fail("lua5.4 is needed to list the specs' ops (apt-get install lua5.4)")
    out = subprocess.run([lua, os.path.join(REPO, "gen", "tdgen.lua"), "--specs", os.path.join(REPO, "specs"),
                          "--list"], check=True, capture_output=True, text=True, cwd=REPO).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def pytest_terminal_summary(terminalreporter):
    """The examples run per device and the ops listed without (test_examples.py)."""
    import sys
    mod = sys.modules.get("test_examples")
    if mod is not None:
        for line in mod.summary_lines():
            terminalreporter.write_line(line)
