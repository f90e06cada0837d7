#!/usr/bin/env bash
# xal-info on a machine without the CUDA driver (XAL_CUDA_DRIVER names a
# missing file): the CUDA plugin loads, is listed as UNAVAILABLE with the
# loader's reason and what it has been verified on, and xal-info succeeds.
# Usage: xal_info_no_driver_test.sh XAL_INFO CUDA_PLUGIN
set -euo pipefail
xal_info=$1
export XAL_BACKENDS=$2
export XAL_CUDA_DRIVER=/nonexistent/libcuda.so.1

fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect OUTPUT TEXT
  grep -qF -- "$2" <<<"$1" || fail "xal-info does not say '$2'"
}

text=$("$xal_info") || fail "xal-info exited with $?"
printf '%s\n' "$text"
expect "$text" "cuda  UNAVAILABLE"
expect "$text" "XAL_ERROR_BACKEND_UNAVAILABLE"
expect "$text" "/nonexistent/libcuda.so.1: cannot open shared object file"
expect "$text" "verified on an H200; multi-GPU paths on a simulated driver only"
expect "$text" "Devices: 0"

json=$("$xal_info" --json) || fail "xal-info --json exited with $?"
expect "$json" '"state": "UNAVAILABLE"'
expect "$json" '"note": "verified on an H200; multi-GPU paths on a simulated driver only"'
echo "PASS"
