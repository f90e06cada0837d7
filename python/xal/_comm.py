"""Communicators over local devices and the collectives."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, overload

from . import _xal
from ._buffer import Buffer
from ._device import Device, as_device, devices
from ._dtypes import DType, op_code, resolve
from ._errors import Error, InvalidArgument, _from_detail
from ._stream import Stream, default_stream

PATHS = {0: "NATIVE", 1: "HIERARCHICAL", 2: "MPI"}
COLLECTIVES = ("allreduce", "broadcast", "reduce", "allgather", "reduce_scatter", "alltoall")


@contextlib.contextmanager
def group() -> Iterator[None]:
    """xal_group_start ... xal_group_end: collectives issued inside are only
    queued, so that one thread can issue one for every rank."""
    _xal.group_start()
    try:
        yield
    except BaseException:
        with contextlib.suppress(Error):
            _xal.group_end()
        raise
    _xal.group_end()


class Communicator:
    """One rank of a communicator (xal_comm_t).

    Each collective takes Buffers of the rank's device; dtype comes from a
    typed Buffer (buf.view("float32")) or dtype=, and count from the send
    buffer's size unless given. `recv` None means in place (send is also
    the result). `stream` None: the device's default stream, not waited for
    (call synchronize()); a Stream keeps the buffers alive until synchronised.
    """

    __slots__ = ("_h", "_device", "_info", "__weakref__")

    def __init__(self, handle: Any, device: Device) -> None:
        self._h = handle
        self._device = device
        self._info = handle.info()

    @property
    def rank(self) -> int:
        return self._info["rank"]

    @property
    def size(self) -> int:
        return self._info["size"]

    @property
    def device(self) -> Device:
        return self._device

    @property
    def path(self) -> str:
        """NATIVE (one backend's library), HIERARCHICAL (mixed), MPI."""
        return PATHS.get(self._info["path"], "UNKNOWN")

    @property
    def timeout_ms(self) -> int:
        return self._info["timeout_ms"]

    @property
    def description(self) -> str:
        return self._info["description"]

    @property
    def closed(self) -> bool:
        return self._h.closed

    def allreduce(self, send: Buffer, recv: Buffer | None = None, *, op: Any = "sum",
                  count: int | None = None, dtype: Any = None,
                  stream: Stream | None = None) -> Buffer:
        return self._run("allreduce", send, recv, op=op, count=count, dtype=dtype,
                         stream=stream)

    def broadcast(self, send: Buffer | None, recv: Buffer | None = None, *, root: int = 0,
                  count: int | None = None, dtype: Any = None,
                  stream: Stream | None = None) -> Buffer:
        """`send` is read on the root only (None elsewhere is fine with recv)."""
        return self._run("broadcast", send, recv, root=root, count=count, dtype=dtype,
                         stream=stream)

    def reduce(self, send: Buffer, recv: Buffer | None = None, *, op: Any = "sum",
               root: int = 0, count: int | None = None, dtype: Any = None,
               stream: Stream | None = None) -> Buffer | None:
        """`recv` is written on the root only."""
        return self._run("reduce", send, recv, op=op, root=root, count=count, dtype=dtype,
                         stream=stream, recv_optional=True)

    def allgather(self, send: Buffer, recv: Buffer, *, count: int | None = None,
                  dtype: Any = None, stream: Stream | None = None) -> Buffer:
        """recv holds size x count elements (count: the send buffer's)."""
        return self._run("allgather", send, recv, count=count, dtype=dtype, stream=stream)

    def reduce_scatter(self, send: Buffer, recv: Buffer, *, op: Any = "sum",
                       count: int | None = None, dtype: Any = None,
                       stream: Stream | None = None) -> Buffer:
        """send holds size x count elements (count: the recv buffer's)."""
        return self._run("reduce_scatter", send, recv, op=op, count=count, dtype=dtype,
                         stream=stream)

    def alltoall(self, send: Buffer, recv: Buffer, *, count: int | None = None,
                 dtype: Any = None, stream: Stream | None = None) -> Buffer:
        """send and recv hold size x count elements; block j goes to rank j."""
        return self._run("alltoall", send, recv, count=count, dtype=dtype, stream=stream)

    def _run(self, name: str, send: Buffer | None, recv: Buffer | None, *, op: Any = "sum",
             root: int = 0, count: int | None = None, dtype: Any = None,
             stream: Stream | None = None, recv_optional: bool = False) -> Any:
        opname = f"Communicator.{name}"
        if recv is None and not recv_optional:
            recv = send  # in place
        if recv is None and send is None:
            raise InvalidArgument("no buffer given", operation=opname)
        for b in (send, recv):
            if b is not None and not isinstance(b, Buffer):
                raise InvalidArgument(f"buffers must be xal.Buffer, not {type(b).__name__}",
                                      operation=opname)
            if b is not None and b.device != self._device:
                raise InvalidArgument(f"a buffer of device {b.device.index} given to rank "
                                      f"{self.rank} on device {self._device.index}",
                                      operation=opname)
        dt = _dtype(dtype, send, recv, opname)
        n = count if count is not None else _count(name, send, recv, dt, self.size)
        if not isinstance(n, int) or n < 0:
            raise InvalidArgument(f"count must be an int >= 0, not {n!r}", operation=opname)
        s = stream if stream is not None else default_stream(self._device)
        if not isinstance(s, Stream):
            raise InvalidArgument("stream= takes an xal.Stream", operation=opname)
        send_a = send._live(opname) if send is not None else None
        recv_a = recv._live(opname) if recv is not None else None
        if recv is not None:
            recv._writable(opname)
        code = op_code(op)
        _xal.collective(name, self._h, send_a, send.offset if send is not None else 0,
                        recv_a, recv.offset if recv is not None else 0,
                        n, dt.xal, code, int(root), s._h)
        s._hold(send_a, recv_a)
        return recv

    def synchronize(self) -> None:
        """Waits for the work on the rank's default stream."""
        default_stream(self._device).synchronize()

    def abort(self) -> None:
        """Ends every pending call of the communicator with Aborted."""
        self._h.abort()

    def async_error(self) -> Error | None:
        """The first asynchronous error of the communicator, as an exception
        object (not raised), or None."""
        status = self._h.async_error()
        if status >= 0:
            return None
        return _from_detail(status, _xal.status_name(status), "xal_comm_get_async_error",
                            "", 0, "", "asynchronous error of the communicator")

    def close(self) -> None:
        self._h.close()

    def __enter__(self) -> Communicator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<xal.Communicator rank {self.rank}/{self.size} on device "
                f"{self._device.index} ({self.path})>")


