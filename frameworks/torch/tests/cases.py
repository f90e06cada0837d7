"""The op battery: every case runs on the "xal" group and, where Gloo has
the op and dtype, on a Gloo group over the same store with the same
inputs; both are checked against a reference computed locally from every
rank's inputs (each rank can make every rank's input: they are seeded by
rank). Tolerances: exact for integers and bool; float32 rtol/atol 1e-5,
float64 1e-12, float16 5e-3, bfloat16 3e-2 (sums in another order;
Gloo accumulates halves in half precision). Every collective of a case runs
before any assertion, so that a failed check leaves the ranks in step."""
from __future__ import annotations

import zlib

import torch
import torch.distributed as dist

DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int8": torch.int8, "int32": torch.int32,
    "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
}
FLOATS = {"float32", "float64", "float16", "bfloat16"}
TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 5e-3, "bfloat16": 3e-2}
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "PREMUL_SUM"]
PREMUL = 0.5


def make_input(case: str, rank: int, shape, dtype_name: str) -> torch.Tensor:
    g = torch.Generator().manual_seed(zlib.crc32(f"{case}/{rank}".encode()))
    dt = DTYPES[dtype_name]
    if dtype_name in FLOATS:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * 2 + 0.25).to(dt)
    if dtype_name == "bool":
        return torch.randint(0, 2, shape, generator=g).bool()
    lo, hi = (0, 4) if dtype_name == "uint8" else (-3, 4)
    return torch.randint(lo, hi, shape, generator=g).to(dt)


def reference_reduce(xs: list[torch.Tensor], op: str, dtype_name: str) -> torch.Tensor:
    dt = xs[0].dtype
    if dtype_name in FLOATS:
        s = torch.stack([x.double() for x in xs])
    else:
        s = torch.stack([x.long() for x in xs])
    if op == "SUM":
        r = s.sum(0)
    elif op == "PREMUL_SUM":
        r = (s * PREMUL).sum(0)
    elif op == "AVG":
        r = s.mean(0)
    elif op == "PRODUCT":
        r = s.prod(0)
    elif op == "MIN":
        r = s.min(0).values
    else:
        r = s.max(0).values
    if dtype_name == "bool":
        return r.bool() if op in ("SUM", "MAX") else s.bool().all(0) if op in ("PRODUCT", "MIN") else r.bool()
    if dtype_name in FLOATS:
        return r.to(dt)
    # Integers wrap as the dtype does.
    return r.to(torch.int64).to(dt) if dtype_name != "uint8" else (r % 256).to(dt)


def torch_op(op: str):
    if op == "PREMUL_SUM":
        return dist._make_nccl_premul_sum(PREMUL)
    return getattr(dist.ReduceOp, op)


def assert_close(got: torch.Tensor, want: torch.Tensor, dtype_name: str, what: str):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    if dtype_name in FLOATS:
        tol = TOL[dtype_name]
        ok = torch.allclose(got.double(), want.double(), rtol=tol, atol=tol)
        diff = (got.double() - want.double()).abs().max().item() if got.numel() else 0
        assert ok, f"{what}: max abs diff {diff} beyond {tol}"
    else:
        assert torch.equal(got, want), f"{what}: not equal ({got.flatten()[:8]} vs {want.flatten()[:8]})"


def valid(op: str, dtype_name: str) -> bool:
    return not (op in ("AVG", "PREMUL_SUM") and dtype_name not in FLOATS)


class Ctx:
    def __init__(self, rank, world, xal, gloo):
        self.rank, self.world, self.xal, self.gloo = rank, world, xal, gloo
        self.gloo_used = []  # cases Gloo took part in

    def on_gloo(self, case, fn):
        """fn(group) on Gloo; None when Gloo does not have the op/dtype."""
        try:
            out = fn(self.gloo)
        except (RuntimeError, ValueError, TypeError) as e:  # Gloo lacks the op or dtype
            if "timed out" in str(e).lower():
                raise
            return None
        self.gloo_used.append(case)
        return out


