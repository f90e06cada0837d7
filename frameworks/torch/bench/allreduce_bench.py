"""allreduce bus bandwidth of the backend "xal" and of Gloo, side by side in
one run (the same processes, the same tensors), with a memcpy of the same
size as a memory-traffic reference.

    .venv/bin/python frameworks/torch/bench/allreduce_bench.py [--ranks 2] \
        [--sizes-mib 1,4,16,64,256]

busbw = 2 (n-1)/n * bytes / time (as nccl-tests). Ranks run on mixed mock
cards (XAL_MOCK_DEVICES below), i.e. on this host's CPU cores and memory.
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def rank_main(rank: int, world: int, store: str, sizes_mib: list[int]) -> None:
    import torch
    import torch.distributed as dist

    sys.path.insert(0, str(HERE.parent))
    import xal_torch  # noqa: F401  (registers "xal")

    dist.init_process_group("xal", init_method=f"file://{store}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=300))
    gloo = dist.new_group(backend="gloo")
    groups = {"xal": dist.group.WORLD, "gloo": gloo}
    rows = []
    for mib in sizes_mib:
        n = mib * (1 << 20) // 4
        t = torch.ones(n)
        iters = max(3, min(20, (64 // mib) if mib else 20))
        res = {}
        for name, grp in groups.items():
            dist.all_reduce(t, group=grp)  # warm up
            dist.barrier(group=gloo)
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t, group=grp)
            dt = (time.perf_counter() - t0) / iters
            res[name] = 2 * (world - 1) / world * n * 4 / dt / 1e9
        src = torch.ones(n)
        t0 = time.perf_counter()
        for _ in range(iters):
            t.copy_(src)
        res["memcpy"] = n * 4 / ((time.perf_counter() - t0) / iters) / 1e9
        rows.append((mib, res))
    if rank == 0:
        print(f"ranks={world}  busbw GB/s (memcpy: GB/s copied by one rank)")
        print(f"{'size':>8} {'xal':>8} {'gloo':>8} {'xal/gloo':>9} {'memcpy':>8}")
        for mib, r in rows:
            print(f"{mib:>5}MiB {r['xal']:8.2f} {r['gloo']:8.2f} {r['xal'] / r['gloo']:9.2f} "
                  f"{r['memcpy']:8.2f}")
    dist.barrier(group=gloo)
    dist.destroy_process_group()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--sizes-mib", default="1,4,16,64,256")
    ap.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes_mib.split(",")]
    if a.rank is not None:
        rank_main(a.rank, a.ranks, a.store, sizes)
        return 0
    profiles = "1*a100-40g,1*mi250x,1*intel-max-1550,1*h100-sxm-80g"
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for r in range(a.ranks):
            env = dict(os.environ, XAL_BACKENDS="mock", XAL_MOCK_DEVICES=profiles,
                       LOCAL_RANK=str(r), OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "--ranks", str(a.ranks), "--sizes-mib", a.sizes_mib,
                 "--rank", str(r), "--store", f"{tmp}/store"], env=env))
        return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main())
