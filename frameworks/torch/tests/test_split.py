"""torch.distributed.split_group over "xal" at 4 ranks on mixed mock cards:
the group's communicator split with xal_comm_split (one call on the
parent's worker, its shared-memory transport's split), two halves whose
all-reduce, all-gather and send/recv give the halves' results, a split of a
split (every rank alone), a split that leaves the last rank out (it gets no
group, the others one of three), and the parent still working after."""
from __future__ import annotations

import pytest

from launch import launch_once

WORLD = 4


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return launch_once("split", WORLD, tmp_path_factory)


def test_ranks_finish(run):
    codes, _, outputs, _ = run
    assert codes == [0] * WORLD, "\n".join(o[-3000:] for o in outputs)


@pytest.mark.parametrize("rank", range(WORLD))
def test_halves(run, rank):
    res = run[1][rank]
    assert res["split_ran_on_parent"] == 1  # xal_comm_split, queued on the parent
    assert res["half_rank"] == rank // 2 and res["half_size"] == 2
    assert res["half_device"].startswith(f"mock:{rank} ")  # the rank's own card
    assert res["half_sum"] == res["half_expect"]
    assert res["half_gather"] == res["half_gather_expect"]
    if rank >= 2:
        assert res["half_p2p"] == res["half_p2p_expect"]


@pytest.mark.parametrize("rank", range(WORLD))
def test_nested_and_left_out(run, rank):
    res = run[1][rank]
    assert res["alone_sum"] == [float(rank)] * 3
    assert res["left_out"] is (rank == WORLD - 1)
    if rank < WORLD - 1:
        assert res["some_sum"] == [WORLD - 1] * 5
    assert res["parent_sum"] == [float(WORLD)] * 2