SHAPE = (37, 5)
BIG = (150_000,)  # > several shared-memory slots of the tests (64 KiB)


def case_allreduce(ctx: Ctx, case: str, dtype_name: str, op: str, shape=SHAPE):
    x = make_input(case, ctx.rank, shape, dtype_name)
    if not valid(op, dtype_name):
        try:
            dist.all_reduce(x.clone(), op=torch_op(op), group=ctx.xal)
        except TypeError as e:
            msg = str(e)
            assert "allreduce" in msg and op in msg, f"unclear error: {msg}"
            return
        raise AssertionError(f"allreduce {op} on {dtype_name} did not raise")
    want = reference_reduce([make_input(case, r, shape, dtype_name) for r in range(ctx.world)],
                            op, dtype_name)
    got = x.clone()
    dist.all_reduce(got, op=torch_op(op), group=ctx.xal)

    def g(group):
        y = x.clone()
        dist.all_reduce(y, op=torch_op(op), group=group)
        return y
    gl = ctx.on_gloo(case, g)
    assert_close(got, want, dtype_name, "xal vs reference")
    if gl is not None:
        assert_close(got, gl, dtype_name, "xal vs gloo")


def case_broadcast(ctx, case, dtype_name):
    root = ctx.world - 1
    x = make_input(case, ctx.rank, SHAPE, dtype_name)
    want = make_input(case, root, SHAPE, dtype_name)
    got = x.clone()
    dist.broadcast(got, src=root, group=ctx.xal)
    gl = ctx.on_gloo(case, lambda grp: (lambda y: (dist.broadcast(y, src=root, group=grp), y)[1])(x.clone()))
    assert_close(got, want, dtype_name, "xal vs reference")
    if gl is not None:
        assert_close(got, gl, dtype_name, "xal vs gloo")


def case_reduce(ctx, case, dtype_name, op):
    root = 1 % ctx.world
    x = make_input(case, ctx.rank, SHAPE, dtype_name)
    want = reference_reduce([make_input(case, r, SHAPE, dtype_name) for r in range(ctx.world)],
                            op, dtype_name)
    got = x.clone()
    dist.reduce(got, dst=root, op=torch_op(op), group=ctx.xal)
    gl = ctx.on_gloo(case, lambda grp: (lambda y: (dist.reduce(y, dst=root, op=torch_op(op), group=grp), y)[1])(x.clone()))
    if ctx.rank == root:
        assert_close(got, want, dtype_name, "xal vs reference")
        if gl is not None:
            assert_close(got, gl, dtype_name, "xal vs gloo")


def case_allgather(ctx, case, dtype_name):
    x = make_input(case, ctx.rank, SHAPE, dtype_name)
    want = [make_input(case, r, SHAPE, dtype_name) for r in range(ctx.world)]
    outs = [torch.empty_like(x) for _ in range(ctx.world)]
    dist.all_gather(outs, x, group=ctx.xal)

    def g(grp):
        o = [torch.empty_like(x) for _ in range(ctx.world)]
        dist.all_gather(o, x, group=grp)
        return o
    gl = ctx.on_gloo(case, g)
    for r in range(ctx.world):
        assert_close(outs[r], want[r], dtype_name, f"xal block {r}")
    if gl is not None:
        for r in range(ctx.world):
            assert_close(outs[r], gl[r], dtype_name, f"xal vs gloo block {r}")


