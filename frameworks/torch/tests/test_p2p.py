"""Point-to-point on mixed mock cards at 2 and 4 ranks (p2p_cases.py):
ping-pong of every dtype, a ring of large messages through
batch_isend_irecv, unbatched isend/irecv, recv_anysource from several
senders, tags, strided and empty tensors and a pipeline, each equal to what
was sent and to Gloo on the same inputs; then the errors: a receive of
another size or tag, a sender that never sends (the group's timeout) and
one that dies while its receiver waits (raised at once, not at the
timeout)."""
from __future__ import annotations

import pytest

from launch import launch
from p2p_cases import CASES

_RUNS: dict[int, tuple] = {}


def run(world: int, tmp_path_factory):
    if world not in _RUNS:
        tmp = tmp_path_factory.mktemp(f"p2p{world}")
        _RUNS[world] = launch("p2p", world, tmp)
    return _RUNS[world]


@pytest.mark.parametrize("world", [2, 4])
def test_ranks_finish(world, tmp_path_factory):
    codes, results, outputs, _ = run(world, tmp_path_factory)
    assert codes == [0] * world, "\n".join(o[-2000:] for o in outputs)
    used = set(results[0]["gloo_used"])
    assert "ring-float32" in used and "pingpong-bfloat16" in used, sorted(used)


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("case", sorted(CASES))
def test_case(world, case, tmp_path_factory):
    codes, results, outputs, _ = run(world, tmp_path_factory)
    assert len(results) == world and all(results), "\n".join(o[-2000:] for o in outputs)
    for rank, res in enumerate(results):
        assert res["cases"].get(case) == "ok", f"rank {rank}: {res['cases'].get(case)}"


def test_errors(tmp_path):
    codes, results, outputs, _ = launch("p2p_errors", 2, tmp_path, timeout_s=120)
    assert codes == [0, 0], "\n".join(outputs)
    r = results[1]
    # Another size: xal's mismatch, naming both sizes (40 bytes sent, 48 expected).
    assert r["size"] and "DistBackendError" in r["size"], r["size"]
    assert "XAL_ERROR_COLLECTIVE_MISMATCH" in r["size"] and "48" in r["size"] and "40" in r["size"], r["size"]
    # Another tag: named, with both tags.
    assert r["tag"] and "expects tag 4" in r["tag"] and "tag 3" in r["tag"], r["tag"]
    assert r["after"] is None and r["after_value"] == [7.0] * 5, r
    # Nothing sent: the group's timeout, naming the op.
    assert r["never"] and "XAL_ERROR_TIMEOUT" in r["never"] and "recv from rank 0" in r["never"], r["never"]
    assert r["timeout_s"] * 0.9 <= r["never_s"] <= r["timeout_s"] + 3.0, r
    assert r["anysource_never"] and "recv_anysource" in r["anysource_never"], r["anysource_never"]
    assert r["survivor_alive"]


def test_dead_sender_raises_before_the_timeout(tmp_path):
    codes, results, outputs, _ = launch("p2p_exit", 2, tmp_path, timeout_s=120)
    assert codes == [0, 17], "\n".join(outputs)
    r = results[0]
    assert r["raised"] and "DistBackendError" in r["raised"], r
    assert "XAL_ERROR_ABORTED" in r["raised"] and "exited" in r["raised"], r["raised"]
    assert "recv from rank 1" in r["raised"], r["raised"]
    assert r["elapsed_s"] < r["timeout_s"] / 2, r
