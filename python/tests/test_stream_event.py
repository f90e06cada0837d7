"""Streams and events."""

import numpy as np
import pytest

import xal


def test_stream_context_and_synchronize(dev):
    with xal.Stream(dev) as s:
        assert s.device == dev and not s.closed and not s.imported
        b = xal.Buffer(dev, 4096)
        b.memset(9, stream=s)
        s.synchronize()
        assert s.query() is True
        assert set(b.to_bytes()) == {9}
    assert s.closed
    s.close()  # idempotent
    with pytest.raises(xal.InvalidHandle):
        s.synchronize()


def test_non_blocking_stream_and_device_stream_helper(dev):
    s = dev.stream(non_blocking=True)
    s.synchronize()
    s.close()


def test_event_record_query_synchronize_elapsed(dev):
    with xal.Stream(dev) as s, xal.Buffer(dev, 8 << 20) as b:
        start = s.record()
        b.memset(1, stream=s)
        end = xal.Event(dev)
        assert s.record(end) is end
        end.synchronize()
        assert end.query() is True
        ms = start.elapsed(end)
        assert isinstance(ms, float) and ms >= 0.0


def test_event_on_default_stream(dev):
    with xal.Event(dev) as e:
        assert e.record() is e
        e.synchronize()
        assert e.query()
    assert e.closed


def test_cross_device_wait_orders_work(devs):
    a, b = devs[0], devs[1]
    src = xal.Buffer(a, 1 << 20)
    dst = xal.Buffer(b, 1 << 20)
    with xal.Stream(a) as sa, xal.Stream(b) as sb:
        src.memset(0x5A, stream=sa)
        done = sa.record()
        sb.wait(done)
        dst.copy_from(src, stream=sb)
        sb.synchronize()
    assert dst.to_numpy()[[0, -1]].tolist() == [0x5A, 0x5A]


def test_timing_disabled_event_cannot_time(dev):
    with xal.Stream(dev) as s:
        e1 = s.record(xal.Event(dev, timing=False))
        e2 = s.record(xal.Event(dev, timing=False))
        s.synchronize()
        with pytest.raises(xal.Error):
            e1.elapsed(e2)


def test_events_of_two_devices_do_not_time(devs):
    e0 = xal.Event(devs[0]).record()
    e1 = xal.Event(devs[1]).record()
    e0.synchronize()
    e1.synchronize()
    with pytest.raises(xal.InvalidArgument):
        e0.elapsed(e1)


def test_wrong_argument_types_raise_invalid_argument(dev):
    s = xal.Stream(dev)
    with pytest.raises(xal.InvalidArgument):
        s.wait("not an event")
    with pytest.raises(xal.InvalidArgument):
        xal.Event(dev).record(stream=np.zeros(1))
    with pytest.raises(xal.InvalidArgument):
        xal.Buffer(dev, 8).memset(0, stream="nope")
    s.close()


def test_dropping_a_stream_waits_for_its_work(dev):
    b = xal.Buffer(dev, 8 << 20)
    s = xal.Stream(dev)
    b.copy_from(np.full(2 << 20, 5, np.int32), stream=s)  # a temporary host array
    del s  # destroys the stream after its work, then lets the host array go
    assert (b.to_numpy("int32") == 5).all()


def test_query_of_a_busy_and_an_idle_stream(dev):
    with xal.Stream(dev) as s, xal.Buffer(dev, 64 << 20) as b:
        for _ in range(4):
            b.memset(1, stream=s)
        states = {s.query()}
        s.synchronize()
        assert s.query() is True
        assert states <= {True, False}
