"""The examples in python/examples run and print what they promise."""

import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def run(name, **env):
    full = dict(os.environ, **env)
    r = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                       timeout=180, env=full)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_hello():
    out = run("hello.py")
    assert "backend mock: LOADED" in out
    assert "round trip: [0. 0. 0. 0. 4. 5.]" in out
    assert "as expected: XAL_ERROR_OUT_OF_MEMORY from xal_mem_alloc [mock]" in out


def test_allreduce():
    out = run("allreduce.py", XAL_MOCK_DEVICES="3*mi300x")
    assert "over 3 devices" in out and "results match numpy" in out


def test_dlpack_interop():
    pytest.importorskip("torch")
    out = run("dlpack_interop.py")
    assert "numpy sees torch's write: 3.0 | same address: True" in out
    assert "torch sees xal's write: [0, 0, 2, 3, 4, 5, 6, 7]" in out
