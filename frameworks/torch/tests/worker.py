"""One rank of a test run (started by launch.py):
  worker.py MODE RANK WORLD STORE_FILE RESULT_JSON
Writes what it saw as JSON; the tests assert on it."""
from __future__ import annotations

import copy
import datetime
import json
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist

import xal_torch


def init(rank, world, store, timeout_s=60.0):
    dist.init_process_group("xal", init_method=f"file://{store}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout_s))


def mode_ops(rank, world, store):
    from cases import CASES, Ctx
    init(rank, world, store)
    gloo = dist.new_group(backend="gloo")
    ctx = Ctx(rank, world, dist.group.WORLD, gloo)
    out = {"device": xal_torch.device_of(), "cases": {}}
    for name, fn in CASES.items():
        try:
            fn(ctx)
            out["cases"][name] = "ok"
        except Exception as e:  # recorded, asserted by the test
            out["cases"][name] = f"FAIL {type(e).__name__}: {e}\n{traceback.format_exc()}"
    out["gloo_used"] = ctx.gloo_used
    dist.barrier()
    dist.destroy_process_group()
    return out


def mode_fault(rank, world, store, kind):
    timeout_s = 20.0 if kind == "exit" else 3.0
    init(rank, world, store, timeout_s)
    x = torch.ones(1000)
    dist.all_reduce(x)  # everyone is up
    out = {"first": x[0].item(), "timeout_s": timeout_s}
    if rank == world - 1:
        if kind == "exit":
            time.sleep(1.0)  # the others are waiting in their next call by now
            os._exit(17)  # dies without a word
        time.sleep(timeout_s + 1.5)  # alive, but never joins the next call
        os._exit(0)
    start = time.monotonic()
    try:
        dist.all_reduce(x)
        out["raised"] = None
    except Exception as e:
        out["raised"] = type(e).__name__
        out["message"] = str(e)
        out["is_dist_backend_error"] = isinstance(e, dist.DistBackendError)
    out["elapsed_s"] = time.monotonic() - start
    # The group stays broken: the next call fails at once, without a hang.
    start = time.monotonic()
    try:
        dist.all_reduce(x)
        out["second_raised"] = None
    except Exception as e:
        out["second_raised"] = type(e).__name__
    out["second_elapsed_s"] = time.monotonic() - start
    out["survivor_alive"] = True
    return out


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                       torch.nn.Linear(32, 32), torch.nn.ReLU(),
                                       torch.nn.Linear(32, 4))

    def forward(self, x):
        return self.net(x)


def mode_ddp(rank, world, store, steps=20):
    from torch.nn.parallel import DistributedDataParallel as DDP
    init(rank, world, store)
    gloo = dist.new_group(backend="gloo")
    torch.manual_seed(1234 + rank)  # different per rank: DDP's first broadcast must fix it
    base = MLP()
    initial = [p.detach().clone() for p in base.parameters()]
    models = {"xal": DDP(copy.deepcopy(base), process_group=dist.group.WORLD, bucket_cap_mb=0.002),
              "gloo": DDP(copy.deepcopy(base), process_group=gloo, bucket_cap_mb=0.002)}
    opts = {k: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for k, m in models.items()}
    g = torch.Generator().manual_seed(99 + rank)
    w_true = torch.randn(16, 4, generator=torch.Generator().manual_seed(7))
    losses = {k: [] for k in models}
    for _ in range(steps):
        xb = torch.randn(32, 16, generator=g)
        yb = xb @ w_true
        for k, m in models.items():
            opts[k].zero_grad()
            loss = torch.nn.functional.mse_loss(m(xb), yb)
            loss.backward()
            opts[k].step()
            losses[k].append(loss.item())
    px = [p.detach() for p in models["xal"].module.parameters()]
    pg = [p.detach() for p in models["gloo"].module.parameters()]
    diff = max((a - b).abs().max().item() for a, b in zip(px, pg))
    moved = max((a - b).abs().max().item() for a, b in zip(px, initial))
    # The ranks hold the same parameters (gathered over Gloo).
    flat = torch.cat([p.flatten() for p in px])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat, group=gloo)
    spread = max((t - gathered[0]).abs().max().item() for t in gathered)
    calls = xal_torch.calls_run()
    dist.barrier()
    dist.destroy_process_group()
    return {"max_param_diff": diff, "xal_calls": calls,
            "moved": moved, "rank_spread": spread, "losses": losses}


def main():
    mode, rank, world, store, result = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if mode == "ops":
        out = mode_ops(rank, world, store)
    elif mode in ("exit", "hang"):
        out = mode_fault(rank, world, store, mode)
    elif mode == "ddp":
        out = mode_ddp(rank, world, store)
    else:
        raise SystemExit(f"unknown mode {mode}")
    with open(result, "w") as f:
        json.dump(out, f)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
