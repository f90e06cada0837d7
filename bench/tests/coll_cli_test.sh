#!/usr/bin/env bash
# xal-bench coll's options and defaults: size ranges that cannot advance,
# bad numbers and an unwritable --json are refused with exit 2 before any
# measurement; `--json -` leaves stdout to the JSON; without XAL_BACKENDS
# only the mock backend is used.
#   coll_cli_test.sh XAL_BENCH MOCK_PLUGIN WORK_DIR
set -u
bench=$1 mock=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
EXPECT_COMMAND=coll EXPECT_TIMEOUT=60
# shellcheck source=bench/tests/expect.sh
source "$(dirname "$0")/expect.sh"

export XAL_BACKENDS=$mock XAL_MOCK_DEVICES=2*a100-40g
common=(-n 1 -w 0 --no-mpi)
expect 2 "bad size range" -b 0 -e 0 "${common[@]}"
expect 2 "bad size range" -b 0 -e 1K "${common[@]}"
expect 2 "bad size range" -b 1M -e 1K "${common[@]}"
expect 2 "--mpi-np: must be at least 1" -b 4K -e 4K --mpi-np -1 "${common[@]}"
expect 2 "--mpi-np: must be at least 1" -b 4K -e 4K --mpi-np 0 "${common[@]}"
expect 2 "Run with --help" --no-such-option
expect 2 "cannot write $work/missing/out.json" -b 4K -e 4K --json "$work/missing/out.json" "${common[@]}"
if [[ -e "$work/out.json" ]]; then echo "FAIL: stray out.json"; failures=$((failures + 1)); fi

# --json -: stdout holds the JSON alone, the table goes to stderr.
json_out=$(timeout 60 "$bench" coll -b 4K -e 4K --json - "${common[@]}" 2>"$work/table.txt")
rc=$?
json_ok=1
[[ $rc -eq 0 && "$json_out" == "{"*"}" && "$json_out" != *"size(B)"* ]] || json_ok=0
grep -q "size(B)" "$work/table.txt" || json_ok=0
if command -v python3 >/dev/null; then
  python3 -m json.tool <<<"$json_out" >/dev/null || json_ok=0
fi
if [[ $json_ok -ne 1 ]]; then
  echo "FAIL: coll --json -: exit $rc, stdout:"
  echo "$json_out"
  failures=$((failures + 1))
else
  echo "ok: coll --json - -> stdout is JSON alone"
fi

# Without XAL_BACKENDS: the mock alone, even with another plugin on the
# search path (a copy of the mock under another name).
mkdir -p "$work/plugins"
cp "$mock" "$work/plugins/libxal_backend_mockcopy.so"
unset XAL_BACKENDS
export XAL_BACKEND_PATH=$work/plugins
expect 0 "over 2 devices" -b 4K -e 4K "${common[@]}"

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
