#!/usr/bin/env bash
# Installs, with apt-get, what building and testing xal needs on Debian 12.
# Only missing packages are installed (after an `apt-get update`); nothing
# is done when everything is present. Runs as root, or through sudo.
#
#   scripts/deps.sh            required + optional packages
#   XAL_DEPS_OPTIONAL=0 scripts/deps.sh   required packages only
#
# Required packages must install, or the script fails. Optional ones (the
# OpenCL runtime PoCL, Level Zero and HIP headers, ...) enable more backends
# and tools; when one cannot be installed the script warns and goes on.
set -euo pipefail

required=(
  build-essential g++ cmake ninja-build pkg-config ccache
  libtbb-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  file binutils python3
  clang-14 libclang-rt-14-dev
)
optional=(
  libopenmpi-dev openmpi-bin
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libze-dev libamdhip64-dev libcpp-httplib-dev curl prometheus
  iproute2  # `ip netns`: the torch backend's two-host test (frameworks/torch)
)

log() { printf 'deps.sh: %s\n' "$*" >&2; }

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
  log "apt-get/dpkg not found: this script supports Debian 12 (bookworm)."
  log "install by hand: ${required[*]} ${optional[*]}"
  exit 1
fi

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"
}

# Packages in "$@" that are not installed.
missing_of() {
  local p
  for p in "$@"; do
    installed "$p" || printf '%s\n' "$p"
  done
}

mapfile -t miss_req < <(missing_of "${required[@]}")
miss_opt=()
if [[ "${XAL_DEPS_OPTIONAL:-1}" != 0 ]]; then
  mapfile -t miss_opt < <(missing_of "${optional[@]}")
fi
if (( ${#miss_req[@]} == 0 && ${#miss_opt[@]} == 0 )); then
  log "all build dependencies are installed"
  exit 0
fi

if [[ "$(id -u)" == 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  log "missing: ${miss_req[*]} ${miss_opt[*]}"
  log "not root and no sudo: run as root: apt-get install ${miss_req[*]} ${miss_opt[*]}"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log "missing: ${miss_req[*]} ${miss_opt[*]}; running apt-get update"
"${as_root[@]}" apt-get update -q || log "apt-get update failed; trying the cached lists"

# Keeps only packages this Debian release has (apt-cache policy shows a
# candidate); the others are skipped with a message.
available() {
  local p cand
  for p in "$@"; do
    cand=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [[ -n "$cand" && "$cand" != "(none)" ]]; then
      printf '%s\n' "$p"
    else
      log "skipping $p: not in this release's archive"
    fi
  done
}

if (( ${#miss_req[@]} > 0 )); then
  mapfile -t req < <(available "${miss_req[@]}")
  if (( ${#req[@]} > 0 )); then
    log "installing required: ${req[*]}"
    if ! "${as_root[@]}" apt-get install -y -q --no-install-recommends "${req[@]}"; then
      log "could not install required packages: ${req[*]}"
      exit 1
    fi
  fi
fi
if (( ${#miss_opt[@]} > 0 )); then
  mapfile -t opt < <(available "${miss_opt[@]}")
  for p in "${opt[@]}"; do
    log "installing optional: $p"
    "${as_root[@]}" apt-get install -y -q --no-install-recommends "$p" ||
      log "warning: optional package $p did not install; going on without it"
  done
fi
log "done"
