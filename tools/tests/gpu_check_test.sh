#!/usr/bin/env bash
# gpu_check_test.sh BUILD_DIR SCRATCH -- tools/gpu-check.sh end to end
# on the simulated driver, with the build tree as its bundle (same layout:
# bin/, lib/, lib/xal/, lib/cuda-sim/): every step runs and is listed in
# summary.txt, the results are packed by --archive, and bad arguments are
# refused with a message. Then, with a bundle whose xal-info warns on
# stderr or hangs: xal-info.json holds its stdout alone, a hang costs no
# more than the deadline (GPU_CHECK_DEADLINE_S) and a run stopped by TERM
# still leaves summary.txt and the archive; an earlier run's files in the
# same --out do not show in the next one's summary. The figures are not
# checked (simulation).
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
for name in xal-info xal-smi kernels conformance conformance-faults bench-copy bench-dispatch \
            mixed-collectives nccl \
            coll-thread coll-driver peer-collectives rawbench faultcheck; do
  grep -qE "^$name +(ok|TIMEOUT|FAILED|left out)" "$out/summary.txt" ||
    fail "summary.txt does not list step $name"
done
# These steps do not depend on timing; they must pass on the simulation.
for name in xal-info xal-smi kernels bench-dispatch nccl peer-collectives rawbench faultcheck; do
  grep -qE "^$name +ok" "$out/summary.txt" || fail "step $name did not pass"
done
grep -q '^bad paths on the device: xal-cuda-faultcheck: PASS' "$out/summary.txt" ||
  fail "summary.txt does not show the fault check's result"
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

# An earlier run's results in the same folder are set aside, not shown as
# this run's (its rawbench figures here).
if ! "$script" --bundle "$build" --simulate --out "$out" --only xal-info \
    >"$scratch/again.log" 2>&1; then
  fail "the second run into the same folder failed"
  tail -20 "$scratch/again.log"
fi
grep -qE '^rawbench +not run \(--only\)' "$out/summary.txt" ||
  fail "second run: rawbench not listed as not run"
if grep -q 'raw CUDA against xal' "$out/summary.txt"; then
  fail "second run: the summary shows the earlier run's rawbench figures"
fi
[[ ! -e "$out/rawbench.log" ]] || fail "second run: the earlier rawbench.log was left in place"
compgen -G "$out/earlier-*/rawbench.log" >/dev/null ||
  fail "second run: the earlier results were not moved to earlier-*/"

