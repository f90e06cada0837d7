"""DLPack both ways against numpy, torch (CPU) and jax."""

import ctypes
import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import xal

DL_CPU, DL_CUDA = 1, 2

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Versioned(ctypes.Structure):
    """The head of DLManagedTensorVersioned: version, manager_ctx, deleter, flags."""
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("data", ctypes.c_void_p)]


def versioned_head(capsule):
    ptr = _get_pointer(capsule, b"dltensor_versioned")
    return Versioned.from_address(ptr)


def allocs(dev):
    return dev.metrics().xal_alloc_count_current


@pytest.fixture
def fbuf(dev):
    b = xal.Buffer(dev, 64).view("float32", (4, 4))
    b.copy_from(np.arange(16, dtype=np.float32).reshape(4, 4))
    return b


def test_dlpack_device_is_cpu_on_the_mock(fbuf):
    assert fbuf.__dlpack_device__() == (DL_CPU, 0)


def test_numpy_sees_xal_bytes_at_the_same_address(fbuf):
    a = np.from_dlpack(fbuf)
    assert a.ctypes.data == fbuf.ptr
    assert a.dtype == np.float32 and a.shape == (4, 4) and a.flags.writeable
    np.testing.assert_array_equal(a, np.arange(16, dtype=np.float32).reshape(4, 4))
    a[1, 1] = -1.0  # numpy writes, xal reads
    assert np.frombuffer(fbuf.to_bytes(), np.float32)[5] == -1.0
    fbuf.copy_from(np.full((4, 4), 7, np.float32))  # xal writes, numpy reads
    assert (a == 7).all()


def test_torch_sees_xal_bytes_at_the_same_address_as_numpy(fbuf):
    t = torch.from_dlpack(fbuf)
    a = np.from_dlpack(fbuf)
    assert t.data_ptr() == a.ctypes.data == fbuf.ptr
    assert t.dtype == torch.float32 and tuple(t.shape) == (4, 4)
    t[0, 0] = 100.0
    assert a[0, 0] == 100.0
    assert np.frombuffer(fbuf.to_bytes(), np.float32)[0] == 100.0
    fbuf.memset(0)
    assert t.abs().sum().item() == 0.0


@pytest.mark.parametrize("dtype,tdtype", [("int8", torch.int8), ("int64", torch.int64),
                                          ("float16", torch.float16),
                                          ("bfloat16", torch.bfloat16),
                                          ("float64", torch.float64), ("bool", torch.bool)])
def test_torch_dtypes(dev, dtype, tdtype):
    b = xal.Buffer(dev, 32).memset(1)
    t = torch.from_dlpack(b.view(dtype))
    assert t.dtype == tdtype and t.numel() == 32 // t.element_size()
    assert t.data_ptr() == b.ptr


def test_jax_sees_xal_bytes(fbuf):
    jax_dlpack = pytest.importorskip("jax.dlpack")
    j = jax_dlpack.from_dlpack(fbuf)
    np.testing.assert_array_equal(np.asarray(j), np.arange(16, dtype=np.float32).reshape(4, 4))
    assert j.dtype == np.float32 and j.shape == (4, 4)


def test_legacy_and_versioned_capsules(fbuf):
    legacy = fbuf.__dlpack__()
    assert _get_name(legacy) == b"dltensor"
    versioned = fbuf.__dlpack__(max_version=(1, 0))
    assert _get_name(versioned) == b"dltensor_versioned"
    head = versioned_head(versioned)
    assert head.major == 1 and head.flags & 1 == 0
    assert head.data == fbuf.ptr
    assert _get_name(fbuf.__dlpack__(max_version=(0, 8))) == b"dltensor"
    del legacy, versioned, head
    gc.collect()


