"""Buffers: allocation, copies with bytes and numpy, memset, views."""

import numpy as np
import pytest

import xal


def test_alloc_and_attributes(dev):
    b = xal.Buffer(dev, 1000)
    assert len(b) == b.nbytes == 1000
    assert b.device == dev
    assert b.ptr != 0 and b.ptr % 256 == 0
    assert b.offset == 0 and b.dtype is None and b.shape == (1000,)
    assert b.kind == "owned" and not b.readonly and not b.closed
    assert "1000 bytes" in repr(b)
    b.close()
    assert b.closed and "closed" in repr(b)
    b.close()  # idempotent


def test_alloc_helpers(devs):
    assert xal.alloc(64).device == devs[0]
    assert xal.alloc(64, devs[2]).device == devs[2]
    assert devs[1].alloc(32).device == devs[1]
    assert xal.Buffer(3, 16).device == devs[3]


def test_bytes_round_trip(dev):
    data = bytes(range(256)) * 4
    with xal.Buffer(dev, len(data)) as b:
        assert b.copy_from(data) is b
        assert b.to_bytes() == data
        assert b.copy_to(offset=10, nbytes=5) == data[10:15]


def test_copy_from_bytearray_memoryview_and_offset(dev):
    with xal.Buffer(dev, 16) as b:
        b.memset(0)
        b.copy_from(bytearray(b"abcd"), offset=4)
        b.copy_from(memoryview(b"XY"), offset=14)
        assert b.to_bytes() == b"\0" * 4 + b"abcd" + b"\0" * 6 + b"XY"


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "float16", "float32",
                                   "float64", "complex64", "bool"])
def test_numpy_round_trip(dev, dtype):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((3, 5)) * 50).astype(dtype)
    with xal.Buffer(dev, a.nbytes) as b:
        b.copy_from(a)
        out = np.empty_like(a)
        assert b.copy_to(out) is out
        np.testing.assert_array_equal(out, a)
        np.testing.assert_array_equal(b.to_numpy(dtype, a.shape), a)


def test_non_contiguous_source_is_copied_in_order(dev):
    a = np.arange(20, dtype=np.int32).reshape(4, 5)[:, ::2]
    with xal.Buffer(dev, a.nbytes) as b:
        b.copy_from(a)
        np.testing.assert_array_equal(b.to_numpy("int32", a.shape), a)


def test_memset_ranges(dev):
    with xal.Buffer(dev, 64) as b:
        b.memset(0xAB)
        b.memset(1, offset=8, nbytes=8)
        out = b.to_numpy()
        assert (out[:8] == 0xAB).all() and (out[8:16] == 1).all() and (out[16:] == 0xAB).all()


def test_slices_are_views_of_the_same_memory(dev):
    with xal.Buffer(dev, 100) as b:
        b.memset(0)
        v = b[10:20]
        assert len(v) == 10 and v.offset == 10 and v.ptr == b.ptr + 10
        v.copy_from(b"0123456789")
        assert b.to_bytes()[10:20] == b"0123456789"
        w = v[2:4]
        assert w.offset == 12 and w.to_bytes() == b"23"
        assert b[-5:].offset == 95 and len(b[-5:]) == 5
        assert len(b[50:10]) == 0
        assert len(b[:]) == 100


def test_view_keeps_memory_after_parent_closes(dev):
    before = dev.metrics().xal_alloc_count_current
    b = xal.Buffer(dev, 32)
    b.copy_from(b"x" * 32)
    v = b[8:16]
    b.close()
    assert v.to_bytes() == b"x" * 8
    assert dev.metrics().xal_alloc_count_current == before + 1
    v.close()
    assert dev.metrics().xal_alloc_count_current == before


def test_typed_views(dev):
    with xal.Buffer(dev, 48) as b:
        f = b.view("float32")
        assert f.shape == (12,) and f.dtype == np.float32 and f.nbytes == 48
        m = b.view(np.int16, (4, -1))
        assert m.shape == (4, 6)
        f.copy_from(np.arange(12, dtype=np.float32))
        np.testing.assert_array_equal(f.to_numpy(), np.arange(12, dtype=np.float32))
        part = b.view("float64", (2,))
        assert part.nbytes == 16
        assert b.view().dtype is None


def test_as_array_is_zero_copy_on_the_mock(dev):
    with xal.Buffer(dev, 16) as b:
        a = b.as_array("int32")
        assert a.ctypes.data == b.ptr and a.shape == (4,)
        a[:] = [5, 6, 7, 8]
        assert np.frombuffer(b.to_bytes(), np.int32).tolist() == [5, 6, 7, 8]
        del a


def test_device_to_device_and_peer_copies(devs):
    src = xal.Buffer(devs[0], 64).copy_from(bytes(range(64)))
    same = xal.Buffer(devs[0], 64).copy_from(src)
    peer = xal.Buffer(devs[2], 64).copy_from(src)
    assert same.to_bytes() == peer.to_bytes() == bytes(range(64))
    back = xal.Buffer(devs[1], 16)
    peer.copy_to(back, offset=16)
    assert back.to_bytes() == bytes(range(16, 32))
    part = xal.Buffer(devs[3], 64).memset(0)
    part[32:].copy_from(src[:32])
    assert part.to_bytes() == b"\0" * 32 + bytes(range(32))


def test_async_copies_on_a_stream_keep_host_memory(dev):
    with xal.Stream(dev) as s:
        b = xal.Buffer(dev, 1 << 20)
        b.copy_from(np.full(1 << 18, 3, np.int32), stream=s)  # temporary array
        out = np.zeros(1 << 18, np.int32)
        b.copy_to(out, stream=s)
        b.close()
        s.synchronize()
        assert (out == 3).all()


def test_metrics_count_copies(dev):
    m0 = dev.metrics()
    with xal.Buffer(dev, 1000) as b:
        b.copy_from(bytes(1000))
        b.to_bytes()
    m1 = dev.metrics()
    assert m1.xal_bytes_htod - m0.xal_bytes_htod == 1000
    assert m1.xal_bytes_dtoh - m0.xal_bytes_dtoh == 1000
