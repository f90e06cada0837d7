"""Devices: xal.devices(), Device, its properties, metrics and health."""

from __future__ import annotations

import dataclasses
import uuid as _uuid
from typing import TYPE_CHECKING, Any, NamedTuple

from . import _runtime, _xal

if TYPE_CHECKING:
    from ._buffer import Buffer
    from ._stream import Event, Stream

KINDS = {0: "GPU", 1: "CPU", 2: "ACCELERATOR", 3: "OTHER"}
HEALTH_STATES = {0: "OK", 1: "DEGRADED", 2: "ERROR", 3: "LOST"}
CAPABILITIES = (
    "peer_copy",
    "host_memory",
    "kernels",
    "collectives",
    "metrics",
    "event_timing",
    "reset",
    "simulated",
    "partition",
    "mem_import",
    "stream_import",
    "ipc",
    "host_pointers",
)
# DLPack device types (DLDeviceType) of the backends' memory.
DL_CPU, DL_CUDA, DL_OPENCL, DL_ROCM, DL_ONEAPI = 1, 2, 4, 10, 14
_DL_BY_BACKEND = {"cuda": DL_CUDA, "hip": DL_ROCM, "levelzero": DL_ONEAPI, "opencl": DL_OPENCL}

# (metric bit, fields it makes valid)
_METRIC_FIELDS = (
    (0, ("utilization_percent",)),
    (1, ("memory_used_bytes",)),
    (2, ("memory_total_bytes",)),
    (3, ("memory_limit_bytes",)),
    (4, ("temperature_c",)),
    (5, ("power_w",)),
    (6, ("energy_j",)),
    (7, ("sm_clock_mhz",)),
    (8, ("memory_clock_mhz",)),
    (9, ("ecc_corrected",)),
    (10, ("ecc_uncorrected",)),
    (11, ("pcie_replays",)),
    (12, ("health",)),
    (
        13,
        (
            "xal_bytes_htod",
            "xal_bytes_dtoh",
            "xal_bytes_dtod",
            "xal_bytes_peer",
            "xal_collective_calls",
            "xal_collective_bytes",
            "xal_alloc_bytes_current",
            "xal_alloc_bytes_peak",
            "xal_alloc_count_current",
            "xal_faults_injected",
            "xal_errors",
        ),
    ),
    (14, ("last_xid",)),
    (15, ("job_memory_used_bytes", "job_processes")),
)


@dataclasses.dataclass(frozen=True)
class Metrics:
    """xal_device_get_metrics: a field is None when the device did not fill it."""

    simulated: bool = False
    utilization_percent: float | None = None
    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None
    memory_limit_bytes: int | None = None
    temperature_c: float | None = None
    power_w: float | None = None
    energy_j: float | None = None
    sm_clock_mhz: int | None = None
    memory_clock_mhz: int | None = None
    ecc_corrected: int | None = None
    ecc_uncorrected: int | None = None
    pcie_replays: int | None = None
    health: str | None = None
    last_xid: int | None = None
    xal_bytes_htod: int | None = None
    xal_bytes_dtoh: int | None = None
    xal_bytes_dtod: int | None = None
    xal_bytes_peer: int | None = None
    xal_collective_calls: int | None = None
    xal_collective_bytes: int | None = None
    xal_alloc_bytes_current: int | None = None
    xal_alloc_bytes_peak: int | None = None
    xal_alloc_count_current: int | None = None
    xal_faults_injected: int | None = None
    xal_errors: dict[str, int] | None = None  # failing calls by status name
    job_memory_used_bytes: int | None = None
    job_processes: int | None = None


@dataclasses.dataclass(frozen=True)
class Health:
    """xal_device_get_health."""

    state: str  # OK, DEGRADED, ERROR, LOST
    sticky_status: int
    sticky_status_name: str
    vendor_code: int
    message: str


class MemInfo(NamedTuple):
    """xal_mem_get_info: with a memory limit, total is the limit."""

    free: int
    total: int


