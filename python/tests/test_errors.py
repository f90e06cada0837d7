"""Every failing path raises an xal.Error subclass, never crashes."""

import pickle

import numpy as np
import pytest

import xal
from xal import _errors

ALL = {
    -1: xal.InvalidArgument, -2: xal.InvalidHandle, -3: xal.NotSupported,
    -4: xal.OutOfMemory, -5: xal.OutOfHostMemory, -6: xal.OutOfBounds,
    -7: xal.NotInitialized, -8: xal.BackendUnavailable, -9: xal.AbiMismatch,
    -10: xal.DeviceLost, -11: xal.Hardware, -12: xal.Timeout, -13: xal.Aborted,
    -14: xal.CollectiveMismatch, -15: xal.BackendError, -16: xal.InternalError,
}


def test_one_class_per_status_with_its_stable_name():
    assert _errors.ERRORS == ALL
    for status, cls in ALL.items():
        assert issubclass(cls, xal.Error)
        assert cls.status == status
        assert cls.status_name == xal.status_name(status)
    assert issubclass(xal.InvalidArgument, ValueError)
    assert issubclass(xal.OutOfMemory, MemoryError)
    assert issubclass(xal.Timeout, TimeoutError)
    assert issubclass(xal.OutOfBounds, IndexError)


def test_error_detail_from_xal_last_error(dev):
    with pytest.raises(xal.OutOfMemory) as e:
        xal.Buffer(dev, 1 << 50)
    err = e.value
    assert err.status == -4 and err.status_name == "XAL_ERROR_OUT_OF_MEMORY"
    assert err.operation == "xal_mem_alloc"
    assert err.backend == "mock"
    assert err.vendor_code == 0 and err.vendor_name == ""
    assert "out of memory" in err.message
    assert "xal_mem_alloc [mock]: XAL_ERROR_OUT_OF_MEMORY" in str(err)
    assert xal.last_error()["status"] == -4
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is xal.OutOfMemory and copy.message == err.message


@pytest.mark.parametrize("nbytes", [0, -1, 2.5, "8", True])
def test_bad_sizes(dev, nbytes):
    with pytest.raises(xal.InvalidArgument):
        xal.Buffer(dev, nbytes)


def test_closed_buffer_raises_invalid_handle(dev):
    b = xal.Buffer(dev, 16)
    v = b[0:8]
    b.close()
    for call in (b.to_bytes, lambda: b.copy_from(b"x"), lambda: b.memset(0), lambda: b[0:1],
                 lambda: b.view("int8"), lambda: b.ptr, lambda: b.__dlpack__()):
        with pytest.raises(xal.InvalidHandle) as e:
            call()
        assert "closed" in e.value.message
    assert v.to_bytes() is not None  # the view still holds the memory


@pytest.mark.parametrize("call", [
    lambda b: b.copy_from(bytes(17)),
    lambda b: b.copy_from(bytes(8), offset=9),
    lambda b: b.copy_to(offset=20),
    lambda b: b.copy_to(nbytes=17),
    lambda b: b.copy_to(np.zeros(4, np.uint8), offset=14),
    lambda b: b.memset(1, offset=8, nbytes=9),
    lambda b: b.view("int32", (5,)),
    lambda b: b[8:].copy_from(bytes(9)),
    lambda b: b.copy_to(xal.Buffer(b.device, 32)),
], ids=["copy-too-big", "copy-past-end", "offset-past-end", "read-too-much", "host-dst-small",
        "memset-past-end", "view-too-big", "slice-overflow", "dst-buffer-too-big"])
def test_out_of_bounds(dev, call):
    b = xal.Buffer(dev, 16)
    with pytest.raises(xal.OutOfBounds):
        call(b)
    assert b.to_bytes() is not None  # still usable


