"""Shared set-up: every test runs against the mock backend.

In-process tests see four mock A100s (XAL_MOCK_DEVICES, read at xal_init,
which the first test triggers). Tests that need other process-wide settings
(a fault plan, XAL_TRACE, other cards) run Python in a subprocess with
`run_py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

for _name in [n for n in os.environ if n.startswith("XAL_")]:
    del os.environ[_name]
os.environ["XAL_BACKENDS"] = "mock"
os.environ["XAL_MOCK_DEVICES"] = "4*a100-40g"

import xal  # noqa: E402  (after the environment is set)


@pytest.fixture
def devs() -> list[xal.Device]:
    """The four mock devices of the current session."""
    ds = xal.devices()
    assert len(ds) == 4
    return ds


@pytest.fixture
def dev(devs: list[xal.Device]) -> xal.Device:
    return devs[0]


def run_py(code: str, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a fresh interpreter with this one's sys.path and the
    XAL_* settings of `env` (mock backend unless it says otherwise)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("XAL_")}
    full["XAL_BACKENDS"] = "mock"
    full["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    full.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def py():
    """run_py, checking that the child exits 0; returns its stdout."""
    def run(code: str, env: dict[str, str] | None = None) -> str:
        r = run_py(code, env)
        assert r.returncode == 0, f"child failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
        return r.stdout
    return run
