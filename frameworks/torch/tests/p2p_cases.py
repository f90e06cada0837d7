"""The point-to-point battery: send, recv, recv_anysource,
batch_isend_irecv, tags and a pipeline, on the "xal" group and on a Gloo
group over the same store with the same inputs, each checked against what
the sender sent (every rank can make every rank's input: they are seeded by
rank). Messages move bytes: every dtype must arrive exactly."""
from __future__ import annotations

import torch
import torch.distributed as dist

from cases import DTYPES, assert_close, make_input

BIG = (100_000,)  # many chunks of the tests' shared-memory cells (8 KiB)


def gr(group, r):
    """Global rank of group rank r (the groups here span every rank)."""
    return dist.get_global_rank(group, r) if group is not dist.group.WORLD else r


def pairs(world):
    """(0, 1), (2, 3), ...: the ranks that talk in a ping-pong."""
    return [(a, a + 1) for a in range(0, world - 1, 2)]


def case_pingpong(ctx, case, dtype_name, shape=(37, 5)):
    """Rank a sends to b, b sends back what it got plus its own tensor."""
    def run(group):
        for a, b in pairs(ctx.world):
            if ctx.rank == a:
                dist.send(make_input(case, a, shape, dtype_name), gr(group, b), group=group)
                got = torch.empty(shape, dtype=DTYPES[dtype_name])
                dist.recv(got, gr(group, b), group=group)
                return got
            if ctx.rank == b:
                got = torch.empty(shape, dtype=DTYPES[dtype_name])
                dist.recv(got, gr(group, a), group=group)
                dist.send(make_input(case, b, shape, dtype_name), gr(group, a), group=group)
                return got
        return None
    mine = run(ctx.xal)
    theirs = ctx.on_gloo(case, run)
    for a, b in pairs(ctx.world):
        if ctx.rank in (a, b):
            want = make_input(case, b if ctx.rank == a else a, shape, dtype_name)
            assert_close(mine, want, dtype_name, f"{case} rank {ctx.rank}")
            if theirs is not None:
                assert_close(mine, theirs, dtype_name, f"{case} vs gloo")


