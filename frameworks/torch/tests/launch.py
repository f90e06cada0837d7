"""Starts the ranks of one test run as separate processes (one rank each)
and collects what each wrote. Used by the tests; no assertions here."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE_ROOT = HERE.parent  # frameworks/torch, where xal_torch lives

# Mixed mock cards: rank r runs on the card at LOCAL_RANK = r.
MIXED_PROFILES = "1*a100-40g,1*mi250x,1*intel-max-1550,1*h100-sxm-80g"


def launch(mode: str, world: int, tmp: Path, timeout_s: float = 240, extra_env=None,
           rank_env=None, rank_prefix=None,
           store: str | None = None) -> tuple[list[int], list[dict], list[str], float]:
    """Runs `worker.py <mode>` as `world` ranks (rank r's command after
    rank_prefix[r], e.g. `ip netns exec NS`; the store: a file in tmp, or
    `store`, e.g. tcp://ADDR:PORT). Returns exit codes, each rank's JSON
    result ({} if none), each rank's output and the wall time."""
    tmp.mkdir(parents=True, exist_ok=True)
    init_file = tmp / "store"
    if init_file.exists():
        init_file.unlink()
    store = store or str(init_file)
    procs, logs = [], []
    start = time.monotonic()
    for r in range(world):
        env = dict(os.environ)
        env.update(
            XAL_BACKENDS="mock",
            XAL_MOCK_DEVICES=MIXED_PROFILES,
            LOCAL_RANK=str(r),
            PYTHONPATH=os.pathsep.join([str(PACKAGE_ROOT), env.get("PYTHONPATH", "")]),
            OMP_NUM_THREADS="1",
            PYTHONWARNINGS="ignore",
            XAL_TORCH_SHM_SLOT_BYTES="65536",  # many rounds per call
        )
        env.update(extra_env or {})
        env.update((rank_env or {}).get(r, {}))
        log = open(tmp / f"rank{r}.log", "w+")
        logs.append(log)
        procs.append(subprocess.Popen(
            list((rank_prefix or {}).get(r, [])) +
            [sys.executable, str(HERE / "worker.py"), mode, str(r), str(world), store,
             str(tmp / f"result{r}.json")],
            env=env, stdout=log, stderr=subprocess.STDOUT))
    codes = []
    for p in procs:
        left = max(1.0, timeout_s - (time.monotonic() - start))
        try:
            codes.append(p.wait(timeout=left))
        except subprocess.TimeoutExpired:
            p.kill()
            codes.append(p.wait())
    wall = time.monotonic() - start
    results, outputs = [], []
    for r, log in enumerate(logs):
        log.seek(0)
        outputs.append(log.read())
        log.close()
        f = tmp / f"result{r}.json"
        results.append(json.loads(f.read_text()) if f.exists() else {})
    return codes, results, outputs, wall


_CACHE: dict[tuple[str, int], tuple] = {}


def launch_once(mode: str, world: int, tmp_path_factory, **kw):
    """launch(), once per (mode, world) in a pytest session: tests that
    assert on different parts of one run share it."""
    key = (mode, world)
    if key not in _CACHE:
        _CACHE[key] = launch(mode, world, tmp_path_factory.mktemp(f"{mode}{world}"), **kw)
    return _CACHE[key]
