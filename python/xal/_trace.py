"""xal.trace(path): an XAL_TRACE session as a context."""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections.abc import Iterator
from typing import Any

from . import _runtime
from ._errors import InvalidArgument


@contextlib.contextmanager
def trace(path: str | os.PathLike[str], **init_options: Any) -> Iterator[pathlib.Path]:
    """Traces every xal call and device operation inside the block to `path`
    (Chrome trace JSON, viewable in Perfetto).

    xal reads XAL_TRACE at xal_init, so the block starts its own session:
    xal must not be initialised on entry (InvalidArgument otherwise: call
    xal.shutdown() first). On entry XAL_TRACE is set and xal.init(**options)
    runs; on exit xal.shutdown() writes the file (objects of the block become
    stale) and XAL_TRACE is restored. Without the context, set XAL_TRACE in
    the environment before the first xal call.
    """
    if _runtime.is_initialized():
        raise InvalidArgument(
            "xal.trace() starts its own session, but xal is already initialised: "
            "call xal.shutdown() first (XAL_TRACE is read by xal_init)",
            operation="xal.trace",
        )
    target = pathlib.Path(path)
    old = os.environ.get("XAL_TRACE")
    os.environ["XAL_TRACE"] = str(target)
    try:
        _runtime.init(**init_options)
    finally:
        _restore(old)
    try:
        yield target
    except BaseException:
        with contextlib.suppress(Exception):
            _runtime.shutdown()
        raise
    _runtime.shutdown()


def _restore(old: str | None) -> None:
    if old is None:
        os.environ.pop("XAL_TRACE", None)
    else:
        os.environ["XAL_TRACE"] = old
