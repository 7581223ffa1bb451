#!/usr/bin/env bash
# test-ci-doc.sh: docs/ci.md's CI job, as far as this machine runs it (no
# Docker, no CI system: the shell the job runs, with this build):
#   - the shell blocks between docs/ci.md's `<!-- ci-job:begin NAME -->`
#     and `<!-- ci-job:end NAME -->` markers are extracted: `baseline`
#     (make ci/baseline.json) and `gate` (ci/gate.sh);
#   - in a scratch job directory laid out as the repository (configs/,
#     build/fusefarm/fusefarm = the fusefarm under test), the baseline
#     block runs (its `sudo` is a no-op: we are root), then the gate;
#   - the gate exits 0, or 1 only when a wall-time expression failed (a
#     loaded machine; the I/O ones must hold); ci-out/junit.xml parses
#     (xml.etree) with 3 suites (expect, 2 configurations), 17 testcases,
#     counts that agree with the exit status (tests/lib/check-junit.py);
#     ci-out/run.json has its "verdict" (the fusefarm/profile axis, event
#     against direct activation per configuration) and 3 "expect" entries;
#   - the same gate as an unprivileged user exits 77 and says the runner
#     cannot run fusefarm, writing no run document.
# Needs root, /dev/fuse, /dev/loop-control, lvm2, python3, setpriv.
#
# usage: test-ci-doc.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh" # ff_die, ff_log, ff_require only

bin=${1:?usage: test-ci-doc.sh FUSEFARM}
bin=$(realpath "$bin")
top=$(cd "${FF_SOURCE_DIR:-$here/../..}" && pwd)
ff_require python3 setpriv lvm
[ "$(id -u)" = 0 ] || ff_die "test-ci-doc needs root (fusefarm run does)"

s=$(mktemp -d "${TMPDIR:-/tmp}/test-ci-doc.XXXXXX")
trap 'rm -rf "$s"' EXIT
chmod 755 "$s" # the unprivileged gate below walks into it

# ---- the job's shell, from the doc ------------------------------------------
python3 - "$top/docs/ci.md" "$s" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"<!-- ci-job:begin (\w+) -->\s*```sh\n(.*?)```\s*"
                    r"<!-- ci-job:end (\w+) -->", text, re.S)
names = []
for begin, body, end in blocks:
    if begin != end:
        sys.exit(f"docs/ci.md: ci-job:begin {begin} ends with ci-job:end {end}")
    open(f"{sys.argv[2]}/{begin}.sh", "w").write(body)
    names.append(begin)
if sorted(names) != ["baseline", "gate"]:
    sys.exit(f"docs/ci.md: job blocks {names}, expected baseline and gate")
PY
job() { # job DIR: a job directory laid out as the repository
  mkdir -p "$1/build/fusefarm" "$1/ci"
  ln -s "$bin" "$1/build/fusefarm/fusefarm"
  ln -s "$top/configs" "$1/configs"
  cp "$s/gate.sh" "$1/ci/gate.sh"
}
job "$s/job"
mkdir "$s/tmp"
export TMPDIR=$s/tmp

# ---- the baseline, then the gate --------------------------------------------
cd "$s/job"
ff_log "docs/ci.md: the baseline block"
t0=$SECONDS
{ echo 'sudo() { "$@"; }'; cat "$s/baseline.sh"; } >"$s/baseline-root.sh"
sh -e "$s/baseline-root.sh" >"$s/baseline.out" 2>&1 ||
  ff_die "the baseline block failed: $(tail -c 600 "$s/baseline.out")"
[ -s ci/baseline.json ] || ff_die "the baseline block wrote no ci/baseline.json"
ff_log "baseline: $((SECONDS - t0)) s"

ff_log "docs/ci.md: ci/gate.sh"
t0=$SECONDS
rc=0
sh ci/gate.sh >"$s/gate.out" 2>&1 || rc=$?
ff_log "gate: exit $rc, $((SECONDS - t0)) s: $(tail -n 1 "$s/gate.out")"
for f in run.json junit.xml report.txt; do
  [ -s "ci-out/$f" ] || ff_die "the gate wrote no ci-out/$f: $(tail -c 600 "$s/gate.out")"
