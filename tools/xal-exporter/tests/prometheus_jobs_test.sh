#!/bin/bash
# xal-exporter scraped by a real Prometheus server (Debian's `prometheus`,
# on loopback): three processes of job A on a 30% partition and one of job B
# on the 70% partition of a throttled mock A100 copy for about 12 s; the
# per-job utilization Prometheus stored must be within 5 points of the
# fractions of the work each job did. Exits 77 (skipped) without prometheus,
# curl or python3.
# Usage: prometheus_jobs_test.sh EXPORTER JOB_WORKER MOCK_PLUGIN WORKDIR
set -u
exporter=$1 worker=$2 mock=$3 work=$4
for tool in prometheus curl python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
rm -rf "$work" && mkdir -p "$work" || exit 1
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -f "/dev/shm/xal-ledger-$(id -u)-$job_a" "/dev/shm/xal-ledger-$(id -u)-$job_b"
}
trap cleanup EXIT
job_a="xal-prom-a-$$" job_b="xal-prom-b-$$"
seconds=12

# The exporter, on a free port (it prints it), with no job of its own.
env -u XAL_QUOTA_LEDGER -u XAL_PARTITIONS XAL_BACKENDS="$mock" \
  "$exporter" --port 0 > "$work/exporter.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  port=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$work/exporter.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: the exporter did not start"; cat "$work/exporter.log"; exit 1; }

# Prometheus, scraping it every second, on a free port of its own.
prom_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: xal
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" > "$work/prometheus.log" 2>&1 &
pids+=($!)

# The jobs: device 1 is the 30% partition, device 2 the 70% one.
export XAL_BACKENDS="$mock"
export XAL_MOCK_DEVICES='[{"profile":"a100-40g","bandwidth_gbps":0.25}]'
export XAL_PARTITIONS='mock:0=1GiB@30%,1GiB@70%'
for i in 1 2 3; do
  XAL_QUOTA_LEDGER=$job_a "$worker" 1 $seconds > "$work/a$i.out" 2>&1 &
  pids+=($!)
done
XAL_QUOTA_LEDGER=$job_b "$worker" 2 $seconds > "$work/b.out" 2>&1 &
pids+=($!)
sleep $((seconds - 2))

# Prometheus's view: the utilization the exporter served over the last 6 s.
query() {
  curl -sf "http://127.0.0.1:$prom_port/api/v1/query" \
    --data-urlencode "query=avg_over_time(xal_job_utilization_ratio{exported_job=\"$1\"}[6s])" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
util_a=$(query "$job_a") util_b=$(query "$job_b")
sleep 3
bytes() { sed -n 's/^copied //p' "$@" | awk '{s += $1} END {print s + 0}'; }
work_a=$(bytes "$work"/a?.out) work_b=$(bytes "$work/b.out")
python3 - "$util_a" "$util_b" "$work_a" "$work_b" <<'PY'
import sys
ua, ub, wa, wb = sys.argv[1:]
if not ua or not ub:
    sys.exit("FAIL: Prometheus has no xal_job_utilization_ratio for a job")
ua, ub, wa, wb = float(ua), float(ub), float(wa), float(wb)
fa = wa / (wa + wb)
print(f"work: job A {fa:.3f}, job B {1 - fa:.3f}; Prometheus utilization: A {ua:.3f}, B {ub:.3f}")
ok = abs(ua - fa) <= 0.05 and abs(ub - (1 - fa)) <= 0.05 and abs(fa - 0.30) <= 0.03
sys.exit(0 if ok else "FAIL: more than 5 points apart, or job A not at 0.30 +- 0.03")
PY