def _dtype(dtype: Any, send: Buffer | None, recv: Buffer | None, opname: str) -> DType:
    if dtype is not None:
        return resolve(dtype)
    for b in (send, recv):
        if b is not None and b._dtype is not None:
            return b._dtype
    raise InvalidArgument("untyped buffers: pass dtype= or use buf.view(dtype)",
                          operation=opname)


def _count(name: str, send: Buffer | None, recv: Buffer | None, dt: DType, size: int) -> int:
    if name in ("reduce_scatter",):
        assert recv is not None
        return recv.nbytes // dt.itemsize
    base = send if send is not None else recv
    assert base is not None
    n = base.nbytes // dt.itemsize
    return n // size if name == "alltoall" else n


class CommGroup(Sequence[Communicator]):
    """The communicators of xal.comm_create, one per rank (index them).

    Its collective methods run the collective on every rank at once inside
    xal_group_start/end, with one buffer per rank, then (synchronize=True)
    wait for every rank's stream.
    """

    def __init__(self, comms: list[Communicator]) -> None:
        self._comms = comms

    @overload
    def __getitem__(self, i: int) -> Communicator: ...
    @overload
    def __getitem__(self, i: slice) -> list[Communicator]: ...
    def __getitem__(self, i: Any) -> Any:
        return self._comms[i]

    def __len__(self) -> int:
        return len(self._comms)

    @property
    def devices(self) -> list[Device]:
        return [c.device for c in self._comms]

    def run(self, name: str, sends: Sequence[Buffer | None],
            recvs: Sequence[Buffer | None] | None = None, *,
            streams: Sequence[Stream | None] | None = None, synchronize: bool = True,
            **kwargs: Any) -> list[Any]:
        """Runs collective `name` on every rank inside one group."""
        if name not in COLLECTIVES:
            raise InvalidArgument(f"no collective named {name!r}", operation="CommGroup.run")
        n = len(self._comms)
        for what, seq in (("sends", sends), ("recvs", recvs), ("streams", streams)):
            if seq is not None and len(seq) != n:
                raise InvalidArgument(f"{what} has {len(seq)} entries for {n} ranks",
                                      operation=f"CommGroup.{name}")
        results = []
        with group():
            for i, c in enumerate(self._comms):
                recv = recvs[i] if recvs is not None else None
                stream = streams[i] if streams is not None else None
                results.append(getattr(c, name)(sends[i], recv, stream=stream, **kwargs))
        if synchronize:
            for i, c in enumerate(self._comms):
                s = streams[i] if streams is not None and streams[i] is not None else None
                (s or default_stream(c.device)).synchronize()
        return results

    def allreduce(self, sends, recvs=None, **kw) -> list[Any]:  # type: ignore[no-untyped-def]
        return self.run("allreduce", sends, recvs, **kw)

    def broadcast(self, sends, recvs=None, **kw) -> list[Any]:  # type: ignore[no-untyped-def]
        return self.run("broadcast", sends, recvs, **kw)

    def reduce(self, sends, recvs=None, **kw) -> list[Any]:  # type: ignore[no-untyped-def]
        return self.run("reduce", sends, recvs, **kw)

    def allgather(self, sends, recvs, **kw) -> list[Any]:  # type: ignore[no-untyped-def]
        return self.run("allgather", sends, recvs, **kw)

    def reduce_scatter(self, sends, recvs, **kw) -> list[Any]:  # type: ignore[no-untyped-def]
        return self.run("reduce_scatter", sends, recvs, **kw)

    def alltoall(self, sends, recvs, **kw) -> list[Any]:  # type: ignore[no-untyped-def]
        return self.run("alltoall", sends, recvs, **kw)

    def abort(self) -> None:
        for c in self._comms:
            c.abort()

    def close(self) -> None:
        for c in self._comms:
            c.close()

    def __enter__(self) -> CommGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<xal.CommGroup of {len(self._comms)} ranks on devices " \
               f"{[d.index for d in self.devices]}>"


def comm_create(devs: Sequence[Device | int] | None = None, *,
                timeout_ms: int = 0) -> CommGroup:
    """One communicator per device (rank i on devs[i]; default: every
    device), as a CommGroup. timeout_ms 0: XAL_COMM_TIMEOUT_MS or xal's
    default."""
    ds = devices() if devs is None else [as_device(d) for d in devs]
    handles = _xal.comm_create([d._h for d in ds], int(timeout_ms))
    return CommGroup([Communicator(h, d) for h, d in zip(handles, ds)])
