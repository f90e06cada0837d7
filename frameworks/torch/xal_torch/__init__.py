"""The torch.distributed backend "xal".

Importing this package registers the backend, so that

    import xal_torch
    torch.distributed.init_process_group(backend="xal")

runs torch's collectives through xal: one process is one rank, on the xal
device chosen by XAL_TORCH_DEVICE, else the launcher's local rank (LOCAL_RANK,
OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID), else the rank's
place on its host, over the visible devices
(XAL_BACKENDS, XAL_MOCK_DEVICES, XAL_DEVICE_SELECTOR). CPU tensors, and
CUDA tensors: on the rank's own CUDA (or HIP) card in place, on torch's
current stream; on any other device through a CPU copy. The
ranks of one host meet in shared memory; when a group spans hosts, the
lowest rank of each host (its leader) exchanges with the other hosts'
leaders through torch's own Gloo on the group's Store. See docs/TORCH.md.
"""
from __future__ import annotations

import datetime
import os
import socket

import torch
import torch.distributed as dist

from . import _C

__all__ = ["BACKEND_NAME", "calls_run", "device_of", "host_key", "hosts", "is_shared_tensor",
           "register", "use_shared_tensors", "zero_copy_allreduces"]

BACKEND_NAME = "xal"


def host_key() -> str:
    """What identifies this process's host: XAL_TORCH_HOST if set, else the
    host name, the boot id and the network namespace (processes of one
    machine in different network namespaces count as different hosts, as
    when each namespace stands for a host)."""
    given = os.environ.get("XAL_TORCH_HOST")
    if given:
        return given
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = "?"
    try:
        netns = str(os.stat("/proc/self/ns/net").st_ino)
    except OSError:
        netns = "?"
    return f"{socket.gethostname()}/{boot}/{netns}"


def _create_backend(store, rank: int, size: int, timeout: datetime.timedelta):
    # Every rank's host, through the group's store; hosts are numbered by
    # their lowest rank.
    store.set(f"xal/host/{rank}", host_key())
    keys = [store.get(f"xal/host/{r}").decode() for r in range(size)]
    index: dict[str, int] = {}
    host_of_rank = [index.setdefault(k, len(index)) for k in keys]
    leaders = everyone = None
    if len(index) > 1:
        if keys.index(keys[rank]) == rank:
            # This host's leader: torch's Gloo over the leaders (group rank =
            # host index), on the same store.
            leaders = dist.ProcessGroupGloo(dist.PrefixStore("xal/leaders", store),
                                            host_of_rank[rank], len(index), timeout)
        # send/recv between hosts: torch's Gloo over every rank.
        everyone = dist.ProcessGroupGloo(dist.PrefixStore("xal/everyone", store), rank, size,
                                         timeout)
    return _C.create_backend(store, rank, size, timeout.total_seconds(), host_of_rank, leaders,
                             everyone)


def register() -> None:
    """Registers the backend "xal" with torch.distributed (idempotent)."""
    if BACKEND_NAME.upper() in getattr(dist.Backend, "_plugins", {}):
        return
    # CUDA tensors too where torch has CUDA devices: a group then has one
    # backend of xal per device type (torch makes one per mapped device).
    devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    dist.Backend.register_backend(BACKEND_NAME, _create_backend, devices=devices)


def _backend(group: dist.ProcessGroup | None):
    pg = group if group is not None else dist.group.WORLD
    return pg._get_backend(torch.device("cpu"))


def device_of(group: dist.ProcessGroup | None = None) -> str:
    """The xal device the group's backend runs on, as text ("mock:1 ...")."""
    return _C.device_of(_backend(group))


def hosts(group: dist.ProcessGroup | None = None) -> int:
    """How many hosts the group's backend of xal spans."""
    return _C.hosts(_backend(group))


def calls_run(group: dist.ProcessGroup | None = None) -> int:
    """How many calls the group's backend of xal has run."""
    return _C.calls_run(_backend(group))


def use_shared_tensors(enabled: bool = True, *, min_bytes: int = 1 << 20) -> None:
    """Makes CPU tensors of at least `min_bytes` allocated from now on live in
    memory the other ranks of the host can map (a memfd each), or with
    enabled=False gives torch's allocator back. An allreduce of such tensors
    on every rank of a host then runs in place: each rank reduces its share
    straight from the others' tensors and copies their shares from them,
    with no copy through the shared-memory segment (docs/TORCH.md). Call it
    on every rank before making the tensors (DDP: before wrapping the
    model). XAL_TORCH_SHARED_TENSORS=1 (or a byte count) at import does the
    same. Process-wide; freed blocks (up to 512 MiB) are kept for reuse."""
    if min_bytes < 1:
        raise ValueError(f"min_bytes must be at least 1, got {min_bytes}")
    _C.use_shared_tensors(min_bytes if enabled else 0)


def zero_copy_allreduces(group: dist.ProcessGroup | None = None) -> int:
    """How many allreduces of the group's backend of xal ran in place from
    shared tensors (use_shared_tensors)."""
    return _C.zero_copy_allreduces(_backend(group))


def is_shared_tensor(t: torch.Tensor) -> bool:
    """True when the CPU tensor's memory came from use_shared_tensors."""
    return bool(_C.is_shared_tensor(t))


def _shared_tensors_from_env() -> None:
    v = os.environ.get("XAL_TORCH_SHARED_TENSORS", "")
    if v in ("", "0"):
        return
    if not v.isdigit():
        raise ValueError(f"XAL_TORCH_SHARED_TENSORS={v!r}: 1, 0 or a byte count expected")
    use_shared_tensors(min_bytes=1 << 20 if v == "1" else int(v))


register()
_shared_tensors_from_env()
