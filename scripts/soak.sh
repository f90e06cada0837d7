#!/usr/bin/env bash
# Soak: runs a mixed workload for MINUTES (default 10) and checks, once a
# minute, that nothing grows and every result is right.
#
#   ./scripts/soak.sh [MINUTES]
#   ./scripts/soak.sh --seconds 30 --interval 5 [--build DIR] [--out DIR]
#
# What runs, all at once (tests/soak/, docs/RELIABILITY.md "Soak"):
#  - xal_soak: one process on four mock cards behind the fault backend
#    (XAL_BACKENDS=fault:mock), in cycles of xal_init .. xal_shutdown:
#    allocations, copies, memsets, streams, events, kernels, page-locked
#    host memory, a memory limit, partitions made and undone, collectives
#    in the process, and fault plans that fire (each checked), with the
#    background delays of XAL_FAULTS; traced (XAL_TRACE), in a shared
#    quota ledger (XAL_QUOTA_LEDGER);
#  - xal_soak_mpi under mpirun -np 2: collectives across the processes
#    through libxal_mpi, two mock cards each, traced, in a ledger of their
#    own;
#  - xal-exporter, scraped every SAMPLE seconds (curl): each scrape must
#    answer and list the soak's ledger.
# Every SAMPLE (2) seconds it reads /proc/PID/status (VmRSS, Threads) and
# /proc/PID/fd of each process, the /dev/shm objects they have open or
# mapped plus the soak's ledgers, and the device memory in use (the
# drivers' own figures and the exporter's xal_job_memory_used_bytes). Each
# INTERVAL (60 s) gets one row: the largest value of each figure in it.
#
# The rule (the first interval is the warm-up, its row the baseline): in
# every later interval, for the local driver and MPI rank 0, the RSS the
# driver reads itself after xal_shutdown and malloc_trim(0) (the same point
# of every cycle, without the allocator's free pages) at most the
# baseline's + 10% + 8 MiB, and the heap in use after xal_shutdown
# (glibc's mallinfo2: what is still allocated once xal holds nothing) of
# the local driver at most the baseline's + 2 MiB; per process, the RSS
# sampled at any moment at most the baseline's + 50% + 32 MiB (it swings
# with each cycle's work and the allocator's retention: a coarse bound),
# open fds and threads at most the baseline's + 4 (the workload starts up
# to three short-lived threads, one per rank), + 8 for the local driver's
# threads, whose workload also makes and destroys streams (a thread each),
# and its threads after xal_shutdown (read by the driver, the same quiet
# point of every cycle: where a leaked thread shows) at most the
# baseline's + 2 (oneTBB starts its worker threads at the first parallel
# loop, and keeps them); /dev/shm objects at most the
# baseline's; the device memory's peak (sampled every 100 ms) at most the
# baseline's × 1.5 + 48 MiB (a partition's 32 MiB allocation is caught by
# some samples and not others) and 0 bytes left at the end of every cycle;
# no failed check in any driver, every scrape answered, every driver exits
# 0.
# Prints the table and "soak.sh: PASS" or "soak.sh: FAIL (reasons)".
#
# --build DIR: the build with the drivers (default build-soak/, configured
# and built here when the drivers are missing); --out DIR: keep the status
# files, traces, logs and the table there (default: a temporary folder,
# removed after a PASS); --trace-events N: XAL_TRACE_MAX_EVENTS of the
# drivers (default 100000: each cycle's trace keeps that many events in
# memory until xal_shutdown writes it, and drops the rest).
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cd "$XAL_ROOT" || exit 1
xal_clean_env

