"""Element types: numpy dtypes, xal's collective dtypes and DLPack codes."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ._errors import InvalidArgument

try:  # bfloat16 as numpy sees it (ml_dtypes comes with jax)
    from ml_dtypes import bfloat16 as _bfloat16  # type: ignore[import-not-found]

    BFLOAT16: Any = np.dtype(_bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    BFLOAT16 = None

# DLPack type codes (DLDataTypeCode).
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_COMPLEX, DL_BOOL = 0, 1, 2, 4, 5, 6

# xal_dtype_t of each numpy dtype name.
XAL_DTYPES = {
    "int8": 0,
    "uint8": 1,
    "int32": 2,
    "uint32": 3,
    "int64": 4,
    "uint64": 5,
    "float16": 6,
    "bfloat16": 7,
    "float32": 8,
    "float64": 9,
}

OPS = {"sum": 0, "prod": 1, "min": 2, "max": 3, "avg": 4}


@dataclasses.dataclass(frozen=True)
class DType:
    """An element type: its numpy dtype (None for bfloat16 without ml_dtypes),
    name, size in bytes and DLPack code."""

    name: str
    itemsize: int
    dl_code: int
    numpy: Any

    @property
    def xal(self) -> int:
        """The xal_dtype_t of collectives; InvalidArgument when xal has none."""
        code = XAL_DTYPES.get(self.name)
        if code is None:
            raise InvalidArgument(
                f"collectives take {', '.join(XAL_DTYPES)}, not {self.name}",
                operation="dtype",
            )
        return code


def _kind_code(dt: np.dtype) -> int:
    if BFLOAT16 is not None and dt == BFLOAT16:
        return DL_BFLOAT
    codes = {"b": DL_BOOL, "i": DL_INT, "u": DL_UINT, "f": DL_FLOAT, "c": DL_COMPLEX}
    code = codes.get(dt.kind)
    if code is None:
        raise InvalidArgument(f"dtype {dt} has no DLPack type", operation="dtype")
    return code


def resolve(dtype: Any) -> DType:
    """A DType from a numpy dtype, a type or a name ("float32", "bfloat16")."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype == "bfloat16" and BFLOAT16 is None:
        return DType("bfloat16", 2, DL_BFLOAT, None)
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise InvalidArgument(f"not a dtype: {dtype!r}", operation="dtype") from e
    if dt.byteorder == ">" or dt.hasobject or dt.fields or dt.subdtype:
        raise InvalidArgument(f"dtype {dt} is not a plain native scalar type", operation="dtype")
    return DType(dt.name, dt.itemsize, _kind_code(dt), dt)


def from_dlpack(code: int, bits: int, lanes: int) -> DType:
    """The DType of a DLPack (code, bits, lanes)."""
    if lanes != 1:
        raise BufferError(f"from_dlpack: vector dtypes (lanes={lanes}) are not supported")
    if code == DL_BFLOAT and bits == 16:
        return resolve("bfloat16")
    prefix = {DL_INT: "int", DL_UINT: "uint", DL_FLOAT: "float", DL_COMPLEX: "complex"}
    if code == DL_BOOL and bits == 8:
        return resolve("bool")
    if code in prefix:
        try:
            return resolve(f"{prefix[code]}{bits}")
        except InvalidArgument:
            pass
    raise BufferError(f"from_dlpack: DLPack dtype (code {code}, {bits} bits) is not supported")


def op_code(op: Any) -> int:
    """xal_op_t of "sum", "prod", "min", "max", "avg" (or the int)."""
    if isinstance(op, int) and 0 <= op < len(OPS):
        return op
    code = OPS.get(str(op).lower())
    if code is None:
        raise InvalidArgument(f"reduction op {op!r}: one of {', '.join(OPS)}", operation="op")
    return code
