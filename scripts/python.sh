#!/usr/bin/env bash
# The Python package xal: makes the virtual environment .venv/ (Debian's
# python3) with the current numpy, torch, jax, pytest, nanobind and
# scikit-build-core from PyPI, builds the extension module with the main
# CMake build (-DXAL_BUILD_PYTHON=ON, in build-py/) and runs the pytest suite
# python/tests against it. Prints how long each stage took; exits non-zero
# when any stage fails.
#
#   scripts/python.sh            venv, CMake build in build-py/, pytest
#   scripts/python.sh --wheel    venv, `pip install ./python` (what a user
#                                does), pytest against the installed package
#   scripts/python.sh --venv     the virtual environment only (test.sh makes
#                                it while the C++ build runs)
#
# XAL_JOBS sets the build parallelism (default: every core);
# XAL_PY_UPGRADE=1 upgrades the Python packages of an existing .venv/.
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cd "$XAL_ROOT" || exit 1
xal_clean_env

mode=cmake
case "${1:-}" in
  "") ;;
  --wheel) mode=wheel ;;
  --venv) mode=venv ;;
  *) echo "usage: scripts/python.sh [--wheel|--venv]" >&2; exit 2 ;;
esac

PY=/usr/bin/python3   # Debian's interpreter, whatever python3 is first on PATH
VENV="$XAL_ROOT/.venv"
PACKAGES=(numpy torch "jax[cpu]" pytest nanobind scikit-build-core)
export PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1


as_root() {
  if [[ "$(id -u)" == 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else xal_log "not root and no sudo: run as root: $*"; return 1
  fi
}

# Debian packs venv (ensurepip) and the C headers of Python apart.
system_packages() {
  local need=() ver
  ver=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")') || return 1
  "$PY" -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
  [[ -f "/usr/include/python$ver/Python.h" ]] || need+=(python3-dev)
  (( ${#need[@]} == 0 )) && return 0
  xal_log "installing ${need[*]}"
  as_root apt-get update -q || xal_log "apt-get update failed; trying the cached lists"
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${need[@]}"
}

make_venv() {
  if [[ ! -x "$VENV/bin/python" ]]; then
    "$PY" -m venv "$VENV" || return 1
    "$VENV/bin/pip" install -q --upgrade pip || return 1
  fi
  local upgrade=()
  [[ "${XAL_PY_UPGRADE:-0}" == 1 ]] && upgrade=(--upgrade)
  "$VENV/bin/pip" install -q "${upgrade[@]}" "${PACKAGES[@]}"
}

cmake_build() {
  cmake -S . -B build-py -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DXAL_BUILD_PYTHON=ON -DPython_EXECUTABLE="$VENV/bin/python" \
    -DXAL_BUILD_TESTS=OFF -DXAL_BUILD_BENCH=OFF -DXAL_BUILD_TOOLS=OFF \
    -DXAL_BUILD_CONFORMANCE=OFF -DXAL_BUILD_EXAMPLES=OFF -DXAL_BUILD_MPI=OFF \
    -DXAL_BACKEND_CUDA=OFF -DXAL_BACKEND_HIP=OFF -DXAL_BACKEND_LEVELZERO=OFF \
    -DXAL_BACKEND_OPENCL=OFF >/dev/null &&
  cmake --build build-py -j "$XAL_JOBS" \
    --target _xal xal_backend_mock xal_backend_fault xal_python_stub xal_python_sources
}

wheel_install() {
  "$VENV/bin/pip" install -q --force-reinstall --no-deps ./python
}

run_tests() {
  if [[ $mode == cmake ]]; then
    PYTHONPATH="$XAL_ROOT/build-py/python" \
      "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$XAL_ROOT/python/tests"
  else  # the installed package, away from the source tree
    (cd /tmp && "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$XAL_ROOT/python/tests")
  fi
}

xal_stage "system packages" system_packages
xal_stage "virtual environment" make_venv
if [[ $mode == venv ]]; then
  xal_stage_report
  printf 'python.sh: PASS (virtual environment)\n'
  exit 0
fi
if [[ $mode == cmake ]]; then
  xal_stage "build (build-py/)" cmake_build
else
  xal_stage "pip install ./python" wheel_install
fi
xal_stage "pytest" run_tests
xal_stage_report
printf 'python.sh: PASS\n'
