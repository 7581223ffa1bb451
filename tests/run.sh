#!/usr/bin/env bash
# The test command (README, .ci/run): install what is missing, build with
# docs/style.md's warnings as errors and run every test (cmocka units and the
# integration tests that drive real lvm2 over loop devices), then build
# again with AddressSanitizer + UndefinedBehaviorSanitizer and run every
# test once more; last a short libFuzzer run of the parsers and the read
# path.  Run as root: the integration tests attach loop devices.
#
# Every pass runs, whatever the one before it did; at the end one summary:
# per pass its result and wall time, the guest image step (the ctest
# fixture guest/images) and every test that failed, with their times;
# the exit status is 0 only if every pass passed.
#
# The tests see only their own world (docs/testing.md): ctest runs with
# TMPDIR set to a directory of its own (every test's scratch dir, mount
# point and loop backing file is under it) and FF_LEFTOVER_TAG in its
# environment (every process a test starts carries it).  Around each
# ctest pass tests/check-leftovers.sh takes a snapshot and fails the pass
# if the tests left anything of theirs behind; loops, mounts and
# processes of other users of the machine are listed, never failed on.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

scripts/deps.sh || exit 1

# The tests' TMPDIR, and the tag their processes carry.
scope=$(mktemp -d "${TMPDIR:-/tmp}/ff-ci.XXXXXX") || exit 1
export FF_LEFTOVER_SCOPE=$scope
export FF_LEFTOVER_TAG=${scope##*/}
# attach journals the loop devices it creates: check-leftovers fails a pass
# that leaves one of them behind (detach deletes them).
export FUSEFARM_LOOP_JOURNAL=$scope/loop-journal

summary=()
failed=0
# What a ctest pass adds to its summary lines (ctest_checked writes it).
details=$scope/pass-details
npasses=0

# pass NAME WHAT CMD...: run one pass, record its result and time, and the
# details its ctest run left in $details.
pass() {
  local name=$1 what=$2 rc t0 t1 result=pass
  shift 2
  echo "== $name: $what"
  : >"$details"
  npasses=$((npasses + 1))
  t0=$(date +%s)
  "$@"
  rc=$?
  t1=$(date +%s)
  if ((rc != 0)); then
    result=FAIL
    failed=$((failed + 1))
  fi
  summary+=("$(printf '%-6s %-58s %-6s %5d s' "$name" "$what" "$result" $((t1 - t0)))")
  while IFS= read -r line; do summary+=("$line"); done <"$details"
}

# ctest_details JUNIT: the summary's lines for one ctest run, from its
# JUnit file: the guest image fixture (result, time), then each test that
# did not pass (failed, timed out, not run because a fixture failed,
# skipped), with its time; last the count of each result.
ctest_details() {
  python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
try:
    cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
except (OSError, ET.ParseError) as e:
    print(f"         (no per-test results: {e})")
    sys.exit(0)
fixture, bad, n, count = [], [], 0, {}
for c in cases:
    n += 1
    name, t, st = c.get("name"), float(c.get("time") or 0), c.get("status")
    why = ""
    for tag in ("failure", "skipped"):
        e = c.find(tag)
        if e is not None:
            why = e.get("message") or ""
    res = {"run": "pass", "fail": "FAIL", "disabled": "disabled"}.get(st, st)
    if st == "notrun":
        res = "skipped" if "SKIP_RETURN_CODE" in why or "Skipped" in why else "NOT RUN"
    count[res] = count.get(res, 0) + 1
    line = f"         {res:<8} {name:<50} {t:7.1f} s" + (f"  ({why})" if why and res != "FAIL" else "")
    if name == "guest/images":  # the fixture: always listed
        fixture.append(line + "  (the guest images, built or checked)")
    elif st != "run":
        bad.append(line)
words = {"pass": "passed", "FAIL": "failed"}
tally = ", ".join(f"{v} {words.get(k, k.lower())}" for k, v in sorted(count.items(), key=lambda kv: kv[0] != "pass"))
print("\n".join(fixture + bad + [f"         {n} tests: {tally}"]))
PY
}

# ctest_checked BUILD_DIR [CTEST_ARGS...]: ctest in BUILD_DIR between a
# leftover snapshot and its comparison; fails if either fails.  Its
# per-test results go to $details for the summary.
ctest_checked() {
  local dir=$1 rc=0
  shift
  tests/check-leftovers.sh snapshot "$dir/leftovers.snapshot" || return 1
  rm -f "$dir/ctest-junit.xml"
  (cd "$dir" && TMPDIR=$scope ctest --output-on-failure \
    --output-junit "$dir/ctest-junit.xml" "$@") || rc=$?
  ctest_details "$dir/ctest-junit.xml" >>"$details"
  if ! tests/check-leftovers.sh compare "$dir/leftovers.snapshot"; then
    rc=1
    echo "         FAIL     the leftover check (tests/check-leftovers.sh, above)" >>"$details"
  fi
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

# The guest boots (test-vm, test-install, test-host-tier) run qemu under
# TCG for minutes and exercise no more of our code than the plugin tests
# already do under the sanitizers: they run once, in the pass above.  test-valgrind skips itself here
# (valgrind cannot run ASan binaries).
# In a subshell: the sanitizers' options stay with this pass.
asan_pass() (
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  build_and_test "$top/build-asan" -DFF_WERROR=ON -DFF_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug -- -E '^(integration/test-(vm|install|host-tier)|guest/images)$'
)
pass asan "ASan+UBSan build; every test but the guest boots" asan_pass

pass fuzz "short libFuzzer run (tests/fuzz, docs/fuzzing.md)" \
  tests/fuzz/run.sh --seconds 30 "$top/build-fuzz"

echo
echo "== summary"
printf '%-6s %-58s %-6s %7s\n' pass what result time
printf '%s\n' "${summary[@]}"
if ((failed)); then
  echo "tests/run.sh: $failed of $npasses passes failed (scratch kept: $scope)"
  exit 1
fi
# Nothing was left (the checks passed): the scratch root goes too.
rm -rf --one-file-system -- "$scope"
echo "tests/run.sh: all $npasses passes passed"
