"""A rank that dies, or hangs, makes the others' pending op raise a
torch.distributed.DistBackendError carrying xal's status, within the
group's timeout; the survivor keeps running and its group stays broken
(later calls fail at once). Faults injected by fault:mock plans into a DDP
training run (out of memory, device loss on every rank or on one) reach
the training loop as typed exceptions (torch.OutOfMemoryError,
torch.distributed.DistBackendError) carrying xal's status."""
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


def _fault_train(tmp_path, plan, rank_plan=None):
    env = {"XAL_BACKENDS": "fault:mock"}
    if plan:
        env["XAL_FAULTS"] = plan
    rank_env = {r: {"XAL_FAULTS": p} for r, p in (rank_plan or {}).items()}
    codes, results, outputs, _ = launch("fault_train", 2, tmp_path, timeout_s=120,
                                        extra_env=env, rank_env=rank_env)
    assert codes == [0, 0], "\n".join(outputs)
    for r in results:
        assert r["device"].startswith("fault(mock):"), r["device"]
    return results


def test_injected_oom_in_training_raises_out_of_memory_error(tmp_path):
    # Every rank's 30th import of a tensor fails as out of memory (DDP's
    # gradient allreduce, mid-run): torch.OutOfMemoryError reaches the
    # training loop through DDP with xal's status; the next call works.
    for r in _fault_train(tmp_path, "mem_import=nth(30)OUT_OF_MEMORY"):
        assert r["raised"] == "OutOfMemoryError" and r["is_oom"], r
        assert 0 < r["step"] < 20, r
        assert "XAL_ERROR_OUT_OF_MEMORY" in r["message"] and "allreduce" in r["message"], r
        assert r["later"] == "ok", r


def test_injected_device_loss_in_training_raises_and_stays(tmp_path):
    # Every rank's device is lost at its 40th stream synchronisation: a
    # DistBackendError with XAL_ERROR_DEVICE_LOST; the loss is sticky.
    for r in _fault_train(tmp_path, "stream_synchronize=nth(40)device_lost"):
        assert r["raised"] == "DistBackendError" and r["is_dist_backend_error"], r
        assert 0 < r["step"] < 20, r
        assert "XAL_ERROR_DEVICE_LOST" in r["message"], r
        assert r["later"].startswith("DistBackendError") and "DEVICE_LOST" in r["later"], r


def test_device_lost_on_one_rank_fails_the_others_at_once(tmp_path):
    # Only rank 1's device is lost: rank 1 raises DEVICE_LOST and aborts
    # the group, so rank 0's pending allreduce raises ABORTED naming
    # process 1 long before the group's 30 s timeout.
    r0, r1 = _fault_train(tmp_path, None,
                          {1: "stream_synchronize=nth(40)device_lost", 0: ""})
    assert r1["raised"] == "DistBackendError" and "XAL_ERROR_DEVICE_LOST" in r1["message"], r1
    assert r0["raised"] == "DistBackendError", r0
    assert "XAL_ERROR_ABORTED" in r0["message"] and "process 1" in r0["message"], r0
    assert r0["later"].startswith("DistBackendError") and r0["later_s"] < 1.0, r0
