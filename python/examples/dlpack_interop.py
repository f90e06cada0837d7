"""DLPack both ways: numpy and torch see xal's memory without a copy, and
xal imports a torch tensor's memory without a copy (on the mock, whose
device memory is host memory).

    python python/examples/dlpack_interop.py
"""

import numpy as np
import torch

import xal


def main() -> None:
    dev = xal.devices()[0]
    buf = xal.Buffer(dev, 16 * 4).view("float32", (4, 4))
    buf.copy_from(np.eye(4, dtype=np.float32))

    t = torch.from_dlpack(buf)  # xal -> torch, zero-copy
    a = np.from_dlpack(buf)  # xal -> numpy, same memory
    t.mul_(3)  # torch writes; numpy and xal see it
    print("numpy sees torch's write:", a[0, 0], "| same address:", a.ctypes.data == buf.ptr)

    owned = torch.arange(8, dtype=torch.int32)
    imported = xal.from_dlpack(owned)  # torch -> xal, zero-copy
    imported.memset(0, nbytes=8)  # xal writes the first two ints
    print("torch sees xal's write:", owned.tolist())


if __name__ == "__main__":
    main()
