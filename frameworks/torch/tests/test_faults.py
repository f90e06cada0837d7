"""A rank that dies, or hangs, makes the others' pending op raise a
torch.distributed.DistBackendError carrying xal's status, within the
group's timeout; the survivor keeps running and its group stays broken
(later calls fail at once)."""
from __future__ import annotations

from launch import launch


def test_dead_rank_raises_before_the_timeout(tmp_path):
    codes, results, outputs, _ = launch("exit", 2, tmp_path, timeout_s=120)
    assert codes == [0, 17], "\n".join(outputs)
    r = results[0]
    assert r["first"] == 2.0
    assert r["raised"] == "DistBackendError" and r["is_dist_backend_error"], r
    assert "XAL_ERROR_ABORTED" in r["message"] and "exited" in r["message"], r["message"]
    # The peer died about 1 s into the call: noticed long before the 20 s timeout.
    assert 0.5 <= r["elapsed_s"] < r["timeout_s"] / 2, r
    assert r["second_raised"] == "DistBackendError" and r["second_elapsed_s"] < 1.0, r
    assert r["survivor_alive"]


def test_hung_rank_gives_timeout(tmp_path):
    codes, results, outputs, _ = launch("hang", 2, tmp_path, timeout_s=120)
    assert codes == [0, 0], "\n".join(outputs)
    r = results[0]
    assert r["raised"] == "DistBackendError", r
    assert "XAL_ERROR_TIMEOUT" in r["message"], r["message"]
    assert r["timeout_s"] * 0.9 <= r["elapsed_s"] <= r["timeout_s"] + 3.0, r
    assert r["second_raised"] == "DistBackendError" and r["second_elapsed_s"] < 1.0, r
