#!/usr/bin/env bash
# --expect, the verdict for `git bisect run` (docs/bisect.md), end to end
# with real lvm2 on a tiny farm (20 devices, 2 profiles, pvs and direct
# activation):
#   - `fusefarm run SCENARIO --expect ...` that holds exits 0, stores the
#     verdict in run.json ("expect": holds, the values substituted) and
#     prints it at the end of the report;
#   - `fusefarm report RUN.json --expect ...` on that document: 0 when it
#     holds (qualifiers, the run as its own --baseline), 1 when it cannot
#     hold (pvs in under 100 ns), with the expression and its values;
#   - the I/O terms on that document: bytes_per_device(pvs), reads(pvs),
#     bytes_per_command(...) hold with the values the test recomputes from
#     the document's runs and farm device count; bytes that cannot hold
#     fail (1); a time compared with bytes is refused (2, its column);
#   - 125 (bisect's "skip") when the build could not run what is needed:
#     a run whose lvm fails every command (exit 125 from run, and from
#     report on its document), an lvm that does not start;
#   - a workload whose commands fail (lvm's real error) that no expression
#     reads leaves the verdict to the expressions (0 or 1; the report and
#     stderr still say it failed); an expression that reads it makes 125;
#   - 2, before anything runs (no scratch dir, no run directory, no
#     mount), for an expression that does not parse (naming its column),
#     that names a workload or setting the scenario lacks, or a --baseline
#     that is not a run document; report says 2 for a name its document
#     lacks too.
# usage: test-expect.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"

bin=${1:?usage: test-expect.sh FUSEFARM}
top=$here/../..
ff_require python3 losetup
ff_env_init
s=$FF_SCRATCH
export TMPDIR=$s

cat >"$s/tiny.conf" <<SC
name = "expect-tiny";
spec = "$top/configs/mixed-1000.conf";
devices = 20;
matrix = ( { key = "fusefarm/profile";
             values = ["ideal", "builtin:fixed-1ms"]; } );
workloads = ( { type = "pvs"; repeat = 2; },
              { type = "direct-activation"; } );
SC

# status CMD...: run CMD, its stdout in $s/out, stderr in $s/err; prints
# the exit status.
status() {
  local rc=0
  "$@" >"$s/out" 2>"$s/err" || rc=$?
  echo "$rc"
}
want() { # want RC WHAT
  local got=$1 rc=$2 what=$3
  if [[ $got != "$rc" ]]; then
    cat "$s/out" "$s/err" >&2
    ff_die "$what: exit $got, expected $rc"
  fi
}
nothing_ran() {
  if compgen -G "$s/fusefarm-run.*" >/dev/null ||
    compgen -G "$s/fusefarm-run-*" >/dev/null ||
    grep -qF " $s/" /proc/self/mountinfo; then
    ls -la "$s" >&2
    ff_die "$1: something ran"
  fi
}

# ---- bad input: 2 before anything runs ---------------------------------------
cd "$s"
rc=$(status "$bin" run "$s/tiny.conf" --quiet --expect 'pvs < < 3')
want "$rc" 2 "an expression that does not parse"
grep -qF -- "--expect: at column 7: expected a number or a workload name, got '<'" "$s/err" ||
  ff_die "the parse error does not name its column: $(cat "$s/err")"
nothing_ran "a bad expression"
rc=$(status "$bin" run "$s/tiny.conf" --quiet --expect 'lvchange < 3s')
want "$rc" 2 "a workload the scenario does not run"
grep -qF "the scenario has no workload 'lvchange' (its workloads: pvs, direct-activation)" "$s/err" ||
  ff_die "the unknown workload is not named: $(cat "$s/err")"
rc=$(status "$bin" run "$s/tiny.conf" --quiet --expect 'pvs[profile=ssd] < 3s')
want "$rc" 2 "a setting value the scenario does not have"
grep -qF "no configuration of the scenario has fusefarm/profile=ssd" "$s/err" ||
  ff_die "the unknown value is not named: $(cat "$s/err")"
echo '{"not": "a run"}' >"$s/notrun.json"
rc=$(status "$bin" run "$s/tiny.conf" --quiet --expect 'pvs < baseline' --baseline "$s/notrun.json")
want "$rc" 2 "a --baseline that is not a run document"
grep -qF -- "--baseline: $s/notrun.json" "$s/err" || ff_die "the bad baseline is not named: $(cat "$s/err")"
nothing_ran "bad input"

# ---- a run that holds: 0, the verdict in run.json and the report ------------
rc=$(status "$bin" run "$s/tiny.conf" --quiet --out "$s/good" \
  --expect 'pvs > 0s and pvs < 10min' --expect 'direct-activation[profile=ideal] < 10min')
