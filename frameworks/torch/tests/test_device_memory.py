"""Cards whose memory is not host memory, on the simulated CUDA and HIP
runtimes of the C++ build (build/): CPU tensors staged in device memory
through every op of the battery, and the path of a CUDA tensor on the
rank's card (its storage imported with xal_mem_import, the call on torch's
stream imported with xal_stream_import) entered with device memory of the
simulated card. No torch here has a GPU: torch's own CUDA tensors (their
is_cuda dispatch and torch's current stream) are not run."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from cases import CASES
from launch import PACKAGE_ROOT, launch

ROOT = Path(__file__).resolve().parents[3]
BUILD = Path(os.environ.get("XAL_TORCH_SIM_BUILD", ROOT / "build"))

RUNTIMES = {
    "cuda": dict(XAL_BACKENDS=str(BUILD / "lib/xal/libxal_backend_cuda.so"),
                 XAL_CUDA_DRIVER=str(BUILD / "lib/cuda-sim/libcuda.so.1"), XAL_CUDA_NVML="off"),
    "hip": dict(XAL_BACKENDS=str(BUILD / "lib/xal/libxal_backend_hip.so"),
                XAL_HIP_LIBRARY=str(BUILD / "lib/hip-sim/libamdhip64.so.5"),
                XALSIM_HIP_DEVICES="2"),
}
_RUNS: dict[str, tuple] = {}


def run(runtime: str, tmp_path_factory):
    env = dict(RUNTIMES[runtime])
    for key in ("XAL_BACKENDS", "XAL_CUDA_DRIVER", "XAL_HIP_LIBRARY"):
        if key in env and not Path(env[key]).exists():
            pytest.skip(f"{env[key]} is not built (the C++ build in {BUILD}, "
                        f"with the {runtime} backend)")
    # xal_torch, and the xal package built on the same libxal (build-py/).
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT), str(ROOT / "build-py/python")])
    env["XAL_MOCK_DEVICES"] = ""
    env["XAL_TEST_RUNTIME"] = runtime
    if runtime not in _RUNS:
        _RUNS[runtime] = launch("device_memory", 2, tmp_path_factory.mktemp(runtime),
                                extra_env=env)
    return _RUNS[runtime]


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_device_memory_imported_in_place(runtime, tmp_path_factory):
    codes, results, outputs, _ = run(runtime, tmp_path_factory)
    assert codes == [0, 0], "\n".join(o[-3000:] for o in outputs)
    for rank, res in enumerate(results):
        assert res["device"].startswith(f"{runtime}:{rank} "), res["device"]
        assert "simulated" in res["device"]
        assert res["device_equal"] is True
        assert res["device_staged"] == 0  # the memory itself, no staging
        assert res["cpu_equal"] is True
        assert res["cpu_staged"] == 1000 * 4  # the CPU tensor went through device memory
        assert res["null_pointer"].startswith("RuntimeError: xal: allreduceDeviceMemory: a pointer")


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_case_staged(runtime, case, tmp_path_factory):
    codes, results, outputs, _ = run(runtime, tmp_path_factory)
    assert len(results) == 2 and all(results), "\n".join(o[-2000:] for o in outputs)
    for rank, res in enumerate(results):
        assert res["cases"].get(case) == "ok", f"rank {rank}: {res['cases'].get(case)}"


def test_device_mapped_backend_string(tmp_path):
    codes, results, outputs, _ = launch("device_string", 2, tmp_path)
    assert codes == [0, 0], "\n".join(o[-3000:] for o in outputs)
    for res in results:
        assert res["sum"] == [3.0] * 8
        assert res["calls"] == 1
        assert res["device"].startswith("mock:")
