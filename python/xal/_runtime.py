"""The session: xal.init, xal.shutdown, lazy initialisation, backends."""

from __future__ import annotations

import atexit
import dataclasses
import threading
import weakref
from typing import Any

from . import _xal
from ._errors import Error

_lock = threading.RLock()
# DLPack exports still held by a consumer (one pin per __dlpack__ call).
_exports: weakref.WeakSet[Any] = weakref.WeakSet()
# Per device and session: the stream that calls without one use.
_default_streams: dict[tuple[int, int], Any] = {}

BACKEND_STATES = {0: "LOADED", 1: "UNAVAILABLE", 2: "FAILED"}
BACKEND_FLAG_SIMULATED = 0x1
BACKEND_FLAG_WRAPPER = 0x2


def init(
    backends: str | None = None,
    *,
    backend_path: str | None = None,
    device_selector: str | None = None,
    validation: bool | None = None,
) -> None:
    """Initialises xal (xal_init): loads the backends and lists the devices.

    Arguments left as None take xal's environment variables (XAL_BACKENDS,
    XAL_BACKEND_PATH, XAL_DEVICE_SELECTOR, XAL_VALIDATION); the others
    (XAL_MOCK_DEVICES, XAL_FAULTS, XAL_TRACE, XAL_MEMORY_LIMIT, ...) are read
    here too, so set them in os.environ before. Calling it is optional: the
    first call that needs xal initialises it with the environment. A second
    init without shutdown raises InvalidArgument.
    """
    flag = -1 if validation is None else int(bool(validation))
    with _lock:
        _xal.init(backends, backend_path, device_selector, flag)


def shutdown(*, force: bool = False) -> None:
    """Shuts xal down (xal_shutdown): every object made so far becomes stale.

    Buffers, streams, events, devices and communicators of the session then
    raise NotInitialized (or InvalidHandle after a new init) instead of
    reaching xal; dropping them is harmless. While a DLPack consumer still
    holds memory of xal (numpy or torch arrays made from a Buffer), the
    memory would vanish under it: shutdown raises BufferError then, unless
    force=True. Raises NotInitialized when xal is not initialised.
    """
    with _lock:
        live = len(_exports)
        if live and not force:
            raise BufferError(
                f"xal.shutdown: {live} DLPack export(s) of xal memory are still held by "
                "their consumers; drop them first, or pass force=True"
            )
        _default_streams.clear()
        _xal.shutdown()


def is_initialized() -> bool:
    """True between init (explicit or lazy) and shutdown."""
    return _xal.generation() != 0


def ensure() -> int:
    """Initialises xal from the environment when it is not, or joins the
    session another library of the process started (the torch backend
    xal_torch, a C++ framework calling xal_init); returns the generation."""
    gen = _xal.generation()
    if gen:
        return gen
    with _lock:
        if not _xal.generation() and not _xal.adopt():
            _xal.init(None, None, None, -1)
        return _xal.generation()


def abi_version() -> tuple[int, int]:
    """The ABI of the loaded libxal as (major, minor)."""
    v = _xal.abi_version()
    return (v >> 16, v & 0xFFFF)


def status_name(status: int) -> str:
    """xal_status_name: the stable name of a status."""
    return _xal.status_name(status)


@dataclasses.dataclass(frozen=True)
class BackendInfo:
    """One backend xal considered (xal_backend_get_info)."""

    index: int
    name: str
    version: str
    path: str
    state: str  # LOADED, UNAVAILABLE or FAILED
    status: int  # why it is not LOADED
    status_name: str
    reason: str
    abi_version: tuple[int, int]
    device_count: int
    simulated: bool
    wrapper: bool
    driver_version: str
    note: str

    @property
    def loaded(self) -> bool:
        return self.state == "LOADED"


def backends() -> list[BackendInfo]:
    """Every backend xal considered, loaded or not (with the reason)."""
    ensure()
    out = []
    for i in range(_xal.backend_count()):
        d = _xal.backend_info(i)
        abi = d["abi_version"]
        out.append(
            BackendInfo(
                index=i,
                name=d["name"],
                version=d["version"],
                path=d["path"],
                state=BACKEND_STATES.get(d["state"], "UNKNOWN"),
                status=d["status"],
                status_name=_xal.status_name(d["status"]),
                reason=d["reason"],
                abi_version=(abi >> 16, abi & 0xFFFF),
                device_count=d["device_count"],
                simulated=bool(d["flags"] & BACKEND_FLAG_SIMULATED),
                wrapper=bool(d["flags"] & BACKEND_FLAG_WRAPPER),
                driver_version=d["driver_version"],
                note=d["note"],
            )
        )
    return out


def last_error() -> dict[str, Any]:
    """This thread's xal_last_error as a dict (status, operation, message, ...)."""
    return _xal.last_error()




def _at_exit() -> None:
    if _xal.generation():
        try:
            shutdown(force=True)
        except Error:
            pass


atexit.register(_at_exit)
