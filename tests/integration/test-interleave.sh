#!/usr/bin/env bash
# Repetitions interleaved across configurations, and repeat = "auto"
# (runner/ff-plan.h, docs/run-json.md "schedule"), with real lvm2 on a
# small farm (20 devices of configs/mixed-1000.conf):
#   - two configurations (ideal, fixed-1ms), pvs repeat 2 and vgs repeat
#     3: schedule visits round by round, A B A B A B (never A A A B B B),
#     stop "fixed", each configuration's pvs has 2 runs, vgs 3;
#   - one configuration, pvs repeat = "auto": the verdict compares
#     nothing, so the run stops after the 4 rounds the interval needs,
#     with the reason "nothing-to-compare" and its words;
#   - --until-confident on the two configurations with repeat_max_rounds
#     = 5: the run stops with a recorded reason (confident, max-rounds
#     or budget: which one is the machine's), after 4 or 5 rounds, every
#     workload with as many runs as rounds in each configuration;
#   - bad values: repeat = "often" (file:line, key, value) and --repeat
#     with --until-confident exit 2 before anything runs.
# Properties only: orders, counts, reasons; no time is judged.
# usage: test-interleave.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-interleave.sh FUSEFARM}
top=$here/../..
ff_require python3 losetup mountpoint
ff_env_init
s=$FF_SCRATCH
export TMPDIR=$s

scenario() { # NAME REPEAT_PVS REPEAT_VGS MATRIX(0/1) [TOP-LEVEL KEYS]
  {
    echo "name = \"$1\";"
    echo "spec = \"$top/configs/mixed-1000.conf\";"
    echo "devices = 20;"
    [[ $4 == 1 ]] && echo 'matrix = ( { key = "fusefarm/profile"; values = ["ideal", "builtin:fixed-1ms"]; } );'
    [[ -n ${5:-} ]] && echo "$5"
    echo "workloads = ( { type = \"pvs\"; repeat = $2; }$3 );"
  } >"$s/$1.conf"
}

run() { # NAME [ARGS...]: the run's document in $s/NAME.json
  local name=$1
  shift
  "$bin" run "$s/$name.conf" --json "$s/$name.json" --no-svg --quiet "$@" \
    >/dev/null 2>"$s/$name.err" || { cat "$s/$name.err" >&2; ff_die "run $name failed"; }
  ff_run_leftovers "$s" || ff_die "run $name left something behind"
}

# ---- fixed repeats: interleaved --------------------------------------------
scenario fixed 2 ', { type = "vgs"; repeat = 3; }' 1
run fixed
python3 - "$s/fixed.json" <<'PY' || ff_die "fixed repeats: the schedule is not A B A B A B"
import json, sys
doc = json.load(open(sys.argv[1]))
sch = doc["schedule"]
visits = [(v["round"], v["config"]) for v in sch["visits"]]
want = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)]
bad = []
if visits != want:
    bad.append(f"visits {visits}, want {want}")
if sch["order"] != "interleaved" or sch["stop"] != "fixed" or sch["rounds"] != 3:
    bad.append(f"schedule {sch['order']} {sch['stop']} {sch['rounds']}")
if "auto" in sch:
    bad.append("a fixed run has schedule.auto")
if len(doc["configs"]) != 2:
    bad.append(f"{len(doc['configs'])} configs")
for c in doc["configs"]:
    n = {w["name"]: (len(w["runs"]), w["repeat"]) for w in c["workloads"]}
    if n != {"pvs": (2, 2), "vgs": (3, 3)}:
        bad.append(f"config {c['id']}: (runs, repeat) {n}")
    if [w["name"] for w in c["workloads"]] != ["pvs", "vgs"]:
        bad.append(f"config {c['id']}: workloads out of scenario order")
    for w in c["workloads"]:
        walls = [r["wall"] for r in w["runs"]]
        if w["min"] != min(walls) or w["max"] != max(walls):
            bad.append(f"config {c['id']} {w['name']}: min/max not of all runs")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# ---- auto with nothing to compare --------------------------------------------
