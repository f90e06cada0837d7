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
    url = store if "://" in store else f"file://{store}"
    dist.init_process_group("xal", init_method=url, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout_s))


def run_cases(rank, world, out):
    """Runs the battery of cases.py on the default group, Gloo beside it;
    records each case's outcome in out["cases"]."""
    from cases import CASES, Ctx
    gloo = dist.new_group(backend="gloo")
    ctx = Ctx(rank, world, dist.group.WORLD, gloo)
    out.setdefault("cases", {})
    for name, fn in CASES.items():
        try:
            fn(ctx)
            out["cases"][name] = "ok"
        except Exception as e:  # recorded, asserted by the test
            out["cases"][name] = f"FAIL {type(e).__name__}: {e}\n{traceback.format_exc()}"
    out["gloo_used"] = ctx.gloo_used


def mode_ops(rank, world, store):
    init(rank, world, store)
    out = {"device": xal_torch.device_of()}
    run_cases(rank, world, out)
    dist.barrier()
    dist.destroy_process_group()
    return out


def mode_p2p(rank, world, store):
    from cases import Ctx
    from p2p_cases import CASES
    init(rank, world, store)
    gloo = dist.new_group(backend="gloo")
    ctx = Ctx(rank, world, dist.group.WORLD, gloo)
    out = {"cases": {}}
    for name, fn in CASES.items():
        try:
            fn(ctx)
            out["cases"][name] = "ok"
        except Exception as e:  # recorded, asserted by the test
            out["cases"][name] = f"FAIL {type(e).__name__}: {e}\n{traceback.format_exc()}"
        dist.barrier(group=gloo)  # the next case starts together
    out["gloo_used"] = ctx.gloo_used
    dist.barrier()
    dist.destroy_process_group()
    return out


def mode_device_memory(rank, world, store):
    """On cards whose memory is not host memory (a simulated CUDA or HIP
    runtime): an allreduce of device memory through the path of a CUDA
    tensor on the rank's card (imported in place, on its native stream
    imported into xal), then CPU tensors (staged in device memory) through
    every op of the battery."""
    import numpy as np
    import xal
    init(rank, world, store)
    backend = dist.group.WORLD._get_backend(torch.device("cpu"))
    dev = xal.device(int(os.environ["LOCAL_RANK"]))
    out = {"device": xal_torch.device_of(), "cases": {}}
    n = 1 << 16
    expect = np.arange(n, dtype=np.float32) * sum(range(1, world + 1))
    from sim_runtime import framework_alloc, framework_stream
    # Memory and a stream of the card that xal did not make, as a CUDA
    # tensor's and torch's are (the memory written and read through imports
    # of it that end before the call).
    runtime = os.environ["XAL_TEST_RUNTIME"]
    ptr = framework_alloc(runtime, dev.backend_index, n * 4)
    with xal.Buffer.import_(ptr, n * 4, device=dev) as b:
        b.copy_from(np.arange(n, dtype=np.float32) * (rank + 1))
    stream = framework_stream(runtime, dev.backend_index)
    for call in range(2):  # the second call reuses the stream's import
        if call:  # the same input again
            with xal.Buffer.import_(ptr, n * 4, device=dev) as b:
                b.copy_from(np.arange(n, dtype=np.float32) * (rank + 1))
        work = xal_torch._C._allreduce_device_memory(backend, ptr, n, torch.empty(0), stream)
        work.wait()
    with xal.Buffer.import_(ptr, n * 4, device=dev) as b:
        got = b.to_numpy(np.float32)
    out["device_equal"] = bool(np.array_equal(got, expect))
    out["device_staged"] = xal_torch._C.last_staged_bytes(backend)
    t = torch.full((1000,), float(rank + 1))
    dist.all_reduce(t)
    out["cpu_equal"] = bool(torch.all(t == sum(range(1, world + 1))).item())
    out["cpu_staged"] = xal_torch._C.last_staged_bytes(backend)
    try:
        xal_torch._C._allreduce_device_memory(backend, 0, n, torch.empty(0), 0)
        out["null_pointer"] = "accepted"
    except Exception as e:  # asserted by the test
        out["null_pointer"] = f"{type(e).__name__}: {e}"
    run_cases(rank, world, out)
    dist.barrier()
    dist.destroy_process_group()
    return out


