#!/usr/bin/env bash
# The torch.distributed backend "xal" (frameworks/torch): builds xal in the
# Python package's build folder build-py/ (made by scripts/python.sh; one
# libxal for `import xal` and `import xal.torch`), builds the extension
# xal_torch._C against the torch of the project's virtual environment
# (.venv/, made by scripts/python.sh) and runs its pytest suite
# (frameworks/torch/tests: every op at 2 and 4 ranks against Gloo and a
# local reference, dead and hung ranks, faults injected by fault:mock into
# training, DDP and FSDP against Gloo, two hosts in network namespaces when
# root). Prints how long
# each stage took; exits non-zero when any stage fails.
#
# XAL_JOBS sets the build parallelism (default: every core).
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cd "$XAL_ROOT" || exit 1
xal_clean_env

VENV_PY="$XAL_ROOT/.venv/bin/python"
BUILD="$XAL_ROOT/build-py"
export PYTHONDONTWRITEBYTECODE=1


check_venv() {
  if ! "$VENV_PY" -c 'import torch, pytest' 2>/dev/null; then
    xal_log "$VENV_PY cannot import torch and pytest: run scripts/python.sh first (it makes .venv/)"
    return 1
  fi
  "$VENV_PY" -c 'import torch; print("torch", torch.__version__)' 2>/dev/null
}

build_xal() {
  if [[ ! -f "$BUILD/build.ninja" ]]; then
    xal_log "$BUILD is not configured: run scripts/python.sh first"
    return 1
  fi
  ninja -C "$BUILD" -j "$XAL_JOBS" xal xal_common xal_backend_mock xal_backend_fault
}

build_extension() {
  cmake -S frameworks/torch -B "$BUILD/frameworks-torch" -G Ninja \
    -DCMAKE_BUILD_TYPE="$XAL_BUILD_TYPE" -DPython3_EXECUTABLE="$VENV_PY" \
    -DXAL_BUILD_DIR="$BUILD" >/dev/null &&
  ninja -C "$BUILD/frameworks-torch" -j "$XAL_JOBS"
}

run_tests() {
  "$VENV_PY" -m pytest -q -p no:cacheprovider "$XAL_ROOT/frameworks/torch/tests"
}

xal_stage "virtual environment" check_venv
xal_stage "build xal (build-py/)" build_xal
xal_stage "build xal_torch._C" build_extension
xal_stage "pytest" run_tests
xal_stage_report
printf 'torch.sh: PASS\n'
