"""The torch.distributed backend "xal" against Gloo, side by side in one run
(the same processes, the same tensors), at 2 and 4 ranks on mixed mock cards
(A100, MI250X, Max 1550, H100: this host's CPU cores and memory):

- allreduce (float32 SUM) bus bandwidth, 1 MiB .. 256 MiB, with the
  memory-traffic bound measured in the same run: n x the time of one host
  memcpy of the buffer (torch's copy_ on one thread, the other ranks idle;
  a perfect in-memory allreduce reads n*S and writes n*S bytes, as n
  memcpys of S do), the definition docs/PERFORMANCE.md uses for
  `xal-bench coll`;
- the step time of DDP and of FSDP (FULL_SHARD) training an MLP of about
  4.2 M parameters (16 MiB of float32 gradients) on synthetic data.

    .venv/bin/python frameworks/torch/bench/torch_bench.py [--ranks 2,4] \
        [--sizes-mib 1,4,16,64,256] [--steps 10] [--json out.json]

busbw = 2 (n-1)/n * bytes / time (as nccl-tests); fraction of bound =
bound time / xal time. xal, Gloo and the memcpy are timed in turn, iteration
by iteration, so that all see the same machine, after 5 warm-up calls of
each; each figure is the median of 10 to 20 calls (20 up to 16 MiB, 10
from 64 MiB).
"""
from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROFILES = "1*a100-40g,1*mi250x,1*intel-max-1550,1*h100-sxm-80g"


def _median_time(fn, iters: int, sync) -> float:
    times = []
    for _ in range(iters):
        sync()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _mlp():
    import torch
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(1024, 16))