def case_allgather_into_tensor(ctx, case, dtype_name, in_place=False):
    n = 53
    want = torch.cat([make_input(case, r, (n,), dtype_name) for r in range(ctx.world)])
    out = torch.empty(ctx.world * n, dtype=DTYPES[dtype_name])
    if in_place:  # as FSDP: the input is this rank's block of the output
        inp = out.narrow(0, ctx.rank * n, n)
        inp.copy_(make_input(case, ctx.rank, (n,), dtype_name))
    else:
        inp = make_input(case, ctx.rank, (n,), dtype_name)
    dist.all_gather_into_tensor(out, inp, group=ctx.xal)

    def g(grp):
        o = torch.empty_like(out)
        dist.all_gather_into_tensor(o, make_input(case, ctx.rank, (n,), dtype_name), group=grp)
        return o
    gl = ctx.on_gloo(case, g)
    assert_close(out, want, dtype_name, "xal vs reference")
    if gl is not None:
        assert_close(out, gl, dtype_name, "xal vs gloo")


def case_reduce_scatter_tensor(ctx, case, dtype_name, op, shape_per_rank=(41,)):
    n = shape_per_rank[0]
    inputs = [make_input(case, r, (ctx.world * n,), dtype_name) for r in range(ctx.world)]
    full = reference_reduce(inputs, op, dtype_name)
    want = full.narrow(0, ctx.rank * n, n)
    got = torch.empty(n, dtype=DTYPES[dtype_name])
    dist.reduce_scatter_tensor(got, inputs[ctx.rank].clone(), op=torch_op(op), group=ctx.xal)

    def g(grp):
        o = torch.empty_like(got)
        dist.reduce_scatter_tensor(o, inputs[ctx.rank].clone(), op=torch_op(op), group=grp)
        return o
    gl = ctx.on_gloo(case, g)
    assert_close(got, want, dtype_name, "xal vs reference")
    if gl is not None:
        assert_close(got, gl, dtype_name, "xal vs gloo")


def case_reduce_scatter_list(ctx, case, dtype_name, op):
    n = 19
    inputs = [make_input(case, r, (ctx.world * n,), dtype_name) for r in range(ctx.world)]
    want = reference_reduce(inputs, op, dtype_name).narrow(0, ctx.rank * n, n)
    got = torch.empty(n, dtype=DTYPES[dtype_name])
    dist.reduce_scatter(got, list(inputs[ctx.rank].clone().chunk(ctx.world)), op=torch_op(op),
                        group=ctx.xal)
    assert_close(got, want, dtype_name, "xal vs reference")


COALESCED_SHAPES = [(7,), (3, 11), (1,)]


def check_each(got, want, gloo, dtype_name):
    """Tensor i of a coalesced call against the reference and Gloo's."""
    for i in range(len(want)):
        assert_close(got[i], want[i], dtype_name, f"xal vs reference, tensor {i}")
        if gloo is not None:
            assert_close(got[i], gloo[i], dtype_name, f"xal vs gloo, tensor {i}")


def case_allreduce_coalesced(ctx, case, dtype_name, op):
    """ProcessGroup.allreduce_coalesced: tensors of several shapes, one call."""
    ins = [make_input(f"{case}/{i}", ctx.rank, shp, dtype_name)
           for i, shp in enumerate(COALESCED_SHAPES)]
    want = [reference_reduce([make_input(f"{case}/{i}", r, shp, dtype_name)
                              for r in range(ctx.world)], op, dtype_name)
            for i, shp in enumerate(COALESCED_SHAPES)]

    def run(group):
        ts = [x.clone() for x in ins]
        o = dist.AllreduceCoalescedOptions()
        o.reduceOp = torch_op(op)
        group.allreduce_coalesced(ts, o).wait()
        return ts
    check_each(run(ctx.xal), want, ctx.on_gloo(case, run), dtype_name)


def case_allgather_into_tensor_coalesced(ctx, case, dtype_name):
    """ProcessGroup.allgather_into_tensor_coalesced (FSDP's all-gathers)."""
    sizes = [5, 17, 1]
    ins = [make_input(f"{case}/{i}", ctx.rank, (n,), dtype_name) for i, n in enumerate(sizes)]
    want = [torch.cat([make_input(f"{case}/{i}", r, (n,), dtype_name) for r in range(ctx.world)])
            for i, n in enumerate(sizes)]

    def run(group):
        outs = [torch.empty(ctx.world * n, dtype=DTYPES[dtype_name]) for n in sizes]
        group.allgather_into_tensor_coalesced(outs, [x.clone() for x in ins]).wait()
        return outs
    check_each(run(ctx.xal), want, ctx.on_gloo(case, run), dtype_name)


