#!/usr/bin/env bash
# Builds what the unit tests need with ThreadSanitizer (gcc, Debug -O1)
# into build-tsan/ and runs the unit tests there (ctest -L unit): the core,
# the mock, the fault backend, the conformance suite and driver, the tools'
# tests, the concurrency and collectives tests and the fuzz regressions.
# Every report fails the run, except those suppressed in tests/tsan.supp,
# each with the reason it is not a race in xal.
#
#   ./scripts/tsan.sh
#
# XAL_JOBS sets the build and test parallelism (default: every core).
# The vendor backends (their simulated drivers) and MPI are left out:
# Open MPI's shared-memory transport is not instrumented and reports
# races of its own.
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cd "$XAL_ROOT" || exit 1
xal_clean_env

start=$(date +%s)
build="build-tsan"

xal_log "configuring $build/"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_C_FLAGS_DEBUG=-g -O1" "-DCMAKE_CXX_FLAGS_DEBUG=-g -O1" \
  -DXAL_SANITIZE=thread -DXAL_BUILD_TESTS=ON -DXAL_BUILD_BENCH=OFF \
  -DXAL_BUILD_MPI=OFF -DXAL_BACKEND_CUDA=OFF -DXAL_BACKEND_HIP=OFF \
  -DXAL_BACKEND_LEVELZERO=OFF -DXAL_BACKEND_OPENCL=OFF >/dev/null || exit 1
xal_log "building $build/ (xal-unit-tests)"
cmake --build "$build" -j "$XAL_JOBS" --target xal-unit-tests || exit 1

export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 \
suppressions=$XAL_ROOT/tests/tsan.supp ${TSAN_OPTIONS:-}"

# Each ctest runs on one CPU of its own (taskset), with every XAL_JOBS-th
# test (-I). On one CPU oneTBB runs a parallel_for's body on the calling
# thread: Debian's libtbb.so.12 is not instrumented, so ThreadSanitizer
# cannot see how it hands ranges to its workers and would report every
# parallel body as racing with its caller (and, checking the suppressions
# of millions of such reports, run the copy tests past their time limits).
# Races between xal's own threads (stream workers, staged copies,
# collectives, the tests' threads) are found however many CPUs there are:
# ThreadSanitizer looks for accesses not ordered by synchronisation, not
# for accesses that happen to overlap in time.
cpus=()
list=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
IFS=',' read -ra ranges <<<"$list"
for r in "${ranges[@]}"; do
  for ((c = ${r%-*}; c <= ${r#*-}; c++)); do cpus+=("$c"); done
done
(( ${#cpus[@]} )) || cpus=(0)
shards=$(( XAL_JOBS < ${#cpus[@]} ? XAL_JOBS : ${#cpus[@]} ))
xal_log "ctest $build/ -L unit ($shards shard(s), one CPU each)"
rm -f "$build"/tsan-shard-*.log
pids=()
for ((k = 0; k < shards; k++)); do
  taskset -c "${cpus[k]}" ctest --test-dir "$build" -L unit -I "$((k + 1)),,$shards" \
    --output-on-failure >"$build/tsan-shard-$k.log" 2>&1 &
  pids+=($!)
done
rc=0
for ((k = 0; k < shards; k++)); do
  wait "${pids[k]}" || rc=1
  cat "$build/tsan-shard-$k.log"
done
reports=$(cat "$build"/tsan-shard-*.log | grep -c 'WARNING: ThreadSanitizer' || true)
xal_log "$reports ThreadSanitizer report(s)"

elapsed=$(( $(date +%s) - start ))
if (( rc == 0 )); then
  printf 'tsan.sh: PASS in %dm%02ds\n' $((elapsed / 60)) $((elapsed % 60))
else
  printf 'tsan.sh: FAIL in %dm%02ds\n' $((elapsed / 60)) $((elapsed % 60))
fi
exit "$rc"
