#!/usr/bin/env bash
# The test command (README, .ci/run): install what is missing, build with
# the STYLE.md warnings as errors and run every test (cmocka units and the
# integration tests that drive real lvm2 over loop devices), then build
# again with AddressSanitizer + UndefinedBehaviorSanitizer and run every
# test once more; last a short libFuzzer run of the parsers and the read
# path.  Run as root: the integration tests attach loop devices.
#
# Every pass runs, whatever the one before it did; at the end one summary
# (pass, what, result, time) and the exit status: 0 only if every pass
# passed.
#
# Around each ctest pass tests/check-leftovers.sh takes a snapshot of the
# machine's loop devices, mounts, qemu/nbdkit/fusefarm processes and
# /run/fusefarm state dirs, and fails the pass if the tests left anything
# new behind.  ctest runs with TMPDIR set to a directory of its own
# (every test's scratch dir is under it) and FF_LEFTOVER_TAG in its
# environment, so leftovers are attributed to the tests.  By default only
# what the tests created counts (FF_LEFTOVER_SHARED=1: other people's
# farms, loops and mounts on the same machine are listed and ignored);
# CI, where nothing else runs, sets FF_LEFTOVER_SHARED=0 and fails on
# anything new (docs/testing.md).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

scripts/deps.sh || exit 1

export FF_LEFTOVER_SHARED=${FF_LEFTOVER_SHARED:-1}
# The tests' TMPDIR, and the tag their processes carry.
scope=$(mktemp -d "${TMPDIR:-/tmp}/ff-ci.XXXXXX") || exit 1
export FF_LEFTOVER_SCOPE=$scope
export FF_LEFTOVER_TAG=${scope##*/}

summary=()
failed=0

# pass NAME WHAT CMD...: run one pass, record its result and time.
pass() {
  local name=$1 what=$2 rc t0 t1
  shift 2
  echo "== $name: $what"
  t0=$(date +%s)
  "$@"
  rc=$?
  t1=$(date +%s)
  if ((rc == 0)); then
    summary+=("$(printf '%-6s %-58s %-6s %5d s' "$name" "$what" pass $((t1 - t0)))")
  else
    summary+=("$(printf '%-6s %-58s %-6s %5d s' "$name" "$what" "FAIL" $((t1 - t0)))")
    failed=$((failed + 1))
  fi
}

# ctest_checked BUILD_DIR [CTEST_ARGS...]: ctest in BUILD_DIR between a
# leftover snapshot and its comparison; fails if either fails.
ctest_checked() {
  local dir=$1 rc=0
  shift
  tests/check-leftovers.sh snapshot "$dir/leftovers.snapshot" || return 1
  (cd "$dir" && TMPDIR=$scope ctest --output-on-failure "$@") || rc=$?
  tests/check-leftovers.sh compare "$dir/leftovers.snapshot" || rc=1
  return $rc
}

# build_and_test BUILD_DIR CMAKE_ARGS -- CTEST_ARGS
build_and_test() {
  local dir=$1 cmake_args=() ctest_args=()
  shift
  while (($#)) && [[ $1 != -- ]]; do
    cmake_args+=("$1")
    shift
  done
  shift
  ctest_args=("$@")
  scripts/build.sh "$dir" "${cmake_args[@]}" || {
    echo "tests/run.sh: the build in $dir failed" >&2
    return 1
  }
  ctest_checked "$dir" "${ctest_args[@]}"
}

pass build "warnings as errors; every test" \
  build_and_test "$top/build-test" -DFF_WERROR=ON -DFF_SANITIZE=OFF --

# The guest boots (test-vm) run qemu under TCG for minutes and exercise no
# more of our code than the plugin tests already do under the sanitizers:
# they run once, in the pass above.  test-valgrind skips itself here
# (valgrind cannot run ASan binaries).
# In a subshell: the sanitizers' options stay with this pass.
asan_pass() (
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # Wall-clock bounds of the latency tests are not judged here: this pass
  # is for memory errors, and sanitized code is several times slower.
  export FF_TIMING_CHECKS=0
  build_and_test "$top/build-asan" -DFF_WERROR=ON -DFF_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug -- -E 'integration/test-(vm|install)$'
)
pass asan "ASan+UBSan build; every test but the guest boots" asan_pass

pass fuzz "short libFuzzer run (tests/fuzz, docs/fuzzing.md)" \
  tests/fuzz/run.sh --seconds 30 "$top/build-fuzz"

echo
echo "== summary"
printf '%-6s %-58s %-6s %7s\n' pass what result time
printf '%s\n' "${summary[@]}"
if ((failed)); then
  echo "tests/run.sh: $failed of ${#summary[@]} passes failed (scratch kept: $scope)"
  exit 1
fi
# Nothing was left (the checks passed): the scratch root goes too.
rm -rf --one-file-system -- "$scope"
echo "tests/run.sh: all ${#summary[@]} passes passed"