def test_readonly_flag_of_versioned_capsule(dev):
    src = np.arange(8, dtype=np.int16)
    src.flags.writeable = False
    b = xal.from_dlpack(src, device=dev)
    assert b.readonly
    cap = b.__dlpack__(max_version=(1, 1))
    assert versioned_head(cap).flags & 1 == 1
    del cap
    a = np.from_dlpack(b)
    assert not a.flags.writeable and a.ctypes.data == src.ctypes.data
    assert a.tolist() == list(range(8))


def test_dl_device_and_copy_requests(fbuf):
    with pytest.raises(BufferError):
        fbuf.__dlpack__(dl_device=(DL_CUDA, 0))
    with pytest.raises(BufferError):
        fbuf.__dlpack__(dl_device=(DL_CUDA, 0), copy=False)
    same = np.from_dlpack(fbuf, device="cpu")
    assert same.ctypes.data == fbuf.ptr
    copied = np.from_dlpack(fbuf, copy=True)
    assert copied.ctypes.data != fbuf.ptr
    np.testing.assert_array_equal(copied, same)
    copied[0, 0] = 55
    assert same[0, 0] != 55
    nocopy = np.from_dlpack(fbuf, copy=False)
    assert nocopy.ctypes.data == fbuf.ptr


def test_untyped_buffer_exports_bytes(dev):
    b = xal.Buffer(dev, 10).memset(4)
    a = np.from_dlpack(b)
    assert a.dtype == np.uint8 and a.shape == (10,) and (a == 4).all()
    v = np.from_dlpack(b[2:6])
    assert v.ctypes.data == b.ptr + 2 and v.shape == (4,)


def test_consumer_keeps_the_memory_after_close(dev):
    base = allocs(dev)
    b = xal.Buffer(dev, 1 << 16).view("int32")
    b.copy_from(np.arange(1 << 14, dtype=np.int32))
    a = np.from_dlpack(b)
    t = torch.from_dlpack(b)
    b.close()
    del b
    gc.collect()
    assert allocs(dev) == base + 1
    assert a[12345] == 12345 and t[100].item() == 100
    del a
    gc.collect()
    assert allocs(dev) == base + 1  # torch still holds it
    del t
    gc.collect()
    assert allocs(dev) == base


def test_consumer_dropped_on_another_thread(dev):
    base = allocs(dev)
    b = xal.Buffer(dev, 4096).memset(9)
    held = {"t": torch.from_dlpack(b), "a": np.from_dlpack(b)}
    b.close()
    seen = []

    def drop():
        seen.append(int(held["t"][0].item()) + int(held["a"][1]))
        held.clear()
        gc.collect()

    th = threading.Thread(target=drop)
    th.start()
    th.join()
    assert seen == [18]
    assert allocs(dev) == base


def test_consumer_outlives_the_interpreter(py):
    out = py("""
        import numpy as np, torch, xal, threading
        d = xal.devices()[0]
        b = xal.Buffer(d, 64).view("float32")
        b.copy_from(np.ones(16, np.float32))
        GLOBAL_NP = np.from_dlpack(b)
        GLOBAL_T = torch.from_dlpack(b)
        b.close()
        def worker():
            global HELD
            HELD = torch.from_dlpack(xal.Buffer(d, 32).view("int32").memset(0))
        threading.Thread(target=worker).start()
        print(float(GLOBAL_NP.sum() + GLOBAL_T.sum()))
    """)
    assert out.strip() == "32.0"


def test_consumer_outlives_a_forced_shutdown(py):
    out = py("""
        import numpy as np, torch, xal
        b = xal.Buffer(xal.devices()[0], 64)
        t = torch.from_dlpack(b)
        try:
            xal.shutdown()
        except BufferError as e:
            print("refused")
        xal.shutdown(force=True)
        del b
        print("alive")
    """)
    assert out.split() == ["refused", "alive"]


