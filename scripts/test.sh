#!/usr/bin/env bash
# Installs the dependencies, builds xal with its tests into build/ and runs
# every test (ctest, all labels), then the Python package's tests in its
# virtual environment (scripts/python.sh), then builds what the unit tests
# need again with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-asan/ and runs the unit tests there, then the reduced
# ThreadSanitizer stage (scripts/tsan.sh --ci) and the short fuzzing runs.
# Exits non-zero when anything fails; the last line is a summary.
#
#   ./scripts/test.sh
#
# XAL_JOBS sets the build and test parallelism (default: every core),
# XAL_BUILD_TYPE the CMake build type of build/ (default: Release).
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
cd "$XAL_ROOT" || exit 1
xal_clean_env

start=$(date +%s)
failures=()
summary=()

step() {  # step NAME command...
  local name=$1 t0 rc
  shift
  xal_log "== $name"
  t0=$(date +%s)
  "$@"
  rc=$?
  local took=$(( $(date +%s) - t0 ))
  if (( rc == 0 )); then
    summary+=("$(printf '%-50s ok     %5ds' "$name" "$took")")
    return 0
  fi
  summary+=("$(printf '%-50s FAILED %5ds' "$name" "$took")")
  failures+=("$name")
  return 1
}

finish() {
  local elapsed=$(( $(date +%s) - start ))
  printf '\n'
  printf '  %s\n' "${summary[@]}"
  if (( ${#failures[@]} == 0 )); then
    printf 'test.sh: PASS (%d steps) in %dm%02ds\n' "${#summary[@]}" \
      $((elapsed / 60)) $((elapsed % 60))
    exit 0
  fi
  printf 'test.sh: FAIL (%s) in %dm%02ds\n' "${failures[*]}" \
    $((elapsed / 60)) $((elapsed % 60))
  exit 1
}

step "dependencies" "$XAL_ROOT/scripts/deps.sh" || finish

# The Python virtual environment (mostly downloads from PyPI) is made in the
# background while the C++ build below keeps the cores busy; step 2 waits
# for it and shows its log.
mkdir -p build-logs
"$XAL_ROOT/scripts/python.sh" --venv >build-logs/venv.log 2>&1 &
venv_pid=$!
venv_ready() {
  local rc=0
  wait "$venv_pid" || rc=$?
  cat build-logs/venv.log
  return "$rc"
}

# 1. The normal build, every test.
if step "configure build/" cmake -S . -B build -G Ninja \
     -DCMAKE_BUILD_TYPE="$XAL_BUILD_TYPE" -DXAL_BUILD_TESTS=ON \
     -DXAL_BUILD_BENCH=ON -DXAL_BUILD_EXAMPLES=ON \
     "${XAL_CMAKE_BACKEND_OPTS[@]}" &&
   step "build build/" cmake --build build -j "$XAL_JOBS"; then
  step "ctest build/ (all labels)" \
    ctest --test-dir build --output-on-failure -j "$XAL_JOBS"
fi

# 2. The Python package: its virtual environment .venv/ (PyPI), the module
# built in build-py/, and its pytest suite (scripts/python.sh).
step "python virtual environment (background)" venv_ready
if step "python (scripts/python.sh)" "$XAL_ROOT/scripts/python.sh"; then
  # The torch.distributed backend, built on the Python package's build.
  step "torch (scripts/torch.sh)" "$XAL_ROOT/scripts/torch.sh"
fi

# 3. CMake's default generator (Unix Makefiles), as a user building the
# ordinary way gets it: the core, its public-header checks and its unit
# tests build and pass there too.
if step "configure build-make/ (default generator)" cmake -S . -B build-make \
     -DCMAKE_BUILD_TYPE="$XAL_BUILD_TYPE" -DXAL_BUILD_TESTS=ON -DXAL_BUILD_BENCH=OFF \
     -DXAL_BUILD_TOOLS=OFF -DXAL_BUILD_CONFORMANCE=OFF -DXAL_BUILD_MPI=OFF \
     -DXAL_BACKEND_CUDA=OFF -DXAL_BACKEND_HIP=OFF -DXAL_BACKEND_LEVELZERO=OFF \
     -DXAL_BACKEND_OPENCL=OFF &&
   step "build build-make/ (core tests)" cmake --build build-make -j "$XAL_JOBS" \
     --target xal_core_test xal_core_c_api_test xal_core_c99_headers; then
  step "ctest build-make/ (core)" ctest --test-dir build-make --output-on-failure \
    -R '^xal_core_(test|c_api_test)$'
fi

# 4. AddressSanitizer + UndefinedBehaviorSanitizer, unit tests: only what
# they run and load is built (the target xal-unit-tests), at -O0 with line
# tables (-g1): the sanitizers find the same errors, and gcc compiles the
# test sources several times faster than at -O1 with full debug info.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if step "configure build-asan/" cmake -S . -B build-asan -G Ninja \
     -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g1 -O0" \
     "-DCMAKE_CXX_FLAGS_DEBUG=-g1 -O0" \
     -DXAL_SANITIZE=address,undefined -DXAL_BUILD_TESTS=ON \
     -DXAL_BUILD_BENCH=OFF "${XAL_CMAKE_BACKEND_OPTS[@]}" &&
   step "build build-asan/ (xal-unit-tests)" \
     cmake --build build-asan -j "$XAL_JOBS" --target xal-unit-tests; then
  step "ctest build-asan/ -L unit" \
    ctest --test-dir build-asan -L unit --output-on-failure -j "$XAL_JOBS"
fi

# 5. ThreadSanitizer, a reduced stage (scripts/tsan.sh --ci): only the
# concurrency stress program xal_soak with libxal, the mock and the fault
# backend, bounded by work, into build-tsan-ci/. The full run over every
# unit test is scripts/tsan.sh alone (16 min on 2 cores: past this
# command's budget); both in docs/RELIABILITY.md.
step "tsan (scripts/tsan.sh --ci)" "$XAL_ROOT/scripts/tsan.sh" --ci

# 6. Fuzzing, a short fixed budget: every libFuzzer target of tests/fuzz/
# (clang-14, ASan+UBSan) for a few seconds on its seed corpus; the long
# runs are scripts/fuzz.sh's (docs/RELIABILITY.md).
step "fuzz (scripts/fuzz.sh all ${XAL_FUZZ_SECONDS:-5})" \
  "$XAL_ROOT/scripts/fuzz.sh" all "${XAL_FUZZ_SECONDS:-5}"

finish
