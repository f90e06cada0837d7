#!/usr/bin/env bash
# xal-bench train's loss check, on a small model: a run with a fixed
# unequal split passes (both workloads, the loss equal to the homogeneous
# jobs'); the wrong gradient averaging (--unweighted, data parallel) is
# caught and exits 1; bad options exit 2. No timing is checked.
#   train_check_test.sh XAL_BENCH MOCK_PLUGIN WORK_DIR [--mpi]
set -u
bench=$1 mock=$2 work=$3 mode=${4:-}
rm -rf "$work" && mkdir -p "$work"
EXPECT_COMMAND=train EXPECT_TIMEOUT=240 EXPECT_SHOW_OUTPUT=1
# shellcheck source=bench/tests/expect.sh
source "$(dirname "$0")/expect.sh"

export XAL_BACKENDS=$mock
# A small, fast model; the cards paced 10x faster than by default.
small=(--width 16 --ffn 32 --layers 4 --batch 32 --micro 4 --warmup 1 --steps 2
       --compute-scale 1e-5)
if [[ $mode == --mpi ]]; then
  expect 0 "mixed, fixed split" --mpi --mpi-np 2 --set a100-40g,h100-sxm-80g --split 1:3 \
    "${small[@]}"
  expect 1 "LOSS MISMATCH" --mpi --mpi-np 2 --set a100-40g,h100-sxm-80g --split 1:3 -W dp \
    --unweighted "${small[@]}"
else
  expect 0 "mixed, fixed split" --set a100-40g,h100-sxm-80g --split 1:3 "${small[@]}"
  expect 0 "mixed, balanced split" --set a100-40g,mi250x -W dp --split balanced "${small[@]}"
  expect 1 "LOSS MISMATCH" --set a100-40g,h100-sxm-80g --split 1:3 -W dp --unweighted \
    "${small[@]}"
  # Equal shares: the plain average of the ranks' means is then right.
  expect 0 "mixed, equal split" --set a100-40g,h100-sxm-80g --split equal -W dp --unweighted \
    "${small[@]}"
  expect 0 '"rows"' --set a100-40g,h100-sxm-80g --split 1:1 -W pp --json - "${small[@]}"
  expect 2 "weights" --set a100-40g,h100-sxm-80g --split 1:2:3 "${small[@]}"
  expect 2 "weights" --split fast "${small[@]}"
  expect 2 "multiple of --micro" --batch 30 --micro 4
  expect 2 "Run with --help" --no-such-option
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
