"""Memory, streams and host memory a framework owns (ABI 1.1), and IPC."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xal


def test_import_host_memory_as_a_framework_would(dev):
    arr = np.zeros(32, np.uint8)
    b = xal.Buffer.import_(arr.ctypes.data, arr.nbytes, device=dev, host=True, keepalive=arr)
    assert b.kind == "imported" and b.ptr == arr.ctypes.data and len(b) == 32
    b.memset(0x7F, offset=4, nbytes=4)
    assert arr[4:8].tolist() == [0x7F] * 4 and arr[8] == 0
    with pytest.raises(xal.OutOfBounds):
        b.memset(1, offset=30, nbytes=4)
    b.close()
    assert arr[4] == 0x7F  # the memory stays the framework's


def test_import_bad_input(dev):
    arr = np.zeros(16, np.uint8)
    with pytest.raises(xal.InvalidArgument):
        xal.Buffer.import_(arr.ctypes.data, 0, device=dev, host=True)
    with pytest.raises(xal.InvalidArgument):
        xal.Buffer.import_(0, 16, device=dev, host=True)
    with pytest.raises(xal.InvalidArgument):
        xal.Buffer.import_(arr.ctypes.data, -1, device=dev, host=True)
    first = xal.Buffer.import_(arr.ctypes.data, 16, device=dev, host=True)
    with pytest.raises(xal.InvalidArgument):  # overlaps a live import
        xal.Buffer.import_(arr.ctypes.data + 8, 8, device=dev, host=True)
    first.close()


def test_stream_import_of_a_native_stream(dev):
    with xal.Stream(dev) as native_owner:
        native = native_owner.native_handle
        assert native != 0
        adopted = xal.Stream.import_(native, device=dev)
        assert adopted.imported
        b = xal.Buffer(dev, 1024)
        b.memset(3, stream=adopted)
        native_owner.synchronize()  # the framework's own stream orders the work
        assert set(b.to_bytes()) == {3}
        adopted.close()  # leaves the native stream alive
        b.memset(4, stream=native_owner)
        native_owner.synchronize()
        assert set(b.to_bytes()) == {4}


def test_allreduce_in_place_on_imported_memory_and_streams(devs):
    """Memory and streams "as a framework would": host arrays the framework
    owns and native streams, imported; the result is read back through the
    framework's own arrays."""
    pair = devs[:2]
    owned = [np.full(64, i + 1, np.float32) for i in range(2)]
    natives = [xal.Stream(d) for d in pair]
    bufs = [xal.Buffer.import_(a.ctypes.data, a.nbytes, device=d, host=True, keepalive=a)
            .view("float32") for a, d in zip(owned, pair)]
    streams = [xal.Stream.import_(s.native_handle, device=d) for s, d in zip(natives, pair)]
    with xal.comm_create(pair) as comms:
        comms.allreduce(bufs, streams=streams)
    for a in owned:
        assert (a == 3.0).all()
    for s in streams + natives:
        s.close()


def test_host_register(dev):
    host = np.zeros(1 << 16, np.uint8)
    with xal.host_register(host) as reg:
        assert reg.address == host.ctypes.data and reg.nbytes == host.nbytes
        with pytest.raises(xal.InvalidArgument):  # overlapping registration
            xal.host_register(host[100:200])
        b = xal.Buffer(dev, host.nbytes).memset(6)
        b.copy_to(host)
        assert (host == 6).all()
    assert reg.closed
    reg.close()  # idempotent
    again = xal.host_register(host)
    again.close()
    with pytest.raises(xal.InvalidArgument):
        xal.host_register(b"read-only bytes")


def test_ipc_handle_of_this_process_is_refused(dev):
    b = xal.Buffer(dev, 4096)
    h = b.ipc_handle()
    assert isinstance(h, bytes) and len(h) == 128
    with pytest.raises(xal.InvalidArgument):
        xal.Buffer.open_ipc(h, device=dev)
    with pytest.raises(xal.InvalidArgument):
        xal.Buffer.open_ipc(b"short", device=dev)
    with pytest.raises(xal.InvalidArgument):
        xal.Buffer.open_ipc(bytes(128), device=dev)
    with pytest.raises(xal.InvalidArgument):  # a view is not an allocation
        b[256:].ipc_handle()


CHILD = textwrap.dedent("""
    import sys, xal
    handle = bytes.fromhex(sys.stdin.readline().strip())
    with xal.Buffer.open_ipc(handle, device=0) as b:
        assert b.kind == "ipc"
        print(len(b), b.to_bytes()[:5].decode(), flush=True)
        b.copy_from(b"child wrote this", offset=100)
""")


def test_ipc_between_two_processes(dev):
    b = xal.Buffer(dev, 4096).memset(0)
    b.copy_from(b"hello")
    child = subprocess.run([sys.executable, "-c", CHILD], input=b.ipc_handle().hex() + "\n",
                           capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["4096", "hello"]
    assert b.copy_to(offset=100, nbytes=16) == b"child wrote this"


def test_ipc_handle_of_an_ended_process_is_refused(dev, py):
    out = py("""
        import xal
        b = xal.Buffer(xal.devices()[0], 4096)
        print(b.ipc_handle().hex())
    """)
    handle = bytes.fromhex(out.strip())
    with pytest.raises(xal.InvalidArgument) as e:
        xal.Buffer.open_ipc(handle, device=dev)
    assert e.value.operation == "xal_mem_open_ipc_handle"