@pytest.mark.parametrize("call", [
    lambda b: b.memset(256),
    lambda b: b.memset(-1),
    lambda b: b[3],
    lambda b: b[::2],
    lambda b: b.view("int32", (-1, -1)),
    lambda b: b.view("object"),
    lambda b: b.view("float32", (3,)).copy_to(np.zeros(3, np.float32).view(np.uint8)[::2]),
    lambda b: b.copy_to(b"immutable"),
    lambda b: b.copy_from(12345),
    lambda b: b.view("not-a-dtype"),
    lambda b: b.memset(0, offset=-1),
], ids=["byte-256", "byte-neg", "int-index", "step", "two-minus-ones", "object-dtype",
        "noncontig-dst", "readonly-dst", "not-a-buffer", "bad-dtype-name", "neg-offset"])
def test_invalid_arguments(dev, call):
    b = xal.Buffer(dev, 16)
    with pytest.raises(xal.InvalidArgument):
        call(b)


def test_readonly_buffer_refuses_writes(dev):
    a = np.arange(4, dtype=np.int32)
    a.flags.writeable = False
    b = xal.from_dlpack(a, device=dev)
    assert b.readonly
    with pytest.raises(xal.InvalidArgument, match="read-only"):
        b.memset(0)
    with pytest.raises(xal.InvalidArgument):
        b.copy_from(b"1234")
    assert b.to_numpy().tolist() == [0, 1, 2, 3]


def test_collective_argument_errors(devs):
    with xal.comm_create(devs[:2]) as comms:
        untyped = [xal.Buffer(d, 16) for d in comms.devices]
        with pytest.raises(xal.InvalidArgument, match="dtype"):
            comms.allreduce(untyped)
        typed = [b.view("float32") for b in untyped]
        with pytest.raises(xal.InvalidArgument):
            comms.allreduce(typed, op="median")
        with pytest.raises(xal.InvalidArgument):
            comms.allreduce(typed, dtype="complex64")
        with pytest.raises(xal.OutOfBounds):
            comms.allreduce(typed, count=5)
        with pytest.raises(xal.InvalidArgument):
            comms.broadcast(typed, root=7)
        with pytest.raises(xal.InvalidArgument):  # a buffer of the other rank's device
            comms.allreduce(list(reversed(typed)))
        with pytest.raises(xal.InvalidArgument):
            comms.allreduce(typed[:1])
        with pytest.raises(xal.InvalidArgument):
            comms.run("scan", typed)
        with pytest.raises(xal.InvalidArgument):  # a stream of another device
            comms[0].allreduce(typed[0], stream=xal.Stream(devs[1]))
        # the communicator still works after all of that
        for b in typed:
            b.copy_from(np.ones(4, np.float32))
        comms.allreduce(typed)
        assert typed[0].to_numpy().tolist() == [2.0] * 4


def test_mismatched_counts_give_collective_mismatch(devs):
    with xal.comm_create(devs[:2], timeout_ms=2000) as comms:
        bufs = [xal.Buffer(d, 64).view("int32") for d in comms.devices]
        with pytest.raises(xal.CollectiveMismatch):
            with xal.group():
                comms[0].allreduce(bufs[0], count=4)
                comms[1].allreduce(bufs[1], count=8)
            for c in comms:
                c.synchronize()


def test_comm_create_errors(devs):
    with pytest.raises(xal.InvalidArgument):
        xal.comm_create([devs[0], devs[0]])
    with pytest.raises(xal.InvalidArgument):
        xal.comm_create([])


def test_a_closed_stream_event_and_comm_raise(devs):
    s = xal.Stream(devs[0])
    e = xal.Event(devs[0])
    comms = xal.comm_create(devs[:2])
    s.close()
    e.close()
    comms.close()
    with pytest.raises(xal.InvalidHandle):
        s.query()
    with pytest.raises(xal.InvalidHandle):
        e.synchronize()
    with pytest.raises(xal.InvalidHandle):
        comms[0].allreduce(xal.Buffer(devs[0], 4).view("int32"))
    with pytest.raises(xal.InvalidHandle):
        xal.Buffer(devs[0], 4).memset(0, stream=s)


def test_init_twice_raises():
    xal.devices()
    with pytest.raises(xal.InvalidArgument):
        xal.init()
