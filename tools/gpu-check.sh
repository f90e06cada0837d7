#!/usr/bin/env bash
# gpu-check.sh -- checks xal's CUDA backend on a machine with NVIDIA GPUs.
#
# The GPU machine has the NVIDIA driver, the CUDA toolkit, CMake and ninja,
# but none of the libraries xal builds with (oneTBB, nlohmann/json,
# GoogleTest, Google Benchmark, CLI11) and no network. So the check runs from
# a self-contained bundle made on a development machine:
#
#   tools/gpu-check.sh --prepare DIR      (here) build in Release and put
#                                         the binaries, libxal, the plugins
#                                         and every shared library they need
#                                         into DIR; binaries find them through
#                                         RPATH $ORIGIN, not LD_LIBRARY_PATH.
#   DIR/gpu-check.sh [--out OUT] [--archive FILE]
#                                         (there) run the checks, results in
#                                         OUT (default: $OUT, else
#                                         ./gpu-check-<date>); with --archive
#                                         also packed into one .tar.gz FILE,
#                                         to carry them off in one piece.
#   DIR/gpu-check.sh --simulate [--out OUT]
#                                         the same run on the simulated
#                                         driver, to try the bundle without a
#                                         GPU (figures are meaningless).
#   DIR/gpu-check.sh --only STEP,STEP... [--out OUT]
#                                         only the steps named (to run again
#                                         the ones that failed): xal-info,
#                                         xal-smi, kernels, rawbench, interop,
#                                         conformance, conformance-faults,
#                                         bench-copy,
#                                         bench-dispatch, mixed-collectives,
#                                         coll-thread, coll-driver, nccl,
#                                         peer-collectives, faultcheck.
#   tools/gpu-check.sh [--simulate] [--out OUT]
#                                         on a GPU machine that can build xal
#                                         itself (scripts/deps.sh installed):
#                                         --prepare into build-gpu-check/bundle,
#                                         then the run, in one go. The build
#                                         is not counted in the run's time.
#
# The run, in this order: system facts (nvidia-smi), xal-info, xal-smi
# --json (NVML's sensors and Xid events as xal reports them),
# xal-cuda-kernelcheck (xal's embedded kernels, every dtype and op, against
# the host), xal-cuda-rawbench (raw driver API against xal, same run: the
# issue's targets), xal-cuda-interopcheck (a framework's own cuMemAlloc
# memory and CUstreams imported into xal, copies, memset and an allreduce
# on them read back with cuMemcpyDtoH, bad inputs, IPC between two
# processes; interop.json), the conformance suite in full on the CUDA devices
# (XAL_BACKENDS=cuda), its faults group through the fault backend over them
# (XAL_BACKENDS=fault:cuda), xal-bench copy and dispatch, every collective on the
# CUDA devices with a mock card (collectives_check, then xal-bench coll with
# the backend's host function threads and without), xal-bench coll through
# NCCL when the machine has a libnccl.so.2 (on the simulated driver: the
# bundle's simulated NCCL), and the plugin's collectives without NCCL
# checked and timed against the core's path when it has two CUDA devices or
# more; last, xal-cuda-faultcheck (a PTX that does not compile, a kernel
# fault and the reset after it).
#
# Time: each step and every other outside command has a time limit, and
# the run a deadline, 450 s from its start (GPU_CHECK_DEADLINE_S seconds
# when set): a step's limit is cut to what is left, and steps that would
# start with under 10 s left are listed as not run, so that the whole run
# stays under 8 minutes on one GPU. summary.txt is rewritten after every
# step; at the end, or when the run is stopped (INT, TERM, HUP: the step
# running is stopped and listed as INTERRUPTED), summary.txt and the
# --archive are written from what there is. Each step's standard output,
# its tool's report, is in OUT/STEP.txt (or the .json it names), its
# diagnostics in OUT/STEP.log; summary.txt shows the reports as the tools
# wrote them (this script reads no tool's text), each step's outcome and
# the targets: H2D/D2H page-locked >= 0.98 of raw from 1 MiB
# (against raw copies from registered pages, the kind xal_host_alloc
# makes), D2D >= 0.98, launch overhead <= 0.2 us over cuLaunchKernel.
# Files an earlier run left in OUT go into OUT/earlier-<time>/ first.
set -u -o pipefail

