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


def _configure(tmp_path, *args):
    """Configures frameworks/torch into tmp_path (no build); its output."""
    r = subprocess.run(
        ["cmake", "-S", str(ROOT / "frameworks/torch"), "-B", str(tmp_path), "-G", "Ninja",
         f"-DPython3_EXECUTABLE={sys.executable}", f"-DXAL_BUILD_DIR={ROOT / 'build-py'}", *args],
        capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r.stdout


def test_the_build_finds_torch_by_its_package_or_says_why_not(tmp_path):
    """torch's own CMake package where it loads (a CUDA build of torch needs
    the CUDA toolkit for it); else torch.utils.cpp_extension's folders,
    with the package's error in the configure's output."""
    out = _configure(tmp_path / "auto")
    assert "xal_torch: torch " in out, out
    if "found by its CMake package" in out:
        ninja = (tmp_path / "auto/build.ninja").read_text()
        assert "libtorch_cpu.so" in ninja and "share/cmake/Torch" in out
    else:
        assert "torch's CMake package does not load here (CMake Error" in out, out
    # As on a machine without the CUDA toolkit: the fallback, saying why.
    out = _configure(tmp_path / "nocuda",
                     "-DXAL_TORCH_PROBE_ARGS=-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE")
    assert "torch's CMake package does not load here (CMake Error" in out, out
    assert "CUDAToolkit" in out and "found by torch.utils.cpp_extension" in out, out
    out = _configure(tmp_path / "off", "-DXAL_TORCH_CMAKE_PACKAGE=OFF")
    assert "found by torch.utils.cpp_extension" in out and "does not load" not in out, out
