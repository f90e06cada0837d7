"""Every op of the battery (cases.py) at 2 and 4 ranks on mixed mock cards
(A100, MI250X, Max 1550, H100): equal to Gloo where Gloo has the op and
dtype, and to a locally computed reference always. One launch per group
size runs every case; each case is then its own test."""
from __future__ import annotations

import pytest

from cases import CASES
from launch import launch

_RUNS: dict[int, tuple] = {}


def run(world: int, tmp_path_factory):
    if world not in _RUNS:
        tmp = tmp_path_factory.mktemp(f"ops{world}")
        codes, results, outputs, wall = launch("ops", world, tmp)
        _RUNS[world] = (codes, results, outputs, wall)
    return _RUNS[world]


@pytest.mark.parametrize("world", [2, 4])
def test_ranks_finish_on_mixed_cards(world, tmp_path_factory):
    codes, results, outputs, _ = run(world, tmp_path_factory)
    assert codes == [0] * world, "\n".join(o[-2000:] for o in outputs)
    devices = [r["device"] for r in results]
    assert all(d.startswith("mock:") for d in devices), devices
    # One card per rank, each of another profile.
    assert len(set(d.split(" ", 1)[1] for d in devices)) == world, devices
    assert "A100" in devices[0] and "MI250X" in devices[1], devices


@pytest.mark.parametrize("world", [2, 4])
def test_gloo_compared_where_it_has_the_op(world, tmp_path_factory):
    _, results, _, _ = run(world, tmp_path_factory)
    used = set(results[0]["gloo_used"])
    # Gloo takes part in most cases (the rest: local reference only).
    assert len(used) >= 100, sorted(used)
    assert "allreduce-SUM-float32" in used and "alltoall_single-uneven-int64" in used
    for case in ("allreduce_coalesced-SUM-float32", "allgather_into_tensor_coalesced-int64",
                 "reduce_scatter_tensor_coalesced-MAX-float64", "coalescing_manager-float32"):
        assert case in used, sorted(used)


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("case", sorted(CASES))
def test_case(world, case, tmp_path_factory):
    codes, results, outputs, _ = run(world, tmp_path_factory)
    assert len(results) == world and all(results), "\n".join(o[-2000:] for o in outputs)
    for rank, res in enumerate(results):
        assert res["cases"].get(case) == "ok", f"rank {rank}: {res['cases'].get(case)}"