want "$rc" 0 "fusefarm run --expect that holds"
python3 - "$s/good/run.json" <<'PY' || ff_die "run.json has no faithful expect array"
import json, sys
doc = json.load(open(sys.argv[1]))
ex = doc["expect"]
assert [e["expression"] for e in ex] == ["pvs > 0s and pvs < 10min",
                                         "direct-activation[profile=ideal] < 10min"], ex
assert all(e["result"] == "holds" for e in ex), ex
# unqualified: once per configuration, with that configuration's median
ev = ex[0]["evaluations"]
assert [e["config"] for e in ev] == [1, 2], ev
for e, c in zip(ev, doc["configs"]):
    pvs = [w for w in c["workloads"] if w["name"] == "pvs"][0]
    assert e["holds"] is True and e["values"]["pvs"] == pvs["median"], (e, pvs)
    assert e["text"].endswith("< 10min: true"), e
# qualified: one evaluation, in the ideal configuration
assert len(ex[1]["evaluations"]) == 1, ex[1]
PY
grep -q '^expect (exit 0: every expression holds):$' "$s/out" ||
  ff_die "the report does not end with the verdict"
grep -q '^- holds       pvs > 0s and pvs < 10min$' "$s/out" || ff_die "the verdict lines are missing"
grep -q '^expect (exit 0' "$s/good/report.txt" || ff_die "report.txt has no verdict"

# ---- report on the saved run: 0 and 1 ----------------------------------------
rc=$(status "$bin" report "$s/good/run.json" --expect 'pvs <= 1.0 * baseline' \
  --baseline "$s/good/run.json")
want "$rc" 0 "report --expect against the run itself as baseline"
rc=$(status "$bin" report "$s/good/run.json" --expect 'pvs[profile=builtin:fixed-1ms] < 0.1us')
want "$rc" 1 "report --expect that cannot hold"
grep -Eq '^- fails       pvs\[profile=builtin:fixed-1ms\] < 0.1us: [0-9.]+ s < 0.1us: false$' "$s/out" ||
  ff_die "the failed expression is not shown with its values: $(tail -3 "$s/out")"
rc=$(status "$bin" report "$s/good/run.json" --expect 'lvchange < 1')
want "$rc" 2 "report --expect naming a workload the run lacks"

# ---- I/O terms on the saved run: what the farm served, per device -----------
rc=$(status "$bin" report "$s/good/run.json" \
  --expect 'bytes_per_device(pvs) > 0 and reads(pvs) > 0' \
  --expect 'bytes_per_command(direct-activation) <= bytes(direct-activation) and bytes(pvs) / reads(pvs) >= 512B')
want "$rc" 0 "report --expect over the farm's read counts"
# the values, recomputed here from the document's own numbers
python3 - "$s/good/run.json" "$s/out" <<'PY' || ff_die "the I/O values are not the document's"
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
def kib(v):
    return "%.4g KiB" % (v / 1024) if v >= 1024 else "%.4g B" % v
seen = 0
for c in doc["configs"]:
    pvs = [w for w in c["workloads"] if w["name"] == "pvs"][0]
    runs = pvs["runs"]
    assert len(runs) == 2 and all("bytes_read" in r and "reads" in r for r in runs), runs
    assert pvs["bytes_read"] == runs[-1]["bytes_read"], pvs
    per_dev = statistics.median(r["bytes_read"] for r in runs) / c["farm"]["devices"]
    reads = statistics.median(r["reads"] for r in runs)
    assert per_dev > 0 and reads > 0, (per_dev, reads)
    line = "    [%d] %s: %s > 0: true and %.4g reads > 0: true" % (
        c["id"], c["label"], kib(per_dev), reads)
    assert line in out, (line, out)
    seen += 1
assert seen == 2, seen
PY
rc=$(status "$bin" report "$s/good/run.json" --expect 'bytes_per_device(pvs[profile=ideal]) > 1GiB')
want "$rc" 1 "report --expect on bytes that cannot hold"
grep -Eq '^- fails       bytes_per_device\(pvs\[profile=ideal\]\) > 1GiB: [0-9.]+ (B|KiB|MiB) > 1GiB: false$' "$s/out" ||
  ff_die "the failed I/O expression is not shown with its values: $(tail -3 "$s/out")"
rc=$(status "$bin" report "$s/good/run.json" --expect 'pvs < 32KiB')
want "$rc" 2 "a time compared with bytes"
grep -qF -- "--expect: at column 5: cannot compare a time and bytes: 'pvs' is a time, '32KiB' is bytes" "$s/err" ||
  ff_die "mixing a time and bytes is not refused by column: $(cat "$s/err")"
rc=$(status "$bin" run "$s/tiny.conf" --quiet --expect 'reads(pvs) < 1MiB')
want "$rc" 2 "reads compared with bytes, before anything runs"
nothing_ran "a bad I/O expression"

