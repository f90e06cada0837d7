"""xal.from_dlpack: a producer's memory as a Buffer, zero-copy when a device
can address it."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _runtime, _xal
from ._buffer import Buffer
from ._device import DL_CPU, Device, as_device, devices
from ._dtypes import from_dlpack as _dtype_of
from ._errors import Error, InvalidArgument

# DLPack devices whose memory is host memory: CPU, CUDA and ROCm pinned host.
HOST_KINDS = {DL_CPU, 3, 11}


def from_dlpack(obj: Any, *, device: Device | int | None = None,
                copy: bool | None = None) -> Buffer:
    """A Buffer over the memory of `obj` (anything with __dlpack__: numpy,
    torch, jax, cupy arrays; or the buffer protocol), typed with its dtype
    and shape.

    Zero-copy (xal_mem_import) when `device` can address the producer's
    memory: host memory on a device whose memory is host memory (the mock;
    XAL_MEM_IMPORT_HOST), or device memory of the same kind and index. The
    producer's tensor is kept alive until the Buffer and its views are
    closed. `device` None: the first device that can. copy=None copies when
    zero-copy is impossible (a host producer and a device that cannot
    address host memory, a non-contiguous tensor, memory xal already
    knows), copy=True always copies, copy=False raises BufferError instead.
    """
    if isinstance(obj, Buffer):
        return _from_buffer(obj, device, copy)
    _runtime.ensure()
    dl = _producer_device(obj)
    target = _target(dl, device, copy)
    if copy is not True and _reaches(target, dl):
        keep, address, nbytes, shape, strides, dt, _, readonly = _xal.dlpack_import(obj)
        dtype = _dtype_of(*dt)
        if nbytes == 0:
            raise InvalidArgument("xal holds no empty buffers", operation="from_dlpack")
        if not _c_contiguous(shape, strides):
            reason = "the tensor is not C-contiguous"
        else:
            flags = _xal.MEM_IMPORT_HOST if dl[0] in HOST_KINDS else 0
            try:
                alloc = _xal.mem_import(target._h, address, nbytes, flags, keep)
                return Buffer._wrap(alloc, target, 0, nbytes, dtype, tuple(shape), readonly)
            except Error as e:
                if copy is False:
                    raise BufferError(f"from_dlpack: xal cannot import the memory: {e}") from e
                reason = str(e)
        if copy is False:
            raise BufferError(f"from_dlpack: zero-copy is impossible: {reason}")
        del keep
    return _copy_in(obj, target, dl)


def _c_contiguous(shape: list[int], strides: list[int]) -> bool:
    """Row-major and dense (dimensions of one element may have any stride)."""
    expected = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1 and st != expected:
            return False
        expected *= n
    return True


def _producer_device(obj: Any) -> tuple[int, int]:
    if hasattr(obj, "__dlpack_device__"):
        d = obj.__dlpack_device__()
        return (int(d[0]), int(d[1]))
    return (DL_CPU, 0)  # the buffer protocol


def _reaches(dev: Device, dl: tuple[int, int]) -> bool:
    """Whether `dev` addresses memory of DLPack device `dl` directly."""
    if dl[0] in HOST_KINDS:
        return dev.host_visible
    try:
        return dev.__dlpack_device__() == dl
    except BufferError:
        return False


def _target(dl: tuple[int, int], device: Device | int | None, copy: bool | None) -> Device:
    if device is not None:
        dev = as_device(device)
        if copy is False and not _reaches(dev, dl):
            raise BufferError(f"from_dlpack: device {dev.index} ({dev.backend}) cannot address "
                              f"memory of DLPack device {dl} without a copy")
        return dev
    devs = devices()
    for d in devs:
        if _reaches(d, dl):
            return d
    if dl[0] in HOST_KINDS and devs and copy is not False:
        return devs[0]
    raise BufferError(f"from_dlpack: no xal device can address memory of DLPack device {dl}")


def _copy_in(obj: Any, target: Device, dl: tuple[int, int]) -> Buffer:
    """A new buffer on `target` with a copy of a host producer's data."""
    if dl[0] not in HOST_KINDS:
        raise BufferError(f"from_dlpack: memory of DLPack device {dl} cannot be copied to "
                          f"device {target.index} ({target.backend}) by xal")
    host = np.from_dlpack(obj) if hasattr(obj, "__dlpack__") else np.asarray(memoryview(obj))
    host = np.ascontiguousarray(host)
    if host.nbytes == 0:
        raise InvalidArgument("xal holds no empty buffers", operation="from_dlpack")
    buf = Buffer(target, host.nbytes)
    return buf.view(host.dtype, host.shape).copy_from(host)


def _from_buffer(buf: Buffer, device: Device | int | None, copy: bool | None) -> Buffer:
    dev = buf.device if device is None else as_device(device)
    if dev == buf.device and not copy:
        return buf.view(buf.dtype, buf.shape if buf.dtype is not None else None)
    if copy is False:
        raise BufferError("from_dlpack: another device needs a copy")
    out = Buffer(dev, buf.nbytes)
    out.copy_from(buf)
    return out.view(buf.dtype, buf.shape) if buf.dtype is not None else out
