#!/usr/bin/env bash
# The test command (README, .ci/run): install what is missing, build with
# the STYLE.md warnings as errors and run every test (cmocka units and the
# integration tests that drive real lvm2 over loop devices), then build
# again with AddressSanitizer + UndefinedBehaviorSanitizer and run every
# test once more.  Run as root: the integration tests attach loop devices.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

scripts/deps.sh

echo "== build (warnings are errors) and test"
scripts/build.sh "$top/build-test" -DFF_WERROR=ON -DFF_SANITIZE=OFF
(cd build-test && ctest --output-on-failure)

echo "== build with ASan+UBSan and test again"
scripts/build.sh "$top/build-asan" -DFF_WERROR=ON -DFF_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=Debug
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The guest boots (test-vm) run qemu under TCG for minutes and exercise no
# more of our code than the plugin tests already do under the sanitizers:
# they run once, in the pass above.
(cd build-asan && ctest --output-on-failure -E 'integration/test-vm$')
