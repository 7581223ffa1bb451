#!/usr/bin/env bash
# Accepted at scale: `fusefarm gen` a farm (default configs/mixed-1000.conf:
# 1000 devices of every kind), attach the images to loop devices, and check
# what real lvm2 says against `fusefarm manifest`:
#   - pvs, vgs, lvs -o +devices,seg_pe_ranges (JSON) match exactly, with
#     nothing on stderr but the known no-device-mapper lines;
#   - vgck passes for every VG;
#   - pvck --dump headers prints no CHECK line on any PV;
#   - blkid -p says LVM2_member with the right UUID on every PV, and the
#     right type on every other signature; blank devices say nothing.
# usage: test-scale.sh FUSEFARM [SPEC]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-scale.sh FUSEFARM [SPEC]}
spec=${2:-$here/../../configs/mixed-1000.conf}
ff_require python3 blkid pvck
ff_env_init
s=$FF_SCRATCH

ff_log "generating and attaching $spec"
ff_farm_attach "$bin" "$spec"
ff_log "$(wc -l <"$s/map") devices attached"

common=(--reportformat json --units b --nosuffix)
ff_lvm pvs "${common[@]}" \
  -o pv_name,vg_name,pv_uuid,dev_size,pe_start,pv_pe_count,pv_mda_count \
  >"$s/pvs.json" 2>"$s/pvs.err" || ff_die "pvs failed: $(head -5 "$s/pvs.err")"
ff_expect_clean_stderr "$s/pvs.err" pvs
ff_lvm vgs "${common[@]}" \
  -o vg_name,vg_uuid,vg_extent_size,pv_count,lv_count,vg_seqno \
  >"$s/vgs.json" 2>"$s/vgs.err" || ff_die "vgs failed: $(head -5 "$s/vgs.err")"
ff_expect_clean_stderr "$s/vgs.err" vgs
ff_lvm lvs "${common[@]}" \
  -o vg_name,lv_name,lv_uuid,seg_start_pe,seg_size_pe,segtype,stripes,stripe_size,devices,seg_pe_ranges \
  >"$s/lvs.json" 2>"$s/lvs.err" || ff_die "lvs failed: $(head -5 "$s/lvs.err")"
ff_expect_clean_stderr "$s/lvs.err" lvs
python3 "$here/../lib/check-lvm-vs-manifest.py" "$s/manifest.json" "$s/map" \
  "$s/pvs.json" "$s/vgs.json" "$s/lvs.json" || ff_die "lvm disagrees with the manifest"

ff_lvm vgck >"$s/vgck.out" 2>&1 || { cat "$s/vgck.out" >&2; ff_die "vgck failed"; }
ff_expect_clean_stderr "$s/vgck.out" vgck

# What blkid must say of each device.
python3 - "$s/manifest.json" >"$s/expect.txt" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
sig = {"mbr": "PTTYPE=dos", "gpt": "PTTYPE=gpt", "ext4": "TYPE=ext4",
       "xfs": "TYPE=xfs", "md": "TYPE=linux_raid_member"}
for d in m["devices"]:
    if d["role"] in ("pv", "orphan", "duplicate"):
        want = "TYPE=LVM2_member UUID=" + d["pv_uuid"]
    elif d["role"] == "signature":
        want = sig[d["signature"]]
    else:
        want = "-"
    print(d["name"], d["role"], want)
PY
# blkid on every image (blkid -p stops at the first device it finds
# nothing on, so one call each), and pvck on every PV in one lvm process
# whose shell reads a `pvck --dump headers` per PV from stdin: an lvm
# start per PV (plus its mount namespace) took longer than the test's
# 900 s limit on a 2-core machine at load 30.
python3 - "$s/expect.txt" "$s/map" "$s/img" >"$s/pvck.cmds" <<'PY' ||
import subprocess, sys
expect, mapf, img = sys.argv[1:]
loop = dict(reversed(l.split()) for l in open(mapf))
bad = []
for line in open(expect):
    name, role, want = line.split(" ", 2)
    want = want.split()
    out = subprocess.run(["blkid", "-p", "-o", "export", f"{img}/{name}"],
                         capture_output=True, text=True).stdout
    got = set(out.splitlines())
    if want == ["-"]:
        if got:
            bad.append(f"blkid on blank {name}: {sorted(got)}")
    elif not set(want) <= got:
        bad.append(f"blkid on {name}: no {' '.join(want)} in {sorted(got)}")
    if role in ("pv", "orphan"):
        print(f"pvck --dump headers {loop[name]}")
print("\n".join(bad[:20]), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
  ff_die "blkid disagrees with the manifest (above)"
ff_lvm <"$s/pvck.cmds" >"$s/pvck.out" 2>"$s/pvck.err" ||
  { tail -5 "$s/pvck.err" >&2; ff_die "lvm (pvck --dump headers on every PV) failed"; }
# One dump per PV, in order; each begins with the label header.
npv=$(python3 - "$s/pvck.cmds" "$s/pvck.out" "$s/pvck.err" <<'PY'
import sys
cmds = [l.split()[-1] for l in open(sys.argv[1])]
dumps, cur = [], None
for line in open(sys.argv[2]).read().splitlines():
    if line.strip().startswith("label_header at "):
        cur = []
        dumps.append(cur)
    if cur is not None:
        cur.append(line)
bad = []
if len(dumps) != len(cmds):
    bad.append(f"{len(dumps)} pvck dumps for {len(cmds)} PVs; lvm said: "
               + " | ".join(open(sys.argv[3]).read().splitlines()[:5]))
for dev, d in zip(cmds, dumps):
    if "  label_header.id LABELONE" not in d:
        bad.append(f"{dev}: no label in its dump")
    bad += [f"{dev}: {l.strip()}" for l in d if "CHECK" in l]
print("\n".join(bad[:20]), file=sys.stderr)
print(len(cmds))
sys.exit(1 if bad else 0)
PY
) || ff_die "pvck --dump headers reports a problem (above)"
ff_log "pvck clean on $npv PVs; blkid right on $(wc -l <"$s/expect.txt") devices"
echo "PASS: lvm accepts the farm and matches the manifest"
