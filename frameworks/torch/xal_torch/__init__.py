"""The torch.distributed backend "xal".

Importing this package registers the backend, so that

    import xal_torch
    torch.distributed.init_process_group(backend="xal")

runs torch's collectives through xal: one process is one rank, on the xal
device chosen by XAL_TORCH_DEVICE, else LOCAL_RANK, over the visible devices
(XAL_BACKENDS, XAL_MOCK_DEVICES, XAL_DEVICE_SELECTOR). CPU tensors only so
far; the processes of a group must share one host (they meet in shared
memory). See docs/TORCH.md.
"""
from __future__ import annotations

import datetime

import torch
import torch.distributed as dist

from . import _C

__all__ = ["BACKEND_NAME", "calls_run", "device_of", "register"]

BACKEND_NAME = "xal"


def _create_backend(store, rank: int, size: int, timeout: datetime.timedelta):
    return _C.create_backend(store, rank, size, timeout.total_seconds())


def register() -> None:
    """Registers the backend "xal" with torch.distributed (idempotent)."""
    if BACKEND_NAME.upper() in getattr(dist.Backend, "_plugins", {}):
        return
    dist.Backend.register_backend(BACKEND_NAME, _create_backend, devices=["cpu"])


def _backend(group: dist.ProcessGroup | None):
    pg = group if group is not None else dist.group.WORLD
    return pg._get_backend(torch.device("cpu"))


def device_of(group: dist.ProcessGroup | None = None) -> str:
    """The xal device the group's backend runs on, as text ("mock:1 ...")."""
    return _C.device_of(_backend(group))


def calls_run(group: dist.ProcessGroup | None = None) -> int:
    """How many calls the group's backend of xal has run."""
    return _C.calls_run(_backend(group))


register()
