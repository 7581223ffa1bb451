#!/usr/bin/env bash
# Flame graphs end to end (issue 31), with real lvm2 and real perf:
#   - `fusefarm run ci-small --flamegraph`: for every configuration and
#     workload run.json's "flame" lists a graph with its files, and both
#     are there; every SVG parses as XML and holds frames, its root frame
#     "all" titled with the graph's sample count; the folded file's counts
#     sum to the samples run.json records (0 < samples <= seen), and no
#     line is malformed;
#   - `fusefarm report RUN.json --diff-configs 1,2 --out DIR`: one
#     differential SVG per workload both have a graph of that parses,
#     its widths config 2's samples and its frames saying their share
#     before, and a table per workload whose rows grew (B - A = change);
#     bad input (a config the run does not have, a run without
#     flame graphs, a missing folded file) exits 2 naming it;
#   - the run leaves nothing behind (no mount, loop, runner or perf);
#   - off-CPU time: each graph's "offcpu" either names its files (the
#     folded microseconds sum to its blocked_us, the SVG parses, its root
#     frame has them, its title says off-CPU), with report --diff-configs
#     comparing them too, or, where sched_switch cannot be recorded, says
#     why under "error" (flame.offcpu.error too) and the run still makes
#     its on-CPU graphs: a second run with FF_TRACEFS=/nonexistent forces
#     that.
# Skipped (exit 77, ctest's SKIP_RETURN_CODE) when perf is installed but
# cannot record here (perf_event_paranoid, a container without perf
# events, a perf for another kernel): what fusefarm run --flamegraph
# says, exit 2.  perf missing altogether is a failure (Debian's
# linux-perf, scripts/deps.sh).
# usage: test-flame.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-flame.sh FUSEFARM}
top=$here/../..
ff_require python3 perf losetup
ff_env_init
s=$FF_SCRATCH
export TMPDIR=$s

# ---- the run --------------------------------------------------------------------
rc=0
"$bin" run "$top/configs/scenarios/ci-small.conf" --flamegraph --repeat 1 \
  --out "$s/out" --quiet >"$s/table.txt" 2>"$s/run.err" || rc=$?
if ((rc == 2)) && grep -q -- '--flamegraph: perf cannot record here' "$s/run.err"; then
  echo "SKIP: $(cat "$s/run.err")"
  exit 77
fi
((rc == 0)) || { cat "$s/run.err" >&2; ff_die "fusefarm run --flamegraph: exit $rc"; }
ff_run_leftovers "$s" || ff_die "the run left something behind"
if pgrep -f "perf record .*$s/" >/dev/null; then
  pgrep -af "perf record .*$s/" >&2
  ff_die "perf record is still running"
fi

python3 - "$s/out/run.json" <<'PY' || ff_die "the flame graphs are not what run.json says"
import json, os, sys
import xml.etree.ElementTree as ET
path = sys.argv[1]
d = os.path.dirname(path)
doc = json.load(open(path))
bad = []
NS = "{http://www.w3.org/2000/svg}"
flame = doc.get("flame")
if not isinstance(flame, dict) or "graphs" not in flame:
    sys.exit(f"run.json: flame is {flame!r}")
graphs = {(g["config"], g["workload"]): g for g in flame["graphs"]}
want = {(c["id"], w["name"]) for c in doc["configs"] for w in c["workloads"]}
if set(graphs) != want:
    bad.append(f"graphs for {sorted(graphs)}, want {sorted(want)}")
