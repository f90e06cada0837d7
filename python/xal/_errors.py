"""The exceptions: one xal.Error subclass per failing xal status.

Every failing call raises the subclass of its status, carrying the detail
xal_last_error gave on the calling thread. This module imports nothing of
the extension module: the bindings import it to raise.
"""

from __future__ import annotations


class Error(Exception):
    """A failing xal status.

    Attributes:
        status: the xal status (a negative int, e.g. -4).
        status_name: its stable name ("XAL_ERROR_OUT_OF_MEMORY").
        operation: the C function that failed ("xal_mem_alloc"), or the
            Python method for errors the package finds itself.
        backend: the backend that reported it ("mock", "fault(mock)", "" for
            the core or the package).
        vendor_code: the vendor's own code (CUDA 700, ...), 0 if none.
        vendor_name: the vendor's name for it, "" if none.
        message: xal's readable message.
    """

    status: int = 0
    status_name: str = ""

    def __init__(
        self,
        message: str = "",
        *,
        status: int | None = None,
        status_name: str | None = None,
        operation: str = "",
        backend: str = "",
        vendor_code: int = 0,
        vendor_name: str = "",
    ) -> None:
        if status is not None:
            self.status = status
        if status_name is not None:
            self.status_name = status_name
        self.operation = operation
        self.backend = backend
        self.vendor_code = vendor_code
        self.vendor_name = vendor_name
        self.message = message
        super().__init__(self._text())

    def _text(self) -> str:
        where = self.operation or "xal"
        if self.backend:
            where += f" [{self.backend}]"
        vendor = ""
        if self.vendor_code or self.vendor_name:
            parts = [self.vendor_name] if self.vendor_name else []
            parts += [str(self.vendor_code)] if self.vendor_code else []
            vendor = f" (vendor {' '.join(parts)})"
        return f"{where}: {self.status_name}{vendor}: {self.message}"

    def __reduce__(self):  # picklable with its detail
        return (
            _from_detail,
            (
                self.status,
                self.status_name,
                self.operation,
                self.backend,
                self.vendor_code,
                self.vendor_name,
                self.message,
            ),
        )


def _status(status: int, name: str):
    def decorate(cls):
        cls.status = status
        cls.status_name = name
        return cls

    return decorate


@_status(-1, "XAL_ERROR_INVALID_ARGUMENT")
class InvalidArgument(Error, ValueError):
    """A bad argument (size, flag, dtype, rank, a closed or read-only buffer...)."""


@_status(-2, "XAL_ERROR_INVALID_HANDLE")
class InvalidHandle(Error):
    """A closed object, or one of an earlier session (before xal.shutdown)."""


@_status(-3, "XAL_ERROR_NOT_SUPPORTED")
class NotSupported(Error):
    """The device or backend does not have the feature."""


@_status(-4, "XAL_ERROR_OUT_OF_MEMORY")
class OutOfMemory(Error, MemoryError):
    """Device memory, or the memory limit (quota), is exhausted."""


@_status(-5, "XAL_ERROR_OUT_OF_HOST_MEMORY")
class OutOfHostMemory(Error, MemoryError):
    """Host memory is exhausted."""


@_status(-6, "XAL_ERROR_OUT_OF_BOUNDS")
class OutOfBounds(Error, IndexError):
    """A range outside a live allocation or buffer, or freed memory."""


@_status(-7, "XAL_ERROR_NOT_INITIALIZED")
class NotInitialized(Error):
    """xal is not initialised (or was shut down after the object was made)."""


@_status(-8, "XAL_ERROR_BACKEND_UNAVAILABLE")
class BackendUnavailable(Error):
    """The backend needed is not loaded."""


@_status(-9, "XAL_ERROR_ABI_MISMATCH")
class AbiMismatch(Error):
    """A plugin or library of another ABI major version."""


@_status(-10, "XAL_ERROR_DEVICE_LOST")
class DeviceLost(Error):
    """The device is lost; sticky until Device.reset()."""


@_status(-11, "XAL_ERROR_HARDWARE")
class Hardware(Error):
    """A hardware error (uncorrectable ECC and the like)."""


@_status(-12, "XAL_ERROR_TIMEOUT")
class Timeout(Error, TimeoutError):
    """An operation (a collective waiting for a rank) timed out."""


@_status(-13, "XAL_ERROR_ABORTED")
class Aborted(Error):
    """The operation was aborted (Communicator.abort, shutdown, reset)."""


@_status(-14, "XAL_ERROR_COLLECTIVE_MISMATCH")
class CollectiveMismatch(Error):
    """The ranks of a communicator called different collectives or sizes."""


@_status(-15, "XAL_ERROR_BACKEND")
class BackendError(Error):
    """A vendor error with no better mapping (see vendor_code)."""


@_status(-16, "XAL_ERROR_INTERNAL")
class InternalError(Error):
    """A bug in xal or a backend."""


ERRORS: dict[int, type[Error]] = {
    cls.status: cls
    for cls in (
        InvalidArgument,
        InvalidHandle,
        NotSupported,
        OutOfMemory,
        OutOfHostMemory,
        OutOfBounds,
        NotInitialized,
        BackendUnavailable,
        AbiMismatch,
        DeviceLost,
        Hardware,
        Timeout,
        Aborted,
        CollectiveMismatch,
        BackendError,
        InternalError,
    )
}


def _from_detail(
    status: int,
    status_name: str,
    operation: str,
    backend: str,
    vendor_code: int,
    vendor_name: str,
    message: str,
) -> Error:
    """The exception for one failing status (called by the bindings)."""
    cls = ERRORS.get(status, Error)
    return cls(
        message,
        status=status,
        status_name=status_name,
        operation=operation,
        backend=backend,
        vendor_code=vendor_code,
        vendor_name=vendor_name,
    )


def error(cls: type[Error], operation: str, message: str) -> Error:
    """An error the package finds itself (no backend, no vendor code)."""
    return cls(message, operation=operation)
