#!/usr/bin/env bash
# Fence devicesfile-used, with real lvm2: a devices file as a user's host
# has one, listing only the PVs of the VGs the workloads use, beside
# devicesfile (every farm device listed):
#   - on 24 devices of configs/mixed-1000.conf (16 PVs in VGs; an orphan
#     PV, a blank, other signatures), activation and scans: devicesfile
#     lists all 24, devicesfile-used the 16 PVs of the manifest's VGs, and
#     both configurations' private /dev holds all 24;
#   - lvm reads less with devicesfile-used: for every workload fewer
#     reads and fewer bytes than with devicesfile (the farm's own
#     counters), every command succeeding under both;
#   - the run document and its notes say which fence ran and how many
#     devices it named of how many;
#   - an lvchange-only scenario lists the PVs of its LV's VG alone (4 of
#     the 24).
# Properties only (counts and orderings), never a wall-clock bound.
# usage: test-fence-used.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-fence-used.sh FUSEFARM}
top=$here/../..
ff_require python3 losetup mountpoint
ff_env_init
s=$FF_SCRATCH
export TMPDIR=$s

"$bin" manifest "$top/configs/mixed-1000.conf" --devices 24 --compact >"$s/manifest.json" ||
  ff_die "fusefarm manifest failed"

cat >"$s/used.conf" <<SC
name = "fence-used";
spec = "$top/configs/mixed-1000.conf";
devices = 24;
matrix = ( { key = "fusefarm/fence"; values = ["devicesfile", "devicesfile-used"]; } );
workloads = ( { type = "pvs"; },
              { type = "direct-activation"; },
              { type = "event-activation"; concurrency = 8; } );
SC
"$bin" run "$s/used.conf" --json "$s/used.json" --no-svg --quiet \
  >"$s/used.txt" 2>"$s/used.err" ||
  { cat "$s/used.err" >&2; ff_die "fusefarm run (devicesfile vs devicesfile-used) failed"; }
ff_run_leftovers "$s" || ff_die "the run left something behind"
cat "$s/used.txt"

python3 - "$s/used.json" "$s/manifest.json" <<'PY' || ff_die "devicesfile-used did not list fewer devices, or lvm did not read less"
import json, sys
doc = json.load(open(sys.argv[1]))
man = json.load(open(sys.argv[2]))
bad = []
ndev = len(man["devices"])
invg = [d["name"] for d in man["devices"] if d.get("role") == "pv" and d.get("vg")]
if not 0 < len(invg) < ndev:
    bad.append(f"the farm has {len(invg)} PVs in VGs of {ndev}: nothing to leave out")
c = doc["configs"]
if [x.get("fence") for x in c] != ["devicesfile", "devicesfile-used"]:
    bad.append(f"fences {[x.get('fence') for x in c]}")
else:
    want = [{"listed": ndev, "present": ndev}, {"listed": len(invg), "present": ndev}]
    got = [x.get("fence_devices") for x in c]
    if got != want:
        bad.append(f"fence_devices {got}, expected {want}")
    for x in c:
        if x["dev"].get("farm_nodes") != ndev:
            bad.append(f"{x['fence']}: /dev held {x['dev'].get('farm_nodes')} farm nodes, not {ndev}")
    wall, wused = c[0]["workloads"], c[1]["workloads"]
    if [w["name"] for w in wall] != [w["name"] for w in wused] or len(wall) != 3:
        bad.append(f"workloads {[w['name'] for w in wall]} / {[w['name'] for w in wused]}")
    for a, u in zip(wall, wused):
        for w, f in ((a, "devicesfile"), (u, "devicesfile-used")):
            errs = sum(r.get("errors", 0) for r in w["runs"])
            if errs:
                bad.append(f"{f} {w['name']}: {errs} failed commands: {w['runs'][0].get('message')}")
        for k in ("reads", "bytes_read"):
            if not (isinstance(a.get(k), int) and isinstance(u.get(k), int)):
                bad.append(f"{a['name']}: no {k}")
            elif not u[k] < a[k]:
                bad.append(f"{a['name']}: {k} {u[k]} with devicesfile-used, "
                           f"not fewer than {a[k]} with devicesfile")
        print(f"{a['name']}: reads {a.get('reads')} -> {u.get('reads')}, "
              f"bytes {a.get('bytes_read')} -> {u.get('bytes_read')}")
    # event activation: the used PVs' VGs are all activated under both
    acts = [sorted(x["vg"] for x in w.get("activations", []) if x.get("exit") == 0)
            for w in (wall[2], wused[2])]
    if acts[0] != acts[1] or not acts[0]:
        bad.append(f"event activation's VGs differ: {acts[0][:5]} / {acts[1][:5]}")
notes = " | ".join(doc.get("notes", []))
for f, n in (("devicesfile", ndev), ("devicesfile-used", len(invg))):
    if f"fence {f} (naming {n} of the {ndev} farm devices)" not in notes:
        bad.append(f"no note on fence {f} naming {n} of {ndev}: {notes[:600]}")
for b in bad[:30]:
    print(b)
sys.exit(1 if bad else 0)
PY

# ---- lvchange alone: the PVs of its LV's VG ------------------------------------
cat >"$s/lvc.conf" <<SC
name = "fence-used-lvchange";
spec = "$top/configs/mixed-1000.conf";
devices = 24;
fence = "devicesfile-used";
workloads = ( { type = "lvchange"; count = 2; lv = "vg0008/data"; } );
SC
"$bin" run "$s/lvc.conf" --json "$s/lvc.json" --no-svg --quiet \
  >/dev/null 2>"$s/lvc.err" ||
  { cat "$s/lvc.err" >&2; ff_die "fusefarm run (lvchange, devicesfile-used) failed"; }
ff_run_leftovers "$s" || ff_die "the lvchange run left something behind"
python3 - "$s/lvc.json" "$s/manifest.json" <<'PY' || ff_die "lvchange: devicesfile-used did not list its VG's PVs alone"
import json, sys
doc = json.load(open(sys.argv[1]))
man = json.load(open(sys.argv[2]))
c = doc["configs"][0]
w = c["workloads"][0]
bad = []
pvs = [d for d in man["devices"] if d.get("role") == "pv" and d.get("vg") == "vg0008"]
want = {"listed": len(pvs), "present": len(man["devices"])}
if len(pvs) < 2 or c.get("fence_devices") != want:
    bad.append(f"vg0008 has {len(pvs)} PVs: fence_devices {c.get('fence_devices')}, expected {want}")
if sum(r.get("errors", 0) for r in w["runs"]):
    bad.append(f"lvchange failed: {w['runs'][0].get('message')}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
echo "test-fence-used: ok"
