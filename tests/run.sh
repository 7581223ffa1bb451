#!/usr/bin/env bash
# The test command (README, .ci/run): install what is missing, build with
# the STYLE.md warnings as errors and run every test (cmocka units and the
# integration tests that drive real lvm2 over loop devices), then build
# again with AddressSanitizer + UndefinedBehaviorSanitizer and run every
# test once more; last a short libFuzzer run of the parsers and the read
# path.  Run as root: the integration tests attach loop devices.
#
# Around each ctest pass tests/check-leftovers.sh takes a snapshot of the
# machine's loop devices, mounts, qemu/nbdkit/fusefarm processes and
# /run/fusefarm state dirs, and fails the run if the tests left anything
# new behind.  ctest runs with TMPDIR set to a directory of its own
# (every test's scratch dir is under it) and FF_LEFTOVER_TAG in its
# environment, so leftovers are attributed to the tests; on a machine
# shared with other people's tests, FF_LEFTOVER_SHARED=1 fails only on
# those (docs/testing.md).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

scripts/deps.sh

# The tests' TMPDIR, and the tag their processes carry.
scope=$(mktemp -d "${TMPDIR:-/tmp}/ff-ci.XXXXXX")
export FF_LEFTOVER_SCOPE=$scope
export FF_LEFTOVER_TAG=${scope##*/}

# ctest_checked BUILD_DIR [CTEST_ARGS...]: ctest in BUILD_DIR between a
# leftover snapshot and its comparison; fails if either fails.
ctest_checked() {
  local dir=$1 rc=0
  shift
  tests/check-leftovers.sh snapshot "$dir/leftovers.snapshot"
  (cd "$dir" && TMPDIR=$scope ctest --output-on-failure "$@") || rc=$?
  tests/check-leftovers.sh compare "$dir/leftovers.snapshot" || rc=1
  return $rc
}

echo "== build (warnings are errors) and test"
scripts/build.sh "$top/build-test" -DFF_WERROR=ON -DFF_SANITIZE=OFF
ctest_checked "$top/build-test"

echo "== build with ASan+UBSan and test again"
scripts/build.sh "$top/build-asan" -DFF_WERROR=ON -DFF_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=Debug
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The guest boots (test-vm) run qemu under TCG for minutes and exercise no
# more of our code than the plugin tests already do under the sanitizers:
# they run once, in the pass above.  test-valgrind skips itself here
# (valgrind cannot run ASan binaries).
ctest_checked "$top/build-asan" -E 'integration/test-vm$'

echo "== short fuzz run (libFuzzer, ASan, UBSan; clang): tests/fuzz, docs/fuzzing.md"
tests/fuzz/run.sh --seconds 30 "$top/build-fuzz"

# Nothing was left (the checks passed): the scratch root goes too.
rm -rf --one-file-system -- "$scope"