for key in sorted(want & set(graphs)):
    g = graphs[key]
    if "error" in g:
        bad.append(f"{key}: {g['error']}")
        continue
    for k in ("folded", "svg", "samples", "seen", "stacks"):
        if k not in g:
            bad.append(f"{key}: no {k}")
    folded, svg = os.path.join(d, g["folded"]), os.path.join(d, g["svg"])
    if not os.path.isfile(folded) or not os.path.isfile(svg):
        bad.append(f"{key}: {g['folded']} or {g['svg']} missing")
        continue
    # The folded counts sum to the samples run.json records.
    total, stacks = 0, 0
    for n, line in enumerate(open(folded), 1):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit() or ";;" in stack:
            bad.append(f"{g['folded']}:{n}: malformed: {line!r}")
            break
        total += int(count)
        stacks += 1
    if total != g["samples"] or stacks != g["stacks"]:
        bad.append(f"{g['folded']}: {total} samples in {stacks} stacks, "
                   f"run.json says {g['samples']} in {g['stacks']}")
    if not 0 < g["samples"] <= g["seen"]:
        bad.append(f"{key}: samples {g['samples']}, seen {g['seen']}")
    # The SVG parses and holds frames; its root frame has every sample.
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        bad.append(f"{g['svg']}: {e}")
        continue
    frames = [e for e in root.iter(NS + "g") if e.get("class") == "f"]
    titles = [f.find(NS + "title").text for f in frames]
    if len(frames) < 2:
        bad.append(f"{g['svg']}: {len(frames)} frames")
    elif not titles[0].startswith(f"all (all): {g['samples']} samples,"):
        bad.append(f"{g['svg']}: root frame '{titles[0]}', want {g['samples']} samples")
    print(f"config {key[0]} {key[1]:18} {g['samples']:6} samples "
          f"{g['stacks']:5} stacks {len(frames):5} frames")
    # Off-CPU: its files, their microseconds as run.json says, or why not.
    off = g.get("offcpu")
    top_off = flame.get("offcpu", {})
    if not isinstance(off, dict):
        bad.append(f"{key}: offcpu is {off!r}")
        continue
    if "error" in off:
        if "error" not in top_off:
            bad.append(f"{key}: offcpu error {off['error']!r}, but flame.offcpu "
                       f"is {top_off!r}")
        print(f"  off-CPU: {off['error']}")
        continue
    for k in ("folded", "svg", "blocked_us", "events", "lost"):
        if k not in off:
            bad.append(f"{key}: offcpu has no {k}")
    if not off.get("folded", "").startswith("flame-off-"):
        bad.append(f"{key}: offcpu folded {off.get('folded')!r}")
        continue
    ofolded, osvg = os.path.join(d, off["folded"]), os.path.join(d, off["svg"])
    total = 0
    for n, line in enumerate(open(ofolded), 1):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit() or ";;" in stack:
            bad.append(f"{off['folded']}:{n}: malformed: {line!r}")
            break
        total += int(count)
    if total != off["blocked_us"]:
        bad.append(f"{off['folded']}: {total} us, run.json says "
                   f"{off['blocked_us']}")
    # the farm daemon's blocked time is counted apart, not in the graph
    if off.get("farm_us", -1) < 0 or "_[f]" in open(ofolded).read():
        bad.append(f"{key}: offcpu farm_us {off.get('farm_us')!r}, or the "
                   f"daemon's frames in {off['folded']}")
    if off["events"] <= 0:
        bad.append(f"{key}: offcpu: {off['events']} sched_switch events")
    try:
        root = ET.parse(osvg).getroot()
    except ET.ParseError as e:
        bad.append(f"{off['svg']}: {e}")
        continue
    head = "".join(root.find(NS + "text").itertext())
    if "off-CPU" not in head or "microseconds" not in head:
        bad.append(f"{off['svg']}: title {head!r}")
    frames = [e for e in root.iter(NS + "g") if e.get("class") == "f"]
    if total and (not frames or not frames[0].find(NS + "title").text
                  .startswith(f"all (all): {total} us,")):
        bad.append(f"{off['svg']}: root frame "
                   f"{frames[0].find(NS + 'title').text if frames else None!r}")
    print(f"  off-CPU: {off['blocked_us']:10} us blocked, "
          f"{off['events']} switches, {off['lost']} lost, {len(frames)} frames")
for b in bad[:30]:
    print(b)
sys.exit(1 if bad else 0)
PY

# ---- the difference of configurations 1 and 2 -------------------------------------
"$bin" report "$s/out/run.json" --diff-configs 1,2 --out "$s/diff" \
  >"$s/diff.txt" 2>"$s/diff.err" ||
  { cat "$s/diff.err" >&2; ff_die "report --diff-configs 1,2 failed"; }
cat "$s/diff.txt"
python3 - "$s/out/run.json" "$s/diff" "$s/diff.txt" <<'PY' || ff_die "report --diff-configs 1,2: not every workload compared"
import json, os, re, sys
import xml.etree.ElementTree as ET
doc = json.load(open(sys.argv[1]))
outdir, text = sys.argv[2], open(sys.argv[3]).read()
NS = "{http://www.w3.org/2000/svg}"
bad = []
g = {(x["config"], x["workload"]) for x in doc["flame"]["graphs"] if "error" not in x}
both = sorted(w for c, w in g if c == 1 and (2, w) in g)
if not both:
    bad.append("no workload has a graph in both configurations")
