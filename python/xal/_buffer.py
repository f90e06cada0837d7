"""Buffer: device memory, its views, copies and DLPack export."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _runtime, _xal
from ._device import DL_CPU, Device, as_device
from ._dtypes import DType, resolve
from ._errors import InvalidArgument, InvalidHandle, OutOfBounds
from ._stream import Stream, run_on

_KINDS = ("owned", "imported", "ipc")


class _ExportPin:
    """Held by one DLPack export until its consumer lets go; holds the
    allocation. xal.shutdown counts the live ones."""

    __slots__ = ("alloc", "__weakref__")

    def __init__(self, alloc: Any) -> None:
        self.alloc = alloc
        _runtime._exports.add(self)


def _size(value: Any, what: str, operation: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidArgument(f"{what} must be an int, not {type(value).__name__}",
                              operation=operation)
    if value < 0:
        raise InvalidArgument(f"{what} must be >= 0, not {value}", operation=operation)
    return int(value)


class Buffer:
    """Device memory: an allocation, or a view of part of one.

    `Buffer(device, nbytes)` allocates (xal_mem_alloc); `buf[a:b]` is a view
    of bytes a..b of the same memory; `buf.view(dtype, shape)` a typed view
    (what DLPack consumers see). The memory is freed when the last of the
    buffer, its views and its DLPack exports is closed or dropped.

    Copies and memsets take `stream=`: with None they run on the device's
    default stream and are done on return; with a Stream they are queued
    and the Stream keeps their host memory alive until it is synchronised.
    """

    __slots__ = ("_alloc", "_device", "_offset", "_nbytes", "_dtype", "_shape", "_readonly",
                 "__weakref__")

    def __init__(self, device: Device | int | None = None, nbytes: int = 0) -> None:
        dev = as_device(device)
        n = _size(nbytes, "nbytes", "xal_mem_alloc")
        self._set(_xal.mem_alloc(dev._h, n), dev, 0, n, None, None, False)

    def _set(self, alloc: Any, device: Device, offset: int, nbytes: int,
             dtype: DType | None, shape: tuple[int, ...] | None, readonly: bool) -> None:
        self._alloc = alloc
        self._device = device
        self._offset = offset
        self._nbytes = nbytes
        self._dtype = dtype
        self._shape = shape
        self._readonly = readonly

    @classmethod
    def _wrap(cls, alloc: Any, device: Device, offset: int, nbytes: int,
              dtype: DType | None = None, shape: tuple[int, ...] | None = None,
              readonly: bool = False) -> Buffer:
        b = cls.__new__(cls)
        b._set(alloc, device, offset, nbytes, dtype, shape, readonly)
        return b

    # -- making buffers from memory others own -----------------------------
    @classmethod
    def import_(cls, native: int, nbytes: int, *, device: Device | int | None = None,
                host: bool = False, keepalive: Any = None) -> Buffer:
        """Wraps memory a framework allocated (xal_mem_import): a vendor device
        pointer, or with host=True a host pointer (devices whose memory is
        host memory: the mock). xal does not own it: closing the Buffer
        forgets the import. `keepalive` is held until then."""
        dev = as_device(device)
        n = _size(nbytes, "nbytes", "xal_mem_import")
        flags = _xal.MEM_IMPORT_HOST if host else 0
        alloc = _xal.mem_import(dev._h, int(native), n, flags, keepalive)
        return cls._wrap(alloc, dev, 0, n)

    @classmethod
    def open_ipc(cls, handle: bytes, device: Device | int | None = None) -> Buffer:
        """Maps memory another process exported with ipc_handle()."""
        dev = as_device(device)
        alloc = _xal.mem_open_ipc_handle(dev._h, bytes(handle))
        return cls._wrap(alloc, dev, 0, alloc.nbytes)

    def ipc_handle(self) -> bytes:
        """An IPC handle (bytes) naming this allocation for another process of
        the host (xal_mem_get_ipc_handle); the buffer must be a whole
        allocation made by xal."""
        a = self._live("Buffer.ipc_handle")
        if self._offset != 0 or self._nbytes != a.nbytes:
            raise InvalidArgument("an IPC handle names a whole allocation, not a view of one",
                                  operation="Buffer.ipc_handle")
        return a.ipc_handle()

    # -- attributes --------------------------------------------------------
    @property
    def device(self) -> Device:
        return self._device

    @property
    def nbytes(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

    @property
    def ptr(self) -> int:
        """The device address of the first byte (an xal_devptr_t)."""
        return self._live("Buffer.ptr").ptr + self._offset

    @property
    def offset(self) -> int:
        """Where the view starts in its allocation, in bytes."""
        return self._offset

    @property
    def dtype(self) -> Any:
        """The element type of a typed view (a numpy dtype), None if untyped."""
        if self._dtype is None:
            return None
        return self._dtype.numpy if self._dtype.numpy is not None else self._dtype.name

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of a typed view; (nbytes,) for untyped bytes."""
        return self._shape if self._shape is not None else (self._nbytes,)

    @property
    def readonly(self) -> bool:
        """True for memory imported from a read-only producer."""
        return self._readonly

    @property
    def kind(self) -> str:
        """"owned" (xal_mem_alloc), "imported" (xal_mem_import) or "ipc"."""
        return _KINDS[self._live("Buffer.kind").kind]

    @property
    def closed(self) -> bool:
        return self._alloc is None

    def close(self) -> None:
        """Lets go of the memory: freed now unless views or DLPack exports
        still hold it (then when the last of them goes). Idempotent."""
        self._alloc = None

    def __enter__(self) -> Buffer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _live(self, operation: str) -> Any:
        a = self._alloc
        if a is None:
            raise InvalidHandle("the buffer is closed", operation=operation)
        a.check(operation)
        return a

    def _range(self, operation: str, offset: Any, nbytes: Any) -> tuple[int, int]:
        """(offset, nbytes) checked against the view; nbytes None: to its end."""
        off = _size(offset, "offset", operation)
        if off > self._nbytes:
            raise OutOfBounds(f"offset {off} is past the end of the {self._nbytes}-byte buffer",
                              operation=operation)
        n = self._nbytes - off if nbytes is None else _size(nbytes, "nbytes", operation)
        if n > self._nbytes - off:
            raise OutOfBounds(f"[{off}, {off + n}) is outside the {self._nbytes}-byte buffer",
                              operation=operation)
        return off, n

    def _writable(self, operation: str) -> None:
        if self._readonly:
            raise InvalidArgument("the buffer is read-only (imported from a read-only producer)",
                                  operation=operation)

    # -- views ---------------------------------------------------------------
    def __getitem__(self, key: slice) -> Buffer:
        """buf[a:b]: an untyped view of bytes a..b (no step)."""
        if not isinstance(key, slice):
            raise InvalidArgument("index a Buffer with a byte slice, buf[a:b]",
                                  operation="Buffer.__getitem__")
        start, stop, step = key.indices(self._nbytes)
        if step != 1:
            raise InvalidArgument("a Buffer slice takes no step", operation="Buffer.__getitem__")
        self._live("Buffer.__getitem__")
        n = max(0, stop - start)
        return Buffer._wrap(self._alloc, self._device, self._offset + start, n,
                            readonly=self._readonly)

    def view(self, dtype: Any = None, shape: Any = None) -> Buffer:
        """A typed view of the same memory: `dtype` elements in C order,
        `shape` (default: as many as fit; -1 in one place is inferred). With
        dtype None an untyped view of all bytes."""
        op = "Buffer.view"
        self._live(op)
        if dtype is None:
            return Buffer._wrap(self._alloc, self._device, self._offset, self._nbytes,
                                readonly=self._readonly)
        dt = resolve(dtype)
        shp = _shape(shape, self._nbytes, dt.itemsize, op)
        return Buffer._wrap(self._alloc, self._device, self._offset,
                            math.prod(shp) * dt.itemsize, dt, shp, self._readonly)

    # -- copies ----------------------------------------------------------------
    def copy_from(self, src: Any, *, offset: int = 0, stream: Stream | None = None) -> Buffer:
        """Copies all of `src` into this buffer at byte `offset`: a Buffer (of
        any device), or host memory (bytes, bytearray, memoryview, numpy
        array, anything with the buffer protocol). Returns self."""
        op = "Buffer.copy_from"
        a = self._live(op)
        self._writable(op)
        if isinstance(src, Buffer):
            s = src._live(op)
            off, n = self._range(op, offset, src.nbytes)
            dst_off, src_off = self._offset + off, src._offset
            run_on(stream, self._device,
                   lambda h: h.dtod(a, dst_off, s, src_off, n), a, s)
            return self
        view = _host_view(src, writable=False, operation=op)
        off, n = self._range(op, offset, view.nbytes)
        dst_off = self._offset + off
        run_on(stream, self._device, lambda h: h.htod(a, dst_off, view, 0, n), a, view)
        return self

    def copy_to(self, dst: Any = None, *, offset: int = 0, nbytes: int | None = None,
                stream: Stream | None = None) -> Any:
        """Copies bytes from `offset` out: into `dst` (a Buffer, or writable
        host memory such as a numpy array or bytearray; `nbytes` defaults to
        its size) and returns it, or with dst None returns them as bytes
        (then it always waits)."""
        op = "Buffer.copy_to"
        a = self._live(op)
        if isinstance(dst, Buffer):
            d = dst._live(op)
            dst._writable(op)
            off, n = self._range(op, offset, dst.nbytes if nbytes is None else nbytes)
            if n > dst.nbytes:
                raise OutOfBounds(f"{n} bytes do not fit the {dst.nbytes}-byte destination",
                                  operation=op)
            src_off, dst_off = self._offset + off, dst._offset
            run_on(stream, dst._device, lambda h: h.dtod(d, dst_off, a, src_off, n), a, d)
            return dst
        if dst is None:
            off, n = self._range(op, offset, nbytes)
            out = bytearray(n)
            view = _host_view(out, writable=True, operation=op)
            src_off = self._offset + off
            run_on(None, self._device, lambda h: h.dtoh(view, 0, a, src_off, n))
            del view
            return bytes(out)
        view = _host_view(dst, writable=True, operation=op)
        off, n = self._range(op, offset, view.nbytes if nbytes is None else nbytes)
        if n > view.nbytes:
            raise OutOfBounds(f"{n} bytes do not fit the {view.nbytes}-byte destination",
                              operation=op)
        src_off = self._offset + off
        run_on(stream, self._device, lambda h: h.dtoh(view, 0, a, src_off, n), a, view)
        return dst

    def to_bytes(self) -> bytes:
        """The buffer's bytes (a copy)."""
        return self.copy_to()

    def to_numpy(self, dtype: Any = None, shape: Any = None) -> np.ndarray:
        """A new numpy array with a copy of the memory: the view's dtype and
        shape, or those given (default uint8 bytes)."""
        op = "Buffer.to_numpy"
        if dtype is None and shape is None and self._dtype is not None and self._shape:
            dt, shp = self._dtype, self._shape
        else:
            dt = resolve(dtype) if dtype is not None else (self._dtype or resolve("uint8"))
            shp = _shape(shape, self._nbytes, dt.itemsize, op)
        if dt.numpy is None:
            raise InvalidArgument("numpy has no bfloat16 here (install ml_dtypes)", operation=op)
        out = np.empty(shp, dtype=dt.numpy)
        self.copy_to(out)
        return out

    def as_array(self, dtype: Any = None, shape: Any = None) -> np.ndarray:
        """A numpy array over the buffer's own memory (no copy), typed as the
        view or as given: for devices whose memory is host memory (the mock);
        elsewhere BufferError (use to_numpy)."""
        if dtype is None and shape is None:
            v = self if self._dtype is not None else self.view("uint8")
        else:
            v = self.view(dtype if dtype is not None else (self._dtype or "uint8"), shape)
        return np.from_dlpack(v)

    def memset(self, value: int, *, offset: int = 0, nbytes: int | None = None,
               stream: Stream | None = None) -> Buffer:
        """Sets bytes [offset, offset + nbytes) to `value` (0..255). Returns self."""
        op = "Buffer.memset"
        a = self._live(op)
        self._writable(op)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 0 <= value <= 255:
            raise InvalidArgument(f"memset value must be a byte (0..255), not {value!r}",
                                  operation=op)
        off, n = self._range(op, offset, nbytes)
        dst_off = self._offset + off
        run_on(stream, self._device, lambda h: h.memset(a, dst_off, int(value), n), a)
        return self

    # -- DLPack ------------------------------------------------------------------
    def __dlpack_device__(self) -> tuple[int, int]:
        """(kDLCPU, 0) for host-visible memory (the mock), else the backend's
        DLPack device (kDLCUDA, kDLROCM, kDLOneAPI, kDLOpenCL) and its index."""
        return self._device.__dlpack_device__()

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """The DLPack capsule of the view: versioned (DLManagedTensorVersioned,
        read-only flag set for read-only memory) when max_version >= (1, 0),
        else the legacy one. The memory stays alive until the consumer drops
        it. dl_device=(kDLCPU, 0) of device memory copies to the host (not
        with copy=False); copy=True always gives a copy. Unless stream == -1,
        the device's queued work is finished first."""
        op = "Buffer.__dlpack__"
        a = self._live(op)
        own = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != own:
            if tuple(dl_device) != (DL_CPU, 0) or copy is False:
                raise BufferError(f"{op}: the buffer lives on DLPack device {own}; it cannot "
                                  f"be exported to {tuple(dl_device)}"
                                  + (" without a copy" if copy is False else ""))
            copy = True
        if copy:
            return self._export_copy(stream, max_version)
        if stream != -1:
            self._device.synchronize()
        typed = self if self._dtype is not None else self.view("uint8")
        dt = typed._dtype
        assert dt is not None and typed._shape is not None
        shape = list(typed._shape)
        strides = _c_strides(shape)
        nd = _xal.dlpack_export(a, _ExportPin(a), self._offset, shape, strides, dt.dl_code,
                                dt.itemsize * 8, own[0], own[1], self._readonly)
        return nd.__dlpack__(max_version=max_version)

    def _export_copy(self, stream: Any, max_version: Any) -> Any:
        if self._device.host_visible or self.__dlpack_device__() == (DL_CPU, 0):
            return self.to_numpy().__dlpack__(max_version=max_version)
        clone = Buffer(self._device, self._nbytes)
        clone.copy_from(self)
        typed = clone.view(self._dtype, self._shape) if self._dtype is not None else clone
        return typed.__dlpack__(stream=stream, max_version=max_version)

    def __repr__(self) -> str:
        if self._alloc is None:
            return "<xal.Buffer (closed)>"
        typed = f" {self._dtype.name}{list(self._shape or ())}" if self._dtype else ""
        return (f"<xal.Buffer {self._nbytes} bytes{typed} on device {self._device.index}"
                f"{' read-only' if self._readonly else ''}>")