seconds=600
interval=60
sample=2
build=build-soak
out=""
trace_events=100000
while (( $# )); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --trace-events) trace_events=$2; shift 2 ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *)
      if [[ "$1" =~ ^[0-9]+$ ]]; then seconds=$(( $1 * 60 )); shift
      else xal_log "unknown argument '$1'"; exit 2; fi ;;
  esac
done
if ! [[ "$seconds" =~ ^[0-9]+$ && "$interval" =~ ^[0-9]+$ ]] || (( seconds < 2 * interval || interval < sample )); then
  xal_log "need whole seconds, at least two intervals of at least ${sample} s"
  exit 2
fi

(( interval >= 30 )) || sample=1  # short runs: enough samples per interval
bin="$build/bin"
if [[ ! -x "$bin/xal_soak" || ! -x "$bin/xal_soak_mpi" || ! -x "$bin/xal-exporter" ]]; then
  xal_log "building the drivers in $build/"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXAL_BUILD_TESTS=ON \
    -DXAL_BUILD_BENCH=OFF -DXAL_BACKEND_CUDA=OFF -DXAL_BACKEND_HIP=OFF \
    -DXAL_BACKEND_LEVELZERO=OFF -DXAL_BACKEND_OPENCL=OFF >/dev/null || exit 1
  cmake --build "$build" -j "$XAL_JOBS" --target xal-soak >/dev/null || exit 1
fi
for p in xal_soak xal_soak_mpi xal-exporter; do
  [[ -x "$bin/$p" ]] || { xal_log "$bin/$p is missing (MPI or cpp-httplib not found?)"; exit 1; }
done
command -v mpirun >/dev/null || { xal_log "mpirun not found"; exit 1; }
command -v curl >/dev/null || { xal_log "curl not found"; exit 1; }

if [[ -n "$out" ]]; then mkdir -p "$out" || exit 1; work=$(cd "$out" && pwd); keep=1
else work=$(mktemp -d "${TMPDIR:-/tmp}/xal-soak.XXXXXX"); keep=0; fi
rm -f "$work"/*.status* "$work"/trace-* "$work"/*.log "$work"/table.txt

job="soak-$$"
mpi_job="soak-mpi-$$"
uid=$(id -u)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -f "/dev/shm/xal-ledger-$uid-$job" "/dev/shm/xal-ledger-$uid-$mpi_job"
  (( keep )) || [[ "${verdict:-FAIL}" != PASS ]] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The exporter: a port of its own, printed in its banner.
XAL_BACKENDS=mock XAL_MOCK_DEVICES='2*a100-40g' "$bin/xal-exporter" --port 0 \
  >"$work/exporter.log" 2>&1 &
exporter=$!
pids+=("$exporter")
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*serving http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$work/exporter.log" | head -1)
  [[ -n "$port" ]] && break
  sleep 0.1
done
[[ -n "$port" ]] || { cat "$work/exporter.log"; xal_log "the exporter did not start"; exit 1; }

# The drivers.
XAL_BACKENDS=fault:mock XAL_MOCK_DEVICES='4*a100-40g' XAL_QUOTA_LEDGER="$job" \
  XAL_FAULTS='seed=1;memcpy_dtoh=name(bg_delay)device(2)every(64)delay(1);stream_synchronize=name(bg_sync)device(1)every(97)delay(1)' \
  XAL_TRACE_MAX_EVENTS="$trace_events" \
  "$bin/xal_soak" --seconds "$seconds" --status "$work/local.status" \
  --trace "$work/trace-local.json" >"$work/local.log" 2>&1 &
local_pid=$!
pids+=("$local_pid")
# Open MPI's session directory in the work folder: two mpiruns at once
# (another soak, the MPI tests) would collide in /tmp.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_orte_tmpdir_base="$work" \
  XAL_BACKENDS=fault:mock XAL_MOCK_DEVICES='2*a100-40g' XAL_QUOTA_LEDGER="$mpi_job" \
  XAL_FAULTS='seed=2;memcpy_htod=name(bg_delay)every(50)delay(1)' XAL_TRACE_MAX_EVENTS="$trace_events" \
  mpirun --oversubscribe --bind-to none -np 2 "$bin/xal_soak_mpi" --seconds "$seconds" \
  --status "$work/mpi.status" --trace "$work/trace-mpi" >"$work/mpi.log" 2>&1 &
mpirun_pid=$!
pids+=("$mpirun_pid")

# Processes sampled: name -> pid (the MPI ranks once mpirun has started them).
declare -A pid_of=([local]=$local_pid [mpirun]=$mpirun_pid [exporter]=$exporter)
names=(local mpirun rank0 rank1 exporter)
find_ranks() {
  local c k=0
  for c in $(pgrep -P "$mpirun_pid" -f xal_soak_mpi 2>/dev/null | sort -n); do
    pid_of[rank$k]=$c
    k=$((k + 1))
  done
}

rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null; }
threads_of() { sed -n 's/^Threads:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
fds_of() { local n; n=$(ls "/proc/$1/fd" 2>/dev/null | wc -l); echo "$n"; }
# /dev/shm objects the soak's processes have open or mapped, and its ledgers.
shm_count() {
  {
    local p
    for p in "$@"; do
      [[ -d /proc/$p ]] || continue
      sed -n 's/.* \(\/dev\/shm\/[^ ]*\)\( (deleted)\)\{0,1\}$/\1/p' "/proc/$p/maps" 2>/dev/null
      find "/proc/$p/fd" -maxdepth 1 -lname '/dev/shm/*' -printf '%l\n' 2>/dev/null
    done
    ls -d "/dev/shm/xal-ledger-$uid-$job" "/dev/shm/xal-ledger-$uid-$mpi_job" 2>/dev/null
  } | sort -u | wc -l
}
# The exporter's scrape: "ok JOB_BYTES" or "fail".
scrape() {
  local body
  body=$(curl -sf --max-time 5 "http://127.0.0.1:$port/metrics") || { echo fail; return; }
  grep -q "^xal_job_ledger_up{job=\"$job\"} 1" <<<"$body" || { echo fail; return; }
  awk -v j="job=\"$job\"" '/^xal_job_memory_used_bytes\{/ && index($0, j) { s += $NF }
                            END { printf "ok %d\n", s }' <<<"$body"
}
# The largest value of a field over the status lines written since line $2.
status_max() {  # file from field
  [[ -f "$1" ]] || { echo 0; return; }
  local v
  v=$(tail -n "+$(( $2 + 1 ))" "$1" | sed -n "s/.*\"$3\":\([0-9.]*\).*/\1/p" | sort -g | tail -1)
  echo "${v:-0}"
}
last_field() {  # file field
  [[ -f "$1" ]] || { echo 0; return; }
  local v
  v=$(tail -1 "$1" | sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p")
  echo "${v:-0}"
}
mib() { echo $(( (${1:-0} + 512) / 1024 )); }
lines_of() { [[ -f "$1" ]] && wc -l <"$1" || echo 0; }

header=$(printf '%4s %8s %4s %4s %6s %5s | %8s %4s %4s %5s | %8s %4s %4s | %3s | %8s %8s %4s | %6s %9s %5s %7s | %7s' \
  t_s loc_MiB fds thr heapK trimM rank_MiB fds thr trimM exp_MiB fds thr shm devpeakM jobMiB end0 \
  cycles ops fail faults scrapes)
printf '%s\n' "$header" | tee "$work/table.txt"

declare -A base cur
rows=0
failures=()
start=$(date +%s)
next=$((start + interval))
local_lines=0
mpi_lines=0
scrapes_ok=0
scrapes_all=0
running=1
reset_cur() { cur=(); }
reset_cur
bump() { local k=$1 v=${2:-0}; [[ -z "${cur[$k]:-}" || "$v" -gt "${cur[$k]}" ]] && cur[$k]=$v; return 0; }

while (( running )); do
  sleep "$sample"
  find_ranks
  kill -0 "$local_pid" 2>/dev/null || running=0
  for n in "${names[@]}"; do
    p=${pid_of[$n]:-}
    [[ -n "$p" && -d /proc/$p ]] || continue
    r=$(rss_kb "$p"); t=$(threads_of "$p"); f=$(fds_of "$p")
    [[ -n "$r" ]] || continue
    case $n in rank*) k=rank ;; *) k=$n ;; esac
    bump "${k}_rss" "$r"; bump "${k}_thr" "$t"; bump "${k}_fds" "$f"
  done
  bump shm "$(shm_count "${pid_of[@]}")"
  read -r ok bytes <<<"$(scrape)"
  scrapes_all=$((scrapes_all + 1))
  if [[ "$ok" == ok ]]; then scrapes_ok=$((scrapes_ok + 1)); bump job_bytes "$bytes"; fi
  now=$(date +%s)
  if (( now < next )); then
    (( running )) || break
  else
    # One row: the largest of each figure in the interval.
    peak=$(status_max "$work/local.status" "$local_lines" device_bytes_peak)
    end_local=$(status_max "$work/local.status" "$local_lines" device_bytes_end)
    end_mpi=0
    for f in "$work"/mpi.status.*; do
      [[ -f "$f" ]] || continue
      e=$(status_max "$f" 0 device_bytes_end); (( ${e%.*} > end_mpi )) && end_mpi=${e%.*}
    done
    end0=yes
    (( ${end_local%.*} == 0 && end_mpi == 0 )) || end0=no
    fails=$(( $(last_field "$work/local.status" failures | cut -d. -f1) ))
    for f in "$work"/mpi.status.*; do
      [[ -f "$f" ]] && fails=$(( fails + $(last_field "$f" failures | cut -d. -f1) ))
    done
    cycles=$(( $(last_field "$work/local.status" cycle | cut -d. -f1) + 1 ))
    mcycles=$(( $(last_field "$work/mpi.status.0" cycle | cut -d. -f1) + 1 ))
    ops=$(( $(last_field "$work/local.status" ops | cut -d. -f1) + $(last_field "$work/mpi.status.0" ops | cut -d. -f1) ))
    faults=$(last_field "$work/local.status" faults_injected | cut -d. -f1)
    cur[peak]=${peak%.*}
    heap=$(status_max "$work/local.status" "$local_lines" heap_after_shutdown)
    cur[heap]=${heap%.*}
    trim=$(status_max "$work/local.status" "$local_lines" rss_after_trim_kb)
    cur[local_trim]=${trim%.*}
    trim=$(status_max "$work/mpi.status.0" "$mpi_lines" rss_after_trim_kb)
    cur[rank_trim]=${trim%.*}
    quiet=$(status_max "$work/local.status" "$local_lines" threads_after_shutdown)
    cur[quiet_thr]=${quiet%.*}
    t_s=$(( now - start ))
    row=$(printf '%4d %8s %4s %4s %6s %5s | %8s %4s %4s %5s | %8s %4s %4s | %3s | %8s %8s %4s | %3d/%-3d %9d %5d %7s | %3d/%-3d' \
      "$t_s" "$(mib "${cur[local_rss]:-0}")" "${cur[local_fds]:-0}" "${cur[local_thr]:-0}" \
      "$(( ${cur[heap]} / 1024 ))" "$(mib "${cur[local_trim]}")" \
      "$(mib "${cur[rank_rss]:-0}")" "${cur[rank_fds]:-0}" "${cur[rank_thr]:-0}" "$(mib "${cur[rank_trim]}")" \
      "$(mib "${cur[exporter_rss]:-0}")" "${cur[exporter_fds]:-0}" "${cur[exporter_thr]:-0}" \
      "${cur[shm]:-0}" "$(( ${cur[peak]} / 1048576 ))" "$(( ${cur[job_bytes]:-0} / 1048576 ))" "$end0" \
      "$cycles" "$mcycles" "$ops" "$fails" "$faults" "$scrapes_ok" "$scrapes_all")
    printf '%s\n' "$row" | tee -a "$work/table.txt"
    # Judge against the first row.
    if (( rows == 0 )); then
      for k in local_rss rank_rss exporter_rss local_fds rank_fds exporter_fds local_thr rank_thr exporter_thr shm peak heap local_trim rank_trim quiet_thr; do
        base[$k]=${cur[$k]:-0}
      done
    else
      for k in local rank exporter; do
        b=${base[${k}_rss]}; c=${cur[${k}_rss]:-0}
        (( c <= b + b / 2 + 32768 )) ||
          failures+=("$k RSS $(mib "$c") MiB at ${t_s} s > $(mib "$b") MiB + 50% + 32 MiB")
        for q in fds thr; do
          # The local driver's sampled threads swing with its workload
          # (streams made and destroyed, a thread per rank): a coarse
          # bound; its leaks show in the quiet count below.
          slack=4
          [[ $k$q == localthr ]] && slack=8
          b=${base[${k}_$q]}; c=${cur[${k}_$q]:-0}
          (( c <= b + slack )) || failures+=("$k $q $c at ${t_s} s > $b + $slack")
        done
      done
      (( base[quiet_thr] > 0 )) || base[quiet_thr]=${cur[quiet_thr]:-0}
      (( ${cur[quiet_thr]:-0} <= base[quiet_thr] + 2 )) ||
        failures+=("local threads after xal_shutdown ${cur[quiet_thr]} at ${t_s} s > ${base[quiet_thr]} + 2")
      (( ${cur[shm]:-0} <= ${base[shm]} )) ||
        failures+=("/dev/shm objects ${cur[shm]} at ${t_s} s > ${base[shm]}")
      for k in local_trim rank_trim; do
        (( base[$k] > 0 )) || base[$k]=${cur[$k]}
        b=${base[$k]}; c=${cur[$k]}
        (( c <= b + b / 10 + 8192 )) ||
          failures+=("${k%_trim} RSS after xal_shutdown and malloc_trim $(mib "$c") MiB at ${t_s} s > $(mib "$b") MiB + 10% + 8 MiB")
      done
      (( base[heap] > 0 )) || base[heap]=${cur[heap]}
      (( cur[heap] <= base[heap] + 2097152 )) ||
        failures+=("heap after xal_shutdown ${cur[heap]} bytes at ${t_s} s > ${base[heap]} + 2 MiB")
      (( base[peak] > 0 )) || base[peak]=${cur[peak]}  # no cycle ended in the warm-up
      (( ${cur[peak]} <= ${base[peak]} * 3 / 2 + 50331648 )) ||
        failures+=("device memory peak ${cur[peak]} at ${t_s} s > ${base[peak]} x 1.5 + 48 MiB")
    fi
    [[ "$end0" == yes ]] || failures+=("device memory left at the end of a cycle (interval ending ${t_s} s)")
    rows=$((rows + 1))
    local_lines=$(lines_of "$work/local.status")
    mpi_lines=$(lines_of "$work/mpi.status.0")
    reset_cur
    next=$((next + interval))
  fi
