# shellcheck shell=bash disable=SC2034
# Shared by run.sh and test.sh (sourced, not run).
# Sets: XAL_ROOT, XAL_JOBS, XAL_BUILD_TYPE, XAL_CMAKE_BACKEND_OPTS.
# XAL_JOBS (default: every core) and XAL_BUILD_TYPE (default: Release) may
# be set by the caller.

XAL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
XAL_JOBS=${XAL_JOBS:-$(nproc 2>/dev/null || echo 2)}
XAL_BUILD_TYPE=${XAL_BUILD_TYPE:-Release}

# The CUDA backend only when the CUDA headers are installed; every other
# backend skips itself at configure time when its SDK headers are missing.
if [[ -f /usr/local/cuda/include/cuda.h ]]; then
  XAL_CMAKE_BACKEND_OPTS=(-DXAL_BACKEND_CUDA=ON)
else
  XAL_CMAKE_BACKEND_OPTS=(-DXAL_BACKEND_CUDA=OFF)
fi

xal_log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }

# Unsets every XAL_* variable so that the user's settings do not change
# what the build's tests see.
xal_clean_env() {
  local v
  for v in $(compgen -e | grep '^XAL_' || true); do
    [[ "$v" == XAL_JOBS || "$v" == XAL_BUILD_TYPE ]] || unset "$v"
  done
}
