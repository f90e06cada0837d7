"""xal.init/shutdown: objects that outlive their session raise, never crash."""

import gc
import json
import os
import pathlib

import numpy as np
import pytest

import xal


def make_objects():
    d0, d1 = xal.devices()[:2]
    buf = xal.Buffer(d0, 64).view("float32")
    s = xal.Stream(d0)
    e = xal.Event(d0)
    comms = xal.comm_create([d0, d1])
    return d0, buf, s, e, comms


def calls(d0, buf, s, e, comms):
    return [
        d0.metrics, d0.mem_info, d0.synchronize, lambda: d0.set_memory_limit(0),
        buf.to_bytes, lambda: buf.memset(1), lambda: buf.copy_from(b"abcd"),
        lambda: buf.__dlpack__(), buf.ipc_handle, s.synchronize, s.query, lambda: s.wait(e),
        e.synchronize, e.query, lambda: e.record(s), lambda: comms[0].allreduce(buf),
        comms[0].abort, lambda: xal.Buffer(d0, 16), lambda: xal.Stream(d0),
    ]


def test_objects_after_shutdown_raise_not_initialized():
    objs = make_objects()
    xal.shutdown()
    assert not xal.is_initialized()
    for call in calls(*objs):
        with pytest.raises(xal.NotInitialized):
            call()
    for o in objs[1:]:
        o.close()  # closing what shutdown released is harmless
    del objs
    gc.collect()
    assert len(xal.devices()) == 4  # lazily initialised again


def test_objects_of_an_earlier_session_raise_invalid_handle():
    objs = make_objects()
    xal.shutdown()
    xal.init()
    for call in calls(*objs):
        with pytest.raises(xal.InvalidHandle, match="earlier xal session"):
            call()
    # the new session is unaffected
    with xal.Buffer(xal.device(0), 8) as b:
        assert b.memset(3).to_bytes() == b"\3" * 8


def test_shutdown_twice_raises_not_initialized():
    xal.devices()
    xal.shutdown()
    with pytest.raises(xal.NotInitialized):
        xal.shutdown()


def test_shutdown_refuses_while_dlpack_exports_live_unless_forced():
    b = xal.Buffer(xal.device(0), 16)
    a = np.from_dlpack(b.view("int32"))
    with pytest.raises(BufferError, match="DLPack"):
        xal.shutdown()
    assert xal.is_initialized()
    a[:] = 1
    del a
    gc.collect()
    xal.shutdown()
    assert not xal.is_initialized()
    with pytest.raises(xal.NotInitialized):
        b.to_bytes()


def test_forced_shutdown_then_dropping_the_consumer_is_harmless():
    b = xal.Buffer(xal.device(0), 16)
    a = np.from_dlpack(b.view("int32"))
    xal.shutdown(force=True)
    del a, b  # runs the DLPack deleter after shutdown
    gc.collect()
    assert len(xal.devices()) == 4


def test_init_with_options():
    xal.devices()
    xal.shutdown()
    xal.init("mock", device_selector="mock:1,2", validation=True)
    assert len(xal.devices()) == 2
    xal.shutdown()


def test_trace_context_writes_chrome_trace(tmp_path):
    xal.devices()
    xal.shutdown()
    path = tmp_path / "trace.json"
    with xal.trace(path) as p:
        assert p == path and "XAL_TRACE" not in os.environ
        with xal.Buffer(xal.device(0), 256) as b:
            b.memset(1)
    assert not xal.is_initialized()
    events = json.loads(path.read_text())
    names = {ev.get("name") for ev in (events["traceEvents"] if isinstance(events, dict)
                                       else events)}
    assert "xal_mem_alloc" in names and "xal_memset" in names


def test_trace_refuses_a_live_session(tmp_path):
    xal.devices()
    with pytest.raises(xal.InvalidArgument, match="shutdown"):
        with xal.trace(tmp_path / "t.json"):
            pass


def test_at_exit_with_live_objects_exits_cleanly(py):
    out = py("""
        import numpy as np, xal
        d = xal.devices()[0]
        keep = [xal.Buffer(d, 64), xal.Stream(d), xal.Event(d), xal.comm_create()]
        arr = np.from_dlpack(keep[0].view("uint8"))
        arr[:] = 7
        print("done")
    """)
    assert out.strip() == "done"


def test_type_stubs_are_shipped():
    pkg = pathlib.Path(xal.__file__).parent
    assert (pkg / "py.typed").exists()
    stub = (pkg / "_xal.pyi").read_text()
    for name in ("class Allocation", "def mem_alloc", "def dlpack_export", "def collective"):
        assert name in stub


def test_joins_a_session_another_library_started(py):
    # xal_init called outside the package (as the torch backend xal_torch
    # or a C++ framework does): the package joins that session instead of
    # failing, and both see one xal.
    out = py(
        "import ctypes, json, xal\n"
        "libxal = ctypes.CDLL('libxal.so.1')\n"
        "assert libxal.xal_init(None) == 0\n"
        "n = ctypes.c_uint32()\n"
        "assert libxal.xal_device_count(ctypes.byref(n)) == 0\n"
        "devs = xal.devices()\n"
        "b = devs[0].alloc(64)\n"
        "b.memset(7)\n"
        "try:\n"
        "    xal.init()\n"
        "    again = 'accepted'\n"
        "except xal.Error as e:\n"
        "    again = type(e).__name__\n"
        "print(json.dumps([n.value, len(devs), b.to_bytes() == bytes([7]) * 64, again]))\n"
    )
    count, seen, written, again = json.loads(out.strip().splitlines()[-1])
    assert count == seen >= 2 and written is True
    assert again == "InvalidArgument"  # an explicit init still says xal is up
