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
  -o pv_name,vg_name,pv_uuid,dev_size,pe_start,pv_pe_count \
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

# pvck and blkid, device by device.
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
npv=0
while read -r name role want; do
  img=$s/img/$name
  out=$(blkid -p -o export "$img" 2>&1 || true)
  if [[ $want == - ]]; then
    [[ -z $out ]] || ff_die "blkid on blank $name: $out"
    continue
  fi
  for kv in $want; do
    grep -qx -- "$kv" <<<"$out" || ff_die "blkid on $name: no $kv in: $(tr '\n' ' ' <<<"$out")"
  done
  if [[ $role == pv || $role == orphan ]]; then
    loop=$(ff_loop_of "$name")
    ff_lvm pvck --dump headers "$loop" >"$s/pvck.out" 2>&1 ||
      { cat "$s/pvck.out" >&2; ff_die "pvck --dump headers $loop ($name) failed"; }
    if grep -q CHECK "$s/pvck.out"; then
      grep CHECK "$s/pvck.out" >&2
      ff_die "pvck reports a CHECK line on $name"
    fi
    npv=$((npv + 1))
  fi
done <"$s/expect.txt"
ff_log "pvck clean on $npv PVs; blkid right on $(wc -l <"$s/expect.txt") devices"
echo "PASS: lvm accepts the farm and matches the manifest"
