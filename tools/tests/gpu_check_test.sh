#!/usr/bin/env bash
# gpu_check_test.sh BUILD_DIR SCRATCH -- tools/gpu-check.sh end to end
# on the simulated driver, with the build tree as its bundle (same layout:
# bin/, lib/, lib/xal/, lib/cuda-sim/): every step runs and is listed in
# summary.txt, the results are packed by --archive, and bad arguments are
# refused with a message. The figures are not checked (simulation).
set -u -o pipefail
build="$1"
scratch="$2"
script="$(cd "$(dirname "$0")/.." && pwd)/gpu-check.sh"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

rm -rf "$scratch" && mkdir -p "$scratch" || exit 1

# Bad arguments: a message and a non-zero exit, no run.
expect_refused() {  # expect_refused MESSAGE ARGS...
  local message="$1" out
  shift
  if out="$("$script" "$@" 2>&1)"; then
    fail "gpu-check.sh $* succeeded"
  elif [[ "$out" != *"$message"* ]]; then
    fail "gpu-check.sh $*: expected '$message', got: $out"
  fi
}
expect_refused "unknown argument '--bogus'" --bogus
expect_refused "--archive needs a file name" --archive
expect_refused "is not a bundle" --bundle "$scratch" --out "$scratch/x"
expect_refused "--only: no step 'bogus' (steps: xal-info" --only xal-info,bogus
expect_refused "--archive must lie outside the results folder" \
  --bundle "$build" --out "$scratch/in" --archive "$scratch/in/results.tar.gz"

# The whole run on the simulated driver.
out="$scratch/results"
archive="$scratch/packed/results.tar.gz"
if ! "$script" --bundle "$build" --simulate --out "$out" --archive "$archive" \
    >"$scratch/run.log" 2>&1; then
  fail "the simulated run failed"
  tail -20 "$scratch/run.log"
fi
for f in summary.txt system.txt xal-info.json conformance.json \
         bench-copy.json bench-dispatch.json rawbench.log; do
  [[ -s "$out/$f" ]] || fail "$f missing or empty"
done
grep -q 'SIMULATED driver' "$out/system.txt" || fail "system.txt does not say simulated"
grep -q '^C++ runtime: ' "$out/system.txt" || fail "system.txt has no C++ runtime line"
for name in xal-info xal-smi kernels conformance bench-copy bench-dispatch mixed-collectives nccl \
            coll-thread coll-driver peer-collectives rawbench; do
  grep -qE "^$name +(ok|TIMEOUT|FAILED|left out)" "$out/summary.txt" ||
    fail "summary.txt does not list step $name"
done
# These steps do not depend on timing; they must pass on the simulation.
for name in xal-info xal-smi kernels bench-dispatch nccl peer-collectives rawbench; do
  grep -qE "^$name +ok" "$out/summary.txt" || fail "step $name did not pass"
done
grep -q '^nccl: .*libxalsim-nccl.so' "$out/system.txt" || fail "the nccl step did not use the simulated NCCL"
if [[ -f "$archive" ]]; then
  listing="$(tar -tzf "$archive")" || fail "the archive does not read"
  for f in results/summary.txt results/conformance.json results/rawbench.log; do
    grep -qx "$f" <<<"$listing" || fail "the archive lacks $f"
  done
else
  fail "--archive wrote no $archive"
fi

# --only: the steps named run, every other one is listed as not run.
only="$scratch/only"
if ! "$script" --bundle "$build" --simulate --out "$only" --only xal-info,rawbench \
    >"$scratch/only.log" 2>&1; then
  fail "the --only run failed"
  tail -20 "$scratch/only.log"
fi
for name in xal-info rawbench; do
  grep -qE "^$name +ok" "$only/summary.txt" || fail "--only: step $name did not pass"
done
for name in conformance bench-copy coll-driver; do
  grep -qE "^$name +not run \(--only\)" "$only/summary.txt" ||
    fail "--only: step $name not listed as not run"
done
[[ ! -e "$only/conformance.log" ]] || fail "--only: conformance ran"

# The collectives without NCCL: their results in the summary; with one
# CUDA device the step is left out, saying why.
grep -q '^collectives_check: OK' "$out/summary.txt" ||
  fail "summary.txt lacks the peer collectives' check"
one="$scratch/one"
if ! XALSIM_CUDA_DEVICES=1 "$script" --bundle "$build" --simulate --out "$one" \
    --only peer-collectives >"$scratch/one.log" 2>&1; then
  fail "the one-device run failed"
  tail -20 "$scratch/one.log"
fi
grep -qE '^peer-collectives +needs two CUDA devices \(found 1\)' "$one/summary.txt" ||
  fail "one device: the peer step is not left out with why"

if ((failures > 0)); then
  echo "$failures check(s) failed; run log: $scratch/run.log"
  exit 1
fi
echo "gpu-check.sh on the simulated driver: all checks passed"
