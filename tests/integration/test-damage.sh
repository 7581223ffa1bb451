#!/usr/bin/env bash
# Each kind of damage a spec can ask for makes real lvm2 say what it says
# for that damage on real disks (configs/damaged.conf, one VG per kind).
# usage: test-damage.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-damage.sh FUSEFARM}
ff_require python3
ff_env_init
s=$FF_SCRATCH
ff_farm_attach "$bin" "$here/../../configs/damaged.conf"

ff_lvm pvs -o pv_name,vg_name,pv_uuid --noheadings >"$s/pvs.out" 2>"$s/pvs.err" ||
  ff_die "pvs failed: $(cat "$s/pvs.err")"
ff_lvm vgs -o vg_name,vg_attr --noheadings >"$s/vgs.out" 2>"$s/vgs.err" ||
  ff_die "vgs failed: $(cat "$s/vgs.err")"

# Expected lines, built from the manifest and the loop map: "STREAM TEXT".
# out/err/vgs: TEXT is a literal substring that must appear in pvs stdout,
# pvs stderr or vgs stdout; notout/noterr: TEXT must not appear there as a
# whole word (so /dev/loop1 does not match /dev/loop10).
python3 - "$s/manifest.json" "$s/map" >"$s/expect.txt" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
loop = dict(reversed(l.split()) for l in open(sys.argv[2]))
vg = {v["name"]: v for v in m["vgs"]}
dev = {d["name"]: d for d in m["devices"]}
def pv(vgname, i):
    return vg[vgname]["pvs"][i]
def lp(vgname, i):
    return loop[pv(vgname, i)["device"]]
E = []
# bad-label-crc: the PV vanishes silently; the VG misses it.
u = pv("badcrc", 1)["uuid"]
E += [f"err WARNING: Couldn't find device with uuid {u}.",
      f"err WARNING: VG badcrc is missing PV {u}"]
# bad-mda-checksum: that mda is rejected, the VG lives on the other PV.
E += ["err WARNING: wrong checksum", f"err in mda header on {lp('badmda', 1)} at 4096",
      f"err WARNING: bad metadata header on {lp('badmda', 1)} at 4096."]
# bad-metadata-text: the parser fails, the VG is not shown.
E += ["err Parse error at byte",
      f"err WARNING: invalid metadata text from {lp('badtext', 0)}",
      f"err WARNING: PV {lp('badtext', 0)} is marked in use but no VG was found using it."]
# duplicate-pv: two devices, one PV UUID.
d = [x for x in m["devices"] if x["role"] == "duplicate"][0]
E += [f"err WARNING: Not using device {loop[d['name']]} for PV {d['pv_uuid']}.",
      f"err WARNING: PV {d['pv_uuid']} prefers device {loop[d['duplicate_of']]}"]
# missing-pv: the VG lists a PV no device carries.
u = pv("missing", 2)["uuid"]
E += [f"err WARNING: VG missing is missing PV {u}"]
# stale-metadata: the last PV holds an older seqno.
E += [f"err WARNING: ignoring metadata seqno 1 on {lp('stale', 1)} for seqno 2 on "
      f"{lp('stale', 0)} for VG stale.",
      "err WARNING: Inconsistent metadata found for VG stale."]
# What pvs/vgs show: partial VGs, no badtext VG, no orphan with a bad CRC,
# the healthy VG whole.
E += [f"out {lp('healthy', 0)} healthy", f"out {lp('healthy', 1)} healthy"]
E += [f"vgs badcrc wz-pn-", f"vgs missing wz-pn-", f"vgs healthy wz--n-"]
E += [f"notout badtext", f"notout {loop['orphan-badcrc']}"]
E += [f"noterr {lp('healthy', 0)}", f"noterr {lp('healthy', 1)}"]
for e in E:
    print(e)
PY
norm() { tr -s ' ' <"$1" | sed 's/^ //'; }
fails=0
while read -r where text; do
  case $where in
  out) norm "$s/pvs.out" | grep -qF -- "$text" || { echo "pvs lacks: $text"; fails=1; } ;;
  notout) if norm "$s/pvs.out" | grep -qwF -- "$text"; then echo "pvs shows: $text"; fails=1; fi ;;
  vgs) norm "$s/vgs.out" | grep -qF -- "$text" || { echo "vgs lacks: $text"; fails=1; } ;;
  err) grep -qF -- "$text" "$s/pvs.err" || { echo "pvs stderr lacks: $text"; fails=1; } ;;
  noterr) if grep -qwF -- "$text" "$s/pvs.err"; then echo "pvs stderr names: $text"; fails=1; fi ;;
  *) ff_die "expect.txt: unknown stream '$where'" ;;
  esac
done <"$s/expect.txt"
if ((fails)); then
  echo "--- pvs stdout"; cat "$s/pvs.out"; echo "--- pvs stderr"; cat "$s/pvs.err"
  echo "--- vgs"; cat "$s/vgs.out"
  ff_die "lvm did not report every damage as expected"
fi
echo "PASS: every damage kind gives lvm's message ($(wc -l <"$s/expect.txt") checks)"
