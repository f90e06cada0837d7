"""Every collective's workhorse: an allreduce over every device, one buffer
per rank, issued in one group, checked against numpy.

    XAL_MOCK_DEVICES=4*a100-40g python python/examples/allreduce.py
"""

import numpy as np

import xal


def main() -> None:
    devs = xal.devices()
    n = 1 << 20
    data = [np.random.default_rng(r).standard_normal(n).astype(np.float32)
            for r in range(len(devs))]
    with xal.comm_create(devs) as comms:
        bufs = [xal.Buffer(d, a.nbytes).view("float32").copy_from(a)
                for d, a in zip(devs, data)]
        start = xal.Event(devs[0]).record()  # on rank 0's default stream
        comms.allreduce(bufs, op="sum")  # in place, all ranks in one group, waited for
        end = xal.Event(devs[0]).record()
        end.synchronize()
        want = np.sum(data, axis=0)
        for b in bufs:
            np.testing.assert_allclose(b.to_numpy(), want, rtol=1e-5, atol=1e-5)
        ms = start.elapsed(end)
        print(f"allreduce of {n} floats over {len(devs)} devices ({comms[0].path}): "
              f"{ms:.2f} ms, results match numpy")


if __name__ == "__main__":
    main()
