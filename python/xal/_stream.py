"""Streams and events."""

from __future__ import annotations

from typing import Any

from . import _runtime, _xal
from ._device import Device, as_device
from ._errors import InvalidArgument


class Stream:
    """An in-order queue of work on one device (xal_stream_t).

    Work given a Stream runs asynchronously to the host; the Stream keeps the
    host memory and buffers of that work alive until synchronize() (or a
    query() that finds it done, or close()). `with Stream(dev) as s:`
    synchronises and destroys it at the end.
    """

    __slots__ = ("_h", "_device", "_pending", "__weakref__")

    def __init__(self, device: Device | int | None = None, *, non_blocking: bool = False) -> None:
        dev = as_device(device)
        flags = _xal.STREAM_NON_BLOCKING if non_blocking else 0
        self._init(_xal.stream_create(dev._h, flags), dev)

    def _init(self, handle: Any, device: Device) -> None:
        self._h = handle
        self._device = device
        self._pending: list[Any] = []

    @classmethod
    def import_(cls, native: int, device: Device | int | None = None) -> Stream:
        """Adopts a framework's native stream (xal_stream_import): a CUstream,
        hipStream_t, ...; on the mock a Stream.native_handle. Closing the
        xal Stream leaves the native stream alive."""
        dev = as_device(device)
        s = cls.__new__(cls)
        s._init(_xal.stream_import(dev._h, int(native), 0), dev)
        return s

    @property
    def device(self) -> Device:
        return self._device

    @property
    def closed(self) -> bool:
        return self._h.closed

    @property
    def imported(self) -> bool:
        return self._h.imported

    @property
    def native_handle(self) -> int:
        """The backend's own stream behind this one (what Stream.import_ takes)."""
        return _xal.stream_native(self._h)

    def synchronize(self) -> None:
        """Waits until the stream has run all its work."""
        self._h.synchronize()
        self._pending.clear()

    def query(self) -> bool:
        """True when all work is done (xal_stream_query), without waiting."""
        done = self._h.query()
        if done:
            self._pending.clear()
        return done

    def record(self, event: Event | None = None) -> Event:
        """Records `event` (a new one if None) after the work queued so far."""
        if event is None:
            event = Event(self._device)
        event.record(self)
        return event

    def wait(self, event: Event) -> None:
        """Later work on this stream waits for `event` (any device)."""
        if not isinstance(event, Event):
            raise InvalidArgument("wait() takes an xal.Event", operation="Stream.wait")
        self._h.wait_event(event._h)

    def close(self) -> None:
        """Waits for the stream's work and destroys it. Idempotent."""
        try:
            self._h.close()
        finally:
            self._pending.clear()

    def _hold(self, *objs: Any) -> None:
        self._pending.extend(objs)

    def __del__(self) -> None:
        # The stream's work must be done before the host memory it holds goes.
        h = getattr(self, "_h", None)
        if h is not None:
            try:
                h.close()
            except Exception:  # noqa: BLE001 - a destructor cannot raise
                pass

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<xal.Stream on device {self._device.index} ({state})>"


class Event:
    """A point in a stream's work (xal_event_t), for waits and timing."""

    __slots__ = ("_h", "_device", "__weakref__")

    def __init__(self, device: Device | int | None = None, *, timing: bool = True) -> None:
        dev = as_device(device)
        flags = 0 if timing else _xal.EVENT_DISABLE_TIMING
        self._h = _xal.event_create(dev._h, flags)
        self._device = dev

    @property
    def device(self) -> Device:
        return self._device

    @property
    def closed(self) -> bool:
        return self._h.closed

    def record(self, stream: Stream | None = None) -> Event:
        """Captures the work queued on `stream` so far (the device's default
        stream if None); returns self."""
        s = stream if stream is not None else default_stream(self._device)
        if not isinstance(s, Stream):
            raise InvalidArgument("record() takes an xal.Stream", operation="Event.record")
        self._h.record(s._h)
        return self

    def synchronize(self) -> None:
        """Waits until the recorded work is done."""
        self._h.synchronize()

    def query(self) -> bool:
        """True when the recorded work is done (or nothing was recorded)."""
        return self._h.query()

    def elapsed(self, end: Event) -> float:
        """Milliseconds from this event to `end` (both complete, one device)."""
        if not isinstance(end, Event):
            raise InvalidArgument("elapsed() takes an xal.Event", operation="Event.elapsed")
        return _xal.event_elapsed_ms(self._h, end._h)

    def close(self) -> None:
        self._h.close()

    def __enter__(self) -> Event:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<xal.Event on device {self._device.index}>"


def default_stream(device: Device) -> Stream:
    """The device's stream for calls given none (one per device and session)."""
    key = (device._h.generation, device._h.key)
    s = _runtime._default_streams.get(key)
    if s is None or s.closed:
        with _runtime._lock:
            s = _runtime._default_streams.get(key)
            if s is None or s.closed:
                s = Stream(device)
                _runtime._default_streams[key] = s
    return s


def run_on(stream: Stream | None, device: Device, work: Any, *keep: Any) -> None:
    """Runs `work(stream_handle)` on `stream`, or on the device's default
    stream and waits for it when None. `keep` lives until the work is done."""
    if stream is None:
        s = default_stream(device)
        work(s._h)
        s.synchronize()
        return
    if not isinstance(stream, Stream):
        raise InvalidArgument("stream= takes an xal.Stream", operation="stream")
    work(stream._h)
    stream._hold(*keep)


def release_default_stream(device: Device) -> None:
    """Closes the device's default stream, if it has one (before a reset or
    a partitioning, which refuse devices with live streams)."""
    with _runtime._lock:
        s = _runtime._default_streams.pop((device._h.generation, device._h.key), None)
    if s is not None:
        s.close()
