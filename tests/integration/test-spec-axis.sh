#!/usr/bin/env bash
# The matrix axis fusefarm/spec (docs/scenario-format.md "Matrix keys"):
# every configuration runs on its own farm, remounted when the spec
# changes, with real lvm2:
#   - two specs of the same VGs, one with a metadata area on every PV and
#     one with it on the first PV of each VG only (mda_copies), plus a
#     third with a VG more; --repeat 2, interleaved: the schedule visits
#     1 2 3 1 2 3, each configuration's document names its spec and the
#     farm it ran on (devices, VGs), the table shows the axis;
#   - a spec of the axis that cannot be read, a farm given both as spec
#     and as the axis, and the axis in `fusefarm vm` exit 2 before
#     anything runs, naming what was wrong.
# Properties only: which farm each configuration ran on; no time is judged.
# usage: test-spec-axis.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-spec-axis.sh FUSEFARM}
ff_require python3 losetup mountpoint
ff_env_init
s=$FF_SCRATCH
export TMPDIR=$s

cat >"$s/all.conf" <<'CONF'
seed = 7;
device_size = "64M";
vgs = ({ count = 3; name = "vg%02u"; pvs = 4; lvs = ({ name = "lv"; fill = 0.5; }); });
CONF
sed 's/pvs = 4;/pvs = 4; mda_copies = [1, 0, 0, 0];/' "$s/all.conf" >"$s/first.conf"
sed 's/count = 3;/count = 4;/' "$s/first.conf" >"$s/more.conf"
cat >"$s/axis.conf" <<'CONF'
name = "spec-axis";
matrix = ( { key = "fusefarm/spec"; values = ["all.conf", "first.conf", "more.conf"]; } );
workloads = ( { type = "pvs"; }, { type = "vgs"; } );
CONF

ff_log "three farms, one per configuration, interleaved"
"$bin" run "$s/axis.conf" --json "$s/axis.json" --no-svg --repeat 2 \
  >"$s/axis.out" 2>"$s/axis.err" || { cat "$s/axis.err" >&2; ff_die "the run failed"; }
ff_run_leftovers "$s" || ff_die "the run left something behind"
python3 - "$s" <<'PY' || ff_die "the configurations did not run on their own farms"
import json, sys
s = sys.argv[1]
doc = json.load(open(f"{s}/axis.json"))
bad = []
visits = [(v["round"], v["config"]) for v in doc["schedule"]["visits"]]
if visits != [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]:
    bad.append(f"visits {visits}")
want = {1: ("all.conf", 12, 3), 2: ("first.conf", 12, 3), 3: ("more.conf", 16, 4)}
for c in doc["configs"]:
    f = c["farm"]
    spec, devs, vgs = want[c["id"]]
    if f["spec"] != f"{s}/{spec}" or f["devices"] != devs or f["vgs"] != vgs:
        bad.append(f"config {c['id']}: farm {f}, want {spec} {devs} devices {vgs} VGs")
    if c["label"] != f"spec={spec}" or c["settings"].get("fusefarm/spec") != f"{s}/{spec}":
        bad.append(f"config {c['id']}: label {c['label']!r} settings {c['settings']}")
    for w in c["workloads"]:
        if len(w["runs"]) != 2 or any(r["exit"] != 0 or r["reads"] < devs for r in w["runs"]):
            bad.append(f"config {c['id']} {w['name']}: runs {w['runs']}")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
grep -q "$s/more.conf" "$s/axis.out" || ff_die "the table does not show the spec axis"

ff_log "bad input: exit 2 before anything runs"
expect2() { # WANT ARGS...: exit 2, stderr holds WANT, nothing mounted
  local want=$1 rc=0
  shift
  "$bin" "$@" >"$s/bad.out" 2>"$s/bad.err" || rc=$?
  [[ $rc == 2 ]] || { cat "$s/bad.err" >&2; ff_die "'$*' exited $rc, not 2"; }
  grep -qF -- "$want" "$s/bad.err" || { cat "$s/bad.err" >&2; ff_die "'$*' did not say: $want"; }
}
sed 's/"first.conf"/"nope.conf"/' "$s/axis.conf" >"$s/missing.conf"
expect2 "$s/missing.conf:2: matrix.[0].values: value 1: $s/nope.conf: cannot read the spec" run "$s/missing.conf"
{ echo "spec = \"all.conf\";"; cat "$s/axis.conf"; } >"$s/both.conf"
expect2 "$s/both.conf:1: spec: a farm and a fusefarm/spec axis in the matrix: give one" run "$s/both.conf"
expect2 "fusefarm vm: the matrix axis fusefarm/spec changes the farm per configuration" vm "$s/axis.conf"
sed 's/"first.conf", "more.conf"/7, 8/; s/"all.conf", //' "$s/axis.conf" >"$s/int.conf"
expect2 "$s/int.conf:2: matrix.[0].values: value 0 7 does not fit fusefarm/spec (expected a farm spec's path or \"builtin:NAME\")" run "$s/int.conf"
ff_run_leftovers "$s" || ff_die "a refused run left something behind"
ff_log "ok"