def case_ring(ctx, case, dtype_name, shape=BIG):
    """batch_isend_irecv: every rank sends to the next and receives from the
    previous, all posted at once (a ring of large messages cannot
    deadlock)."""
    n, r = ctx.world, ctx.rank
    def run(group):
        got = torch.empty(shape, dtype=DTYPES[dtype_name])
        ops = [dist.P2POp(dist.isend, make_input(case, r, shape, dtype_name),
                          gr(group, (r + 1) % n), group),
               dist.P2POp(dist.irecv, got, gr(group, (r - 1) % n), group)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        return got
    mine = run(ctx.xal)
    theirs = ctx.on_gloo(case, run)
    assert_close(mine, make_input(case, (r - 1) % n, shape, dtype_name), dtype_name, case)
    if theirs is not None:
        assert_close(mine, theirs, dtype_name, f"{case} vs gloo")


def case_isend_irecv_queued(ctx, case):
    """Unbatched isend then irecv on every rank, both directions of each
    pair, messages of many chunks: no deadlock (a send never waits for its
    receiver)."""
    n, r = ctx.world, ctx.rank
    shape = (20_000,)
    def run(group):
        got = torch.empty(shape)
        peer = r ^ 1
        if peer >= n:
            return None
        s = dist.isend(make_input(case, r, shape, "float32"), gr(group, peer), group=group)
        q = dist.irecv(got, gr(group, peer), group=group)
        s.wait()
        q.wait()
        return got
    mine = run(ctx.xal)
    theirs = ctx.on_gloo(case, run)
    if mine is not None:
        assert_close(mine, make_input(case, r ^ 1, shape, "float32"), "float32", case)
        if theirs is not None:
            assert_close(mine, theirs, "float32", f"{case} vs gloo")


def case_anysource(ctx, case):
    """Rank 0 receives one message from every other rank, from whichever
    comes first; the Work (and dist.recv) names the sender."""
    n, r = ctx.world, ctx.rank
    shape = (64,)
    def run(group):
        if r == 0:
            got = {}
            for _ in range(n - 1):
                t = torch.empty(shape, dtype=torch.int64)
                src = dist.recv(t, group=group)
                got[src] = t
            return got
        dist.send(make_input(case, r, shape, "int64"), gr(group, 0), group=group)
        return None
    mine = run(ctx.xal)
    theirs = ctx.on_gloo(case, run)
    if r == 0:
        assert sorted(mine) == list(range(1, n)), sorted(mine)
        for src, t in mine.items():
            assert_close(t, make_input(case, src, shape, "int64"), "int64", f"{case} from {src}")
        if theirs is not None:
            assert sorted(theirs) == sorted(mine)


def case_anysource_work(ctx, case):
    """irecv without a source: Work.source_rank() names the sender."""
    r = ctx.rank
    if r == 0:
        t = torch.empty(3)
        w = ctx.xal.recv_anysource([t], 0)
        w.wait()
        assert w._source_rank() == 1, w._source_rank()
        assert torch.equal(t, torch.full((3,), 1.0)), t
    elif r == 1:
        dist.send(torch.full((3,), 1.0), 0)


def case_tags(ctx, case):
    """Two messages of one pair with different tags, received in the order
    sent, each with its tag (on Gloo as on xal)."""
    def run(group):
        for a, b in pairs(ctx.world):
            if ctx.rank == a:
                w1 = dist.isend(make_input(case, 1, (9,), "float64"), gr(group, b), group=group, tag=5)
                w2 = dist.isend(make_input(case, 2, (9,), "float64"), gr(group, b), group=group, tag=7)
                w1.wait()
                w2.wait()
            elif ctx.rank == b:
                x, y = torch.empty(9, dtype=torch.float64), torch.empty(9, dtype=torch.float64)
                dist.recv(x, gr(group, a), group=group, tag=5)
                dist.recv(y, gr(group, a), group=group, tag=7)
                return x, y
        return None
    mine = run(ctx.xal)
    theirs = ctx.on_gloo(case, run)
    if mine is not None:
        assert_close(mine[0], make_input(case, 1, (9,), "float64"), "float64", case)
        assert_close(mine[1], make_input(case, 2, (9,), "float64"), "float64", case)
        if theirs is not None:
            assert torch.equal(mine[0], theirs[0]) and torch.equal(mine[1], theirs[1])


def case_strided_and_empty(ctx, case):
    """A strided tensor sent into a strided one; an empty message."""
    for a, b in pairs(ctx.world):
        if ctx.rank == a:
            src = make_input(case, a, (8, 6), "int32")
            dist.send(src.t(), b)
            dist.send(torch.empty(0), b)
        elif ctx.rank == b:
            dst = torch.zeros(12, 8, dtype=torch.int32)[::2]  # rows 0, 2, ...: strided
            dist.recv(dst, a)
            e = torch.empty(0)
            dist.recv(e, a)
            assert_close(dst, make_input(case, a, (8, 6), "int32").t().contiguous(), "int32", case)


def case_pipeline(ctx, case):
    """A pipeline of one Linear per rank: activations of 4 micro-batches go
    forward stage to stage with isend/irecv (tag = micro-batch); the last
    stage's outputs return to rank 0, equal to the whole model run
    locally."""
    n, r = ctx.world, ctx.rank
    torch.manual_seed(1234)
    layers = [torch.nn.Linear(16, 16) for _ in range(n)]
    batches = [make_input(case, m, (8, 16), "float32") for m in range(4)]
    with torch.no_grad():
        outs = []
        for m, x in enumerate(batches):
            if r == 0:
                a = x
            else:
                a = torch.empty(8, 16)
                dist.irecv(a, r - 1, tag=m).wait()
            y = layers[r](a)
            dist.isend(y, (r + 1) % n, tag=m).wait()
            if r == 0:
                back = torch.empty(8, 16)
                dist.irecv(back, n - 1, tag=m).wait()
                outs.append(back)
        if r == 0:
            for x, got in zip(batches, outs):
                want = x
                for layer in layers:
                    want = layer(want)
                assert_close(got, want, "float32", case)


def build_cases():
    cases = {}
    for d in DTYPES:
        cases[f"pingpong-{d}"] = lambda ctx, d=d: case_pingpong(ctx, f"pingpong-{d}", d)
        cases[f"ring-{d}"] = lambda ctx, d=d: case_ring(ctx, f"ring-{d}", d)
    cases["isend-irecv-queued"] = lambda ctx: case_isend_irecv_queued(ctx, "isend-irecv-queued")
    cases["anysource"] = lambda ctx: case_anysource(ctx, "anysource")
    cases["anysource-work"] = lambda ctx: case_anysource_work(ctx, "anysource-work")
    cases["tags"] = lambda ctx: case_tags(ctx, "tags")
    cases["strided-and-empty"] = lambda ctx: case_strided_and_empty(ctx, "strided-and-empty")
    cases["pipeline"] = lambda ctx: case_pipeline(ctx, "pipeline")
    return cases


CASES = build_cases()
