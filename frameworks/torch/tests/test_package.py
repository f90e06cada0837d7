"""`import xal.torch` (the xal package's module) registers the backend and
exposes xal_torch's functions, as docs/TORCH.md says."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from launch import PACKAGE_ROOT

ROOT = Path(__file__).resolve().parents[3]


def test_import_xal_torch_registers_the_backend():
    code = ("import torch.distributed as dist, xal.torch, xal_torch\n"
            "print('XAL' in dist.Backend._plugins, sorted(xal.torch.__all__) == "
            "sorted(xal_torch.__all__), xal.torch.use_shared_tensors is "
            "xal_torch.use_shared_tensors)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE_ROOT),
                                                       str(ROOT / "build-py/python")]))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True", "True"], r.stdout