def case_reduce_scatter_tensor_coalesced(ctx, case, dtype_name, op):
    """ProcessGroup.reduce_scatter_tensor_coalesced (FSDP's reduce-scatters)."""
    sizes = [3, 13, 1]
    inputs = [[make_input(f"{case}/{i}", r, (ctx.world * n,), dtype_name) for r in range(ctx.world)]
              for i, n in enumerate(sizes)]
    want = [reference_reduce(inputs[i], op, dtype_name).narrow(0, ctx.rank * n, n)
            for i, n in enumerate(sizes)]

    def run(group):
        outs = [torch.empty(n, dtype=DTYPES[dtype_name]) for n in sizes]
        o = dist.ReduceScatterOptions()
        o.reduceOp = torch_op(op)
        group.reduce_scatter_tensor_coalesced(
            outs, [inputs[i][ctx.rank].clone() for i in range(len(sizes))], o).wait()
        return outs
    check_each(run(ctx.xal), want, ctx.on_gloo(case, run), dtype_name)


def case_coalescing_manager(ctx, case):
    """torch's _coalescing_manager around all_reduce, all_gather_into_tensor
    and reduce_scatter_tensor calls (how FSDP and DTensor batch them)."""
    n, w, r = 9, ctx.world, ctx.rank

    def run(group):
        a = [make_input(f"{case}/ar{i}", r, (n + i,), "float32") for i in range(3)]
        with dist._coalescing_manager(group=group, async_ops=True) as cm:
            for t in a:
                dist.all_reduce(t, group=group)
        cm.wait()
        g = [torch.empty(w * (n + i)) for i in range(3)]
        with dist._coalescing_manager(group=group, async_ops=True) as cm:
            for i, o in enumerate(g):
                dist.all_gather_into_tensor(o, make_input(f"{case}/ag{i}", r, (n + i,), "float32"),
                                            group=group)
        cm.wait()
        s = [torch.empty(n + i) for i in range(3)]
        with dist._coalescing_manager(group=group, async_ops=True) as cm:
            for i, o in enumerate(s):
                dist.reduce_scatter_tensor(
                    o, make_input(f"{case}/rs{i}", r, (w * (n + i),), "float32"), group=group)
        cm.wait()
        return a, g, s
    got = run(ctx.xal)
    gl = ctx.on_gloo(case, run)
    for i in range(3):
        m = n + i
        want_a = reference_reduce([make_input(f"{case}/ar{i}", q, (m,), "float32")
                                   for q in range(w)], "SUM", "float32")
        want_g = torch.cat([make_input(f"{case}/ag{i}", q, (m,), "float32") for q in range(w)])
        want_s = reference_reduce([make_input(f"{case}/rs{i}", q, (w * m,), "float32")
                                   for q in range(w)], "SUM", "float32").narrow(0, r * m, m)
        for what, x, want in (("all_reduce", got[0][i], want_a), ("all_gather", got[1][i], want_g),
                              ("reduce_scatter", got[2][i], want_s)):
            assert_close(x, want, "float32", f"{what} {i} vs reference")
        if gl is not None:
            for k, what in enumerate(("all_reduce", "all_gather", "reduce_scatter")):
                assert_close(got[k][i], gl[k][i], "float32", f"{what} {i} vs gloo")


def split(r, q):
    """Rows rank r sends to rank q in the uneven all_to_all cases (may be 0)."""
    return (r + 2 * q) % 3


