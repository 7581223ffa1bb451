#!/usr/bin/env bash
# 1000 devices (configs/mixed-1000.conf) served by `fusefarm mount` and
# attached with `fusefarm attach`: pvs/vgs/lvs through the devices file
# attach wrote match `fusefarm manifest`, and the daemon's stats show the
# reads lvm made: one 128 KiB read at offset 0 per device per pass.
# usage: test-fuse-scale.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-fuse-scale.sh FUSEFARM}
spec=$here/../../configs/mixed-1000.conf
ff_require python3 fusermount3 mountpoint
ff_env_init
s=$FF_SCRATCH

ff_fuse_mount "$bin" "$spec" "$s/mnt"
n=$(ls "$FF_MNT" | wc -l)
((n == 1000)) || ff_die "the mount lists $n files, expected 1000"
"$bin" manifest "$spec" >"$s/manifest.json"
t0=$(date +%s.%N)
ff_fuse_attach
t1=$(date +%s.%N)
ff_log "attached $(wc -l <"$FF_STATE/loops") loops in $(echo "$t1 - $t0" | bc) s"
grep -c '^IDTYPE=loop_file ' "$FF_DEVICES_FILE" | grep -qx 1000 ||
  ff_die "the devices file does not list 1000 loops"

echo reset >"$FF_MNT/.fusefarm/control"
common=(--reportformat json --units b --nosuffix)
ff_lvm pvs "${common[@]}" -o pv_name,vg_name,pv_uuid,dev_size,pe_start,pv_pe_count \
  >"$s/pvs.json" 2>"$s/pvs.err" || ff_die "pvs failed: $(head -5 "$s/pvs.err")"
ff_stats_json >"$s/stats-pvs.json"
ff_expect_clean_stderr "$s/pvs.err" pvs
ff_lvm vgs "${common[@]}" -o vg_name,vg_uuid,vg_extent_size,pv_count,lv_count,vg_seqno \
  >"$s/vgs.json" 2>"$s/vgs.err" || ff_die "vgs failed"
ff_expect_clean_stderr "$s/vgs.err" vgs
ff_lvm lvs "${common[@]}" \
  -o vg_name,lv_name,lv_uuid,seg_start_pe,seg_size_pe,segtype,stripes,stripe_size,devices,seg_pe_ranges \
  >"$s/lvs.json" 2>"$s/lvs.err" || ff_die "lvs failed"
ff_expect_clean_stderr "$s/lvs.err" lvs
python3 "$here/../lib/check-lvm-vs-manifest.py" "$s/manifest.json" "$s/map" \
  "$s/pvs.json" "$s/vgs.json" "$s/lvs.json" || ff_die "lvm disagrees with the manifest"

# What one pvs read, as the daemon saw it.
python3 - "$s/stats-pvs.json" "$s/manifest.json" <<'PY' || ff_die "the stats do not show lvm's reads"
import json, sys
st = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
by = {d["name"]: d for d in st["devices"]}
bad = []
for d in m["devices"]:
    s = by.get(d["name"])
    if not s:
        bad.append(f"{d['name']}: no reads recorded")
        continue
    # Every device is read at offset 0, in 128 KiB blocks: once in
    # the parallel label scan, again when lvm re-reads a VG's PVs under
    # its lock.  The only other block lvm reads is the one holding a
    # second metadata area, in the last MiBs of a 2-mda PV.
    offs = s["read_offsets_first"]
    at0 = offs.count(0)
    if not 1 <= at0 <= 3:
        bad.append(f"{d['name']}: {at0} reads at offset 0")
    for o in offs:
        if o != 0 and o < d["size"] - (2 << 20):
            bad.append(f"{d['name']}: read at {o}")
    if s["reads"] > 16 or s["bytes_read"] != 131072 * s["reads"]:
        bad.append(f"{d['name']}: {s['bytes_read']} bytes in {s['reads']} reads")
for b in bad[:20]:
    print(b)
reads = sum(s["reads"] for s in st["devices"])
at0 = sum(s["read_offsets_first"].count(0) for s in st["devices"])
print(f"pvs made {reads} reads of 128 KiB over {len(st['devices'])} devices: "
      f"{at0 / len(m['devices']):.2f} per device at offset 0, "
      f"{reads - at0} elsewhere (second metadata areas)")
sys.exit(1 if bad else 0)
PY
echo "PASS: lvm over 1000 FUSE+loop devices matches the manifest; stats show its reads"
