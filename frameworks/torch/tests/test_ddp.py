"""DDP: a small MLP trained 20 steps (SGD with momentum, synthetic data,
small buckets so that several allreduces run per step) over 2 and 4 ranks
on mixed mock cards, with backend "xal" and with Gloo side by side in the
same processes from the same start: the parameters agree within 1e-5 and
every rank holds the same ones."""
from __future__ import annotations

import pytest

from launch import launch_once


@pytest.mark.parametrize("world", [2, 4])
def test_ddp_matches_gloo(world, tmp_path_factory):
    # One start of the ranks runs DDP and then FSDP (test_fsdp.py).
    codes, results, outputs, _ = launch_once("train", world, tmp_path_factory)
    assert codes == [0] * world, "\n".join(o[-3000:] for o in outputs)
    for rank, res in enumerate(results):
        r = res["ddp"]
        assert r["max_param_diff"] <= 1e-5, (rank, r["max_param_diff"])
        assert r["rank_spread"] == 0.0, (rank, r["rank_spread"])
        assert r["moved"] > 1e-3, (rank, r["moved"])  # it trained
        # DDP's gradient allreduces ran through xal (and its first broadcast).
        assert r["xal_calls"] >= 20, (rank, r["xal_calls"])
        losses = r["losses"]["xal"]
        assert losses[-1] < losses[0], losses