def mode_device_string(rank, world, store):
    """init_process_group(backend="cpu:xal,cuda:xal"): the CPU tensors' calls
    run on the backend of xal mapped to the CPU."""
    url = store if "://" in store else f"file://{store}"
    dist.init_process_group("cpu:xal,cuda:xal", init_method=url, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    before = xal_torch.calls_run()
    t = torch.full((8,), float(rank + 1))
    dist.all_reduce(t)
    out = {"sum": t.tolist(), "calls": xal_torch.calls_run() - before,
           "device": xal_torch.device_of()}
    dist.destroy_process_group()
    return out


def mode_split(rank, world, store):
    """torch.distributed.split_group over "xal" (xal_comm_split of the
    group's communicator): two halves, a nested split, a split that leaves
    the last rank out; collectives and send/recv in the children."""
    init(rank, world, store)
    out = {}
    before = xal_torch.calls_run()
    halves = [list(range(0, world, 2)), list(range(1, world, 2))]
    half = dist.split_group(split_ranks=halves)
    out["split_ran_on_parent"] = xal_torch.calls_run() - before  # the split itself
    mine = halves[rank % 2]
    out["half_rank"] = dist.get_rank(half)
    out["half_size"] = dist.get_world_size(half)
    out["half_device"] = xal_torch.device_of(half)
    t = torch.full((1000,), float(rank + 1))
    dist.all_reduce(t, group=half)
    out["half_sum"] = t[0].item()
    out["half_expect"] = float(sum(r + 1 for r in mine))
    g = torch.arange(4, dtype=torch.int64) + 10 * rank
    o = torch.empty(4 * len(mine), dtype=torch.int64)
    dist.all_gather_into_tensor(o, g, group=half)
    out["half_gather"] = o.tolist()
    out["half_gather_expect"] = [v + 10 * r for r in mine for v in range(4)]
    if len(mine) > 1:  # point-to-point between the half's first two ranks
        if rank == mine[0]:
            dist.send(torch.arange(7.0) * (rank + 1), mine[1], group=half)
        elif rank == mine[1]:
            x = torch.empty(7)
            dist.recv(x, mine[0], group=half)
            out["half_p2p"] = x.tolist()
            out["half_p2p_expect"] = (torch.arange(7.0) * (mine[0] + 1)).tolist()
    # A split of the split: every rank on its own.
    alone = dist.split_group(parent_pg=half, split_ranks=[[r] for r in mine])
    t = torch.full((3,), float(rank))
    dist.all_reduce(t, group=alone)
    out["alone_sum"] = t.tolist()
    # The last rank in no new group.
    some = dist.split_group(split_ranks=[list(range(world - 1))])
    out["left_out"] = some is None or some == dist.GroupMember.NON_GROUP_MEMBER
    if not out["left_out"]:
        t = torch.ones(5, dtype=torch.int32)
        dist.all_reduce(t, group=some)
        out["some_sum"] = t.tolist()
    # The parent still works.
    t = torch.ones(2)
    dist.all_reduce(t)
    out["parent_sum"] = t.tolist()
    dist.barrier()
    dist.destroy_process_group()
    return out


def mode_shared(rank, world, store):
    """Shared tensors (xal_torch.use_shared_tensors): allreduces in place in
    the ranks' tensors, for several sizes (odd ones: shares of unequal
    length), dtypes and ops, one where a rank's tensor is not shared (the
    ordinary path), and DDP trained on shared tensors against DDP on
    ordinary ones (the same reductions in the same order: equal bits)."""
    from cases import assert_close, make_input, reference_reduce, torch_op
    from torch.nn.parallel import DistributedDataParallel as DDP
    init(rank, world, store)
    out = {"checks": {}}
    xal_torch.use_shared_tensors(min_bytes=256 << 10)
    before = xal_torch.zero_copy_allreduces()
    large = 0
    for name, dt, op, n in [("sum-float32", "float32", "SUM", 1 << 18),
                            ("sum-float32-odd", "float32", "SUM", (1 << 18) + 7),
                            ("max-bfloat16", "bfloat16", "MAX", 1 << 20),
                            ("avg-float64", "float64", "AVG", 100_003),
                            ("product-int64", "int64", "PRODUCT", 70_000),
                            ("min-uint8", "uint8", "MIN", 3 << 20),
                            ("sum-float32-large", "float32", "SUM", (8 << 20) + 3),
                            ("sum-float32-small", "float32", "SUM", 1000)]:
        x = make_input(f"shared/{name}", rank, (n,), dt)
        shared = xal_torch.is_shared_tensor(x)
        large += shared
        dist.all_reduce(x, op=torch_op(op))
        want = reference_reduce([make_input(f"shared/{name}", r, (n,), dt) for r in range(world)],
                                op, dt)
        try:
            assert_close(x, want, dt, name)
            ok = True
        except AssertionError as e:
            ok = str(e)
        out["checks"][name] = {"shared": shared, "ok": ok}
    out["zero_copy"] = xal_torch.zero_copy_allreduces() - before
    out["large"] = large
    # One rank's tensor in ordinary memory: everyone takes the ordinary path.
    before = xal_torch.zero_copy_allreduces()
    xal_torch.use_shared_tensors(rank != 0, min_bytes=256 << 10)
    x = torch.full((1 << 18,), float(rank + 1))
    dist.all_reduce(x)
    out["mixed_ok"] = bool(torch.all(x == sum(range(1, world + 1))).item())
    out["mixed_zero_copy"] = xal_torch.zero_copy_allreduces() - before
    # DDP on shared tensors (its buckets too) and on ordinary ones.
    params = {}
    for mode in ("ordinary", "shared"):
        xal_torch.use_shared_tensors(mode == "shared", min_bytes=256 << 10)
        torch.manual_seed(5)
        model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                        torch.nn.Linear(512, 4)), bucket_cap_mb=1)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        g = torch.Generator().manual_seed(99 + rank)
        before = xal_torch.zero_copy_allreduces()
        for _ in range(5):
            xb = torch.randn(32, 256, generator=g)
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(xb), xb[:, :4]).backward()
            opt.step()
        params[mode] = torch.cat([p.detach().flatten() for p in model.parameters()])
        out[f"ddp_zero_copy_{mode}"] = xal_torch.zero_copy_allreduces() - before
    out["ddp_equal"] = bool(torch.equal(params["ordinary"], params["shared"]))
    xal_torch.use_shared_tensors(False)
    dist.barrier()
    dist.destroy_process_group()
    return out


