# expect.sh -- sourced by the xal-bench option tests. Before sourcing, set
# `bench` (the xal-bench program), EXPECT_COMMAND (its subcommand),
# EXPECT_TIMEOUT (seconds one run may take) and, optionally,
# EXPECT_SHOW_OUTPUT=1 to print the output of runs that pass too.
#
# expect STATUS TEXT ARGS...: `xal-bench EXPECT_COMMAND ARGS` exits STATUS
# and prints TEXT (stdout and stderr together); a mismatch prints the
# output and counts one in `failures`.
failures=0

expect() {
  local status=$1 text=$2
  shift 2
  local out rc
  out=$(timeout "$EXPECT_TIMEOUT" "$bench" "$EXPECT_COMMAND" "$@" 2>&1)
  rc=$?
  if [[ $rc -ne $status || "$out" != *"$text"* ]]; then
    echo "FAIL: $EXPECT_COMMAND $*: exit $rc (expected $status, output with '$text'), output:"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: $EXPECT_COMMAND $* -> $rc"
    if [[ "${EXPECT_SHOW_OUTPUT:-0}" == 1 ]]; then echo "$out" | sed 's/^/    /'; fi
  fi
}
