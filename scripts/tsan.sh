#!/usr/bin/env bash
# Builds what the unit tests need with ThreadSanitizer (gcc, Debug -O1)
# into build-tsan/ and runs the unit tests there (ctest -L unit): the core,
# the mock, the fault backend, the conformance suite and driver, the tools'
# tests, the concurrency and collectives tests and the fuzz regressions.
# Every report fails the run, except those suppressed in tests/tsan.supp,
# each with the reason it is not a race in xal.
#
#   ./scripts/tsan.sh
#   ./scripts/tsan.sh --ci
#
# --ci: the reduced stage of scripts/test.sh, a few minutes from an empty
# build folder: builds only the concurrency stress program xal_soak
# (tests/soak/soak_local.cpp) with libxal, the mock and the fault backend,
# with ThreadSanitizer (gcc, -O1 -g1) into build-tsan-ci/, and runs it
# bounded by work (2 cycles of xal_init .. xal_shutdown, 4 workers of 100
# rounds each, the collectives, faults, device resets and partition
# threads; see the program's comment) on one CPU.
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

export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 \
suppressions=$XAL_ROOT/tests/tsan.supp ${TSAN_OPTIONS:-}"

if [[ "${1:-}" == --ci ]]; then
  build="build-tsan-ci"
  xal_log "configuring $build/"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_C_FLAGS_DEBUG=-g1 -O1" "-DCMAKE_CXX_FLAGS_DEBUG=-g1 -O1" \
    -DXAL_SANITIZE=thread -DXAL_BUILD_TESTS=ON -DXAL_BUILD_BENCH=OFF \
    -DXAL_BUILD_TOOLS=OFF -DXAL_BUILD_CONFORMANCE=OFF -DXAL_BUILD_EXAMPLES=OFF \
    -DXAL_BUILD_MPI=OFF -DXAL_BACKEND_CUDA=OFF -DXAL_BACKEND_HIP=OFF \
    -DXAL_BACKEND_LEVELZERO=OFF -DXAL_BACKEND_OPENCL=OFF >/dev/null || exit 1
  xal_log "building $build/ (xal_soak)"
  cmake --build "$build" -j "$XAL_JOBS" --target xal_soak >"$build/tsan-build.log" 2>&1 || {
    tail -30 "$build/tsan-build.log"
    exit 1
  }
  built=$(date +%s)
  # One CPU, for oneTBB's sake (see below).
  cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
  xal_log "running xal_soak under ThreadSanitizer on CPU ${cpu:-0}"
  XAL_BACKENDS=fault:mock XAL_MOCK_DEVICES='4*a100-40g' \
    XAL_FAULTS='seed=1;memcpy_dtoh=name(bg_delay)device(2)every(64)delay(1)' \
    taskset -c "${cpu:-0}" "$build/bin/xal_soak" --cycles 2 --rounds 100 --threads 4 \
    >"$build/tsan-run.log" 2>&1
  rc=$?
  reports=$(grep -c 'WARNING: ThreadSanitizer' "$build/tsan-run.log" || true)
  grep -A30 -m3 'WARNING: ThreadSanitizer' "$build/tsan-run.log"
  tail -3 "$build/tsan-run.log"
  (( reports == 0 )) || rc=1
  end=$(date +%s)
  xal_log "$reports ThreadSanitizer report(s); build $((built - start)) s, run $((end - built)) s"
  if (( rc == 0 )); then
    printf 'tsan.sh --ci: PASS in %dm%02ds\n' $(((end - start) / 60)) $(((end - start) % 60))
  else
    printf 'tsan.sh --ci: FAIL in %dm%02ds (log %s)\n' $(((end - start) / 60)) \
      $(((end - start) % 60)) "$build/tsan-run.log"
  fi
  exit "$rc"
fi

xal_log "configuring $build/"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_C_FLAGS_DEBUG=-g -O1" "-DCMAKE_CXX_FLAGS_DEBUG=-g -O1" \
  -DXAL_SANITIZE=thread -DXAL_BUILD_TESTS=ON -DXAL_BUILD_BENCH=OFF \
  -DXAL_BUILD_MPI=OFF -DXAL_BACKEND_CUDA=OFF -DXAL_BACKEND_HIP=OFF \
  -DXAL_BACKEND_LEVELZERO=OFF -DXAL_BACKEND_OPENCL=OFF >/dev/null || exit 1
xal_log "building $build/ (xal-unit-tests)"
cmake --build "$build" -j "$XAL_JOBS" --target xal-unit-tests || exit 1

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
