#!/usr/bin/env bash
# Installs the dependencies, builds xal (Release) into build/, then runs the
# conformance driver xal-conform on the accelerators present (the backends
# with a real, non-CPU device), or on the mock cards when there are none.
#
#   ./scripts/run.sh [extra xal-conform arguments]
#
# XAL_BACKENDS, when set, chooses the backends instead. XAL_JOBS sets the
# build parallelism (default: every core), XAL_BUILD_TYPE the CMake build
# type (default: Release).
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cd "$XAL_ROOT"

"$XAL_ROOT/scripts/deps.sh"

xal_log "configuring build/ ($XAL_BUILD_TYPE)"
# Only what the job needs: the library, the backends and the tools (the
# test command, scripts/test.sh, adds the tests to the same build/).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$XAL_BUILD_TYPE" \
  -DXAL_BUILD_TESTS=OFF -DXAL_BUILD_BENCH=OFF -DXAL_BUILD_EXAMPLES=OFF \
  "${XAL_CMAKE_BACKEND_OPTS[@]}"
xal_log "building with $XAL_JOBS jobs"
cmake --build build -j "$XAL_JOBS"

# Backends with a real accelerator (not simulated, not a CPU device), or the
# mock cards when there is none.
if [[ -z "${XAL_BACKENDS:-}" ]]; then
  # A failing listing (say a vendor runtime that exits the process) falls
  # back to the mock cards.
  real=$(build/bin/xal-info --json 2>/dev/null | python3 -c '
import json, sys
info = json.load(sys.stdin)
names = []
for d in info["devices"]:
    if d["kind"] != "CPU" and "simulated" not in d["capabilities"] \
            and d["backend"] not in names:
        names.append(d["backend"])
print(",".join(names))' 2>/dev/null) || real=""
  if [[ -n "$real" ]]; then
    export XAL_BACKENDS="$real"
    xal_log "accelerators found on: $real"
  else
    export XAL_BACKENDS=mock
    xal_log "no accelerator found: running on the mock cards"
  fi
fi

build/bin/xal-info
if [[ -x build/bin/xal-conform ]]; then
  xal_log "running xal-conform on XAL_BACKENDS=$XAL_BACKENDS"
  exec build/bin/xal-conform "$@"
else
  xal_log "xal-conform is not built yet: listed the devices with xal-info instead"
fi