class Device:
    """One device of the current session (xal_device_t).

    Its properties are attributes, read once. A Device of an earlier session
    (before xal.shutdown) raises NotInitialized or InvalidHandle.
    """

    __slots__ = ("_h", "_p", "__weakref__")

    def __init__(self, handle: Any) -> None:
        self._h = handle
        self._p = handle.properties()

    # -- properties --------------------------------------------------------
    @property
    def index(self) -> int:
        return self._p["index"]

    @property
    def name(self) -> str:
        return self._p["name"]

    @property
    def vendor(self) -> str:
        return self._p["vendor"]

    @property
    def backend(self) -> str:
        """Name of the backend that runs it ("mock", "fault(mock)", "cuda")."""
        return self._p["backend"]

    @property
    def backend_index(self) -> int:
        return self._p["backend_index"]

    @property
    def kind(self) -> str:
        return KINDS.get(self._p["kind"], "OTHER")

    @property
    def uuid(self) -> _uuid.UUID:
        return _uuid.UUID(bytes=self._p["uuid"])

    @property
    def pci_bus_id(self) -> str:
        return self._p["pci_bus_id"]

    @property
    def memory_bytes(self) -> int:
        return self._p["memory_bytes"]

    @property
    def max_allocation_bytes(self) -> int:
        return self._p["max_allocation_bytes"]

    @property
    def compute_units(self) -> int:
        return self._p["compute_units"]

    @property
    def core_clock_mhz(self) -> int:
        return self._p["core_clock_mhz"]

    @property
    def memory_clock_mhz(self) -> int:
        return self._p["memory_clock_mhz"]

    @property
    def memory_bus_width_bits(self) -> int:
        return self._p["memory_bus_width_bits"]

    @property
    def peak_memory_bandwidth_gbps(self) -> float:
        return self._p["peak_memory_bandwidth_gbps"]

    @property
    def capability_bits(self) -> int:
        return self._p["capabilities"]

    @property
    def capabilities(self) -> frozenset[str]:
        """Names of the XAL_DEVICE_CAP_* bits ("peer_copy", ..., "bitN" if unknown)."""
        return frozenset(capability_names(self.capability_bits))

    @property
    def parent_index(self) -> int | None:
        """The card a partition belongs to, else None."""
        p = self._p["parent_index"]
        return None if p < 0 else p

    @property
    def simulated(self) -> bool:
        return "simulated" in self.capabilities

    @property
    def host_visible(self) -> bool:
        """Whether its memory is host memory (the mock): DLPack kDLCPU, and
        host arrays import zero-copy."""
        return "host_pointers" in self.capabilities or base_backend(self.backend) == "mock"

    @property
    def properties(self) -> dict[str, Any]:
        """Every property as a dict (as `python -m xal --json` prints them)."""
        p = dict(self._p)
        p["uuid"] = str(self.uuid)
        p["kind"] = self.kind
        p["capabilities"] = sorted(self.capabilities)
        p["capability_bits"] = self.capability_bits
        p["parent_index"] = self.parent_index
        return p

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack (device_type, device_id) of its memory."""
        if self.host_visible:
            return (DL_CPU, 0)
        dl = _DL_BY_BACKEND.get(base_backend(self.backend))
        if dl is None:
            raise BufferError(f"{self.backend} memory has no DLPack device type")
        return (dl, self.backend_index)

    # -- state -------------------------------------------------------------
    def metrics(self) -> Metrics:
        """xal_device_get_metrics; fields the device did not fill are None."""
        raw = self._h.metrics()
        valid = raw["valid"]
        values: dict[str, Any] = {"simulated": bool(valid >> 63)}
        for bit, fields in _METRIC_FIELDS:
            if valid & (1 << bit):
                for f in fields:
                    values[f] = raw[f]
        if "health" in values:
            values["health"] = HEALTH_STATES.get(values["health"], "UNKNOWN")
        return Metrics(**values)

    def health(self) -> Health:
        h = self._h.health()
        return Health(
            state=HEALTH_STATES.get(h["state"], "UNKNOWN"),
            sticky_status=h["sticky_status"],
            sticky_status_name=_xal.status_name(h["sticky_status"]),
            vendor_code=h["vendor_code"],
            message=h["message"],
        )

    def mem_info(self) -> MemInfo:
        free, total = self._h.mem_info()
        return MemInfo(free, total)

    def set_memory_limit(self, nbytes: int) -> None:
        """This process's quota on the device (0 removes it)."""
        self._h.set_memory_limit(nbytes)

    def synchronize(self) -> None:
        """Waits for the work of every stream of the device."""
        self._h.synchronize()

    def reset(self) -> None:
        """Clears a sticky error; every buffer, stream and event of the device
        is invalidated (xal_device_reset)."""
        from ._stream import release_default_stream

        release_default_stream(self)
        self._h.reset()

    @property
    def compute_share(self) -> int:
        """Percent of the card's time: a partition's share, 100 for a card."""
        return self._h.compute_share()

    def partition(self, specs: list[tuple[int, int]] | list[int]) -> list[Device]:
        """Splits the card into partitions, one per spec: (memory_bytes,
        compute_percent) or memory_bytes alone (an equal share)."""
        from ._stream import release_default_stream

        norm = [(s, 0) if isinstance(s, int) else (int(s[0]), int(s[1])) for s in specs]
        release_default_stream(self)
        return [Device(h) for h in self._h.partition(norm)]

    def unpartition(self) -> None:
        """Undoes partition(); the partitions' devices become invalid."""
        from ._stream import release_default_stream

        for p in self.partitions():
            release_default_stream(p)
        self._h.unpartition()

    def partitions(self) -> list[Device]:
        """The partitions of this card (devices whose parent is this one)."""
        return [d for d in devices() if d.parent_index == self.index]

    def job_processes(self) -> list[dict[str, Any]]:
        """The job's processes on the card (XAL_QUOTA_LEDGER)."""
        return self._h.job_processes()

    # -- making things -----------------------------------------------------
    def alloc(self, nbytes: int) -> Buffer:
        from ._buffer import Buffer

        return Buffer(self, nbytes)

    def stream(self, *, non_blocking: bool = False) -> Stream:
        from ._stream import Stream

        return Stream(self, non_blocking=non_blocking)

    def event(self, *, timing: bool = True) -> Event:
        from ._stream import Event

        return Event(self, timing=timing)

    # -- identity ------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Device)
            and self._h.key == other._h.key
            and self._h.generation == other._h.generation
        )

    def __hash__(self) -> int:
        return hash((self._h.key, self._h.generation))

    def __repr__(self) -> str:
        return f"<xal.Device {self.index}: {self.name} ({self.backend})>"


def base_backend(name: str) -> str:
    """The backend under wrappers: "fault(mock)" -> "mock"."""
    while "(" in name and name.endswith(")"):
        name = name[name.index("(") + 1 : -1]
    return name


def capability_names(bits: int) -> list[str]:
    names = [n for i, n in enumerate(CAPABILITIES) if bits & (1 << i)]
    names += [f"bit{i}" for i in range(len(CAPABILITIES), 64) if bits & (1 << i)]
    return names


def devices() -> list[Device]:
    """Every device of the session, initialising xal first if needed."""
    _runtime.ensure()
    return [Device(_xal.device_get(i)) for i in range(_xal.device_count())]


def device(index: int = 0) -> Device:
    """The device at global index `index`."""
    _runtime.ensure()
    return Device(_xal.device_get(index))


def as_device(d: Device | int | None) -> Device:
    """A Device from a Device, an index, or None (device 0)."""
    if isinstance(d, Device):
        return d
    return device(0 if d is None else int(d))
