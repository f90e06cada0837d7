"""Device memory and streams as a framework makes them itself (cudaMalloc,
hipMalloc, a stream of its own),
from the simulated runtime the xal plugin of the process loaded
(XAL_CUDA_DRIVER, XAL_HIP_LIBRARY): memory xal did not allocate, as a CUDA
tensor's storage is. For the tests only; SIMULATION ONLY."""
from __future__ import annotations

import ctypes
import os


def _check(result: int, what: str) -> None:
    if result != 0:
        raise RuntimeError(f"{what} failed with {result}")


def _cuda_function(lib, name: str, *argtypes):
    get = lib.cuGetProcAddress_v2
    get.restype = ctypes.c_int
    get.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                    ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
    fn, found = ctypes.c_void_p(), ctypes.c_int()
    _check(get(name.encode(), ctypes.byref(fn), 12000, 1, ctypes.byref(found)),
           f"cuGetProcAddress({name})")
    return ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(fn.value)


def framework_alloc(runtime: str, ordinal: int, nbytes: int) -> int:
    """nbytes of device memory of card `ordinal`, allocated by the runtime
    itself (in its primary context, as the CUDA runtime does)."""
    if runtime == "cuda":
        lib = ctypes.CDLL(os.environ["XAL_CUDA_DRIVER"])
        retain = _cuda_function(lib, "cuDevicePrimaryCtxRetain",
                                ctypes.POINTER(ctypes.c_void_p), ctypes.c_int)
        set_current = _cuda_function(lib, "cuCtxSetCurrent", ctypes.c_void_p)
        alloc = _cuda_function(lib, "cuMemAlloc", ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t)
        ctx, ptr = ctypes.c_void_p(), ctypes.c_uint64()
        _check(retain(ctypes.byref(ctx), ordinal), "cuDevicePrimaryCtxRetain")
        _check(set_current(ctx), "cuCtxSetCurrent")
        _check(alloc(ctypes.byref(ptr), nbytes), "cuMemAlloc")
        return ptr.value
    if runtime == "hip":
        lib = ctypes.CDLL(os.environ["XAL_HIP_LIBRARY"])
        ptr = ctypes.c_void_p()
        _check(lib.hipSetDevice(ctypes.c_int(ordinal)), "hipSetDevice")
        _check(lib.hipMalloc(ctypes.byref(ptr), ctypes.c_size_t(nbytes)), "hipMalloc")
        return ptr.value
    raise ValueError(f"no simulated runtime {runtime!r}")


def framework_stream(runtime: str, ordinal: int) -> int:
    """A stream of card `ordinal` the runtime creates itself (torch's
    current stream stands for one): its native handle."""
    if runtime == "cuda":
        lib = ctypes.CDLL(os.environ["XAL_CUDA_DRIVER"])
        retain = _cuda_function(lib, "cuDevicePrimaryCtxRetain",
                                ctypes.POINTER(ctypes.c_void_p), ctypes.c_int)
        set_current = _cuda_function(lib, "cuCtxSetCurrent", ctypes.c_void_p)
        create = _cuda_function(lib, "cuStreamCreate", ctypes.POINTER(ctypes.c_void_p),
                                ctypes.c_uint)
        ctx, stream = ctypes.c_void_p(), ctypes.c_void_p()
        _check(retain(ctypes.byref(ctx), ordinal), "cuDevicePrimaryCtxRetain")
        _check(set_current(ctx), "cuCtxSetCurrent")
        _check(create(ctypes.byref(stream), 0), "cuStreamCreate")
        return stream.value
    if runtime == "hip":
        lib = ctypes.CDLL(os.environ["XAL_HIP_LIBRARY"])
        stream = ctypes.c_void_p()
        _check(lib.hipSetDevice(ctypes.c_int(ordinal)), "hipSetDevice")
        _check(lib.hipStreamCreateWithFlags(ctypes.byref(stream), ctypes.c_uint(0)),
               "hipStreamCreateWithFlags")
        return stream.value
    raise ValueError(f"no simulated runtime {runtime!r}")
