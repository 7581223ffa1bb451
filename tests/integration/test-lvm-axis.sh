#!/usr/bin/env bash
# lvm as a matrix axis: one `fusefarm run` over several lvm builds.
#
#   - bad lvm entries are refused before anything is mounted (no run
#     directory made, no farm left): a git ref with no lvm2 tree to build
#     it from (exit 2, naming the ref and the ways to give a tree); a ref
#     whose build fails (exit 1, 125 with --expect, with the build's own
#     error); an executable that gives no LVM version, or one that is
#     not MAJOR.MINOR.PATCH (exit 1, naming it);
#   - `lvm = [PATH, RELATIVE-PATH, REF]` with lvm_git: the system lvm, a
#     second path to it (relative to the scenario) and a ref of a small git
#     tree built by `fusefarm lvm-build` (its lvm wraps the system's and
#     logs each call), one configuration each: the table and run.json name
#     the builds by version (VERSION, VERSION#2, VERSION#3), each
#     configuration records its lvm path, version and dialect and ran with
#     that lvm (the wrapper logged the third configuration's commands and
#     only those), every lvm command exited 0, a timeline per build, and an
#     --expect qualified by [lvm=VERSION#3] is judged; with every build
#     the arrivals (6 devices spread over 1 s, 4 commands at once) were
#     due at spread * i / n and started in arrival order, none before it
#     was due (a queued one later, recorded as queued);
#   - --lvm given twice overrides the list (two configurations).
# With $FF_LVM_BUILDS (lvm paths, e.g. from /tmp/lvm-builds.txt): one run
# over those builds shows each version in the table and in run.json.
# usage: test-lvm-axis.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-lvm-axis.sh FUSEFARM}
case $bin in /*) ;; */*) bin=$PWD/$bin ;; esac
top=$(cd "$here/../.." && pwd)
ff_require python3 git lvm
ff_env_init
s=$FF_SCRATCH
export TMPDIR=$s
export FF_LVM_CACHE=$s/cache
unset FF_LVM_GIT
syslvm=$(command -v lvm)
version=$(LVM_SUPPRESS_FD_WARNINGS=1 lvm version 2>/dev/null | sed -n 's/^ *LVM version: *\([0-9.]*\).*/\1/p')
[[ -n $version ]] || ff_die "no version from $syslvm"