def case_alltoall_single(ctx, case, dtype_name, uneven):
    cols = 3
    w = ctx.world
    if uneven:
        in_splits = [split(ctx.rank, q) for q in range(w)]
        out_splits = [split(p, ctx.rank) for p in range(w)]
    else:
        in_splits = out_splits = [2] * w
    def rows_of(r):
        return [split(r, q) for q in range(w)] if uneven else [2] * w
    x = make_input(case, ctx.rank, (sum(in_splits), cols), dtype_name)
    pieces = []
    for p in range(w):
        xp = make_input(case, p, (sum(rows_of(p)), cols), dtype_name)
        off = sum(rows_of(p)[:ctx.rank])
        pieces.append(xp[off:off + rows_of(p)[ctx.rank]])
    want = torch.cat(pieces)
    got = torch.empty(sum(out_splits), cols, dtype=DTYPES[dtype_name])
    kw = dict(output_split_sizes=out_splits, input_split_sizes=in_splits) if uneven else {}
    dist.all_to_all_single(got, x, group=ctx.xal, **kw)

    def g(grp):
        o = torch.empty_like(got)
        dist.all_to_all_single(o, x, group=grp, **kw)
        return o
    gl = ctx.on_gloo(case, g)
    assert_close(got, want, dtype_name, "xal vs reference")
    if gl is not None:
        assert_close(got, gl, dtype_name, "xal vs gloo")


def case_alltoall_list(ctx, case, dtype_name):
    w = ctx.world
    ins = [make_input(f"{case}/{q}", ctx.rank, (split(ctx.rank, q) + 1, 2), dtype_name) for q in range(w)]
    want = [make_input(f"{case}/{ctx.rank}", p, (split(p, ctx.rank) + 1, 2), dtype_name) for p in range(w)]
    outs = [torch.empty_like(t) for t in want]
    dist.all_to_all(outs, ins, group=ctx.xal)
    for p in range(w):
        assert_close(outs[p], want[p], dtype_name, f"xal block from {p}")


def case_gather(ctx, case, dtype_name):
    root = ctx.world - 1
    x = make_input(case, ctx.rank, SHAPE, dtype_name)
    want = [make_input(case, r, SHAPE, dtype_name) for r in range(ctx.world)]
    outs = [torch.empty_like(x) for _ in range(ctx.world)] if ctx.rank == root else None
    dist.gather(x, outs, dst=root, group=ctx.xal)

    def g(grp):
        o = [torch.empty_like(x) for _ in range(ctx.world)] if ctx.rank == root else None
        dist.gather(x, o, dst=root, group=grp)
        return o
    gl = ctx.on_gloo(case, g)
    if ctx.rank == root:
        for r in range(ctx.world):
            assert_close(outs[r], want[r], dtype_name, f"xal block {r}")
            if gl is not None:
                assert_close(outs[r], gl[r], dtype_name, f"xal vs gloo block {r}")


def case_scatter(ctx, case, dtype_name):
    root = 1 % ctx.world
    pieces = [make_input(f"{case}/{q}", root, SHAPE, dtype_name) for q in range(ctx.world)]
    got = torch.empty(SHAPE, dtype=DTYPES[dtype_name])
    dist.scatter(got, [p.clone() for p in pieces] if ctx.rank == root else None, src=root,
                 group=ctx.xal)

    def g(grp):
        o = torch.empty_like(got)
        dist.scatter(o, [p.clone() for p in pieces] if ctx.rank == root else None, src=root,
                     group=grp)
        return o
    gl = ctx.on_gloo(case, g)
    assert_close(got, pieces[ctx.rank], dtype_name, "xal vs reference")
    if gl is not None:
        assert_close(got, gl, dtype_name, "xal vs gloo")