def mode_p2p_errors(rank, world, store):
    """A receive of another size than its message, a receive of another
    tag, then a receive whose sender never sends (timeout 3 s)."""
    timeout_s = 3.0
    init(rank, world, store, timeout_s)
    out = {"timeout_s": timeout_s}
    def attempt(key, fn):
        start = time.monotonic()
        try:
            fn()
            out[key] = None
        except Exception as e:
            out[key] = f"{type(e).__name__}: {e}"
        out[key + "_s"] = time.monotonic() - start
    if rank == 0:
        dist.send(torch.arange(10, dtype=torch.float32), 1)
    elif rank == 1:
        attempt("size", lambda: dist.recv(torch.empty(12), 0))
    if rank == 0:
        dist.send(torch.ones(4), 1, tag=3)
    elif rank == 1:
        attempt("tag", lambda: dist.recv(torch.empty(4), 0, tag=4))
    # The group works after both: a ping-pong.
    if rank == 0:
        dist.send(torch.full((5,), 7.0), 1)
    elif rank == 1:
        t = torch.empty(5)
        attempt("after", lambda: dist.recv(t, 0))
        out["after_value"] = t.tolist()
    if rank == 1:
        attempt("never", lambda: dist.recv(torch.empty(3), 0))
        attempt("anysource_never", lambda: dist.recv(torch.empty(3)))
    else:
        time.sleep(2 * timeout_s + 2)
    out["survivor_alive"] = True
    return out


