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

# Timed stages of a script (python.sh, torch.sh): `xal_stage NAME cmd...`
# runs the command and records its time; on failure it prints the times so
# far and "<script>: FAIL (NAME, exit N)" and exits 1. `xal_stage_report`
# prints the times and the total since the script sourced this file.
xal_stage_start=$(date +%s)
xal_stage_times=()
xal_stage_report() {
  printf '\n'
  printf '  %s\n' "${xal_stage_times[@]}"
  printf '  %-28s %4ds\n' total $(( $(date +%s) - xal_stage_start ))
}
xal_stage() {
  local name=$1 t0 rc
  shift
  xal_log "== $name"
  t0=$(date +%s)
  "$@"
  rc=$?
  xal_stage_times+=("$(printf '%-28s %4ds' "$name" $(( $(date +%s) - t0 )))")
  if (( rc != 0 )); then
    xal_stage_report
    printf '%s: FAIL (%s, exit %d)\n' "$(basename "$0" .sh).sh" "$name" "$rc"
    exit 1
  fi
}
