#!/usr/bin/env bash
# The fs workload (mkfs, mount, fio on files, umount) and the matrix axes
# of io and fs workloads, end to end on the host, with the real mkfs.xfs,
# mkfs.ext4 and fio:
#   - a farm of a PV and two 512 MiB blank devices; one xfs fs workload
#     (8 files over 2 jobs, an fsync after every write) crossed with
#     fusefarm/target (pv0001, pv0002) and fusefarm/mount_options
#     (logbufs=2, logbufs=8,logbsize=256k): 4 configurations, each on its
#     own target with its own options (the run document's io.fs and
#     target, and the kernel's view: io.fs.mounted, /proc/self/mounts'
#     options, holds each one; an option xfs does not take fails), fio's
#     writes all done, the target took fio's bytes and flushes, and no
#     other device of the farm was written;
#   - an ext4 workload with mkfs options: made, mounted, written;
#   - a mount option the filesystem refuses is a failed command naming
#     the mount (exit 1), and nothing stays mounted;
#   - refused before anything runs (exit 2): an LV among the target
#     axis's values (the host has no device-mapper; `fusefarm vm` runs
#     them: test-vm's fs-2x2).
# Properties only: no speed is judged.
# usage: test-fs.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-fs.sh FUSEFARM}
ff_require python3 fio losetup mkfs.xfs mkfs.ext4
ff_env_init
s=$FF_SCRATCH
export TMPDIR=$s

# pv0000: the VG's PV; pv0001, pv0002: the blanks (xfs needs 300 MiB)
cat >"$s/farm.conf" <<'EOF'
seed = 1;
device_size = "64M";
vgs = ({ count = 1; pvs = 1; lvs = ({ size = "8M"; }); });
blanks = ({ count = 2; device_size = "512M"; });
EOF
cat >"$s/fs.conf" <<'EOF'
name = "fs-small";
spec = "farm.conf";
matrix = ( { key = "fusefarm/target"; values = ["pv0001", "pv0002"]; },
           { key = "fusefarm/mount_options";
             values = ["logbufs=2", "logbufs=8,logbsize=256k"]; } );
workloads = ( { type = "fs"; name = "xfs-fsync"; target = "pv0001";
                fstype = "xfs"; nrfiles = 4; numjobs = 2; size = "1M";
                fsync = 1; } );
EOF

# mounted filesystems under the scratch dir: none may stay
mounts_left() { awk -v p="$s/" 'index($2, p) == 1' /proc/self/mounts; }

# ---- the matrix ------------------------------------------------------------------
"$bin" run "$s/fs.conf" --out "$s/out" --quiet >"$s/table.txt" 2>"$s/run.err" ||
  { cat "$s/run.err" >&2; ff_die "fusefarm run failed"; }
ff_run_leftovers "$s" || ff_die "the run left something behind"
[[ -z $(mounts_left) ]] || ff_die "left mounted: $(mounts_left)"
cat "$s/table.txt"

python3 - "$s/out/run.json" <<'PY' || ff_die "the run document's fs members are wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
want = [("pv0001", "logbufs=2"), ("pv0001", "logbufs=8,logbsize=256k"),
        ("pv0002", "logbufs=2"), ("pv0002", "logbufs=8,logbsize=256k")]
got = [(c["settings"].get("fusefarm/target"),
        c["settings"].get("fusefarm/mount_options")) for c in doc["configs"]]
if got != want:
    bad.append(f"configs {got}, expected {want}")
for c, (target, opts) in zip(doc["configs"], want):
    w = c["workloads"][0]
    where = f"config {c['id']}"
    if w["type"] != "fs" or w.get("target") != target:
        bad.append(f"{where}: type {w['type']} target {w.get('target')}")
    if f"on xfs -o {opts} of {target})" not in w["command"]:
        bad.append(f"{where}: command {w['command']}")
    for r in w["runs"]:
        if r["exit"] != 0 or r["errors"] != 0:
            bad.append(f"{where}: exit {r['exit']} {r.get('message', '')}")
            continue
        io = r["io"]
        fs = io.get("fs", {})
        if (fs.get("fstype"), fs.get("mount_options"), fs.get("mkfs_options")) != \
                ("xfs", opts, ""):
            bad.append(f"{where}: io.fs {fs}")
        # the kernel took every option (xfs shows logbufs, logbsize)
        mounted = fs.get("mounted", "").split(",")
        if not all(o in mounted for o in opts.split(",")):
            bad.append(f"{where}: mounted with {fs.get('mounted')!r}, not {opts}")
        for k in ("mkfs_wall", "mount_wall", "umount_wall"):
            if not fs.get(k, -1) >= 0:
                bad.append(f"{where}: io.fs.{k} {fs.get(k)}")
        if io["target"] != target or not io["path"].endswith(".mnt"):
            bad.append(f"{where}: io target {io['target']} path {io['path']}")
        # 2 jobs x 1 MiB in 4 KiB writes, every one done
        if io["write"]["ios"] != 512 or io["write"]["bytes"] != 2 << 20:
            bad.append(f"{where}: fio wrote {io['write']['ios']} I/Os, "
                       f"{io['write']['bytes']} bytes; expected 512, 2 MiB")
        # An fsync after every write: fio's bytes reached the target, with
        # flushes (buffered writes reach the device only through them).
        farm = io["farm"]
        if farm["bytes_written"] < 2 << 20 or farm["flushes"] < 1:
            bad.append(f"{where}: {target} took {farm['bytes_written']} bytes, "
                       f"{farm['flushes']} flushes")
        # The target alone was written: the farm's totals are its own.
        if r["writes"] != farm["writes"] or r["flushes"] != farm["flushes"]:
            bad.append(f"{where}: the farm took {r['writes']} writes, "
                       f"{r['flushes']} flushes; {target} {farm['writes']}, "
                       f"{farm['flushes']}")