# ---- a small git tree whose "build" wraps the system lvm --------------------
t=$s/lvm2
mkdir -p "$t/tools"
LVM_SUPPRESS_FD_WARNINGS=1 lvm version 2>/dev/null | sed -n 's/^ *LVM version: *//p' >"$t/VERSION"
echo "1.02.199-git (2026-12-01)" >"$t/VERSION_DM"
echo "int main(void) { return 0; }" >"$t/tools/lvm.c"
cat >"$t/tools/lvm.sh" <<EOF
#!/bin/sh
[ -n "\${FAKE_LVM_LOG:-}" ] && echo "\$*" >>"\$FAKE_LVM_LOG"
exec $syslvm "\$@"
EOF
cat >"$t/configure" <<'EOF'
#!/bin/sh
[ "$1" = --help ] && exit 0
prefix=
for a; do
  case $a in --prefix=*) prefix=${a#--prefix=} ;; esac
done
printf 'all:\n\tcp tools/lvm.sh lvm\ninstall:\n\tmkdir -p $(DESTDIR)%s/sbin\n\tinstall -m 755 lvm $(DESTDIR)%s/sbin/lvm\n' "$prefix" "$prefix" >Makefile
EOF
chmod +x "$t/configure"
git -C "$t" init -q -b main
git -C "$t" add -A
git -C "$t" -c user.name=t -c user.email=t@t commit -q -m wrap
git -C "$t" tag wrapref
git -C "$t" checkout -q -b broken
cat >"$t/configure" <<'EOF'
#!/bin/sh
[ "$1" = --help ] && exit 0
echo "configure: error: libaio could not be found" >&2
exit 1
EOF
git -C "$t" -c user.name=t -c user.email=t@t commit -q -am broken
git -C "$t" tag badconf
git -C "$t" checkout -q main
mkdir -p "$s/alt"
ln -s "$syslvm" "$s/alt/lvm"
export FAKE_LVM_LOG=$s/wrapper.log

# scenario FILE LVMS [EXTRA]: a small scenario (6 devices).
scenario() {
  cat >"$1" <<SC
name = "axis";
spec = "$top/configs/mixed-1000.conf";
devices = 6;
lvm = [$2];
${3:-}
workloads = ( { type = "event-activation"; concurrency = 4; spread = "1s"; },
              { type = "direct-activation"; } );
SC
}

# refused RC OUT WANT [ARGS...]: fusefarm run exits RC before anything runs
# (no run directory OUT), its stderr has WANT.
refused() {
  local want_rc=$1 out=$2 want=$3 rc=0
  shift 3
  "$bin" run "$@" --out "$out" --quiet >/dev/null 2>"$s/err" || rc=$?
  ((rc == want_rc)) || ff_die "fusefarm run $* exited $rc, not $want_rc: $(cat "$s/err")"
  grep -qF -- "$want" "$s/err" || ff_die "fusefarm run $*: no '$want' in: $(cat "$s/err")"
  [[ ! -e $out ]] || ff_die "fusefarm run $* made $out before refusing"
  ff_run_leftovers "$s" || ff_die "fusefarm run $* left the above"
}

ff_log "refused before mounting: a ref without a tree, a ref that does not build, no version"
scenario "$s/noref.conf" "\"$syslvm\", \"v2_03_12\""
refused 2 "$s/r1" "lvm 'v2_03_12'" "$s/noref.conf"
grep -qF "lvm_git" "$s/err" && grep -qF -- "--lvm-git" "$s/err" &&
  grep -qF "FF_LVM_GIT" "$s/err" || ff_die "no way to give a tree named: $(cat "$s/err")"
refused 1 "$s/r2" "libaio could not be found" "$s/noref.conf" --lvm "$syslvm" \
  --lvm badconf --lvm-git "$t"
grep -qF "lvm 'badconf'" "$s/err" || ff_die "the ref is not named: $(cat "$s/err")"
refused 125 "$s/r3" "libaio could not be found" "$s/noref.conf" --lvm "$syslvm" \
  --lvm badconf --lvm-git "$t" --expect "direct-activation < 1000 * event-activation"
refused 1 "$s/r4" "gave no LVM version" "$s/noref.conf" --lvm "$syslvm" --lvm /bin/true
# a version that is not MAJOR.MINOR.PATCH: refused when resolved, naming it
printf '#!/bin/sh\necho "  LVM version:     2.03(2) (2026-12-01)"\n' >"$s/oddlvm"
chmod +x "$s/oddlvm"
refused 1 "$s/r7" "'$s/oddlvm version' gave '2.03(2) (2026-12-01)': lvm version output: cannot read the version" \
  "$s/noref.conf" --lvm "$syslvm" --lvm "$s/oddlvm"
# a path (absolute, ./, ../) is never taken as a ref: a missing build
refused 1 "$s/r6" "'$s/no-such/lvm version' failed" "$s/noref.conf" \
  --lvm "$syslvm" --lvm "$s/no-such/lvm" --lvm-git "$t"
FF_LVM_GIT=$t refused 125 "$s/r5" "libaio could not be found" "$s/noref.conf" \
  --lvm badconf --expect "direct-activation < 1000 * event-activation"

ff_log "one run over three builds: $syslvm, alt/lvm, the ref wrapref built by lvm-build"
scenario "$s/axis.conf" "\"$syslvm\", \"alt/lvm\", \"wrapref\"" 'lvm_git = "lvm2";'
rc=0
"$bin" run "$s/axis.conf" --out "$s/run" --quiet \
  --expect "direct-activation[lvm=$version#3] < 1000 * event-activation[lvm=$version]" \
  >"$s/table.txt" 2>"$s/run.err" || rc=$?
((rc == 0)) || ff_die "fusefarm run exited $rc: $(cat "$s/run.err")"
ff_run_leftovers "$s" || ff_die "the run left the above"
built=$(ls "$FF_LVM_CACHE"/*/sbin/lvm)
[[ -x $built ]] || ff_die "no build of wrapref in $FF_LVM_CACHE"
python3 - "$s" "$version" "$syslvm" "$built" <<'PY'
import json, os, sys
s, version, syslvm, built = sys.argv[1:]
bad = []
doc = json.load(open(f"{s}/run/run.json"))
labels = [version, f"{version}#2", f"{version}#3"]
paths = [syslvm, f"{s}/alt/lvm", built]
cs = doc["configs"]
if len(cs) != 3:
    bad.append(f"{len(cs)} configs, expected 3")
for c, label, path in zip(cs, labels, paths):
    if c["label"] != f"lvm={label}":
        bad.append(f"config {c['id']}: label {c['label']!r}, expected lvm={label}")
    if c["settings"].get("fusefarm/lvm") != label:
        bad.append(f"config {c['id']}: settings {c['settings']}")
    lvm = c.get("lvm", {})
    if lvm.get("path") != path or not lvm.get("version", "").startswith(version) \
            or lvm.get("label") != label or not lvm.get("dialect"):
        bad.append(f"config {c['id']}: lvm {lvm}, expected {path} {label}")
    if {w["type"] for w in c["workloads"]} != {"event-activation", "direct-activation"}:
        bad.append(f"config {c['id']}: workloads {[w['type'] for w in c['workloads']]}")
    for w in c["workloads"]:
        for r in w["runs"]:
            if r["exit"] or r["errors"]:
                bad.append(f"config {c['id']} {w['name']}: exit {r['exit']}: {r.get('message')}")
    if not os.path.exists(f"{s}/run/run-timeline-{c['id']}.svg"):
        bad.append(f"no run-timeline-{c['id']}.svg")
    # arrivals on schedule, whatever this build's commands took
    ev = [w for w in c["workloads"] if w["type"] == "event-activation"]
    devs = ev[0].get("devices", []) if ev else []
    n = c["farm"]["devices"]
    if len(devs) != n:
        bad.append(f"config {c['id']}: {len(devs)} arrivals, {n} devices")
    sched = sorted(devs, key=lambda d: d["scheduled"])
    for i, d in enumerate(sched):
        if abs(d["scheduled"] - 1.0 * i / n) > 1e-3:
            bad.append(f"config {c['id']}: {d['device']} due at {d['scheduled']}, "
                       f"expected {1.0 * i / n:.3f}")
        if d["start"] < d["scheduled"] - 1e-6:
            bad.append(f"config {c['id']}: {d['device']} started at {d['start']}, "
                       f"before it was due ({d['scheduled']})")
    starts = [d["start"] for d in sched]
    if starts != sorted(starts):
        bad.append(f"config {c['id']}: arrivals did not start in arrival order: "
                   f"{[(d['device'], d['scheduled'], d['start']) for d in sched]}")
if [l["label"] for l in doc["host"]["lvms"]] != labels:
    bad.append(f"host.lvms {doc['host']['lvms']}")
if [e["result"] for e in doc.get("expect", [])] != ["holds"]:
    bad.append(f"expect {doc.get('expect')}")
table = open(f"{s}/table.txt").read()
for label in labels:
    if f"  {label} " not in table and f"  {label}\n" not in table:
        bad.append(f"the table lacks the lvm axis value {label}")
# The wrapper (the built ref) ran the third configuration's commands: the
# same ones as the others, event activation's pvscans included.
log = open(f"{s}/wrapper.log").read().splitlines()
if not any(x.startswith("pvscan --cache") for x in log) or \
        not any(x.startswith("vgchange -aay") for x in log):
    bad.append(f"the built lvm did not run the workloads: {log[:5]}")
if bad:
    sys.exit("\n".join(bad))
PY
# The first two configurations never called the build's wrapper: count its
# commands against the third configuration's pvscans (one per device).
n=$(grep -c '^pvscan --cache' "$s/wrapper.log")
ndev=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['configs'][2]['farm']['devices'])" "$s/run/run.json")
((n == ndev)) || ff_die "the built lvm ran $n pvscans, the third configuration has $ndev devices"

ff_log "--lvm twice overrides the list"
rc=0
"$bin" run "$s/axis.conf" --lvm "$syslvm" --lvm "$s/alt/lvm" --out "$s/run2" \
  --no-svg --quiet >"$s/table2.txt" 2>"$s/run2.err" || rc=$?
((rc == 0)) || ff_die "fusefarm run --lvm x2 exited $rc: $(cat "$s/run2.err")"
python3 - "$s/run2/run.json" "$version" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
want = [f"lvm={sys.argv[2]}", f"lvm={sys.argv[2]}#2"]
got = [c["label"] for c in doc["configs"]]
if got != want:
    sys.exit(f"labels {got}, expected {want}")
PY

builds=${FF_LVM_BUILDS:-}
if [[ -n ${builds// /} ]]; then
  ff_log "FF_LVM_BUILDS: one run over $builds"
  list=
  for b in $builds; do
    [[ -x $b ]] || ff_die "FF_LVM_BUILDS: $b is not an executable lvm"
    list+="${list:+, }\"$b\""
  done
  scenario "$s/builds.conf" "$list"
  rc=0
  "$bin" run "$s/builds.conf" --out "$s/run3" --no-svg --quiet \
    >"$s/table3.txt" 2>"$s/run3.err" || rc=$?
  ((rc == 0)) || ff_die "fusefarm run over FF_LVM_BUILDS exited $rc: $(cat "$s/run3.err")"
  cat "$s/table3.txt"
  for b in $builds; do
    v=$("$b" version 2>/dev/null | sed -n 's/^ *LVM version: *\([0-9.]*\).*/\1/p')
    grep -qF "  $v" "$s/table3.txt" || ff_die "the table lacks $v ($b)"
    python3 - "$s/run3/run.json" "$b" "$v" <<'PY' || ff_die "run.json lacks $v ($b)"
import json, sys
doc = json.load(open(sys.argv[1]))
sys.exit(not any(c["lvm"]["path"] == sys.argv[2] and c["lvm"]["label"].startswith(sys.argv[3])
                 for c in doc["configs"]))
PY
  done
else
  ff_log "FF_LVM_BUILDS is empty: the run over real builds is skipped"
fi
ff_log "ok"
