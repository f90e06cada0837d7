"""Every collective over 2 and 4 mock devices, several dtypes and ops,
against a numpy reference."""

import threading

import ml_dtypes
import numpy as np
import pytest

import xal

DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
          "float32", "float64"]
FLOATS = {"float16", "bfloat16", "float32", "float64"}
OPS = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max}
COUNT = 37


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def rank_data(n, count, dtype, seed=0):
    """Small integers (exact in every dtype, no overflow in a product of 4)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 4, count).astype(np_dtype(dtype)) for _ in range(n)]


def upload(devs, arrays, dtype):
    return [xal.Buffer(d, a.nbytes).view(dtype).copy_from(a) for d, a in zip(devs, arrays)]


def empty(devs, count, dtype):
    return [xal.Buffer(d, count * np_dtype(dtype).itemsize).view(dtype).memset(0) for d in devs]


def reference(op, data, dtype):
    stacked = np.stack([d.astype(np.float64) for d in data])
    if op == "avg":
        return (stacked.sum(axis=0) / len(data)).astype(np_dtype(dtype))
    return OPS[op](stacked, axis=0).astype(np_dtype(dtype))


def assert_close(got, want, dtype):
    if dtype in FLOATS:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=1e-2 if dtype in ("float16", "bfloat16") else 1e-6)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.fixture(params=[2, 4], ids=["2dev", "4dev"])
def ranks(request, devs):
    with xal.comm_create(devs[: request.param]) as comms:
        yield comms


# avg is defined for floating-point dtypes only (the integer case is below).
ALLREDUCE_CASES = [(op, dt) for op in ["sum", "prod", "min", "max", "avg"] for dt in DTYPES
                   if op != "avg" or dt in FLOATS]


@pytest.mark.parametrize(("op", "dtype"), ALLREDUCE_CASES)
def test_allreduce(ranks, dtype, op):
    n = len(ranks)
    data = rank_data(n, COUNT, dtype)
    sends = upload(ranks.devices, data, dtype)
    recvs = empty(ranks.devices, COUNT, dtype)
    ranks.allreduce(sends, recvs, op=op)
    want = reference(op, data, dtype)
    for r in recvs:
        assert_close(r.to_numpy(), want, dtype)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_allreduce_in_place(ranks, dtype):
    data = rank_data(len(ranks), COUNT, dtype, seed=3)
    bufs = upload(ranks.devices, data, dtype)
    out = ranks.allreduce(bufs)
    assert out == bufs
    for b in bufs:
        assert_close(b.to_numpy(), reference("sum", data, dtype), dtype)


def test_avg_on_integers_is_not_supported(ranks):
    bufs = upload(ranks.devices, rank_data(len(ranks), 4, "int32"), "int32")
    with pytest.raises(xal.NotSupported) as e:
        ranks.allreduce(bufs, op="avg")
    assert "avg" in e.value.message


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast(ranks, dtype):
    n = len(ranks)
    root = n - 1
    data = rank_data(n, COUNT, dtype, seed=5)
    bufs = upload(ranks.devices, data, dtype)
    ranks.broadcast(bufs, root=root)
    for b in bufs:
        np.testing.assert_array_equal(b.to_numpy(), data[root])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sum", "max"])
def test_reduce(ranks, dtype, op):
    n = len(ranks)
    data = rank_data(n, COUNT, dtype, seed=7)
    sends = upload(ranks.devices, data, dtype)
    recvs = empty(ranks.devices, COUNT, dtype)
    ranks.reduce(sends, recvs, op=op, root=1)
    assert_close(recvs[1].to_numpy(), reference(op, data, dtype), dtype)
    for i, r in enumerate(recvs):
        if i != 1:
            assert not r.to_numpy().any()  # only the root's recv is written


@pytest.mark.parametrize("dtype", DTYPES)
def test_allgather(ranks, dtype):
    n = len(ranks)
    data = rank_data(n, COUNT, dtype, seed=9)
    sends = upload(ranks.devices, data, dtype)
    recvs = empty(ranks.devices, n * COUNT, dtype)
    ranks.allgather(sends, recvs)
    for r in recvs:
        np.testing.assert_array_equal(r.to_numpy(), np.concatenate(data))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sum", "min"])
def test_reduce_scatter(ranks, dtype, op):
    n = len(ranks)
    data = rank_data(n, n * COUNT, dtype, seed=11)
    sends = upload(ranks.devices, data, dtype)
    recvs = empty(ranks.devices, COUNT, dtype)
    ranks.reduce_scatter(sends, recvs, op=op)
    want = reference(op, data, dtype)
    for i, r in enumerate(recvs):
        assert_close(r.to_numpy(), want[i * COUNT:(i + 1) * COUNT], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_alltoall(ranks, dtype):
    n = len(ranks)
    data = rank_data(n, n * COUNT, dtype, seed=13)
    sends = upload(ranks.devices, data, dtype)
    recvs = empty(ranks.devices, n * COUNT, dtype)
    ranks.alltoall(sends, recvs)
    for j, r in enumerate(recvs):
        want = np.concatenate([data[i][j * COUNT:(j + 1) * COUNT] for i in range(n)])
        np.testing.assert_array_equal(r.to_numpy(), want)


def test_communicator_attributes(devs):
    with xal.comm_create(devs[:3], timeout_ms=5000) as comms:
        assert len(comms) == 3
        assert [c.rank for c in comms] == [0, 1, 2]
        assert {c.size for c in comms} == {3}
        assert [c.device for c in comms] == devs[:3]
        assert comms[0].path == "NATIVE"
        assert comms[0].timeout_ms == 5000
        assert comms[0].async_error() is None
        assert "rank 0/3" in repr(comms[0])
    assert all(c.closed for c in comms)


def test_explicit_streams_and_untyped_buffers_with_dtype(devs):
    with xal.comm_create(devs[:2]) as comms:
        streams = [xal.Stream(d) for d in comms.devices]
        bufs = [xal.Buffer(d, 16).copy_from(np.full(4, i + 1, np.int32))
                for i, d in enumerate(comms.devices)]
        comms.allreduce(bufs, dtype="int32", streams=streams)
        for b in bufs:
            assert b.to_numpy("int32").tolist() == [3, 3, 3, 3]
        for s in streams:
            s.close()


def test_one_thread_per_rank_without_a_group(devs):
    with xal.comm_create(devs) as comms:
        bufs = [xal.Buffer(d, 40).view("float64").copy_from(np.full(5, i, np.float64))
                for i, d in enumerate(comms.devices)]
        errors = []

        def rank(i):
            try:
                with xal.Stream(comms[i].device) as s:
                    comms[i].allreduce(bufs[i], stream=s)
                    s.synchronize()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=rank, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        for b in bufs:
            assert b.to_numpy().tolist() == [6.0] * 5


def test_count_zero_moves_nothing(devs):
    with xal.comm_create(devs[:2]) as comms:
        bufs = [xal.Buffer(d, 8).view("int32").copy_from(np.array([1, 2], np.int32))
                for d in comms.devices]
        comms.allreduce(bufs, count=0)
        assert bufs[0].to_numpy().tolist() == [1, 2]


def test_group_context_by_hand(devs):
    with xal.comm_create(devs[:2]) as comms:
        bufs = [xal.Buffer(d, 4).view("float32").copy_from(np.array([2.0], np.float32))
                for d in comms.devices]
        with xal.group():
            for c, b in zip(comms, bufs):
                c.allreduce(b, op="prod")
        for c in comms:
            c.synchronize()
        assert [b.to_numpy()[0] for b in bufs] == [4.0, 4.0]
