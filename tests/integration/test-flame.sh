#!/usr/bin/env bash
# Flame graphs end to end (issue 31), with real lvm2 and real perf:
#   - `fusefarm run ci-small --flamegraph`: for every configuration and
#     workload run.json's "flame" lists a graph with its files, and both
#     are there; every SVG parses as XML and holds frames, its root frame
#     "all" titled with the graph's sample count; the folded file's counts
#     sum to the samples run.json records (0 < samples <= seen), and no
#     line is malformed;
#   - `fusefarm report RUN.json --diff-configs 1,2 --out DIR`: one
#     differential SVG per workload that parses, holds frames and is
#     coloured by change, and a table of the frames that grew per
#     workload; bad input (a config the run does not have, a run without
#     flame graphs, a missing folded file) exits 2 naming it;
#   - the run leaves nothing behind (no mount, loop, runner or perf).
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
for b in bad[:30]:
    print(b)
sys.exit(1 if bad else 0)
PY