done
grep -q "^expect (exit $rc: " ci-out/report.txt ||
  ff_die "report.txt: no 'expect (exit $rc: ...)' line: $(tail -c 600 ci-out/report.txt)"
cj=("$top/tests/lib/check-junit.py" ci-out/junit.xml --suites 3 --tests 17 --errors 0)
cls=ci-small.expect
io=(--passed "$cls/bytes_per_device(pvs) <= 1.1 * baseline"
  --passed "$cls/reads_per_device(event-activation) <= 1.1 * baseline")
wall="$cls/direct-activation[profile=fixed-20ms.conf] <= 1.5 * baseline"
case $rc in
0) python3 "${cj[@]}" --failures 0 "${io[@]}" --passed "$wall" ||
  ff_die "gate exit 0: junit.xml is not what it should be" ;;
1) python3 "${cj[@]}" --failures 1 "${io[@]}" --failed "$wall" ||
  ff_die "gate exit 1: junit.xml is not what it should be"
  ff_log "the wall-time gate failed on this loaded machine (as junit.xml says): $(grep -F 'direct-activation[' ci-out/report.txt | head -n 1)" ;;
*) ff_die "gate: exit $rc, expected 0 (or 1 from a wall time): $(tail -c 800 "$s/gate.out")" ;;
esac
for w in pvs vgs lvs pvscan-cache event-activation direct-activation lvchange; do
  for c in 1 2; do
    python3 "$top/tests/lib/check-junit.py" ci-out/junit.xml --passed "ci-small.config-$c/$w" ||
      ff_die "junit.xml: workload $w of config $c did not pass"
  done
done
python3 - ci-out/run.json <<'PY' || ff_die "run.json: see above"
import json, sys
d = json.load(open(sys.argv[1]))
v = d.get("verdict")
bad = []
if not isinstance(v, dict):
    sys.exit("run.json: no verdict object")
ed = v.get("event_direct", [])
if [e["config"] for e in ed] != [1, 2]:
    bad.append(f"event_direct configs {[e['config'] for e in ed]}, expected [1, 2]")
for e in ed:
    if (e["low"] is not None and not e["low"] <= e["ratio"] <= e["high"]) or e["judgement"] not in (
            "clear", "noise", "too-few", "failed"):
        bad.append(f"event_direct {e}")
axes = v.get("axes", [])
if [(a["key"], a["value"], a["base"]) for a in axes] != [
        ("fusefarm/profile", "fixed-20ms.conf", "ideal")]:
    bad.append(f"axes {[(a['key'], a['value'], a['base']) for a in axes]}")
for a in axes:
    if len(a["effects"]) != 7:
        bad.append(f"{len(a['effects'])} effects, expected one per workload (7)")
    for e in a["effects"]:
        p = e["pairs"]
        if len(p) != 1 or (p[0]["config"], p[0]["base_config"]) != (2, 1):
            bad.append(f"{e['workload']}: pairs {p}")
if len(d.get("expect", [])) != 3:
    bad.append(f"{len(d.get('expect', []))} expect entries, expected 3")
for b in bad:
    print("run.json:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# ---- the gate on a runner that cannot run fusefarm: 77 ------------------------
ff_log "docs/ci.md: ci/gate.sh as an unprivileged user"
job "$s/job77"
cp ci/baseline.json "$s/job77/ci/"
chown -R nobody "$s/job77"
cd "$s/job77"
rc=0
setpriv --reuid nobody --regid "$(id -gn nobody)" --clear-groups -- \
  env TMPDIR=/tmp sh ci/gate.sh >"$s/gate77.out" 2>&1 || rc=$?
((rc == 77)) || ff_die "the gate as nobody: exit $rc, expected 77: $(tail -c 600 "$s/gate77.out")"
grep -qxF "fusefarm run: needs root (loop devices, FUSE, a private mount namespace)" "$s/gate77.out" &&
  grep -qxF "gate: this runner cannot run fusefarm (root, /dev/fuse, /dev/loop-control)" "$s/gate77.out" ||
  ff_die "the gate as nobody did not say why: $(cat "$s/gate77.out")"
[ ! -e ci-out/run.json ] || ff_die "the gate as nobody wrote a run document"

echo "test-ci-doc: PASS"