# ---- the build cannot run: 125 ------------------------------------------------
# an lvm that answers `version` and fails everything else
cat >"$s/badlvm" <<'SH'
#!/bin/sh
[ "$1" = version ] && exec lvm version
echo "badlvm: refusing $1" >&2
exit 5
SH
chmod +x "$s/badlvm"
rc=$(status "$bin" run "$s/tiny.conf" --quiet --no-svg --json "$s/bad.json" \
  --lvm "$s/badlvm" --expect 'pvs < 10min')
want "$rc" 125 "a run whose lvm commands fail"
grep -qF "not judged" "$s/out" || ff_die "the report does not say 'not judged'"
python3 - "$s/bad.json" <<'PY' || ff_die "bad.json does not record the unjudged verdict"
import json, sys
ex = json.load(open(sys.argv[1]))["expect"][0]
assert ex["result"] == "not judged", ex
assert all(e["holds"] is None and "runs failed" in e["reason"] for e in ex["evaluations"]), ex
PY
rc=$(status "$bin" report "$s/bad.json" --expect 'direct-activation < 10min')
want "$rc" 125 "report --expect over failed workloads"
# an lvm that does not start
rc=$(status "$bin" run "$s/tiny.conf" --quiet --no-svg --json "$s/nolvm.json" \
  --lvm "$s/no-such-lvm" --expect 'pvs < 10min')
want "$rc" 125 "an lvm that does not start"
grep -qF "version' failed" "$s/err" || ff_die "the missing lvm is not named: $(cat "$s/err")"

# ---- a failed command: not judged only where an expression reads it --------
# lvm's own error (an lvchange of an LV that does not exist) in a workload
# of its own, beside pvs
cat >"$s/partfail.conf" <<SC
name = "expect-partfail";
spec = "$top/configs/mixed-1000.conf";
devices = 20;
workloads = ( { type = "pvs"; },
              { type = "lvchange"; name = "broken"; lv = "ffnovg/nolv"; count = 2; } );
SC
# failed_said WHAT: the report and stderr still say that broken failed
failed_said() {
  grep -qF '!   first error: Volume group "ffnovg" not found' "$s/out" ||
    ff_die "$1: the report does not give lvm's error: $(cat "$s/out")"
  grep -qF 'fusefarm run: 2 lvm commands failed: config 1 (default) broken: 2 failed (Volume group "ffnovg" not found)' "$s/err" ||
    ff_die "$1: stderr does not name the failed workload: $(cat "$s/err")"
}
# verdict_is JSON RESULT...: broken failed in the document, and its
# "expect" results are RESULT... in order
verdict_is() {
  python3 - "$@" <<'PY' || ff_die "$1 does not record the verdict ${*:2}"
import json, sys
doc = json.load(open(sys.argv[1]))
broken = [w for w in doc["configs"][0]["workloads"] if w["name"] == "broken"][0]
assert sum(r["errors"] for r in broken["runs"]) == 2, broken
got = [e["result"] for e in doc["expect"]]
assert got == sys.argv[2:], got
for e in doc["expect"]:
    for ev in e["evaluations"]:
        if e["result"] == "not judged":
            assert ev["holds"] is None, ev
            assert "'broken' in config 1 of the run: 1 of 1 runs failed" in ev["reason"], ev
PY
}
rc=$(status "$bin" run "$s/partfail.conf" --quiet --no-svg --json "$s/pf-holds.json" \
  --expect 'pvs < 10min')
want "$rc" 0 "a failed workload no expression reads, beside one that holds"
failed_said "a failed workload no expression reads"
grep -qF -- "--expect: no expression reads a workload whose commands failed: the verdict stands (exit 0)" "$s/err" ||
  ff_die "stderr does not say the verdict stands: $(cat "$s/err")"
verdict_is "$s/pf-holds.json" holds
rc=$(status "$bin" run "$s/partfail.conf" --quiet --no-svg --json "$s/pf-fails.json" \
  --expect 'pvs > 10min')
want "$rc" 1 "a failed workload no expression reads, beside one that fails"
failed_said "a failed workload beside an expression that fails"
verdict_is "$s/pf-fails.json" fails
rc=$(status "$bin" run "$s/partfail.conf" --quiet --no-svg --json "$s/pf-reads.json" \
  --expect 'pvs < 10min' --expect 'broken < 10min')
want "$rc" 125 "an expression that reads the failed workload"
failed_said "an expression that reads the failed workload"
grep -qF -- "--expect: not judged (exit 125)" "$s/err" ||
  ff_die "stderr does not say 'not judged': $(cat "$s/err")"
verdict_is "$s/pf-reads.json" holds "not judged"

if grep -F " $s/" /proc/self/mountinfo | grep -q ' fuse.fusefarm '; then
  ff_die "a run left its farm mounted"
fi
echo "PASS: --expect exits 0, 1, 125 and 2 as documented, and records its verdict"