# A bundle whose xal-info writes a warning on stderr for --json, and with
# FAKE_XAL_INFO_HANG set then hangs (a stuck driver): the build tree's
# programs and libraries otherwise.
fake="$scratch/fake-bundle"
mkdir -p "$fake/bin" || exit 1
ln -s "$build/lib" "$fake/lib" || exit 1
for f in "$build"/bin/*; do ln -s "$f" "$fake/bin/"; done
rm -f "$fake/bin/xal-info"
{
  echo '#!/usr/bin/env bash'
  echo 'if [[ "${1:-}" == --json ]]; then'
  echo '  echo "fake xal-info: a backend warning on stderr" >&2'
  echo '  [[ -n "${FAKE_XAL_INFO_HANG:-}" ]] && sleep 600'
  echo 'fi'
  echo "exec '$build/bin/xal-info' \"\$@\""
} >"$fake/bin/xal-info"
chmod +x "$fake/bin/xal-info"

# stderr apart: xal-info.json is the JSON alone, the warning in
# xal-info.log, and the device count read from it.
warn="$scratch/warn"
if ! XALSIM_CUDA_DEVICES=1 "$script" --bundle "$fake" --simulate --out "$warn" \
    --only xal-info,peer-collectives >"$scratch/warn.log" 2>&1; then
  fail "the run with a warning xal-info failed"
  tail -20 "$scratch/warn.log"
fi
if [[ "$(head -c1 "$warn/xal-info.json" 2>/dev/null)" != "{" ]] ||
   grep -q 'fake xal-info' "$warn/xal-info.json"; then
  fail "xal-info.json is not xal-info's stdout alone: $(head -2 "$warn/xal-info.json")"
fi
grep -q 'fake xal-info: a backend warning' "$warn/xal-info.log" ||
  fail "xal-info's stderr is not in xal-info.log"
grep -qE '^peer-collectives +needs two CUDA devices \(found 1\)' "$warn/summary.txt" ||
  fail "the device count was not read from xal-info.json"

# A hanging xal-info with a 30 s deadline: the xal-info step times out
# (20 s), the rest is not started, and summary and archive are written
# within the deadline (an outer limit catches a hang of the script).
hang="$scratch/hang"
started=$SECONDS
FAKE_XAL_INFO_HANG=1 GPU_CHECK_DEADLINE_S=30 timeout -k 5 120 "$script" --bundle "$fake" \
  --simulate --out "$hang" --archive "$scratch/hang.tar.gz" \
  --only xal-info,rawbench,peer-collectives >"$scratch/hang.log" 2>&1
took=$((SECONDS - started))
((took <= 45)) || fail "the run with a hanging xal-info took ${took}s (deadline 30 s)"
grep -qE '^xal-info +TIMEOUT' "$hang/summary.txt" 2>/dev/null ||
  fail "hanging xal-info: step not listed as TIMEOUT"
grep -qE '^rawbench +not run \(deadline 30s' "$hang/summary.txt" 2>/dev/null ||
  fail "hanging xal-info: rawbench not listed as not run for the deadline"
grep -qE '^peer-collectives +needs two CUDA devices \(found none\)' "$hang/summary.txt" \
  2>/dev/null || fail "hanging xal-info: peer-collectives not left out"
grep -q '^run: INCOMPLETE: deadline 30s reached' "$hang/summary.txt" 2>/dev/null ||
  fail "hanging xal-info: the summary does not say the deadline cut the run"
# (the listing read whole: grep -q would end tar early, and pipefail fail)
grep -qx 'hang/summary.txt' <<<"$(tar -tzf "$scratch/hang.tar.gz" 2>/dev/null)" ||
  fail "hanging xal-info: no archive with the summary"

# Stopped from outside (TERM) during the hanging step: the step is
# interrupted at once, summary.txt and the archive are still written.
term="$scratch/term"
FAKE_XAL_INFO_HANG=1 "$script" --bundle "$fake" --simulate --out "$term" \
  --archive "$scratch/term.tar.gz" --only xal-info,rawbench >"$scratch/term.log" 2>&1 &
pid=$!
for _ in $(seq 200); do
  grep -q '\[xal-info\] (limit' "$scratch/term.log" 2>/dev/null && break
  sleep 0.1
done
sleep 1
started=$SECONDS
kill -TERM "$pid"
wait "$pid"
rc=$?
took=$((SECONDS - started))
[[ $rc -eq 143 ]] || fail "stopped by TERM: exit $rc, expected 143"
((took <= 12)) || fail "stopped by TERM: took ${took}s to end"
grep -q '^run: INCOMPLETE: stopped by SIGTERM during step xal-info' "$term/summary.txt" \
  2>/dev/null || fail "stopped by TERM: the summary does not say so"
grep -qE '^xal-info +INTERRUPTED' "$term/summary.txt" 2>/dev/null ||
  fail "stopped by TERM: xal-info not listed as interrupted"
grep -qx 'term/summary.txt' <<<"$(tar -tzf "$scratch/term.tar.gz" 2>/dev/null)" ||
  fail "stopped by TERM: no archive with the summary"
grep -q 'results packed into' "$scratch/term.log" ||
  fail "stopped by TERM: the run's output does not end with the archive"
if grep -q '^gpu-check: ' "$term/xal-info.json" "$term/xal-info.log"; then
  fail "stopped by TERM: the script's own output went into the interrupted step's files"
fi

if ((failures > 0)); then
  echo "$failures check(s) failed; run log: $scratch/run.log"
  exit 1
fi
echo "gpu-check.sh on the simulated driver: all checks passed"
