"""Shared tensors (xal_torch.use_shared_tensors) at 2 and 4 ranks on mixed
mock cards, 64 KiB slots: allreduces of shared tensors of several sizes,
dtypes and ops run in place from the other ranks' tensors (counted by
zero_copy_allreduces, one per call of at least 256 KiB) and equal the local
reference; a call where one rank's tensor is ordinary memory takes the
ordinary path on every rank and is right; DDP trained 5 steps on shared
tensors equals DDP on ordinary ones bit for bit, its buckets' allreduces in
place. The allocator's bad input: a threshold below 1 and a malformed
XAL_TORCH_SHARED_TENSORS."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from launch import PACKAGE_ROOT, launch_once


@pytest.mark.parametrize("world", [2, 4])
def test_shared_tensors(world, tmp_path_factory):
    codes, results, outputs, _ = launch_once("shared", world, tmp_path_factory)
    assert codes == [0] * world, "\n".join(o[-3000:] for o in outputs)
    for rank, res in enumerate(results):
        for name, c in res["checks"].items():
            assert c["ok"] is True, f"rank {rank} {name}: {c['ok']}"
            assert c["shared"] is (name != "sum-float32-small"), (rank, name)
        assert res["large"] == 7
        assert res["zero_copy"] == 7, res["zero_copy"]  # every large call in place
        assert res["mixed_ok"] is True and res["mixed_zero_copy"] == 0
        assert res["ddp_zero_copy_ordinary"] == 0
        assert res["ddp_zero_copy_shared"] >= 5  # the buckets, every step
        assert res["ddp_equal"] is True


def _python(code: str, **env) -> subprocess.CompletedProcess:
    full = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT), **env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                          text=True, timeout=120)


def test_bad_input():
    r = _python("import xal_torch\n"
                "try:\n"
                "    xal_torch.use_shared_tensors(min_bytes=0)\n"
                "except ValueError as e:\n"
                "    print('refused:', e)\n")
    assert r.returncode == 0 and "refused: min_bytes must be at least 1" in r.stdout, r.stderr
    r = _python("import xal_torch", XAL_TORCH_SHARED_TENSORS="lots")
    assert r.returncode != 0 and "XAL_TORCH_SHARED_TENSORS='lots'" in r.stderr, r.stderr
    r = _python("import torch, xal_torch\n"
                "t = torch.ones(1 << 20)\n"
                "print(xal_torch.is_shared_tensor(t), xal_torch._C.shared_tensors_min_bytes())\n",
                XAL_TORCH_SHARED_TENSORS="4096")
    assert r.returncode == 0 and r.stdout.split() == ["True", "4096"], r.stderr
