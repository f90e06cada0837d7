"""Devices, memory, copies and error detail -- the Python twin of
examples/hello.c.

    python python/examples/hello.py
"""

import numpy as np

import xal


def main() -> None:
    for b in xal.backends():
        print(f"backend {b.name}: {b.state} ({b.device_count} devices) {b.reason}")
    for d in xal.devices():
        free, total = d.mem_info()
        print(f"device {d.index}: {d.name} [{d.backend}] {free >> 20} of {total >> 20} MiB free")

    dev = xal.devices()[0]
    data = np.arange(1024, dtype=np.float32)
    with xal.Buffer(dev, data.nbytes).view("float32") as buf:
        buf.copy_from(data)
        buf[:16].memset(0)  # the first four floats
        back = buf.to_numpy()
        print("round trip:", back[:6], "...", back[-2:])

    try:
        xal.Buffer(dev, dev.memory_bytes * 2)
    except xal.OutOfMemory as e:
        print(f"as expected: {e.status_name} from {e.operation} [{e.backend}]: {e.message}")


if __name__ == "__main__":
    main()
