"""Host memory registered with xal (xal_host_register)."""

from __future__ import annotations

from typing import Any

from . import _runtime, _xal


class HostRegistration:
    """Host memory of a writable buffer-protocol object (a numpy array, a
    bytearray) registered with every loaded backend, so that copies use it
    directly (page-locked where the vendor can). The object stays exported
    (cannot be resized) until close(), which unregisters it."""

    __slots__ = ("_h", "_obj")

    def __init__(self, obj: Any) -> None:
        _runtime.ensure()
        self._h = _xal.HostRegistration(obj, 0)
        self._obj = obj

    @property
    def address(self) -> int:
        return self._h.address

    @property
    def nbytes(self) -> int:
        return self._h.nbytes

    @property
    def closed(self) -> bool:
        return self._h.closed

    def close(self) -> None:
        """Unregisters the memory (xal_host_unregister). Idempotent."""
        self._h.close()

    def __enter__(self) -> HostRegistration:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<xal.HostRegistration {self.nbytes} bytes at {self.address:#x}>"


def host_register(obj: Any) -> HostRegistration:
    """Registers the host memory of `obj` (xal_host_register)."""
    return HostRegistration(obj)