scenario alone '"auto"' '' 0
run alone
python3 - "$s/alone.json" <<'PY' || ff_die "auto with nothing to compare: wrong stop"
import json, sys
doc = json.load(open(sys.argv[1]))
sch = doc["schedule"]
bad = []
if sch["stop"] != "nothing-to-compare" or sch["rounds"] != 4:
    bad.append(f"stop {sch['stop']} after {sch['rounds']} rounds")
if [(v["round"], v["config"]) for v in sch["visits"]] != [(r, 1) for r in (1, 2, 3, 4)]:
    bad.append(f"visits {sch['visits']}")
a = sch.get("auto", {})
if a.get("workloads") != ["pvs"] or "compares no workload" not in a.get("why", ""):
    bad.append(f"auto {a}")
w = doc["configs"][0]["workloads"][0]
if len(w["runs"]) != 4 or w["repeat"] != 4 or w.get("repeat_auto") is not True:
    bad.append(f"pvs: {len(w['runs'])} runs, repeat {w['repeat']}")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# ---- --until-confident: stops with a reason ------------------------------------
scenario until 3 ', { type = "vgs"; repeat = 3; }' 1 'repeat_max_rounds = 5;'
run until --until-confident
python3 - "$s/until.json" <<'PY' || ff_die "--until-confident: no recorded stop, or runs that do not match the rounds"
import json, sys
doc = json.load(open(sys.argv[1]))
sch = doc["schedule"]
bad = []
n = sch["rounds"]
if sch["stop"] not in ("confident", "max-rounds", "budget"):
    bad.append(f"stop {sch['stop']}")
if not 4 <= n <= 5 or (sch["stop"] == "max-rounds" and n != 5):
    bad.append(f"{n} rounds, stop {sch['stop']}")
a = sch.get("auto", {})
if a.get("workloads") != ["pvs", "vgs"] or a.get("max_rounds") != 5 or not a.get("why"):
    bad.append(f"auto {a}")
want = [(r, c) for r in range(1, n + 1) for c in (1, 2)]
if [(v["round"], v["config"]) for v in sch["visits"]] != want:
    bad.append(f"visits {sch['visits']}")
for c in doc["configs"]:
    for w in c["workloads"]:
        if len(w["runs"]) != n or w["repeat"] != n:
            bad.append(f"config {c['id']} {w['name']}: {len(w['runs'])} runs, {n} rounds")
# the verdict of the document agrees with the stop: confident means
# every compared ratio's interval clear of 1
if sch["stop"] == "confident":
    for e in doc["verdict"]["axes"]:
        for ef in e["effects"]:
            for p in ef["pairs"]:
                if p["judgement"] not in ("clear", "failed"):
                    bad.append(f"confident, but {ef['workload']}: {p['judgement']}")
print(f"--until-confident: {sch['stop']} after {n} rounds ({a.get('why')})")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# ---- bad values exit 2 ---------------------------------------------------------
scenario often '"often"' '' 0
rc=0
"$bin" run "$s/often.conf" --no-svg --quiet --json "$s/often.json" >/dev/null 2>"$s/often.err" || rc=$?
((rc == 2)) || ff_die "repeat = \"often\" exited $rc, want 2"
grep -q "often.conf:[0-9]*: workloads.\[0\].repeat: 'often' is not a repeat" "$s/often.err" ||
  ff_die "repeat = \"often\": $(cat "$s/often.err")"
rc=0
"$bin" run "$s/fixed.conf" --repeat 4 --until-confident --no-svg --quiet \
  --json "$s/both.json" >/dev/null 2>"$s/both.err" || rc=$?
((rc == 2)) || ff_die "--repeat with --until-confident exited $rc, want 2"
grep -q "give one" "$s/both.err" || ff_die "--repeat with --until-confident: $(cat "$s/both.err")"
ff_run_leftovers "$s" || ff_die "a refused run left something behind"
echo "PASS: repetitions interleaved; auto stops with a recorded reason"