usage() {
  sed -n '2,/^set /p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

die() {
  echo "gpu-check: $*" >&2
  exit 1
}

script_dir() {
  cd "$(dirname "${BASH_SOURCE[0]}")" && pwd
}

# ---------------------------------------------------------------------------
# --prepare DIR
# ---------------------------------------------------------------------------
prepare() {
  local dest="$1"
  local repo
  repo="$(cd "$(script_dir)/.." && pwd)"
  [[ -f "$repo/CMakeLists.txt" ]] || die "--prepare runs from the source tree"
  local build="${GPU_CHECK_BUILD_DIR:-$repo/build-gpu-check}"
  local jobs="${GPU_CHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}"
  mkdir -p "$dest" || die "cannot create $dest"
  dest="$(cd "$dest" && pwd)"

  echo "gpu-check: configuring a Release build in $build"
  # Every binary finds its libraries beside it or in ../lib. The GPU machine
  # has no Open MPI, so libxal_mpi (and xal-bench's --mpi) stay out. GCC 12 gives
  # false -Wrestrict warnings on std::string concatenation at -O3 (GCC bug
  # 105329); they are not errors for the bundle.
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DXAL_BUILD_TESTS=OFF -DXAL_BUILD_EXAMPLES=ON -DXAL_BUILD_MPI=OFF \
    -DCMAKE_CXX_FLAGS=-Wno-restrict \
    '-DCMAKE_BUILD_RPATH=$ORIGIN;$ORIGIN/../lib' >"$dest/.configure.log" 2>&1 ||
    { tail -30 "$dest/.configure.log"; die "configure failed"; }

  local targets=(xal xal_backend_cuda xalsim_cuda xalsim_nvml xalsim_nccl xal-info xal-smi xal-conform
                 xal-conform-suite xal-bench xal-cuda-rawbench xal-cuda-kernelcheck
                 xal-cuda-faultcheck xal-cuda-interopcheck xal_example_collectives_check)
  local available=()
  local t
  for t in "${targets[@]}"; do
    if ninja -C "$build" -t query "$t" >/dev/null 2>&1; then
      available+=("$t")
    else
      echo "gpu-check: target $t is not in this build; the bundle goes without it"
    fi
  done
  # Other backends are useful for mixed-device runs but not needed.
  for t in xal_backend_mock xal_backend_fault; do
    ninja -C "$build" -t query "$t" >/dev/null 2>&1 && available+=("$t")
  done
  echo "gpu-check: building ${available[*]}"
  cmake --build "$build" --target "${available[@]}" -j"$jobs" \
    >"$dest/.build.log" 2>&1 ||
    { tail -40 "$dest/.build.log"; die "build failed"; }

  rm -rf "${dest:?}/bin" "${dest:?}/lib"
  mkdir -p "$dest/bin" "$dest/lib/xal" "$dest/lib/cuda-sim"
  local f
  for f in xal-info xal-smi xal-conform xal-conform-suite xal-bench xal-cuda-rawbench \
           xal-cuda-kernelcheck xal-cuda-faultcheck xal-cuda-interopcheck \
           collectives_check; do
    [[ -x "$build/bin/$f" ]] && cp "$build/bin/$f" "$dest/bin/"
  done
  cp -P "$build"/lib/libxal.so* "$dest/lib/" 2>/dev/null ||
    die "libxal.so was not built"
  cp "$build"/lib/xal/libxal_backend_*.so "$dest/lib/xal/"
  cp -P "$build"/lib/cuda-sim/libcuda.so* "$build"/lib/cuda-sim/libxalsim-nvml.so \
    "$build"/lib/cuda-sim/libxalsim-nccl.so "$dest/lib/cuda-sim/" 2>/dev/null || true

  # The shared libraries the binaries need, except the C library itself and
  # the NVIDIA driver: copied into lib/ where RPATH finds them.
  local elf lib path
  local skip='^(linux-vdso|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|ld-linux|libcuda\.so|libnvidia)'
  for elf in "$dest"/bin/* "$dest"/lib/libxal.so.* "$dest"/lib/xal/*.so; do
    [[ -f "$elf" && ! -L "$elf" ]] || continue
    while read -r lib path; do
      [[ "$lib" =~ $skip ]] && continue
      [[ "$path" == "$dest"* ]] && continue
      [[ -f "$path" && ! -e "$dest/lib/$lib" ]] && cp -L "$path" "$dest/lib/$lib"
    done < <(ldd "$elf" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
  done
  # Plugins look beside themselves ($ORIGIN): point them at the same copies.
  for lib in "$dest"/lib/*.so.*; do
    [[ -f "$lib" && "$(basename "$lib")" != libxal.so* ]] || continue
    ln -sf "../$(basename "$lib")" "$dest/lib/xal/$(basename "$lib")"
  done
  cp "$(script_dir)/gpu-check.sh" "$dest/gpu-check.sh"
  chmod +x "$dest/gpu-check.sh"
  {
    echo "xal GPU check bundle"
    echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "source: $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "CUDA headers: $(grep -m1 '#define CUDA_VERSION' /usr/local/cuda/include/cuda.h 2>/dev/null)"
    echo
    (cd "$dest" && find . -type f ! -name '.*' | sort)
  } >"$dest/MANIFEST"
  rm -f "$dest/.configure.log" "$dest/.build.log"
  verify_bundle "$dest" || die "the bundle is not self-contained"
  echo "gpu-check: bundle ready in $dest ($(du -sh "$dest" | cut -f1))"
}

# Every library a bundled program, libxal or a plugin needs must resolve, and
# the copied ones must resolve inside the bundle (RPATH), with
# LD_LIBRARY_PATH unset. (The copied third-party libraries themselves are
# reached through the programs, whose resolution ldd shows in full.)
verify_bundle() {
  local dest="$1" elf ok=0 bad
  for elf in "$dest"/bin/* "$dest"/lib/libxal.so.*.* "$dest"/lib/xal/libxal_backend_*.so; do
    [[ -f "$elf" && ! -L "$elf" ]] || continue
    bad="$(env -u LD_LIBRARY_PATH ldd "$elf" 2>&1 | grep 'not found')"
    if [[ -n "$bad" ]]; then
      echo "gpu-check: $elf: $bad" >&2
      ok=1
    fi
    while read -r lib path; do
      if [[ -e "$dest/lib/$lib" && "$path" != "$dest"* ]]; then
        echo "gpu-check: $elf takes $lib from $path, not the bundle" >&2
        ok=1
      fi
    done < <(env -u LD_LIBRARY_PATH ldd "$elf" 2>/dev/null |
             awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
  done
  if [[ -x "$dest/bin/xal-info" ]]; then
    env -u LD_LIBRARY_PATH "$dest/bin/xal-info" --help >/dev/null 2>&1 ||
      { echo "gpu-check: bin/xal-info does not start" >&2; ok=1; }
  fi
  return $ok
}

# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------

# The bundle carries the C++ runtime it was built with (libstdc++,
# libgcc_s). On a machine whose C library is older than the one they were
# built against they do not load, while xal's own files need nothing newer
# than glibc 2.34 and GCC 12's libstdc++; the machine's own C++ runtime then
# serves: the bundle's copies go aside into lib/unused-cxx-runtime/.
# Prints what it did, for system.txt; fails when the programs still do not
# start.
preflight() {
  local bundle="$1" err
  err="$(bounded 20 env -u LD_LIBRARY_PATH "$bundle/bin/xal-info" --help 2>&1 >/dev/null)" &&
    { echo "C++ runtime: the bundle's"; return 0; }
  if [[ "$err" != *libstdc++.so.6* && "$err" != *libgcc_s.so.1* ]]; then
    echo "gpu-check: the bundle's programs do not start here:" >&2
    echo "$err" | head -5 >&2
    return 1
  fi
  local aside="$bundle/lib/unused-cxx-runtime" lib
  mkdir -p "$aside" || { echo "gpu-check: cannot write to $bundle/lib" >&2; return 1; }
  for lib in libstdc++.so.6 libgcc_s.so.1; do
    [[ -e "$bundle/lib/$lib" ]] && mv "$bundle/lib/$lib" "$aside/"
    rm -f "$bundle/lib/xal/$lib"
  done
  local retry
  if ! retry="$(bounded 20 env -u LD_LIBRARY_PATH "$bundle/bin/xal-info" --help 2>&1 >/dev/null)"; then
    echo "gpu-check: the bundle's programs do not start here, with the bundle's" >&2
    echo "C++ runtime ($(echo "$err" | head -1)) nor with this machine's:" >&2
    echo "$retry" | head -5 >&2
    return 1
  fi
  echo "C++ runtime: this machine's; the bundle's does not load here: $(echo "$err" | head -1)"
}
STEPS=()
declare -A OUTCOME=()
ALL_STEPS=(xal-info xal-smi kernels rawbench interop conformance conformance-faults bench-copy
           bench-dispatch mixed-collectives coll-thread coll-driver nccl peer-collectives faultcheck)
ONLY=()  # --only: the steps to run; empty runs them all

# The run's deadline: no step runs past it, the later ones are listed as
# not run, then summary.txt and the archive are written. Seconds from the
# start of the run; GPU_CHECK_DEADLINE_S overrides (tests).
DEADLINE_S="${GPU_CHECK_DEADLINE_S:-450}"
KILL_AFTER=5    # seconds between a command's TERM and its KILL
MIN_STEP_S=10   # a step with less time left is not started
RUN_START=$SECONDS
RUN_NOTE=""     # why the run did not go through, for the summary
STEP_PID=""     # the timeout process of the command running now
CURRENT_STEP="" # its step, while it runs
STEP_START=0
FINISHING=0
LABEL=""

# Seconds left before the deadline.
left_s() {
  echo $((DEADLINE_S - (SECONDS - RUN_START)))
}

# bounded LIMIT COMMAND...: COMMAND under `timeout`, at most LIMIT seconds
# and never past the deadline; 124 when there was no time left. It runs in
# the background and is waited for, so that INT/TERM reach the trap at once
# (bash runs a trap only after a foreground command ends).
bounded() {
  local limit="$1" left
  shift
  left=$(($(left_s) - KILL_AFTER))
  ((left < limit)) && limit=$left
  ((limit >= 1)) || return 124
  timeout --kill-after="$KILL_AFTER" "$limit" "$@" 3>&- 4>&- &
  STEP_PID=$!
  local rc=0
  wait "$STEP_PID" || rc=$?
  STEP_PID=""
  return $rc
}

# wanted NAME: whether --only leaves step NAME in
wanted() {
  ((${#ONLY[@]} == 0)) && return 0
  local s
  for s in "${ONLY[@]}"; do [[ "$s" == "$1" ]] && return 0; done
  return 1
}

# skipped NAME WHY: a step that did not run, listed in the summary
skipped() {
  STEPS+=("$(printf '%-18s %s' "$1" "$2")")
  write_summary
}

# record NAME OUTCOME: a step's outcome and time, listed in the summary
record() {
  local took=$((SECONDS - STEP_START))
  OUTCOME[$1]="$2"
  STEPS+=("$(printf '%-18s %-18s %4ss%s' "$1" "$2" "$took" "${3:-}")")
  echo "gpu-check: [$1] $2 in ${took}s"
}

# step [--stdout FILE] NAME LIMIT_S COMMAND...: runs with a time limit (cut
# to the deadline), output to OUT/NAME.log (stdout to FILE when given).
step() {
  local stdout=""
  if [[ "$1" == --stdout ]]; then
    stdout="$2"
    shift 2
  fi
  local name="$1" limit="$2"
  shift 2
  if ! wanted "$name"; then
    skipped "$name" "not run (--only)"
    return 0
  fi
  local left note=""
  left=$(($(left_s) - KILL_AFTER))
  if ((left < MIN_STEP_S)); then
    RUN_NOTE="deadline ${DEADLINE_S}s reached, later steps not run"
    skipped "$name" "not run (deadline ${DEADLINE_S}s: $((left + KILL_AFTER))s left)"
    return 0
  fi
  if ((left < limit)); then
    note="  (limit cut from ${limit}s to ${left}s by the deadline)"
    limit=$left
  fi
  echo "gpu-check: [$name] (limit ${limit}s) $*"
  STEP_START=$SECONDS
  CURRENT_STEP="$name"
  local rc=0
  if [[ -n "$stdout" ]]; then
    bounded "$limit" "$@" >"$stdout" 2>"$OUT_DIR/$name.log" || rc=$?
  else
    bounded "$limit" "$@" >"$OUT_DIR/$name.log" 2>&1 || rc=$?
  fi
  CURRENT_STEP=""
  local outcome="ok"
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    outcome="TIMEOUT"
  elif [[ $rc -ne 0 ]]; then
    outcome="FAILED (exit $rc)"
  fi
  record "$name" "$outcome" "$note"
  write_summary
  return 0
}

# Files an earlier run left in OUT_DIR (those this script writes) go into
# OUT_DIR/earlier-<time>/, so that this run's summary shows only its own
# results (a step not run now would otherwise show the old ones).
set_earlier_aside() {
  local names=(summary.txt system.txt nvidia-smi-q.txt preflight.log xal-info.json device-count
               interop.json conformance.json conformance.xml bench-copy.json bench-dispatch.json
               raw_vs_xal.json) found=() s f
  for s in "${ALL_STEPS[@]}"; do names+=("$s.log" "$s.txt"); done
  names+=(peer-collectives-check.txt)
  for f in "${names[@]}"; do [[ -e "$OUT_DIR/$f" ]] && found+=("$f"); done
  ((${#found[@]} > 0)) || return 0
  local aside
  aside="earlier-$(date -u +%Y%m%d-%H%M%S)"
  mkdir -p "$OUT_DIR/$aside" && (cd "$OUT_DIR" && mv -f -- "${found[@]}" "$aside/") ||
    die "cannot move an earlier run's results in $OUT_DIR aside"
  echo "gpu-check: an earlier run's results in $OUT_DIR are now in $aside/"
  EARLIER="$aside"
}
EARLIER=""
NCCL_FOUND=""  # the libnccl.so.2 the nccl step uses

# show LABEL FILE [LINES]: LABEL, then FILE of OUT_DIR as its tool wrote it
# (its last LINES lines when given) and a blank line; nothing when the
# step left no FILE.
show() {
  local label="$1" file="$OUT_DIR/$2" lines="${3:-}"
  [[ -f "$file" ]] || return 0
  if [[ -n "$lines" ]]; then
    printf '%s' "$label"
    tail -n "$lines" "$file"
  else
    printf '%s' "$label"
    cat "$file"
  fi
  echo
}

# show_table TITLE FILE [head|tail] [LINES]: a blank line, TITLE, then the
# first (or last) LINES lines of FILE (default: the first 40).
show_table() {
  local title="$1" file="$OUT_DIR/$2" end="${3:-head}" lines="${4:-40}"
  [[ -f "$file" ]] || return 0
  echo
  echo "$title"
  "$end" -n "$lines" "$file"
}

# summary.txt from what this run has so far: rewritten after every step
# (so that a run killed outright still leaves one) and at the end.
write_summary() {
  [[ -n "${OUT_DIR:-}" && -d "$OUT_DIR" ]] || return 0
  local state="complete"
  if [[ -n "$RUN_NOTE" ]]; then
    state="INCOMPLETE: $RUN_NOTE"
  elif ((FINISHING == 0)); then
    state="in progress"
  fi
  {
    echo "xal GPU check: $LABEL"
    [[ -f "$OUT_DIR/system.txt" ]] && sed -n '1,2p' "$OUT_DIR/system.txt"
    echo "total: $((SECONDS - RUN_START))s (deadline ${DEADLINE_S}s)"
    echo "run: $state"
    [[ -n "$EARLIER" ]] && echo "an earlier run's results: $EARLIER/"
    echo
    ((${#STEPS[@]} > 0)) && printf '%s\n' "${STEPS[@]}"
    echo
    # Each tool's own report, shown as it wrote it: a step's standard
    # output is its report (NAME.txt), its diagnostics are in NAME.log.
    show "xal's embedded kernels: " kernels.txt 1
    # Its verdict is its last line: first here, then each check's line.
    if [[ -f "$OUT_DIR/faultcheck.txt" ]]; then
      show "bad paths on the device: " faultcheck.txt 1
      head -n -1 "$OUT_DIR/faultcheck.txt"
      echo
    fi
    show "interop, a framework's memory and streams imported, IPC: " interop.log 1
    [[ -f "$OUT_DIR/rawbench.log" ]] && cat "$OUT_DIR/rawbench.log"  # its targets head it
    show_table "xal-bench coll, CUDA devices with NCCL ($NCCL_FOUND):" nccl.txt
    # collectives_check ends with its own two summary lines (each check's
    # line is in peer-collectives-check.txt), then the timings.
    show_table "collectives without NCCL (XAL_CUDA_COLLECTIVES=peer), CUDA devices alone:" \
      peer-collectives-check.txt tail 2
    [[ -f "$OUT_DIR/peer-collectives.txt" ]] && cat "$OUT_DIR/peer-collectives.txt"
    local mode
    for mode in thread driver; do
      show_table "xal-bench coll, CUDA + mock, XAL_CUDA_HOST_FUNCS=$mode:" "coll-$mode.txt"
      if [[ "$mode" == driver && -f "$OUT_DIR/coll-driver.txt" &&
            -n "${OUTCOME[coll-driver]:-}" && "${OUTCOME[coll-driver]}" != ok ]]; then
        echo "(${OUTCOME[coll-driver]}: with host functions straight to the driver the"
        echo " collectives did not finish. The usual cause is a driver that runs a"
        echo " context's host functions one at a time, which the default mode, thread,"
        echo " does not depend on. The last lines of coll-driver.log:)"
        tail -3 "$OUT_DIR/coll-driver.log" | sed 's/^/  /'
      fi
    done
    show_table "conformance (last lines):" conformance.txt tail 15
    show_table "conformance, faults group through the fault backend (XAL_BACKENDS=fault:cuda):" \
      conformance-faults.txt tail 15
  } >"$OUT_DIR/summary.txt.new" 2>/dev/null &&
    mv -f "$OUT_DIR/summary.txt.new" "$OUT_DIR/summary.txt"
}

# INT, TERM or HUP: the step running now is stopped and listed as
# interrupted; the EXIT trap (finish) then writes what there is. Both print
# to the run's own output (fds 3 and 4, kept by run_checks), not into the
# files of the step they interrupted.
on_signal() {
  exec 1>&3 2>&4
  trap '' INT TERM HUP
  RUN_NOTE="stopped by SIG$1${RUN_NOTE:+ ($RUN_NOTE)}"
  if [[ -n "$STEP_PID" ]]; then
    kill -TERM "$STEP_PID" 2>/dev/null
    wait "$STEP_PID" 2>/dev/null
    STEP_PID=""
  fi
  if [[ -n "$CURRENT_STEP" ]]; then
    RUN_NOTE="$RUN_NOTE during step $CURRENT_STEP"
    record "$CURRENT_STEP" "INTERRUPTED"
    CURRENT_STEP=""
  fi
  echo "gpu-check: $RUN_NOTE" >&2
  [[ "$1" == INT ]] && exit 130
  exit 143
}

# EXIT: summary.txt and the archive, however the run ended.
finish() {
  ((FINISHING)) && return 0
  FINISHING=1
  exec 1>&3 2>&4
  write_summary
  [[ -f "$OUT_DIR/summary.txt" ]] && cat "$OUT_DIR/summary.txt"
  echo "gpu-check: results in $OUT_DIR"
  if [[ -n "$ARCHIVE" ]]; then
    if timeout --kill-after="$KILL_AFTER" 60 \
        tar -czf "$ARCHIVE" -C "$(dirname "$OUT_DIR")" "$(basename "$OUT_DIR")"; then
      echo "gpu-check: results packed into $ARCHIVE"
    else
      echo "gpu-check: cannot write $ARCHIVE" >&2
      exit 1
    fi
  fi
}

run_checks() {
  local bundle="$1" simulate="$2"
  local bin="$bundle/bin"
  RUN_START=$SECONDS
  [[ -x "$bin/xal-info" ]] || die "$bundle is not a bundle (tools/gpu-check.sh --prepare DIR)"
  mkdir -p "$OUT_DIR" || die "cannot create $OUT_DIR"
  OUT_DIR="$(cd "$OUT_DIR" && pwd)"
  set_earlier_aside
  LABEL="real hardware"
  [[ "$simulate" == 1 ]] && LABEL="SIMULATED driver (figures are not hardware figures)"
  # From here on, whatever happens, summary.txt and the archive are written.
  exec 3>&1 4>&2
  trap finish EXIT
  trap 'on_signal INT' INT
  trap 'on_signal TERM' TERM
  trap 'on_signal HUP' HUP
  local runtime
  if ! runtime="$(preflight "$bundle" 2>"$OUT_DIR/preflight.log")"; then
    cat "$OUT_DIR/preflight.log" >&2
    RUN_NOTE="the bundle's programs do not start here (preflight.log); no checks were run"
    die "see above; no checks were run"
  fi
  [[ -s "$OUT_DIR/preflight.log" ]] || rm -f "$OUT_DIR/preflight.log"
  export XAL_BACKENDS="${XAL_BACKENDS:-cuda}"
  if [[ "$simulate" == 1 ]]; then
    if [[ ! -e "$bundle/lib/cuda-sim/libcuda.so.1" ]]; then
      RUN_NOTE="no simulated driver in the bundle"
      die "no simulated driver in the bundle"
    fi
    export XAL_CUDA_DRIVER="$bundle/lib/cuda-sim/libcuda.so.1"
    export XALSIM_CUDA_DEVICES="${XALSIM_CUDA_DEVICES:-2}"
    # The simulated NVML's sensors, for xal-smi.
    [[ -e "$bundle/lib/cuda-sim/libxalsim-nvml.so" ]] &&
      export XAL_CUDA_NVML="${XAL_CUDA_NVML:-$bundle/lib/cuda-sim/libxalsim-nvml.so}"
    # Room for the parity group's 256 MiB buffers (host memory, touched
    # only where written).
    export XALSIM_CUDA_MEMORY="${XALSIM_CUDA_MEMORY:-8GiB}"
    # Module loads, first kernel gets and peer enabling wait for the
    # context's streams, as the real driver may (lazy loading).
    export XALSIM_CUDA_LOAD_SYNCS="${XALSIM_CUDA_LOAD_SYNCS:-1}"
  fi

  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -a)"
    echo "run on: $LABEL"
    echo "bundle: $bundle"
    [[ -f "$bundle/MANIFEST" ]] && sed -n '2,4p' "$bundle/MANIFEST"
    echo "$runtime"
  } >"$OUT_DIR/system.txt"
  if command -v nvidia-smi >/dev/null 2>&1; then
    bounded 15 nvidia-smi >>"$OUT_DIR/system.txt" 2>&1 ||
      echo "(nvidia-smi: exit $?)" >>"$OUT_DIR/system.txt"
    bounded 15 nvidia-smi -q >"$OUT_DIR/nvidia-smi-q.txt" 2>&1
  fi
  write_summary

  step --stdout "$OUT_DIR/xal-info.json" xal-info 20 "$bin/xal-info" --json \
    --device-count-to "$OUT_DIR/device-count"
  if [[ -x "$bin/xal-smi" ]]; then
    step xal-smi 15 "$bin/xal-smi" --json
  else
    skipped xal-smi "MISSING from the bundle"
  fi
  if [[ -x "$bin/xal-cuda-kernelcheck" ]]; then
    # On the simulation the kernels run on one CPU thread: fewer elements.
    if [[ "$simulate" == 1 ]]; then
      step --stdout "$OUT_DIR/kernels.txt" kernels 20 "$bin/xal-cuda-kernelcheck" --count 100003
    else
      step --stdout "$OUT_DIR/kernels.txt" kernels 20 "$bin/xal-cuda-kernelcheck"
    fi
  else
    skipped kernels "MISSING from the bundle"
  fi
  # The issue's targets, before the long steps: the deadline cuts the last.
  if [[ -x "$bin/xal-cuda-rawbench" ]]; then
    if [[ "$simulate" == 1 ]]; then
      step rawbench 60 "$bin/xal-cuda-rawbench" --out "$OUT_DIR" \
        --sizes 1MiB 4MiB --iterations 4 --trials 2 --launches 2048
    else
      step rawbench 60 "$bin/xal-cuda-rawbench" --out "$OUT_DIR"
    fi
  else
    skipped rawbench "MISSING from the bundle"
  fi
  # ABI 1.1 interop as a framework uses it: memory from its own cuMemAlloc
  # and its own CUstreams imported, copies, memset and an allreduce in
  # place on them (one rank per GPU), read back with cuMemcpyDtoH after the
  # framework's own synchronize; bad inputs; IPC between two processes
  # (the program starts a copy of itself). Report in interop.json. The
  # simulated driver shares memory between processes only with
  # XALSIM_CUDA_IPC=1.
  if [[ -x "$bin/xal-cuda-interopcheck" ]]; then
    if [[ "$simulate" == 1 ]]; then
      step --stdout "$OUT_DIR/interop.json" interop 40 env XALSIM_CUDA_IPC=1 \
        "$bin/xal-cuda-interopcheck" --count 262144
    else
      step --stdout "$OUT_DIR/interop.json" interop 40 "$bin/xal-cuda-interopcheck"
    fi
  else
    skipped interop "MISSING from the bundle"
  fi
  if [[ -x "$bin/xal-conform" ]]; then
    # --timeout: a stuck test is reported as timed out (its group goes on
    # in a fresh process) well before the step's limit, which would lose
    # the reports (written at the end).
    step --stdout "$OUT_DIR/conformance.txt" conformance 130 "$bin/xal-conform" --backend cuda --timeout 40 \
      --report "$OUT_DIR/conformance.json" --junit "$OUT_DIR/conformance.xml"
  else
    skipped conformance "MISSING from the bundle"
  fi
  # The faults group through the fault backend over the CUDA devices:
  # injected errors of every profile, async errors, bit flips (staged in
  # stream order through host functions), hangs, on the real driver.
  if [[ -x "$bin/xal-conform" && -e "$bundle/lib/xal/libxal_backend_fault.so" ]]; then
    step --stdout "$OUT_DIR/conformance-faults.txt" conformance-faults 60 env XAL_BACKENDS=fault:cuda "$bin/xal-conform" \
      --group faults --timeout 40 --report "$OUT_DIR/conformance-faults.json"
  else
    skipped conformance-faults "MISSING from the bundle"
  fi
  if [[ -x "$bin/xal-bench" ]]; then
    step bench-copy 55 "$bin/xal-bench" copy --benchmark_min_time=0.2 \
      --benchmark_format=json --benchmark_out="$OUT_DIR/bench-copy.json"
    step bench-dispatch 40 "$bin/xal-bench" dispatch --benchmark_min_time=0.1 \
      --benchmark_format=json --benchmark_out="$OUT_DIR/bench-dispatch.json"
  else
    skipped bench-copy "MISSING from the bundle"
    skipped bench-dispatch "MISSING from the bundle"
  fi
  # Every collective on the CUDA devices with a mock card: the core's path,
  # whose host functions wait for each other across streams (the backend
  # runs them on threads of its own; see backends/cuda/README.md).
  if [[ -x "$bin/collectives_check" && -e "$bundle/lib/xal/libxal_backend_mock.so" ]]; then
    step mixed-collectives 30 env XAL_BACKENDS=cuda,mock XAL_MOCK_DEVICES=1*h100-sxm-80g \
      XALSIM_CUDA_SERIAL_HOST_FUNCS=1 "$bin/collectives_check"
    # The same set through xal-bench coll, host functions on the backend's
    # threads (default) and straight to the driver: the figures of both,
    # or a TIMEOUT where the driver runs a context's host functions one at
    # a time (backends/cuda/README.md, Host functions).
    if [[ -x "$bin/xal-bench" ]]; then
      local mode
      for mode in thread driver; do
        step --stdout "$OUT_DIR/coll-$mode.txt" "coll-$mode" 30 env XAL_BACKENDS=cuda,mock XAL_MOCK_DEVICES=1*h100-sxm-80g \
          XAL_CUDA_HOST_FUNCS="$mode" XAL_COMM_TIMEOUT_MS=5000 XALSIM_CUDA_SERIAL_HOST_FUNCS=1 \
          "$bin/xal-bench" coll -b 64K -e 16M -f 4 -n 10 -w 2 -c 1 --no-mpi
      done
    fi
  else
    skipped mixed-collectives "MISSING from the bundle"
  fi
  # NCCL, where one is on the machine (the system's, or the one PyTorch's
  # wheels bring): a communicator over the CUDA devices alone takes the
  # native path (one rank on a single GPU), results checked. On the
  # simulated driver, the bundle's simulated NCCL: the step itself is
  # checked before a GPU run.
  if ! wanted nccl; then
    skipped nccl "not run (--only)"
  elif [[ -x "$bin/xal-bench" ]]; then
    local nccl=""
    if [[ "$simulate" == 1 ]]; then
      [[ -e "$bundle/lib/cuda-sim/libxalsim-nccl.so" ]] &&
        nccl="$bundle/lib/cuda-sim/libxalsim-nccl.so"
    else
      # The dynamic loader's pick, else one under /usr/lib, /usr/local or
      # /opt (PyTorch's wheels bring one there).
      nccl="$(bounded 30 "$bin/xal-info" --locate libnccl.so.2 2>/dev/null)"
    fi
    if [[ -n "$nccl" ]]; then
      echo "nccl: $nccl" >>"$OUT_DIR/system.txt"
      NCCL_FOUND="$nccl"
      step --stdout "$OUT_DIR/nccl.txt" nccl 30 env XAL_BACKENDS=cuda XAL_CUDA_NCCL="$nccl" \
        "$bin/xal-bench" coll -b 1M -e 64M -f 8 -n 10 -w 2 -c 1 --no-mpi
    else
      skipped nccl "none on this machine"
    fi
  else
    skipped nccl "MISSING from the bundle"
  fi
  # The plugin's own collectives without NCCL (XAL_CUDA_COLLECTIVES=peer):
  # every collective checked, then allreduce timed on the core's path and
  # on this one. A machine with one CUDA device (one H200) has one rank:
  # left out there. The device count is xal-info's (device-count, written
  # by the xal-info step; made here, time-limited, when --only left it out).
  if ! wanted peer-collectives; then
    skipped peer-collectives "not run (--only)"
  elif [[ ! -x "$bin/collectives_check" || ! -x "$bin/xal-bench" ]]; then
    skipped peer-collectives "MISSING from the bundle"
  else
    if ! wanted xal-info; then
      bounded 20 "$bin/xal-info" --json --device-count-to "$OUT_DIR/device-count" \
        >"$OUT_DIR/xal-info.json" 2>"$OUT_DIR/xal-info.log"
    fi
    local ncuda=""
    [[ -f "$OUT_DIR/device-count" ]] && read -r ncuda <"$OUT_DIR/device-count"
    if ((${ncuda:-0} < 2)); then
      skipped peer-collectives "needs two CUDA devices (found ${ncuda:-none})"
    else
      step --stdout "$OUT_DIR/peer-collectives.txt" peer-collectives 40 bash -c 'XAL_CUDA_COLLECTIVES=peer "$0" >"$2" || exit 1
        for c in allreduce broadcast; do
          for m in core peer; do
            echo "== $c, XAL_CUDA_COLLECTIVES=$m"
            XAL_CUDA_COLLECTIVES=$m "$1" coll -C $c -b 1M -e 64M -f 8 -n 10 -w 2 -c 0 --no-mpi ||
              exit 1
          done
        done' "$bin/collectives_check" "$bin/xal-bench" "$OUT_DIR/peer-collectives-check.txt"
    fi
  fi
  # Last, since it leaves the device in an error state when the reset does
  # not clear it: a PTX that does not compile, a kernel fault (700), the
  # device lost, xal_device_reset.
  if [[ -x "$bin/xal-cuda-faultcheck" ]]; then
    step --stdout "$OUT_DIR/faultcheck.txt" faultcheck 30 "$bin/xal-cuda-faultcheck"
  else
    skipped faultcheck "MISSING from the bundle"
  fi
  # finish (the EXIT trap) writes the summary and the archive.
  return 0
}

main() {
  local prepare_dir="" out="" simulate=0 bundle="" archive="" only=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --prepare) [[ $# -ge 2 ]] || die "--prepare needs a folder"; prepare_dir="$2"; shift 2 ;;
      --out) [[ $# -ge 2 ]] || die "--out needs a folder"; out="$2"; shift 2 ;;
      --bundle) [[ $# -ge 2 ]] || die "--bundle needs a folder"; bundle="$2"; shift 2 ;;
      --archive) [[ $# -ge 2 ]] || die "--archive needs a file name"; archive="$2"; shift 2 ;;
      --only) [[ $# -ge 2 ]] || die "--only needs step names"; only="$2"; shift 2 ;;
      --simulate) simulate=1; shift ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown argument '$1' (see --help)" ;;
    esac
  done
  [[ "$DEADLINE_S" =~ ^[0-9]+$ ]] ||
    die "GPU_CHECK_DEADLINE_S must be a number of seconds, not '$DEADLINE_S'"
  if [[ -n "$only" ]]; then
    local name known s
    IFS=, read -r -a ONLY <<<"$only"
    for name in "${ONLY[@]}"; do
      known=0
      for s in "${ALL_STEPS[@]}"; do [[ "$s" == "$name" ]] && known=1; done
      ((known)) || die "--only: no step '$name' (steps: ${ALL_STEPS[*]})"
    done
  fi
  if [[ -n "$prepare_dir" ]]; then
    prepare "$prepare_dir"
    return
  fi
  if [[ -z "$bundle" ]]; then
    bundle="$(script_dir)"
    # Run from the source tree: build the bundle first, then run from it.
    if [[ ! -x "$bundle/bin/xal-info" && -f "$bundle/../CMakeLists.txt" ]]; then
      local repo
      repo="$(cd "$bundle/.." && pwd)"
      bundle="${GPU_CHECK_BUILD_DIR:-$repo/build-gpu-check}/bundle"
      local built=$SECONDS
      prepare "$bundle"
      echo "gpu-check: bundle built in $((SECONDS - built))s (not part of the run's time)"
    fi
  fi
  bundle="$(cd "$bundle" 2>/dev/null && pwd)" || die "no bundle folder"
  OUT_DIR="${out:-${OUT:-./gpu-check-$(date -u +%Y%m%d-%H%M%S)}}"
  ARCHIVE=""
  if [[ -n "$archive" ]]; then
    # An absolute path outside the results, checked before the run.
    mkdir -p "$(dirname "$archive")" && mkdir -p "$OUT_DIR" ||
      die "cannot create the folders for $archive and $OUT_DIR"
    ARCHIVE="$(cd "$(dirname "$archive")" && pwd)/$(basename "$archive")"
    local results
    results="$(cd "$OUT_DIR" && pwd)"
    [[ "$ARCHIVE" != "$results"/* ]] || die "--archive must lie outside the results folder $results"
  fi
  run_checks "$bundle" "$simulate"
}

main "$@"
