#!/usr/bin/env bash
# Builds the fuzz targets of tests/fuzz/ with clang-14 (libFuzzer,
# AddressSanitizer, UndefinedBehaviorSanitizer) into build-fuzz/ and runs
# each for SECONDS (default 60) on a fresh copy of its seed corpus, with its
# dictionary. Prints the executions and executions per second of each.
# Exits non-zero when a target crashes, leaks, hangs (-timeout) or passes
# its memory limit; the input that did it is left in
# build-fuzz/fuzz-artifacts/TARGET/ (check it in under
# tests/fuzz/regressions/TARGET/ once the bug is fixed).
#
#   ./scripts/fuzz.sh [TARGET|all] [SECONDS]
#   ./scripts/fuzz.sh list
#
# LeakSanitizer's own thread tracer sometimes crashes while it stops a
# process's threads for a leak check ("Tracer caught signal 11 ...
# LeakSanitizer has encountered a fatal error", a known intermittent fault
# of the sanitizer, not a finding: its artifact is the empty input). A
# target that ends that way runs once more, on the same corpus; a second
# such end, and any leak or crash it reports, fails.
#
# XAL_JOBS sets the build parallelism (default: every core);
# XAL_FUZZ_TIMEOUT the seconds one input may take (default 10),
# XAL_FUZZ_RSS_MB the memory limit in MiB (default 2048); XAL_FUZZ_RUNS,
# when set, stops a target after that many executions (or SECONDS, first).
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cd "$XAL_ROOT" || exit 1
target=${1:-all}
seconds=${2:-60}
timeout=${XAL_FUZZ_TIMEOUT:-10}
rss_mb=${XAL_FUZZ_RSS_MB:-2048}
runs_limit=()
if [[ -n "${XAL_FUZZ_RUNS:-}" ]]; then
  if ! [[ "$XAL_FUZZ_RUNS" =~ ^[0-9]+$ ]]; then
    xal_log "XAL_FUZZ_RUNS must be a positive integer, got '$XAL_FUZZ_RUNS'"
    exit 2
  fi
  runs_limit=("-runs=$XAL_FUZZ_RUNS")
fi
xal_clean_env
build="build-fuzz"
src=tests/fuzz

if ! [[ "$seconds" =~ ^[0-9]+$ ]] || (( seconds == 0 )); then
  xal_log "SECONDS must be a positive integer, got '$seconds'"
  exit 2
fi
if [[ "$target" != all && "$target" != list ]] &&
   ! grep -qE "xal_fuzz_target\($target( |$)" "$src/CMakeLists.txt"; then
  xal_log "no target '$target' (scripts/fuzz.sh list)"
  exit 2
fi
if ! command -v clang++-14 >/dev/null; then
  xal_log "clang++-14 not found (apt-get install clang-14 libclang-rt-14-dev)"
  exit 1
fi

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  xal_log "configuring $build/ (clang-14)"
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXAL_BUILD_FUZZERS=ON \
    -DXAL_BUILD_TESTS=OFF -DXAL_BUILD_BENCH=OFF -DXAL_BUILD_EXAMPLES=OFF \
    -DXAL_BUILD_MPI=OFF -DXAL_BACKEND_CUDA=OFF -DXAL_BACKEND_HIP=OFF \
    -DXAL_BACKEND_LEVELZERO=OFF -DXAL_BACKEND_OPENCL=OFF >/dev/null || exit 1
fi
build_target=xal-fuzzers
[[ "$target" != all && "$target" != list ]] && build_target=fuzz_$target
xal_log "building $build_target"
cmake --build "$build" -j "$XAL_JOBS" --target "$build_target" >"$build/fuzz-build.log" 2>&1 || {
  tail -30 "$build/fuzz-build.log"
  xal_log "build failed (whole log: $build/fuzz-build.log)"
  exit 1
}

mapfile -t all_targets < <(find "$build/fuzz" -maxdepth 1 -name 'fuzz_*' -type f \
                             -printf '%f\n' | sed 's/^fuzz_//' | sort)
if [[ "$target" == list ]]; then
  printf '%s\n' "${all_targets[@]}"
  exit 0
fi
targets=("$target")
[[ "$target" == all ]] && targets=("${all_targets[@]}")

work=$(mktemp -d "${TMPDIR:-/tmp}/xal-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=()
printf '%-22s %12s %10s %8s  %s\n' target executions exec/s seconds result
for t in "${targets[@]}"; do
  program="$build/fuzz/fuzz_$t"
  [[ -x "$program" ]] || { xal_log "no target '$t' (scripts/fuzz.sh list)"; exit 2; }
  corpus="$work/$t"
  artifacts="$build/fuzz-artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  seeds=()
  for d in "$src/corpus/$t" "$src/regressions/$t"; do
    [[ -d "$d" ]] && seeds+=("$d")
  done
  dict=()
  [[ -f "$src/dict/$t.dict" ]] && dict=("-dict=$src/dict/$t.dict")
  log="$build/fuzz-artifacts/$t.log"
  note=""
  for attempt in 1 2; do
    "$program" "$corpus" "${seeds[@]}" "${dict[@]}" -max_total_time="$seconds" "${runs_limit[@]}" \
      -timeout="$timeout" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb" \
      -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1
    rc=$?
    (( rc != 0 && attempt == 1 )) || break
    grep -q 'LeakSanitizer has encountered a fatal error' "$log" || break
    grep -q 'ERROR: LeakSanitizer: detected memory leaks' "$log" && break
    mv "$log" "$log.tracer-crash"
    note=" (run twice: LeakSanitizer's tracer crashed the first time, $log.tracer-crash)"
  done
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  runs=${runs:-0}
  took=${took:-$seconds}
  rate=$(( runs / (took > 0 ? took : 1) ))
  if (( rc == 0 )); then
    result="ok$note"
  else
    result="FAILED (rc $rc, log $log)"
    failed+=("$t")
    grep -m3 -E 'ERROR|fuzz check failed|Test unit written' "$log" >&2
  fi
  printf '%-22s %12s %10s %8s  %s\n' "$t" "$runs" "$rate" "$took" "$result"
done

if (( ${#failed[@]} )); then
  printf 'fuzz.sh: FAIL (%s); inputs in %s/fuzz-artifacts/\n' "${failed[*]}" "$build"
  exit 1
fi
printf 'fuzz.sh: PASS (%d target(s), %s s each)\n' "${#targets[@]}" "$seconds"