def test_from_dlpack_numpy_is_zero_copy(dev):
    src = np.arange(12, dtype=np.float64).reshape(3, 4)
    b = xal.from_dlpack(src, device=dev)
    assert b.ptr == src.ctypes.data and b.kind == "imported"
    assert b.dtype == np.float64 and b.shape == (3, 4) and not b.readonly
    b.memset(0, nbytes=8)  # xal writes, numpy reads
    assert src[0, 0] == 0.0
    src[2, 3] = 99.0  # numpy writes, xal reads
    assert b.to_numpy()[2, 3] == 99.0


def test_from_dlpack_keeps_the_producer_until_close(dev):
    src = np.arange(64, dtype=np.int32)
    ref = weakref.ref(src)
    b = xal.from_dlpack(src, device=dev)
    del src
    gc.collect()
    assert ref() is not None
    assert b.to_numpy().tolist() == list(range(64))
    view = b[16:32]
    b.close()
    gc.collect()
    assert ref() is not None  # the view still holds the import
    view.close()
    gc.collect()
    assert ref() is None


def test_from_dlpack_torch_is_zero_copy(dev):
    t = torch.arange(10, dtype=torch.int32)
    b = xal.from_dlpack(t)
    assert b.device == dev and b.ptr == t.data_ptr() and b.dtype == np.int32
    b.copy_from(np.full(10, 3, np.int32))
    assert t.tolist() == [3] * 10


def test_from_dlpack_copies_when_it_must(dev):
    strided = np.arange(20, dtype=np.int32)[::2]
    c = xal.from_dlpack(strided, device=dev)
    assert c.ptr != strided.ctypes.data and c.to_numpy().tolist() == strided.tolist()
    with pytest.raises(BufferError):
        xal.from_dlpack(strided, device=dev, copy=False)
    dense = np.ones(4, np.float32)
    forced = xal.from_dlpack(dense, copy=True)
    assert forced.ptr != dense.ctypes.data and forced.to_numpy().tolist() == [1.0] * 4


def test_memory_already_known_to_xal_is_copied_or_refused(dev):
    src = np.zeros(8, np.int64)
    first = xal.from_dlpack(src, device=dev)
    second = xal.from_dlpack(src, device=dev)  # overlaps the first import: a copy
    assert second.ptr != first.ptr
    with pytest.raises(BufferError):
        xal.from_dlpack(src, device=dev, copy=False)
    back = xal.from_dlpack(first)  # an xal Buffer itself: a view
    assert back.ptr == first.ptr and back.shape == (8,)


def test_from_dlpack_buffer_protocol(dev):
    raw = bytearray(b"hello xal")
    b = xal.from_dlpack(raw, device=dev)
    assert b.ptr == ctypes.addressof(ctypes.c_char.from_buffer(raw))
    b.copy_from(b"J", offset=0)
    assert raw == bytearray(b"Jello xal")


def test_from_dlpack_refusals(dev):
    class CudaProducer:
        def __dlpack_device__(self):
            return (DL_CUDA, 0)

        def __dlpack__(self, **kw):
            raise AssertionError("must not be asked")

    with pytest.raises(BufferError, match="no xal device"):
        xal.from_dlpack(CudaProducer())
    with pytest.raises(BufferError):
        xal.from_dlpack(CudaProducer(), device=dev, copy=False)
    with pytest.raises(BufferError):
        xal.from_dlpack(object(), device=dev)
    with pytest.raises(xal.InvalidArgument):
        xal.from_dlpack(np.zeros(0, np.float32), device=dev)


def test_tensor_requiring_grad_imports_its_data(dev):
    t = torch.ones(3, requires_grad=True)
    b = xal.from_dlpack(t, device=dev)  # as t.detach(): autograd does not see xal's writes
    assert b.ptr == t.data_ptr() and b.to_numpy().tolist() == [1.0, 1.0, 1.0]


def test_round_trip_torch_xal_numpy(dev):
    t = torch.linspace(0, 1, 8)
    b = xal.from_dlpack(t, device=dev)
    a = np.from_dlpack(b)
    assert a.ctypes.data == t.data_ptr()
    a[0] = 5.0
    assert t[0].item() == 5.0