for b in bad[:30]:
    print(b)
sys.exit(1 if bad else 0)
PY
grep -q '^io (fio): median' "$s/table.txt" || ff_die "no io table in the report"
for row in '1 +pv0001 +logbufs=2 +xfs-fsync +pv0001 +1  write' \
  '4 +pv0002 +logbufs=8,logbsize=256k +xfs-fsync +pv0002 +1  write'; do
  grep -Eq "^ +$row " "$s/table.txt" || ff_die "no io row /$row/ in: $(cat "$s/table.txt")"
done

# ---- ext4 with mkfs options ------------------------------------------------------
cat >"$s/ext4.conf" <<'EOF'
name = "fs-ext4";
spec = "farm.conf";
workloads = ( { type = "fs"; target = "pv0002"; mkfs_options = "-b 4096 -N 4096";
                mount_options = "noatime,data=journal"; size = "512K";
                nrfiles = 2; fdatasync = 4; } );
EOF
"$bin" run "$s/ext4.conf" --out "$s/ext4" --quiet --no-svg >/dev/null 2>"$s/ext4.err" ||
  { cat "$s/ext4.err" >&2; ff_die "the ext4 run failed"; }
python3 - "$s/ext4/run.json" <<'PY' || ff_die "the ext4 workload's document is wrong"
import json, sys
r = json.load(open(sys.argv[1]))["configs"][0]["workloads"][0]["runs"][0]
fs = r["io"]["fs"]
ok = (r["exit"] == 0 and fs["fstype"] == "ext4" and
      fs["mkfs_options"] == "-b 4096 -N 4096" and
      fs["mount_options"] == "noatime,data=journal" and
      {"noatime", "data=journal"} <= set(fs["mounted"].split(",")) and
      r["io"]["write"]["bytes"] == 512 << 10 and
      r["io"]["farm"]["bytes_written"] >= 512 << 10)
print(r["io"]["fs"], r["io"]["farm"])
sys.exit(0 if ok else 1)
PY

# ---- a mount option xfs refuses: a failed command --------------------------------
sed 's/fstype = "xfs";/fstype = "xfs"; mount_options = "nosuchopt";/' "$s/fs.conf" |
  sed '/fusefarm\/mount_options/,/];/d; s/\["pv0001", "pv0002"\]; },/["pv0001"]; } );/' \
    >"$s/badopt.conf"
rc=0
"$bin" run "$s/badopt.conf" --out "$s/badopt" --quiet --no-svg >/dev/null 2>"$s/badopt.err" ||
  rc=$?
((rc == 1)) || ff_die "a refused mount option exited $rc, expected 1: $(cat "$s/badopt.err")"
grep -q 'mount -t xfs -o nosuchopt /dev/pv0001: exit [0-9]*: mount: ' "$s/badopt.err" ||
  ff_die "the failed mount is not named: $(cat "$s/badopt.err")"
grep -q '1 io or fs command failed' "$s/badopt.err" ||
  ff_die "the failure is not called an io or fs command: $(cat "$s/badopt.err")"
[[ -z $(mounts_left) ]] || ff_die "left mounted: $(mounts_left)"
ff_run_leftovers "$s" || ff_die "the failed run left something behind"

# ---- refused before anything runs ------------------------------------------------
sed 's/values = \["pv0001", "pv0002"\]/values = ["pv0001", "vg0000\/lvol0"]/' "$s/fs.conf" \
  >"$s/lv.conf"
rc=0
"$bin" run "$s/lv.conf" --out "$s/lv-out" --quiet >/dev/null 2>"$s/lv.err" || rc=$?
((rc == 2)) || ff_die "an LV in the target axis exited $rc, expected 2: $(cat "$s/lv.err")"
grep -q 'target vg0000/lvol0 is an LV.*fusefarm vm.*a value of the fusefarm/target axis' \
  "$s/lv.err" || ff_die "the LV refusal does not say why: $(cat "$s/lv.err")"
[[ ! -e $s/lv-out ]] || ff_die "a refused run made its run directory"
ff_run_leftovers "$s" || ff_die "a refused run left something behind"
echo "PASS: fs workloads make, mount and write their filesystem per configuration"
