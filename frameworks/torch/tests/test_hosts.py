"""Two hosts on this machine: two network namespaces joined by a veth pair,
each with its own ranks (0, 1 in the first; 2, 3 in the second), the store
(TCP, rank 0's) and Gloo reached over the veth. Each host's ranks meet in
shared memory and the hosts' leaders exchange through torch's Gloo; the
results of every core collective and of 5 DDP steps equal those of the same
four ranks on one host: exactly for integers and bool, within 1e-6
(relative, float64 reference) for floats, whose sums run in another order
(per host, then between hosts). The all-to-alls (through the leaders'
Gloo all-to-all), a send/recv within a host, one between hosts (through
Gloo over every rank), a ring over all ranks in one batch, and
recv_anysource from ranks of both hosts and from the other host alone
(each message with its sender) equal them too; a receive of another size
between hosts raises naming both sizes (XAL_ERROR_COLLECTIVE_MISMATCH)
and the next message goes through; a receive from a rank that never
sends, and a recv_anysource that no rank sends to, raise
XAL_ERROR_TIMEOUT after the group's timeout (3 s).
Needs root and `ip netns` (iproute2,
installed by scripts/deps.sh); skipped otherwise. The namespaces are
removed afterwards, whatever happens."""
from __future__ import annotations

import math
import os
import shutil
import subprocess

import pytest

from launch import launch

WORLD = 4


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def _netns_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if shutil.which("ip") is None:
        return "`ip` not found (iproute2: scripts/deps.sh installs it)"
    probe = f"xalprobe{os.getpid()}"
    try:
        _ip("netns", "add", probe)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        return f"`ip netns add` failed: {getattr(e, 'stderr', b'').decode(errors='replace').strip()}"
    _ip("netns", "del", probe)
    return None


@pytest.fixture
def two_hosts():
    why = _netns_unavailable()
    if why:
        pytest.skip(why)
    tag = os.getpid() % 100000
    ns = [f"xalhostA{tag}", f"xalhostB{tag}"]
    veth = [f"xva{tag}", f"xvb{tag}"]
    net = f"10.213.{tag % 250}"
    addr = [f"{net}.1", f"{net}.2"]
    try:
        for n in ns:
            _ip("netns", "add", n)
        _ip("link", "add", veth[0], "type", "veth", "peer", "name", veth[1])
        for i in (0, 1):
            _ip("link", "set", veth[i], "netns", ns[i])
            _ip("-n", ns[i], "addr", "add", f"{addr[i]}/24", "dev", veth[i])
            _ip("-n", ns[i], "link", "set", veth[i], "up")
            _ip("-n", ns[i], "link", "set", "lo", "up")
        yield ns, veth, addr
    finally:
        for n in ns:  # removes the veth pair with them
            subprocess.run(["ip", "netns", "del", n], capture_output=True, timeout=30)


def _close(a, b, path=""):
    """Exact for ints and bools, within 1e-6 relative for floats."""
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a} != {b}"


def test_two_hosts_in_network_namespaces_equal_one_host(two_hosts, tmp_path):
    ns, veth, addr = two_hosts
    host_of = lambda r: r * 2 // WORLD  # noqa: E731
    codes2, res2, out2, _ = launch(
        "hosts", WORLD, tmp_path / "two", store=f"tcp://{addr[0]}:29517",
        rank_prefix={r: ["ip", "netns", "exec", ns[host_of(r)]] for r in range(WORLD)},
        rank_env={r: {"GLOO_SOCKET_IFNAME": veth[host_of(r)], "XAL_TORCH_DEVICE": str(r)}
                  for r in range(WORLD)})
    assert codes2 == [0] * WORLD, "\n".join(o[-3000:] for o in out2)
    codes1, res1, out1, _ = launch("hosts", WORLD, tmp_path / "one")
    assert codes1 == [0] * WORLD, "\n".join(o[-3000:] for o in out1)
    for rank in range(WORLD):
        one, two = res1[rank], res2[rank]
        assert one["hosts"] == 1 and two["hosts"] == 2, (one["hosts"], two["hosts"])
        a, b = dict(one["results"]), dict(two["results"])
        assert "alltoall" in a and "alltoall-uneven" in a and "alltoall-list" in a
        assert sorted(a) == sorted(b)
        assert "p2p-ring" in a
        if rank == WORLD - 1:
            assert "p2p-cross" in a and "p2p-after-mismatch" in a
            assert [src for src, _ in a["p2p-anysource-remote"]] == [0, 1]
        if rank == 0:  # every sender named, its message whole (compared below)
            assert [src for src, _ in a["p2p-anysource"]] == list(range(1, WORLD))
        if rank in (0, WORLD - 1):
            # Rank 0's recv from a silent sender and the last rank's
            # recv_anysource that nobody sends to: an error within the
            # group's 3 s timeout.
            for run in (one, two):
                assert "XAL_ERROR_TIMEOUT" in run["p2p_silent"], run["p2p_silent"]
                assert 2.5 < run["p2p_silent_s"] < 20, run["p2p_silent_s"]
        if rank == WORLD - 1:  # the receiver fails, naming both sizes; the sender may not
            for run in (one, two):
                assert "XAL_ERROR_COLLECTIVE_MISMATCH" in run["p2p_mismatch"], run["p2p_mismatch"]
            assert "40 bytes" in two["p2p_mismatch"] and "48" in two["p2p_mismatch"], \
                two["p2p_mismatch"]
        for key in a:
            _close(b[key], a[key], f"rank {rank} {key}")


def test_a_rank_that_dies_on_the_other_host_fails_the_waits_within_the_timeout(two_hosts,
                                                                              tmp_path):
    """Rank 3 (second host) exits while rank 0 (first host) waits in a recv
    from it and rank 1 in a recv_anysource: both raise XAL_ERROR_TIMEOUT at
    the group's 4 s timeout (Gloo tells nobody of the closed connection
    before the sender's header would have come), no hang; rank 2 shares
    the dead rank's host and returns."""
    ns, veth, addr = two_hosts
    host_of = lambda r: r * 2 // WORLD  # noqa: E731
    codes, res, out, _ = launch(
        "hosts_exit", WORLD, tmp_path, timeout_s=120, store=f"tcp://{addr[0]}:29518",
        rank_prefix={r: ["ip", "netns", "exec", ns[host_of(r)]] for r in range(WORLD)},
        rank_env={r: {"GLOO_SOCKET_IFNAME": veth[host_of(r)], "XAL_TORCH_DEVICE": str(r)}
                  for r in range(WORLD)})
    assert codes == [0, 0, 0, 17], "\n".join(o[-3000:] for o in out)
    for rank, what in ((0, "recv from rank 3"), (1, "recv_anysource")):
        r = res[rank]
        assert r["raised"] and "DistBackendError" in r["raised"], r
        assert "XAL_ERROR_TIMEOUT" in r["raised"] and what in r["raised"], r["raised"]
        assert 3.0 < r["elapsed_s"] < 4.0 + 15, r
