#!/usr/bin/env bash
# xal-cuda-rawbench and xal-cuda-kernelcheck refuse bad options with exit 2
# and a readable reason, before any CUDA call (no driver is needed).
#   tools_cli_test.sh RAWBENCH KERNELCHECK WORK_DIR
set -u
rawbench=$1 kernelcheck=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
touch "$work/plain"
failures=0

# expect TEXT PROGRAM ARGS...: PROGRAM ARGS exits 2 and prints TEXT.
expect() {
  local text=$1
  shift
  local out rc
  out=$(XAL_BACKENDS=/nonexistent/libxal_backend_cuda.so timeout 30 "$@" 2>&1)
  rc=$?
  if [[ $rc -ne 2 || "$out" != *"$text"* ]]; then
    echo "FAIL: $*: exit $rc (expected 2), output:"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}

expect "xal-cuda-rawbench: --trials: must be at least 1, not 0" "$rawbench" --trials 0
expect "--iterations: must be at least 1, not -2" "$rawbench" --iterations -2
expect "Run with --help for the options." "$rawbench" --no-such-option
expect "xal-cuda-rawbench: --out: cannot create the folder $work/plain/sub" \
  "$rawbench" --sizes 1MiB --out "$work/plain/sub"
expect "xal-cuda-kernelcheck: --count: must be at least 1, not 0" "$kernelcheck" --count 0
expect "Run with --help for the options." "$kernelcheck" --bogus

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
