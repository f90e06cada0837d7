"""FSDP (FullyShardedDataParallel, FULL_SHARD: parameters all-gathered with
_allgather_base, gradients reduce-scattered with _reduce_scatter_base, one
FSDP unit per Linear): a small MLP trained 20 steps (SGD with momentum,
synthetic data) over 2 and 4 ranks on mixed mock cards, on "xal" and on
Gloo side by side in the same processes from the same start, and a plain
model trained locally on every rank's batch (the mean loss over the
ranks' batches: what FSDP's averaged gradients give) as the reference that
needs no collective. The torch of .venv has Gloo's reduce_scatter_tensor,
so Gloo runs the same FSDP; the local reference holds either way.
Tolerances (float32): xal vs Gloo 1e-5, each vs the local reference 1e-4
(sums in another order over 20 steps)."""
from __future__ import annotations

import pytest

from launch import launch_once


@pytest.mark.parametrize("world", [2, 4])
def test_fsdp_full_shard_matches_gloo_and_local_reference(world, tmp_path_factory):
    # One start of the ranks runs DDP (test_ddp.py) and then FSDP.
    codes, results, outputs, _ = launch_once("train", world, tmp_path_factory)
    assert codes == [0] * world, "\n".join(o[-3000:] for o in outputs)
    for rank, res in enumerate(results):
        r = res["fsdp"]
        assert r["shapes_ok"], rank
        assert r["xal_vs_gloo"] <= 1e-5, (rank, r["xal_vs_gloo"])
        assert r["xal_vs_ref"] <= 1e-4, (rank, r["xal_vs_ref"])
        assert r["gloo_vs_ref"] <= 1e-4, (rank, r["gloo_vs_ref"])
        assert r["rank_spread"] == 0.0, (rank, r["rank_spread"])
        assert r["moved"] > 1e-3, (rank, r["moved"])  # it trained
        # Every step all-gathers and reduce-scatters each unit through xal.
        assert r["xal_calls"] >= 20 * 2, (rank, r["xal_calls"])
        losses = r["losses"]["xal"]
        assert losses[-1] < losses[0], losses
