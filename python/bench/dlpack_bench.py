"""The cost of DLPack exchanges with xal, in microseconds per exchange.

    PYTHONPATH=build-py/python .venv/bin/python python/bench/dlpack_bench.py

- export: numpy.from_dlpack / torch.from_dlpack of an xal Buffer's typed
  view (the capsule, the consumer's array, and dropping it);
- import: xal.from_dlpack of a numpy array / torch tensor (xal_mem_import of
  its memory, zero copy) and closing the Buffer;
each the best of several rounds of many calls, on mock device 0.
"""
from __future__ import annotations

import timeit

import numpy as np

import xal


def best_us(fn, number: int = 2000, repeat: int = 7) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    dev = xal.devices()[0]
    rows = []
    with dev.alloc(1 << 20) as buf:
        view = buf.view("float32", (1 << 18,))

        def numpy_export() -> None:
            a = np.from_dlpack(view)
            del a

        rows.append(("numpy.from_dlpack(xal buffer)", best_us(numpy_export)))
        try:
            import torch

            def torch_export() -> None:
                t = torch.from_dlpack(view)
                del t

            rows.append(("torch.from_dlpack(xal buffer)", best_us(torch_export)))
        except ImportError:
            torch = None
        del view
    host = np.zeros(1 << 18, dtype=np.float32)

    def numpy_import() -> None:
        xal.from_dlpack(host, device=dev).close()

    rows.append(("xal.from_dlpack(numpy array)", best_us(numpy_import)))
    if torch is not None:
        tensor = torch.zeros(1 << 18, dtype=torch.float32)

        def torch_import() -> None:
            xal.from_dlpack(tensor, device=dev).close()

        rows.append(("xal.from_dlpack(torch tensor)", best_us(torch_import)))
    for name, us in rows:
        print(f"{name:34s} {us:7.2f} us")
    xal.shutdown()


if __name__ == "__main__":
    main()
