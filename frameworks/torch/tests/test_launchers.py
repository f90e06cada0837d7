"""One rank per process under each launcher docs/TORCH.md names: torchrun
(the runnable example of docs/TORCH.md, as written there),
torch.multiprocessing.spawn and Open MPI's mpirun. Each rank takes its own
xal device (torchrun: LOCAL_RANK; mpirun: OMPI_COMM_WORLD_LOCAL_RANK; spawn,
which sets neither: the rank's place on its host) and the group's
allreduce gives the sum."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from launch import PACKAGE_ROOT

ROOT = Path(__file__).resolve().parents[3]
VENV_BIN = Path(sys.executable).parent

# What each rank runs under spawn and mpirun: init, its device, an
# allreduce, its result as JSON in OUT/rank<r>.json.
RANK_BODY = """
import json, os, sys
import torch, torch.distributed as dist
import xal_torch

def body(rank, world, store, out):
    dist.init_process_group("xal", init_method="file://" + store, rank=rank, world_size=world)
    t = torch.full((1000,), float(rank + 1))
    dist.all_reduce(t)
    res = {"device": xal_torch.device_of(), "sum": t[0].item(), "equal": bool((t == t[0]).all())}
    dist.destroy_process_group()
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(res, f)
"""


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LOCAL_RANK", "RANK", "WORLD_SIZE", "XAL_TORCH_DEVICE")
           and not k.startswith(("OMPI_", "PMIX_"))}
    env.update(XAL_BACKENDS="mock", XAL_MOCK_DEVICES="1*a100-40g,1*mi250x",
               PYTHONPATH=os.pathsep.join([str(PACKAGE_ROOT), env.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", **extra)
    return env


def _results(out: Path, world: int) -> list[dict]:
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(world)]


def _check(res: list[dict]) -> None:
    assert [r["device"].split(" ")[0] for r in res] == ["mock:0", "mock:1"], res
    assert all(r["sum"] == 3.0 and r["equal"] for r in res), res


def test_torchrun_runs_the_documented_example():
    torchrun = VENV_BIN / "torchrun"
    if not torchrun.exists():
        pytest.skip(f"{torchrun} not found")
    r = subprocess.run(
        [str(torchrun), "--standalone", "--nproc-per-node", "2",
         str(ROOT / "frameworks/torch/examples/ddp_example.py")],
        env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "rank 0 of 2 on mock:0" in r.stdout and "rank 1 of 2 on mock:1" in r.stdout, r.stdout
    assert "step 20: loss" in r.stdout, r.stdout


def test_multiprocessing_spawn_gives_each_rank_its_device(tmp_path):
    script = tmp_path / "spawned.py"
    script.write_text(RANK_BODY + """
import torch.multiprocessing as mp

if __name__ == "__main__":
    store, out = sys.argv[1], sys.argv[2]
    mp.spawn(body, args=(2, store, out), nprocs=2, join=True)
""")
    r = subprocess.run([sys.executable, str(script), str(tmp_path / "store"), str(tmp_path)],
                       env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    _check(_results(tmp_path, 2))


def test_mpirun_gives_each_rank_its_device(tmp_path):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun not found (Open MPI: scripts/deps.sh installs it)")
    script = tmp_path / "mpi_rank.py"
    script.write_text(RANK_BODY + """
if __name__ == "__main__":
    body(int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"]),
         sys.argv[1], sys.argv[2])
""")
    env = _env(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    r = subprocess.run([mpirun, "--bind-to", "none", "-np", "2", sys.executable, str(script),
                        str(tmp_path / "store"), str(tmp_path)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    _check(_results(tmp_path, 2))