done

wait "$local_pid"; local_rc=$?
wait "$mpirun_pid"; mpi_rc=$?
kill "$exporter" 2>/dev/null
(( local_rc == 0 )) || { failures+=("xal_soak exited $local_rc (log $work/local.log)"); tail -20 "$work/local.log"; }
(( mpi_rc == 0 )) || { failures+=("mpirun xal_soak_mpi exited $mpi_rc (log $work/mpi.log)"); tail -20 "$work/mpi.log"; }
(( scrapes_ok == scrapes_all )) || failures+=("$((scrapes_all - scrapes_ok)) of $scrapes_all scrapes failed")
(( rows >= 2 )) || failures+=("only $rows interval(s) sampled")
faults=$(last_field "$work/local.status" faults_injected | cut -d. -f1)
(( ${faults:-0} > 0 )) || failures+=("no fault was injected")
fails=$(( $(last_field "$work/local.status" failures | cut -d. -f1) ))
for f in "$work"/mpi.status.*; do
  [[ -f "$f" ]] && fails=$(( fails + $(last_field "$f" failures | cut -d. -f1) ))
done
(( fails == 0 )) || failures+=("$fails failed check(s) (logs in $work)")
for f in "$work/trace-local.json" "$work"/trace-mpi.*.json; do
  [[ -s "$f" ]] || failures+=("trace $f missing or empty")
done
grep -h 'xal_soak' "$work/local.log" "$work/mpi.log" | sed 's/^/  /'

elapsed=$(( $(date +%s) - start ))
if (( ${#failures[@]} == 0 )); then
  verdict=PASS
  printf 'soak.sh: PASS (%d s, %d intervals of %d s; rule: after the first interval RSS <= +50%% +32 MiB, RSS after xal_shutdown and malloc_trim <= +10%% +8 MiB, fds and threads <= +4 (local threads +8), /dev/shm <= +0, device memory peak <= x1.5 +48 MiB and 0 at every cycle end, heap after xal_shutdown <= +2 MiB, local threads after xal_shutdown <= +2, 0 failed checks)\n' \
    "$elapsed" "$rows" "$interval"
  exit 0
fi
verdict=FAIL
printf '  %s\n' "${failures[@]}"
printf 'soak.sh: FAIL (%d problem(s)); files in %s\n' "${#failures[@]}" "$work"
keep=1
exit 1