for w in both:
    svg = os.path.join(outdir, f"flame-diff-1-2-{w}.svg")
    try:
        root = ET.parse(svg).getroot()
    except (OSError, ET.ParseError) as e:
        bad.append(f"{w}: {e}")
        continue
    titles = [f.find(NS + "title").text for f in root.iter(NS + "g")
              if f.get("class") == "f"]
    # widths from config 2: its root frame has config 2's samples
    s2 = next(x["samples"] for x in doc["flame"]["graphs"]
              if x["config"] == 2 and x["workload"] == w)
    if len(titles) < 2 or not titles[0].startswith(f"all (all): {s2} samples"):
        bad.append(f"{w}: {len(titles)} frames, root '{titles[:1]}'")
    if not any("(before: " in t for t in titles):
        bad.append(f"{w}: no frame says its share before")
    # off-CPU compared too where both have it
    offs = [next(x for x in doc["flame"]["graphs"]
                 if x["config"] == c and x["workload"] == w).get("offcpu", {})
            for c in (1, 2)]
    osvg = os.path.join(outdir, f"flame-diff-off-1-2-{w}.svg")
    if all("folded" in o for o in offs):
        if not os.path.isfile(osvg):
            bad.append(f"{w}: no {osvg}")
        else:
            ET.parse(osvg)
        if not re.search(rf"^{re.escape(w)} off-CPU: A config 1 ", text, re.M):
            bad.append(f"{w}: no off-CPU table")
    elif os.path.exists(osvg):
        bad.append(f"{w}: {osvg} without off-CPU graphs on both sides")
    # its table: the header, then rows of shares and a change that grew
    m = re.search(rf"^{re.escape(w)}: A config 1 .*\n.*\n   A incl  B incl  change  A self  B self  frame\n((?:   .*\n)*)",
                  text, re.M)
    if not m:
        bad.append(f"{w}: no table")
        continue
    for row in m.group(1).splitlines():
        f = row.split()
        if f[:1] == ["(no"]:
            continue
        a, b, ch = float(f[0][:-1]), float(f[1][:-1]), float(f[2])
        if not (ch > 0 and abs(b - a - ch) < 0.011):
            bad.append(f"{w}: row '{row}'")
for b in bad[:30]:
    print(b)
sys.exit(1 if bad else 0)
PY

# ---- off-CPU impossible: said, and the run goes on -------------------------------------
rc=0
FF_TRACEFS=/nonexistent "$bin" run "$top/configs/scenarios/ci-small.conf" \
  --flamegraph --repeat 1 --out "$s/notrace" --quiet >/dev/null 2>"$s/notrace.err" || rc=$?
((rc == 0)) || { cat "$s/notrace.err" >&2; ff_die "FF_TRACEFS=/nonexistent: exit $rc"; }
ff_run_leftovers "$s" || ff_die "the run without tracefs left something behind"
python3 - "$s/notrace/run.json" <<'PY' || ff_die "FF_TRACEFS=/nonexistent: off-CPU not reported as impossible"
import json, os, sys
path = sys.argv[1]
doc = json.load(open(path))
flame, bad = doc["flame"], []
err = flame.get("offcpu", {}).get("error", "")
if "/nonexistent/events/sched/sched_switch/id" not in err:
    bad.append(f"flame.offcpu: {flame.get('offcpu')!r}")
for g in flame["graphs"]:
    if "error" in g or not os.path.isfile(os.path.join(os.path.dirname(path), g["svg"])):
        bad.append(f"{g['config']} {g['workload']}: no on-CPU graph: {g.get('error')}")
    if g.get("offcpu", {}).get("error") != err:
        bad.append(f"{g['config']} {g['workload']}: offcpu {g.get('offcpu')!r}")
if any(f.startswith("flame-off-") for f in os.listdir(os.path.dirname(path))):
    bad.append("flame-off-* files without off-CPU recording")
for b in bad[:30]:
    print(b)
sys.exit(1 if bad else 0)
PY

# ---- bad input: exit 2, naming what was wrong ---------------------------------------
bad_input() { # WANT ARGS...: report ARGS exits 2 saying WANT
  local want=$1 rc=0
  shift
  "$bin" report "$@" >/dev/null 2>"$s/bad.err" || rc=$?
  if ((rc != 2)) || ! grep -qF -- "$want" "$s/bad.err"; then
    ff_die "report $*: exit $rc, want 2 saying '$want': $(cat "$s/bad.err")"
  fi
}
bad_input "has no configuration 3 (its configurations: 1, 2)" \
  "$s/out/run.json" --diff-configs 1,3
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); del d["flame"]; json.dump(d, open(sys.argv[2], "w"))' \
  "$s/out/run.json" "$s/noflame.json"
bad_input "noflame.json: no flame graphs" "$s/out/run.json" --diff "$s/noflame.json"
mkdir "$s/moved"
cp "$s/out/run.json" "$s/moved/"
bad_input ".folded: No such file or directory" "$s/moved/run.json" --diff-configs 1,2
bad_input "--top 0: with --diff, the frames per table are 1 or more" \
  "$s/out/run.json" --diff-configs 1,2 --top 0
