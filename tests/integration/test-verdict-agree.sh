#!/usr/bin/env bash
# test-verdict-agree.sh: bench/verdict-agree.py, the check that two runs'
# verdicts never contradict (issue 29; docs/report.md "Two runs side by
# side"), on run documents written here with known intervals:
#   - a document against itself: every result agrees, exit 0;
#   - a result above 1 in one and below 1 in the other (an event/direct
#     ratio and an axis pair): exit 1, each contradiction named by what it
#     compares; an interval holding 1 on one side is "a result in one
#     only", not a contradiction;
#   - bad input (no such file, not JSON, no "verdict") exits 2 naming the file.
# Needs python3 only.
#
# usage: test-verdict-agree.sh FUSEFARM   (the binary is not used)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh" # ff_die, ff_require only
top=$(cd "${FF_SOURCE_DIR:-$here/../..}" && pwd)
agree=$top/bench/verdict-agree.py
ff_require python3
s=$(mktemp -d "${TMPDIR:-/tmp}/ff-agree.XXXXXX")
trap 'rm -rf "$s"' EXIT

# doc FILE ED_LOW ED_HIGH AX_LOW AX_HIGH: a run document's verdict with
# one event/direct ratio and one axis pair of these intervals
doc() {
  python3 - "$@" <<'PY'
import json, sys
f, el, eh, al, ah = sys.argv[1], *map(float, sys.argv[2:])
v = {"event_direct": [{"config": 1, "compares": "event-activation vs direct-activation in config 1 (use_aio=1)",
                       "ratio": (el + eh) / 2, "low": el, "high": eh}],
     "axes": [{"compares": "global/use_aio=0 vs global/use_aio=1",
               "effects": [{"workload": "pvs", "pairs": [
                   {"with": "profile=ideal", "ratio": (al + ah) / 2, "low": al, "high": ah}]}]}]}
json.dump({"version": 1, "verdict": v}, open(f, "w"))
PY
}

doc "$s/a.json" 19 50 1.1 1.6
"$agree" "$s/a.json" "$s/a.json" >"$s/out" || ff_die "a run against itself: exit $?"
grep -q '^2 ratios in both: 2 results in both and agreeing, 0 a result in one only.*0 contradicting$' "$s/out" ||
  ff_die "a run against itself: $(cat "$s/out")"

doc "$s/b.json" 19 50 0.6 0.95 # the axis pair flipped
rc=0
"$agree" "$s/a.json" "$s/b.json" >"$s/out" || rc=$?
[ "$rc" = 1 ] || ff_die "a flipped result: exit $rc, want 1"
grep -q '^contradiction: global/use_aio=0 vs global/use_aio=1: pvs with profile=ideal: 95% CI 1.1-1.6x vs 0.6-0.95x$' "$s/out" ||
  ff_die "the contradiction is not named: $(cat "$s/out")"
[ "$(grep -c '^contradiction' "$s/out")" = 1 ] || ff_die "only the axis pair contradicts: $(cat "$s/out")"

doc "$s/c.json" 0.5 0.9 0.8 1.3 # event/direct flipped, the axis pair holds 1
rc=0
"$agree" "$s/a.json" "$s/c.json" >"$s/out" || rc=$?
[ "$rc" = 1 ] || ff_die "a flipped event/direct ratio: exit $rc, want 1"
grep -q '^contradiction: event-activation vs direct-activation in config 1 (use_aio=1): ' "$s/out" ||
  ff_die "the event/direct contradiction is not named: $(cat "$s/out")"
grep -q ', 1 a result in one only .*, 1 contradicting$' "$s/out" ||
  ff_die "an interval holding 1 is not a contradiction: $(cat "$s/out")"

for bad in "$s/none.json" "$top/README.md" "$top/tests/data/run-sample.json"; do
  rc=0
  "$agree" "$s/a.json" "$bad" >/dev/null 2>"$s/err" || rc=$?
  [ "$rc" = 2 ] || ff_die "$bad: exit $rc, want 2"
  grep -qF "verdict-agree: $bad: " "$s/err" || ff_die "$bad: not named: $(cat "$s/err")"
done
echo "PASS: test-verdict-agree"