def _shape(shape: Any, nbytes: int, itemsize: int, operation: str) -> tuple[int, ...]:
    if shape is None:
        if nbytes % itemsize:
            raise InvalidArgument(f"{nbytes} bytes are not a whole number of {itemsize}-byte "
                                  "elements", operation=operation)
        return (nbytes // itemsize,)
    shp = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(not isinstance(s, (int, np.integer)) for s in shp) or sum(s == -1 for s in shp) > 1 \
            or any(s < -1 for s in shp):
        raise InvalidArgument(f"bad shape {shape!r}", operation=operation)
    if -1 in shp:
        known = math.prod(s for s in shp if s != -1)
        if known == 0 or nbytes % (known * itemsize):
            raise InvalidArgument(f"shape {shape!r} does not divide {nbytes} bytes",
                                  operation=operation)
        shp = tuple(nbytes // (known * itemsize) if s == -1 else s for s in shp)
    shp = tuple(int(s) for s in shp)
    if math.prod(shp) * itemsize > nbytes:
        raise OutOfBounds(f"shape {shp} of {itemsize}-byte elements needs "
                          f"{math.prod(shp) * itemsize} bytes; the buffer has {nbytes}",
                          operation=operation)
    return shp


def _c_strides(shape: list[int]) -> list[int]:
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return list(reversed(strides))


def _host_view(obj: Any, *, writable: bool, operation: str) -> Any:
    if not writable and isinstance(obj, np.ndarray) and not obj.flags.c_contiguous:
        obj = np.ascontiguousarray(obj)
    try:
        return _xal.HostView(obj, writable)
    except InvalidArgument as e:
        raise InvalidArgument(e.message, operation=operation) from e


def alloc(nbytes: int, device: Device | int | None = None) -> Buffer:
    """Allocates `nbytes` on `device` (default: device 0)."""
    return Buffer(device, nbytes)

