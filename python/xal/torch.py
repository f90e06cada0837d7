"""The torch.distributed backend "xal": ``import xal.torch`` registers it.

The backend is the extension ``xal_torch`` (frameworks/torch, built by
scripts/torch.sh); this module re-exports it, so that

    import xal.torch
    torch.distributed.init_process_group(backend="xal")

works once ``frameworks/torch`` is on ``sys.path`` (or xal_torch is
installed). See docs/TORCH.md.
"""
from __future__ import annotations

try:
    import xal_torch as _xal_torch
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        "xal.torch needs the extension xal_torch (frameworks/torch; "
        "scripts/torch.sh builds it) on sys.path: " + str(e)) from e

from xal_torch import (  # noqa: E402  (after the check above)
    BACKEND_NAME, calls_run, device_of, hosts, is_shared_tensor, register, use_shared_tensors,
    zero_copy_allreduces)

__all__ = list(_xal_torch.__all__)