def mode_p2p_exit(rank, world, store):
    """Rank 1 dies while rank 0 waits in a recv from it (timeout 20 s)."""
    timeout_s = 20.0
    init(rank, world, store, timeout_s)
    dist.barrier()
    if rank == 1:
        time.sleep(1.0)
        os._exit(17)
    out = {"timeout_s": timeout_s}
    start = time.monotonic()
    try:
        dist.recv(torch.empty(8), 1)
        out["raised"] = None
    except Exception as e:
        out["raised"] = f"{type(e).__name__}: {e}"
    out["elapsed_s"] = time.monotonic() - start
    return out


def mode_hosts_exit(rank, world, store):
    """On two hosts (test_hosts.py): the last rank dies while rank 0 waits
    in a recv from it and rank 1 in a recv_anysource (timeout 4 s)."""
    timeout_s = 4.0
    init(rank, world, store, timeout_s)
    dist.barrier()
    if rank == world - 1:
        time.sleep(0.5)
        os._exit(17)
    out = {"timeout_s": timeout_s, "raised": None}
    start = time.monotonic()
    try:
        if rank == 0:
            dist.recv(torch.empty(8), world - 1)
        elif rank == 1:
            dist.recv(torch.empty(8))
        out["raised"] = "ran"
    except Exception as e:
        out["raised"] = f"{type(e).__name__}: {e}"
    out["elapsed_s"] = time.monotonic() - start
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


def mode_ddp(rank, world, gloo, steps=20):
    from torch.nn.parallel import DistributedDataParallel as DDP
    calls0 = xal_torch.calls_run()
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
    calls = xal_torch.calls_run() - calls0
    return {"max_param_diff": diff, "xal_calls": calls,
            "moved": moved, "rank_spread": spread, "losses": losses}


def mode_fsdp(rank, world, gloo, steps=20):
    """FSDP (FULL_SHARD, FSDP1) over "xal", over Gloo, and a plain model
    trained on every rank's batch locally (the reference: FSDP averages the
    ranks' gradients, i.e. trains on the mean loss over their batches)."""
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy
    torch.manual_seed(1234 + rank)  # different per rank: the broadcast below must fix it
    base = MLP()
    for p in base.parameters():  # rank 0's start (sync_module_states needs CUDA)
        dist.broadcast(p.data, src=0)
    ref = copy.deepcopy(base)
    initial = [p.detach().clone() for p in ref.parameters()]
    calls0 = xal_torch.calls_run()

    def wrap(group):
        return FSDP(copy.deepcopy(base), process_group=group, device_id=torch.device("cpu"),
                    sharding_strategy=ShardingStrategy.FULL_SHARD,
                    auto_wrap_policy=lambda module, recurse, nonwrapped_numel:
                        recurse or isinstance(module, torch.nn.Linear))
    models = {"xal": wrap(dist.group.WORLD), "gloo": wrap(gloo), "ref": ref}
    opts = {k: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for k, m in models.items()}
    gens = [torch.Generator().manual_seed(99 + r) for r in range(world)]
    w_true = torch.randn(16, 4, generator=torch.Generator().manual_seed(7))
    losses = {k: [] for k in models}
    for _ in range(steps):
        batches = [torch.randn(32, 16, generator=g) for g in gens]
        xb = batches[rank]
        for k, m in models.items():
            opts[k].zero_grad()
            if k == "ref":
                loss = sum(torch.nn.functional.mse_loss(m(b), b @ w_true) for b in batches) / world
            else:
                loss = torch.nn.functional.mse_loss(m(xb), xb @ w_true)
            loss.backward()
            opts[k].step()
            losses[k].append(loss.item())
    calls = xal_torch.calls_run() - calls0
    params = {}
    for k in ("xal", "gloo"):
        with FSDP.summon_full_params(models[k]):
            params[k] = [p.detach().clone() for p in models[k].parameters()]
    params["ref"] = [p.detach() for p in ref.parameters()]
    shapes_ok = [tuple(p.shape) for p in params["xal"]] == [tuple(p.shape) for p in params["ref"]]

    def diff(a, b):
        return max((x - y).abs().max().item() for x, y in zip(params[a], params[b]))
    flat = torch.cat([p.flatten() for p in params["xal"]])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat, group=gloo)
    spread = max((t - gathered[0]).abs().max().item() for t in gathered)
    return {"shapes_ok": shapes_ok, "xal_vs_gloo": diff("xal", "gloo"),
            "xal_vs_ref": diff("xal", "ref"), "gloo_vs_ref": diff("gloo", "ref"),
            "moved": max((a - b).abs().max().item() for a, b in zip(params["xal"], initial)),
            "rank_spread": spread, "xal_calls": calls, "losses": losses}