def case_subgroups(ctx, case):
    """new_group: halves of the group, and every rank but the first, each
    running collectives of their own (a group of xal's, made on its ranks
    through the group's store), with the whole group still usable."""
    w, r = ctx.world, ctx.rank
    halves = [list(range(0, w // 2)), list(range(w // 2, w))]
    groups = [dist.new_group(ranks=h, backend="xal") for h in halves]
    rest = dist.new_group(ranks=list(range(1, w)), backend="xal") if w > 2 else None
    mine = halves[0] if r in halves[0] else halves[1]
    x = make_input(case, r, (33,), "int64")
    dist.all_reduce(x, group=groups[halves.index(mine)])
    want = reference_reduce([make_input(case, q, (33,), "int64") for q in mine], "SUM", "int64")
    assert_close(x, want, "int64", f"allreduce over {mine}")
    o = torch.empty(len(mine) * 5, dtype=torch.float32)
    dist.all_gather_into_tensor(o, make_input(case + "/ag", r, (5,), "float32"),
                                group=groups[halves.index(mine)])
    assert_close(o, torch.cat([make_input(case + "/ag", q, (5,), "float32") for q in mine]),
                 "float32", f"all_gather over {mine}")
    if rest is not None and r >= 1:
        y = make_input(case + "/rest", r, (9,), "float64")
        dist.broadcast(y, src=w - 1, group=rest)  # a global rank as the root
        assert_close(y, make_input(case + "/rest", w - 1, (9,), "float64"), "float64",
                     "broadcast over the ranks but the first")
    z = torch.ones(3)
    dist.all_reduce(z, group=ctx.xal)
    assert_close(z, torch.full((3,), float(w)), "float32", "the whole group afterwards")
    for grp, members in zip(groups + [rest], halves + [list(range(1, w))]):
        if grp is not None and r in members:
            dist.destroy_process_group(grp)


def case_big_allreduce(ctx, case):
    case_allreduce(ctx, case, "float32", "SUM", shape=BIG)


def case_big_allgather(ctx, case):
    n = BIG[0] // ctx.world + 7
    out = torch.empty(ctx.world * n)
    dist.all_gather_into_tensor(out, make_input(case, ctx.rank, (n,), "float32"), group=ctx.xal)
    want = torch.cat([make_input(case, r, (n,), "float32") for r in range(ctx.world)])
    assert_close(out, want, "float32", "xal vs reference")


def case_noncontiguous(ctx, case):
    base = make_input(case, ctx.rank, (8, 10), "float64")
    view = base[:, ::2]
    assert not view.is_contiguous()
    dist.all_reduce(view, group=ctx.xal)
    want_full = reference_reduce([make_input(case, r, (8, 10), "float64") for r in range(ctx.world)],
                                 "SUM", "float64")
    assert_close(base[:, ::2].contiguous(), want_full[:, ::2].contiguous(), "float64", "strided view")
    assert_close(base[:, 1::2].contiguous(), make_input(case, ctx.rank, (8, 10), "float64")[:, 1::2].contiguous(),
                 "float64", "untouched columns")


def case_async_work(ctx, case):
    x = make_input(case, ctx.rank, SHAPE, "float32")
    work = dist.all_reduce(x, group=ctx.xal, async_op=True)
    fut = work.get_future()
    assert work.wait(), "wait returned False"
    assert work.is_completed()
    val = fut.wait()
    want = reference_reduce([make_input(case, r, SHAPE, "float32") for r in range(ctx.world)],
                            "SUM", "float32")
    assert_close(val[0], want, "float32", "future value")
    assert_close(x, want, "float32", "tensor")


def case_barrier(ctx, case):
    for _ in range(3):
        dist.barrier(group=ctx.xal)
    assert True


def case_unsupported_dtype(ctx, case):
    x = torch.ones(4, dtype=torch.int16)
    try:
        dist.all_reduce(x, group=ctx.xal)
    except TypeError as e:
        assert "allreduce" in str(e) and "Short" in str(e), str(e)
        return
    raise AssertionError("int16 allreduce did not raise")


def case_empty(ctx, case):
    x = torch.empty(0)
    dist.all_reduce(x, group=ctx.xal)
    assert x.numel() == 0


def build_cases():
    cases = {}
    for d in DTYPES:
        for op in OPS:
            cases[f"allreduce-{op}-{d}"] = (lambda c, d=d, op=op: lambda ctx: case_allreduce(ctx, c, d, op))
        cases[f"broadcast-{d}"] = (lambda c, d=d: lambda ctx: case_broadcast(ctx, c, d))
        for op in ("SUM", "MAX"):
            cases[f"reduce-{op}-{d}"] = (lambda c, d=d, op=op: lambda ctx: case_reduce(ctx, c, d, op))
        cases[f"allgather-{d}"] = (lambda c, d=d: lambda ctx: case_allgather(ctx, c, d))
        cases[f"allgather_into_tensor-{d}"] = (lambda c, d=d: lambda ctx: case_allgather_into_tensor(ctx, c, d))
        for op in ("SUM", "MAX", "AVG", "PREMUL_SUM"):
            if valid(op, d):
                cases[f"reduce_scatter_tensor-{op}-{d}"] = (
                    lambda c, d=d, op=op: lambda ctx: case_reduce_scatter_tensor(ctx, c, d, op))
        for op in ("SUM", "MAX"):
            cases[f"allreduce_coalesced-{op}-{d}"] = (
                lambda c, d=d, op=op: lambda ctx: case_allreduce_coalesced(ctx, c, d, op))
            cases[f"reduce_scatter_tensor_coalesced-{op}-{d}"] = (
                lambda c, d=d, op=op: lambda ctx: case_reduce_scatter_tensor_coalesced(ctx, c, d, op))
        cases[f"allgather_into_tensor_coalesced-{d}"] = (
            lambda c, d=d: lambda ctx: case_allgather_into_tensor_coalesced(ctx, c, d))
        cases[f"alltoall_single-equal-{d}"] = (lambda c, d=d: lambda ctx: case_alltoall_single(ctx, c, d, False))
        cases[f"alltoall_single-uneven-{d}"] = (lambda c, d=d: lambda ctx: case_alltoall_single(ctx, c, d, True))
        cases[f"gather-{d}"] = (lambda c, d=d: lambda ctx: case_gather(ctx, c, d))
        cases[f"scatter-{d}"] = (lambda c, d=d: lambda ctx: case_scatter(ctx, c, d))
    cases["allgather_into_tensor-in_place-float32"] = (
        lambda c: lambda ctx: case_allgather_into_tensor(ctx, c, "float32", in_place=True))
    cases["reduce_scatter-list-SUM-float32"] = (lambda c: lambda ctx: case_reduce_scatter_list(ctx, c, "float32", "SUM"))
    cases["reduce_scatter-list-MIN-int64"] = (lambda c: lambda ctx: case_reduce_scatter_list(ctx, c, "int64", "MIN"))
    cases["alltoall-list-float32"] = (lambda c: lambda ctx: case_alltoall_list(ctx, c, "float32"))
    cases["alltoall-list-bool"] = (lambda c: lambda ctx: case_alltoall_list(ctx, c, "bool"))
    cases["allreduce-big-float32"] = (lambda c: lambda ctx: case_big_allreduce(ctx, c))
    cases["allgather_into_tensor-big-float32"] = (lambda c: lambda ctx: case_big_allgather(ctx, c))
    cases["allreduce-noncontiguous"] = (lambda c: lambda ctx: case_noncontiguous(ctx, c))
    cases["async-work-future"] = (lambda c: lambda ctx: case_async_work(ctx, c))
    cases["barrier"] = (lambda c: lambda ctx: case_barrier(ctx, c))
    cases["coalescing_manager-float32"] = (lambda c: lambda ctx: case_coalescing_manager(ctx, c))
    cases["unsupported-dtype-int16"] = (lambda c: lambda ctx: case_unsupported_dtype(ctx, c))
    cases["allreduce-empty"] = (lambda c: lambda ctx: case_empty(ctx, c))
    cases["new_group-subgroups"] = (lambda c: lambda ctx: case_subgroups(ctx, c))
    return {name: make(name) for name, make in cases.items()}


CASES = build_cases()
