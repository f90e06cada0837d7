"""xal: the heterogeneous accelerator abstraction layer, from Python.

A thin layer over xal's C ABI (libxal): devices of every loaded backend,
device memory (Buffer) with DLPack both ways, streams and events,
communicators with every collective, fault control, tracing.

    import xal, numpy as np
    dev = xal.devices()[0]              # initialises xal on first use
    with xal.Buffer(dev, 1024) as buf:
        buf.copy_from(np.arange(256, dtype=np.float32))
        print(buf.to_numpy("float32")[:4])

Every failing xal status raises an xal.Error subclass (xal.OutOfMemory,
xal.InvalidArgument, ...) with the status, vendor code and message.
docs/PYTHON.md in the source tree is the guide.
"""

from ._errors import (
    AbiMismatch,
    Aborted,
    BackendError,
    BackendUnavailable,
    CollectiveMismatch,
    DeviceLost,
    Error,
    Hardware,
    InternalError,
    InvalidArgument,
    InvalidHandle,
    NotInitialized,
    NotSupported,
    OutOfBounds,
    OutOfHostMemory,
    OutOfMemory,
    Timeout,
)
from ._runtime import (
    BackendInfo,
    abi_version,
    backends,
    init,
    is_initialized,
    last_error,
    shutdown,
    status_name,
)
from ._device import Device, Health, MemInfo, Metrics, device, devices
from ._stream import Event, Stream
from ._buffer import Buffer, alloc
from ._dlpack import from_dlpack
from ._comm import CommGroup, Communicator, comm_create, group
from ._host import HostRegistration, host_register
from ._trace import trace
from . import fault

__version__ = "1.1.0"

__all__ = [
    "AbiMismatch",
    "Aborted",
    "BackendError",
    "BackendInfo",
    "BackendUnavailable",
    "Buffer",
    "CollectiveMismatch",
    "CommGroup",
    "Communicator",
    "Device",
    "DeviceLost",
    "Error",
    "Event",
    "Hardware",
    "Health",
    "HostRegistration",
    "InternalError",
    "InvalidArgument",
    "InvalidHandle",
    "MemInfo",
    "Metrics",
    "NotInitialized",
    "NotSupported",
    "OutOfBounds",
    "OutOfHostMemory",
    "OutOfMemory",
    "Stream",
    "Timeout",
    "abi_version",
    "alloc",
    "backends",
    "comm_create",
    "device",
    "devices",
    "fault",
    "from_dlpack",
    "group",
    "host_register",
    "init",
    "is_initialized",
    "last_error",
    "shutdown",
    "status_name",
    "trace",
]