def mode_fault_train(rank, world, store):
    """DDP training on "xal" over fault:mock cards whose plan (XAL_FAULTS,
    the same on every rank, so that every rank fails at the same call)
    injects a fault mid-run: records the exception that reaches Python and
    whether a later call still fails."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    init(rank, world, store, timeout_s=30.0)
    torch.manual_seed(5)
    model = DDP(MLP(), bucket_cap_mb=0.002)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(99 + rank)
    out = {"raised": None, "step": None}
    for step in range(20):
        xb = torch.randn(32, 16, generator=g)
        opt.zero_grad()
        try:
            torch.nn.functional.mse_loss(model(xb), xb[:, :4]).backward()
        except Exception as e:  # asserted by the test
            out.update(raised=type(e).__name__, step=step, message=str(e).split("\n")[0],
                       is_oom=isinstance(e, torch.OutOfMemoryError),
                       is_dist_backend_error=isinstance(e, dist.DistBackendError))
            break
        opt.step()
    start = time.monotonic()
    try:
        dist.all_reduce(torch.ones(4))
        out["later"] = "ok"
    except Exception as e:
        out["later"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    out["later_s"] = time.monotonic() - start
    out["device"] = xal_torch.device_of()
    return out


def mode_hosts(rank, world, store):
    """The same calls on one host and on two (test_hosts.py compares them):
    every core collective, roots on leaders and on other ranks, a call of
    many shared-memory rounds, and 5 DDP steps."""
    from cases import make_input
    from torch.nn.parallel import DistributedDataParallel as DDP
    init(rank, world, store)
    out = {"hosts": xal_torch.hosts(), "results": {}}
    res = out["results"]
    R = dist.ReduceOp
    for name, dt, op, shape in [("sum-float32", "float32", R.SUM, (37, 5)),
                                ("sum-int64", "int64", R.SUM, (37, 5)),
                                ("max-bfloat16", "bfloat16", R.MAX, (37, 5)),
                                ("product-int32", "int32", R.PRODUCT, (37, 5)),
                                ("avg-float64", "float64", R.AVG, (37, 5)),
                                ("min-uint8", "uint8", R.MIN, (37, 5)),
                                ("sum-bool", "bool", R.SUM, (37, 5)),
                                ("big-sum-float32", "float32", R.SUM, (150_000,))]:
        x = make_input(f"hosts/{name}", rank, shape, dt)
        dist.all_reduce(x, op=op)
        res[f"allreduce-{name}"] = x.float().tolist()
    for root in range(world):
        x = make_input(f"hosts/bcast{root}", rank, (41,), "int32")
        dist.broadcast(x, src=root)
        res[f"broadcast-root{root}"] = x.tolist()
    x = make_input("hosts/reduce", rank, (29,), "float64")
    dist.reduce(x, dst=world - 1)
    if rank == world - 1:
        res["reduce"] = x.tolist()
    o = torch.empty(world * 53, dtype=torch.float16)
    dist.all_gather_into_tensor(o, make_input("hosts/ag", rank, (53,), "float16"))
    res["allgather_into_tensor"] = o.float().tolist()
    outs = [torch.empty(7, dtype=torch.int8) for _ in range(world)]
    dist.all_gather(outs, make_input("hosts/agl", rank, (7,), "int8"))
    res["allgather"] = [t.tolist() for t in outs]
    o = torch.empty(70_001)  # more than one round per rank
    dist.all_gather_into_tensor(o.narrow(0, 0, 70_000 // world * world),
                                make_input("hosts/agbig", rank, (70_000 // world,), "float32"))
    res["allgather-big"] = o[:70_000 // world * world].tolist()[::97]
    rs = torch.empty(19)
    dist.reduce_scatter_tensor(rs, make_input("hosts/rs", rank, (19 * world,), "float32"))
    res["reduce_scatter_tensor"] = rs.tolist()
    # All-to-all: equal and uneven splits, a list of tensors of different
    # sizes, and one of many shared-memory rounds.
    o = torch.empty(world * 6, dtype=torch.int64)
    dist.all_to_all_single(o, make_input("hosts/a2a", rank, (world * 6,), "int64"))
    res["alltoall"] = o.tolist()
    ins = [(rank + q) % 3 + 1 for q in range(world)]
    outs_ = [(p + rank) % 3 + 1 for p in range(world)]
    o = torch.empty(sum(outs_), 5)
    dist.all_to_all_single(o, make_input("hosts/a2av", rank, (sum(ins), 5), "float32"),
                           output_split_sizes=outs_, input_split_sizes=ins)
    res["alltoall-uneven"] = o.flatten().tolist()
    outs_l = [torch.empty((p * world + rank) % 4 + 1, dtype=torch.bfloat16) for p in range(world)]
    dist.all_to_all(outs_l, [make_input(f"hosts/a2al{q}", rank, ((rank * world + q) % 4 + 1,),
                                        "bfloat16") for q in range(world)])
    res["alltoall-list"] = [t.float().tolist() for t in outs_l]
    o = torch.empty(world * 20_000)
    dist.all_to_all_single(o, make_input("hosts/a2abig", rank, (world * 20_000,), "float32"))
    res["alltoall-big"] = o.tolist()[::89]
    # Point-to-point on one host (ranks 0 and 1 share one in both runs).
    if rank == 0:
        dist.send(make_input("hosts/p2p", 0, (33,), "float64"), 1)
    elif rank == 1:
        t = torch.empty(33, dtype=torch.float64)
        dist.recv(t, 0)
        res["p2p-local"] = t.tolist()
    torch.manual_seed(5)
    model = DDP(MLP(), bucket_cap_mb=0.002)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(99 + rank)
    for _ in range(5):
        xb = torch.randn(32, 16, generator=g)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(xb), xb[:, :4]).backward()
        opt.step()
    res["ddp"] = torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()
    dist.barrier()
    # Point-to-point between ranks 0 and world - 1 (on two hosts: on
    # different hosts), a ring over every rank in one batch (on two hosts
    # two of its messages cross), and a receive of another size (an error
    # naming it; the next message goes through).
    if rank == 0:
        dist.send(make_input("hosts/p2px", 0, (1000,), "float64"), world - 1)
    elif rank == world - 1:
        t = torch.empty(1000, dtype=torch.float64)
        dist.recv(t, 0)
        res["p2p-cross"] = t.tolist()
    x = make_input("hosts/ring", rank, (50_000,), "bfloat16")
    y = torch.empty_like(x)
    for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, x, (rank + 1) % world),
                                     dist.P2POp(dist.irecv, y, (rank - 1) % world)]):
        w.wait()
    res["p2p-ring"] = y.float().tolist()[::37]
    out["p2p_mismatch"] = None
    if rank in (0, world - 1):
        try:
            if rank == 0:
                dist.send(torch.ones(10), world - 1)
            else:
                dist.recv(torch.empty(12), 0)
            out["p2p_mismatch"] = "ran"
        except Exception as e:
            out["p2p_mismatch"] = f"{type(e).__name__}: {e}"
        if rank == 0:
            dist.send(torch.arange(5.0), world - 1)
        else:
            t = torch.empty(5)
            dist.recv(t, 0)
            res["p2p-after-mismatch"] = t.tolist()
    # recv_anysource: rank 0 takes one message from every other rank (on two
    # hosts, ranks 2 and 3 are on the other one) in whatever order they
    # come, then rank world - 1 one from rank 0 and one from rank 1 (on two
    # hosts both of the other host), each message naming its sender.
    if rank == 0:
        got = {}
        for _ in range(world - 1):
            t = torch.empty(77, dtype=torch.float64)
            src = dist.recv(t)
            got[src] = t.tolist()
        res["p2p-anysource"] = [[src, got[src]] for src in sorted(got)]
    else:
        dist.send(make_input("hosts/any", rank, (77,), "float64"), 0)
    if rank in (0, 1):
        dist.send(make_input("hosts/any2", rank, (5, 3), "int32"), world - 1)
    elif rank == world - 1:
        got = {}
        for _ in range(2):
            t = torch.empty((5, 3), dtype=torch.int32)
            w = dist.irecv(t)
            w.wait()
            got[w._source_rank()] = t.tolist()
        res["p2p-anysource-remote"] = [[src, got[src]] for src in sorted(got)]
    # A receive whose sender never sends, on a group with a 3 s timeout:
    # an error within the timeout, not a hang; the same for recv_anysource.
    quick = dist.new_group(backend="xal", timeout=datetime.timedelta(seconds=3))
    out["p2p_silent"] = None
    if rank == world - 1:
        start = time.monotonic()
        try:
            dist.recv(torch.empty(4), group=quick)
            out["p2p_silent"] = "ran"
        except Exception as e:
            out["p2p_silent"] = f"{type(e).__name__}: {e}"
        out["p2p_silent_s"] = time.monotonic() - start
    if rank == 0:
        start = time.monotonic()
        try:
            dist.recv(torch.empty(4), world - 1, group=quick)
            out["p2p_silent"] = "ran"
        except Exception as e:
            out["p2p_silent"] = f"{type(e).__name__}: {e}"
        out["p2p_silent_s"] = time.monotonic() - start
    dist.barrier()
    dist.destroy_process_group()
    return out


def mode_train(rank, world, store):
    """DDP, then FSDP, in one start of the ranks (test_ddp.py, test_fsdp.py)."""
    init(rank, world, store)
    gloo = dist.new_group(backend="gloo")
    out = {"ddp": mode_ddp(rank, world, gloo), "fsdp": mode_fsdp(rank, world, gloo)}
    dist.barrier()
    dist.destroy_process_group()
    return out


def main():
    mode, rank, world, store, result = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    modes = {
        "ops": mode_ops, "device_memory": mode_device_memory, "device_string": mode_device_string,
        "shared": mode_shared, "split": mode_split, "p2p": mode_p2p,
        "p2p_errors": mode_p2p_errors, "p2p_exit": mode_p2p_exit,
        "fault_train": mode_fault_train, "hosts": mode_hosts, "hosts_exit": mode_hosts_exit,
        "train": mode_train,
        "exit": lambda r, w, s: mode_fault(r, w, s, "exit"),
        "hang": lambda r, w, s: mode_fault(r, w, s, "hang"),
    }
    if mode not in modes:
        raise SystemExit(f"unknown mode {mode}")
    out = modes[mode](rank, world, store)
    with open(result, "w") as f:
        json.dump(out, f)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