def rank_main(rank: int, world: int, store: str, sizes_mib: list[int], steps: int) -> dict:
    import torch
    import torch.distributed as dist

    sys.path.insert(0, str(HERE.parent))
    import xal_torch  # noqa: F401  (registers "xal")

    dist.init_process_group("xal", init_method=f"file://{store}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=600))
    gloo = dist.new_group(backend="gloo")
    groups = {"xal": dist.group.WORLD, "gloo": gloo}
    # "xal-shared": the same allreduce of a tensor of xal_torch's shared-tensor
    # allocator (in place from the other ranks' tensors).
    timed = {"xal": dist.group.WORLD, "xal-shared": dist.group.WORLD, "gloo": gloo}

    def sync():
        dist.barrier(group=gloo)

    out = {"world": world, "allreduce": [], "steps": {}}
    for mib in sizes_mib:
        nbytes = mib << 20
        n = nbytes // 4
        t = torch.ones(n)
        xal_torch.use_shared_tensors()
        ts = torch.ones(n)
        xal_torch.use_shared_tensors(False)
        tg = torch.ones(n)
        src, dst = torch.ones(n), torch.empty(n)
        dst.copy_(src)
        # A tensor per path: each call starts from what that path's own
        # previous call left in the caches, not from another path's result.
        tensor = {"xal": t, "xal-shared": ts, "gloo": tg}
        # Warm up every path alike (nccl-tests' default, 5 calls): the first
        # calls of a size run slower (pages touched, mappings made).
        for _ in range(5):
            for name, grp in timed.items():
                dist.all_reduce(tensor[name], group=grp)
            dst.copy_(src)
        # Interleaved, so that every figure sees the same machine: xal,
        # Gloo, then one thread's memcpy (rank 0, the others waiting in the
        # barrier), iters times; the bound is n memcpys.
        iters = max(10, min(20, 512 // mib))
        times = {"xal": [], "xal-shared": [], "gloo": [], "memcpy": []}
        zero_copy = xal_torch.zero_copy_allreduces()
        for _ in range(iters):
            for name, grp in timed.items():
                x = tensor[name]
                times[name].append(_median_time(lambda: dist.all_reduce(x, group=grp), 1, sync))
            if rank == 0:
                times["memcpy"].append(_median_time(lambda: dst.copy_(src), 1, lambda: None))
            sync()
        if xal_torch.zero_copy_allreduces() - zero_copy != iters:
            raise SystemExit("xal-shared did not run in place (zero_copy_allreduces)")
        row = {"mib": mib, "xal_s": statistics.median(times["xal"]),
               "xal_shared_s": statistics.median(times["xal-shared"]),
               "gloo_s": statistics.median(times["gloo"]),
               "bound_s": world * statistics.median(times["memcpy"]) if rank == 0 else 0.0}
        factor = 2 * (world - 1) / world * nbytes / 1e9
        row["xal_busbw"] = factor / row["xal_s"]
        row["xal_shared_busbw"] = factor / row["xal_shared_s"]
        row["gloo_busbw"] = factor / row["gloo_s"]
        row["bound_busbw"] = factor / row["bound_s"] if rank == 0 else 0.0
        out["allreduce"].append(row)
        del t, ts, tensor, src, dst

    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(0)
    base = _mlp()
    g = torch.Generator().manual_seed(rank)
    xb, yb = torch.randn(64, 1024, generator=g), torch.randn(64, 16, generator=g)
    for kind in ("ddp", "fsdp"):
        for name, grp in timed.items():
            if name == "xal-shared" and kind == "fsdp":
                continue
            xal_torch.use_shared_tensors(name == "xal-shared")  # DDP's buckets
            if kind == "ddp":
                model = DDP(copy.deepcopy(base), process_group=grp)
            else:
                model = FSDP(copy.deepcopy(base), process_group=grp, device_id=torch.device("cpu"),
                             sharding_strategy=ShardingStrategy.FULL_SHARD,
                             auto_wrap_policy=lambda module, recurse, nonwrapped_numel:
                                 recurse or isinstance(module, torch.nn.Linear))
            opt = torch.optim.SGD(model.parameters(), lr=1e-3)

            def step():
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(xb), yb).backward()
                opt.step()
            step()  # warm up
            out["steps"][f"{kind}_{name}_s"] = _median_time(step, steps, sync)
            del model, opt
    xal_torch.use_shared_tensors(False)
    dist.barrier(group=gloo)
    dist.destroy_process_group()
    return out


def print_report(runs: list[dict]) -> None:
    print("allreduce float32 SUM: busbw GB/s; bound = n x one-thread memcpy time, same run;")
    print("shared: the tensor from xal_torch.use_shared_tensors() (in place, no segment copies)")
    print(f"{'ranks':>5} {'size':>7} {'xal ms':>8} {'shared':>8} {'gloo ms':>8} {'xal':>7} "
          f"{'shared':>7} {'gloo':>7} {'bound':>7} {'xal/bound':>9} {'xal/gloo':>8} "
          f"{'sh/bound':>8} {'sh/gloo':>7}")
    for run in runs:
        for r in run["allreduce"]:
            print(f"{run['world']:>5} {r['mib']:>4}MiB {r['xal_s'] * 1e3:8.2f} "
                  f"{r['xal_shared_s'] * 1e3:8.2f} {r['gloo_s'] * 1e3:8.2f} "
                  f"{r['xal_busbw']:7.2f} {r['xal_shared_busbw']:7.2f} {r['gloo_busbw']:7.2f} "
                  f"{r['bound_busbw']:7.2f} {r['bound_s'] / r['xal_s']:9.2f} "
                  f"{r['gloo_s'] / r['xal_s']:8.2f} {r['bound_s'] / r['xal_shared_s']:8.2f} "
                  f"{r['gloo_s'] / r['xal_shared_s']:7.2f}")
    print("\ntraining step time (MLP 4.2 M parameters, batch 64 per rank), ms")
    print(f"{'ranks':>5} {'kind':>5} {'xal':>8} {'shared':>8} {'gloo':>8} {'xal/gloo':>8} "
          f"{'sh/gloo':>7}")
    for run in runs:
        s = run["steps"]
        for kind in ("ddp", "fsdp"):
            x, g = s[f"{kind}_xal_s"], s[f"{kind}_gloo_s"]
            sh = s.get(f"{kind}_xal-shared_s")
            shared = f"{sh * 1e3:8.1f}" if sh else f"{'-':>8}"
            ratio = f"{sh / g:7.2f}" if sh else f"{'-':>7}"
            print(f"{run['world']:>5} {kind:>5} {x * 1e3:8.1f} {shared} {g * 1e3:8.1f} "
                  f"{x / g:8.2f} {ratio}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="2,4", help="group sizes, e.g. 2,4")
    ap.add_argument("--sizes-mib", default="1,4,16,64,256")
    ap.add_argument("--steps", type=int, default=10, help="timed training steps")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--world", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes_mib.split(",")]
    if a.rank is not None:
        res = rank_main(a.rank, a.world, a.store, sizes, a.steps)
        if a.rank == 0:
            Path(a.out).write_text(json.dumps(res))
        return 0
    runs = []
    for world in (int(w) for w in a.ranks.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            procs = []
            for r in range(world):
                env = dict(os.environ, XAL_BACKENDS="mock", XAL_MOCK_DEVICES=PROFILES,
                           LOCAL_RANK=str(r), OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
                procs.append(subprocess.Popen(
                    [sys.executable, __file__, "--sizes-mib", a.sizes_mib, "--steps", str(a.steps),
                     "--rank", str(r), "--world", str(world), "--store", f"{tmp}/store",
                     "--out", f"{tmp}/out.json"], env=env))
            if max(p.wait() for p in procs) != 0:
                return 1
            runs.append(json.loads(Path(f"{tmp}/out.json").read_text()))
    print(f"load average at the end: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    print_report(runs)
    if a.json:
        Path(a.json).write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
