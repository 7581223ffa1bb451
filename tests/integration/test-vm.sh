#!/bin/bash
# test-vm.sh: `fusefarm vm`, end to end (qemu boots under TCG, ~6.5 min on
# 2 cores; 490 s with the fs check at load 4-6, 2026-12-02).  The guest images are not this test's time: ctest builds or
# checks them first in the fixture guest/images (`fusefarm vm --prepare`:
# the first time ~100 MiB of Debian packages into the default cache
# /var/cache/fusefarm/guest and 2-17 min of builds, depending on the
# machine's load; seconds once cached).  Run by hand without the fixture,
# the first boot builds them:
#   1. a scenario's workloads in the guest: 4 configurations (2 profiles,
#      so 2 boots, x 2 lvm.conf settings) of 16 disks, every workload with
#      real dm, run by the host's lvm binary copied into the guest
#      (--lvm); every dm table matches the manifest (ff-dmcheck),
#      nbd-client attaches 2 exports and pvs sees their PV UUIDs; the run
#      document is complete and `fusefarm report` renders it
#   1b. every layout with real dm: guest/tests/layouts.conf (mirror with
#      a disk and a core log, raid0, raid0_meta, raid1/5/6/10, raid1 and
#      raid5 with --raidintegrity (dm-integrity over each image), a thin pool whose metadata
#      the kernel and thin_check accept, two thin LVs, a thin snapshot,
#      a thin LV of an external origin, a striped pool with a thin LV, a
#      snapshot, two cache LVs whose all-zero cmeta the kernel formats, a
#      writecache LV, a cache LV over a cachevol, a linear LV extended
#      onto another PV, renamed and made read-only after the others, two
#      thin LVs removed (the pool's metadata and transaction id as the
#      kernel and lvm expect them), a cache and a writecache made by
#      lvcreate --cachevol, cache and writecache settings, an
#      interrupted pvmove (pvmove0's mirror and waiting segments, the
#      LVs over it; activated with --poll n)): all 122 dm devices
#      activate and ff-dmcheck matches every table (118 LVs)
#   1c. fio in the guest: guest/tests/io-2x2.conf (io workloads on a raw
#      farm disk, on a linear LV and on the guest's RAM disk, under 0 and
#      5 ms per write: 2 boots with the fio layer): all 6 io rows did I/O,
#      the farm saw at least the writes fio issued (direct I/O) on the raw
#      disk and on the LV's PV, and with 5 ms writes fio's clat p50 is at
#      least 5 ms (less fio's own histogram rounding, 1/128) on those and
#      under 5 ms on the RAM disk (/dev/ram0, no farm counters); the
#      5 ms profile's disks are rotational in the guest (the raw disk
#      and the LV on one), the ideal profile's and the RAM disk are not;
#      properties only, no wall-clock bound
#   1d. the nbd transport: guest/tests/io-nbd.conf (the io-2x2 targets
#      with the matrix axis fusefarm/transport ["scsi", "nbd"]: 2 boots,
#      the second attaching every farm device with the guest's kernel
#      nbd-client instead of virtio-scsi): 4 io rows with fio's writes
#      done, the nbd raw row on /dev/nbd*, the scsi raw row on /dev/sd*,
#      the LV rows on /dev/dm-*, every PV lvm saw over nbd an nbd node,
#      and the farm counted at least fio's writes on the raw target (and
#      the LV's PV) over both transports; properties only
#   1e. filesystems in the guest: guest/tests/fs-2x2.conf (an xfs fs
#      workload, fusefarm/target [a blank disk, a linear LV] x
#      fusefarm/mount_options [logbufs=2, logbufs=8]: one boot, mkfs.xfs
#      from the fio layer): 4 rows, each on its own target with its own
#      options (the kernel's /proc/self/mounts shows them), every fio
#      write done, mkfs/mount/umount timed, and the farm took fio's bytes
#      and flushes on the target (the blank, or the LV's PV) and nothing
#      elsewhere; its outputs in the run directory --out names (run.json,
#      report.txt, run.svg, run-io.svg); properties only
#   1f. ext4 in the guest: guest/tests/ext4-prefetch.conf (the mkdir
#      storm, mkdirs, on a 256 GiB blank under 1 ms per read, with and
#      without no_prefetch_block_bitmaps, mb_prefetch_limit=0 written into
#      the guest's sysfs: one boot): 2 rows, every directory made, the
#      kernel's options and the tunable as given, the farm's reads at
#      mount and during the storm counted; properties only
#   2. initramfs boot, 258 disks: a scenario scaling farm64 with
#      devices = 256 (the plugin's devices=N): every LV of the scaled
#      manifest checked, nbd-client on 2
#   3. systemd boot, 16 disks: udev and systemd activate every LV by
#      themselves; systemd-analyze time, blame and plot (SVG) come back;
#      the same with an lvm build (--lvm): its udev rule replaces
#      Debian's, its lvm activates; what --lvm refuses before a boot
#   4. a guest that panics, one that times out (initramfs and systemd)
#      and a missing qemu each end with a clear message and leave no qemu
#      or nbdkit behind; the systemd boot refuses the nbd transport
#      before anything boots; a SIGTERM to a run of 2 boots during its first
#      stops it there: the second never starts, nothing is left
#
# usage: test-vm.sh FUSEFARM  (FF_SOURCE_DIR: the source tree; root;
#        qemu-system-x86, nbdkit, cpio, kmod, mmdebstrap, e2fsprogs,
#        python3: scripts/deps.sh)
set -uo pipefail
ff=${1:?usage: test-vm.sh FUSEFARM}
ff=$(realpath "$ff")
src=${FF_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export FF_GUEST_DIR=$src/guest
specs=$src/guest/tests
build=${FF_BUILD_DIR:-$(dirname "$(dirname "$ff")")}
for t in "$build/guest/ff-dmcheck" "$build/nbd-plugin/nbdkit-fusefarm-plugin.so"; do
  [ -e "$t" ] || { echo "test-vm: $t not built"; exit 1; }
done
for t in qemu-system-x86_64 nbdkit cpio python3 debugfs mkfs.ext4; do
  command -v $t >/dev/null || { echo "test-vm: $t missing (scripts/deps.sh installs it)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# Every run's directory is in $tmp (fusefarm vm and the guest scripts make
# theirs in TMPDIR), so a process a run left behind names $tmp in its
# command line, and other guest runs on the machine are not taken for ours.
export TMPDIR=$tmp
runs_re="$tmp/ff-(guest|systemd)\."
leftovers() { pgrep -f "$runs_re" || true; }

expect() { # expect NAME RC PATTERN -- ARGS...
  local name=$1 want=$2 pat=$3; shift 4
  local rc=0 t0=$SECONDS
  "$ff" vm "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  # a failed run keeps its directory for debugging; not ours to keep
  sed -n 's|^run-[a-z]*: kept \(/.*/ff-[a-z]*\.[A-Za-z0-9]*\)$|\1|p' "$tmp/$name.out" | xargs -r rm -rf
  if [ "$rc" != "$want" ] || ! grep -q -- "$pat" "$tmp/$name.out"; then
    fail "$name: rc $rc (want $want), no \"$pat\" in:"; sed 's/^/  /' "$tmp/$name.out"
  else
    echo "ok   $name ($((SECONDS - t0))s): $(grep -m1 -- "$pat" "$tmp/$name.out")"
  fi
  [ -z "$(leftovers)" ] || { fail "$name: left processes behind:"; pgrep -af "$runs_re" | cut -c1-160; }
}

cat >"$tmp/scenario.conf" <<SC
name = "vm16";
spec = "$specs/farm16.conf";
matrix = (
  { key = "fusefarm/profile"; values = ["ideal", "builtin:fixed-1ms"]; },
  { key = "devices/obtain_device_list_from_udev"; values = [0, 1]; }
);
workloads = ( { type = "pvs"; },
              { type = "pvscan-cache"; },
              { type = "event-activation"; concurrency = 8; },
              { type = "direct-activation"; },
              { type = "lvchange"; count = 2; } );
SC
lvm=$(command -v lvm)
expect boot16 0 'verdict: ff-dmcheck: 11 LVs checked, 0 mismatched' -- \
  "$tmp/scenario.conf" --nbd-client 2 --lvm "$lvm" --json "$tmp/boot16.json" --timeout 1800
grep -q 'lvm.conf: devices/obtain_device_list_from_udev = 0' "$tmp/boot16.out" ||
  fail "boot16: the matrix's lvm.conf was not applied"
grep -q 'nbd-client pv0001: rc 0' "$tmp/boot16.out" || fail "boot16: nbd-client pv0001 did not attach"
[ "$(grep -c 'verdict: ff-dmcheck: 11 LVs checked, 0 mismatched' "$tmp/boot16.out")" = 2 ] ||
  fail "boot16: expected 2 boots (one per profile)"
"$ff" manifest "$specs/farm16.conf" >"$tmp/m16.json"
python3 - "$tmp/boot16.json" "$tmp/m16.json" <<'PY' || fail "boot16: the run document"
import json, sys
d = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
bad = []
h = d["host"]
if d["format"] != "fusefarm-run": bad.append("format")
if h["device_mapper"] is not True: bad.append("device_mapper not true")
if h["lvm"] != "/opt/ff-lvm/lvm": bad.append("host.lvm %r: --lvm not used" % h["lvm"])
if not h["lvm_version"].startswith("2."): bad.append("lvm_version %r" % h["lvm_version"])
if not h["kernel"].endswith("-cloud-amd64"): bad.append("kernel %r" % h["kernel"])
boots = d["guest"]["boots"]
if len(boots) != 2 or any(b["status"] for b in boots): bad.append("boots %r" % [b["status"] for b in boots])
ids = [c["id"] for c in d["configs"]]
if sorted(ids) != [1, 2, 3, 4]: bad.append("config ids %r" % ids)
pvs_in_vgs = {dv["name"] for dv in m["devices"] if dv["role"] == "pv" and dv.get("vg")}
for c in d["configs"]:
    want_prof = "builtin:fixed-1ms" if c["id"] > 2 else "builtin:ideal"
    if c["profile"] != want_prof: bad.append("config %d profile %r" % (c["id"], c["profile"]))
    if c["farm"]["devices"] != 16 or c["farm"]["lvs"] != 11: bad.append("config %d farm %r" % (c["id"], c["farm"]))
    types = [w["type"] for w in c["workloads"]]
    if types != ["pvs", "pvscan-cache", "event-activation", "direct-activation", "lvchange"]:
        bad.append("config %d workloads %r" % (c["id"], types))
    for w in c["workloads"]:
        for r in w["runs"]:
            if r["exit"] != 0 or r["errors"] != 0 or r["wall"] <= 0:
                bad.append("config %d %s: run %r" % (c["id"], w["name"], r))
        if w["type"] == "direct-activation" and "--driverloaded" in w["command"]:
            bad.append("direct-activation ran without dm")
        if w["type"] == "event-activation":
            devs = {x["device"] for x in w["devices"]}
            if devs != {dv["name"] for dv in m["devices"]}:
                bad.append("config %d: event devices %r" % (c["id"], sorted(devs)))
            done = {x["device"] for x in w["devices"] if x["vg_complete"]}
            acts = sorted(a["vg"] for a in w["activations"])
            if acts != sorted(v["name"] for v in m["vgs"]):
                bad.append("config %d: activations %r" % (c["id"], acts))
            if not done <= pvs_in_vgs or len(done) != len(m["vgs"]):
                bad.append("config %d: vg_complete on %r" % (c["id"], sorted(done)))
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
expect layouts 0 'verdict: ff-dmcheck: 118 LVs checked, 0 mismatched, 0 VGs skipped, 0 other' -- \
  "$specs/layouts.conf" --nbd-client 0 --timeout 900
grep -q 'vgchange -aay .*(122 dm devices, rc 0)' "$tmp/layouts.out" ||
  fail "layouts: vgchange did not make the 122 dm devices: $(grep 'vgchange' "$tmp/layouts.out")"
expect io 0 'write-5ms.conf *lv *vg0000/lvol0 *1 *write' -- "$specs/io-2x2.conf" --nbd-client 0 \
  --json "$tmp/io.json" --timeout 900
python3 - "$tmp/io.json" <<'PY' || fail "io: the run document"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
rows = 0
for c in d["configs"]:
    slow = c["profile"].endswith("write-5ms.conf")
    for w in c["workloads"]:
        for r in w["runs"]:
            io = r.get("io")
            if r["exit"] != 0 or not io:
                bad.append("config %d %s: run %r" % (c["id"], w["name"], r)); continue
            rows += 1
            ios = io["write"]["ios"]
            if ios <= 0: bad.append("config %d %s: no writes done" % (c["id"], w["name"]))
            farm = io.get("farm", {}).get("writes", -1)
            if w["name"] == "raw" and farm < ios:
                bad.append("config %d raw: the farm saw %d writes, fio did %d" % (c["id"], farm, ios))
            pv = io.get("devices", {}).get("pv0000", {}).get("writes", -1)
            if w["name"] == "lv" and pv < ios:
                bad.append("config %d lv: pv0000 took %d writes, fio did %d" % (c["id"], pv, ios))
            # fio reports a bucket's middle: at most 1/128 under the sample
            p50 = io["write"]["clat_p50_ns"] or 0
            # the profile's rotational flag, as the guest's kernel sees
            # the disk (and the LV above it); the RAM disk's is its own
            rot = slow and w["name"] != "ram"
            if io.get("rotational") is not rot:
                bad.append("config %d %s: rotational %r, expected %r" % (c["id"], w["name"], io.get("rotational"), rot))
            if w["name"] == "ram":
                # the guest's own RAM disk: the profile is not below it
                if io["path"] != "/dev/ram0" or "farm" in io:
                    bad.append("config %d ram: path %s, farm %r" % (c["id"], io["path"], io.get("farm")))
                if slow and p50 >= 5e6:
                    bad.append("config %d ram: clat p50 %d ns: the farm's 5 ms reached the RAM disk" % (c["id"], p50))
            elif slow and p50 < 5e6 * (1 - 1 / 128):
                bad.append("config %d %s: clat p50 %d ns under the profile's 5 ms" % (c["id"], w["name"], p50))
if rows != 6: bad.append("%d io rows, expected 6" % rows)
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
expect io-nbd 0 'nbd *lv *vg0000/lvol0 *1 *write' -- "$specs/io-nbd.conf" --nbd-client 0 \
  --json "$tmp/io-nbd.json" --timeout 900
python3 - "$tmp/io-nbd.json" <<'PY' || fail "io-nbd: the run document"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
rows = {}
for c in d["configs"]:
    tr = c["settings"].get("fusefarm/transport")
    if tr not in ("scsi", "nbd"):
        bad.append("config %d: settings %r have no transport" % (c["id"], c["settings"])); continue
    for w in c["workloads"]:
        for r in w["runs"]:
            io = r.get("io")
            if r["exit"] != 0 or not io:
                bad.append("config %d %s: run %r" % (c["id"], w["name"], r)); continue
            rows[(tr, w["name"])] = rows.get((tr, w["name"]), 0) + 1
            ios, path = io["write"]["ios"], io.get("path", "")
            if ios <= 0: bad.append("%s %s: no writes done" % (tr, w["name"]))
            want = "/dev/dm-" if w["name"] == "lv" else "/dev/nbd" if tr == "nbd" else "/dev/sd"
            if not path.startswith(want):
                bad.append("%s %s: fio ran on %r, expected %s*" % (tr, w["name"], path, want))
            farm = io.get("farm", {}).get("writes", -1)
            if w["name"] == "raw" and farm < ios:
                bad.append("%s raw: the farm saw %d writes, fio did %d" % (tr, farm, ios))
            pv = io.get("devices", {}).get("pv0000", {}).get("writes", -1)
            if w["name"] == "lv" and pv < ios:
                bad.append("%s lv: pv0000 took %d writes, fio did %d" % (tr, pv, ios))
if sorted(rows) != [("nbd", "lv"), ("nbd", "raw"), ("scsi", "lv"), ("scsi", "raw")] or set(rows.values()) != {1}:
    bad.append("io rows %r, expected one per transport and target" % rows)
# one boot per transport; over nbd lvm saw its PVs on nbd nodes only
boots = {b.get("transport"): b for b in d["guest"]["boots"]}
if sorted(boots) != ["nbd", "scsi"]: bad.append("boots of transports %r" % sorted(boots))
nb = boots.get("nbd", {})
if not nb.get("pv_names") or any(not p.startswith("/dev/nbd") for p in nb["pv_names"]):
    bad.append("over nbd lvm saw the PVs %r" % nb.get("pv_names"))
if nb.get("disks_seen") != 2: bad.append("over nbd %r of 2 devices attached" % nb.get("disks_seen"))
if not any("fusefarm/transport" in n for n in d["notes"]): bad.append("no note on the nbd transport")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
# its outputs into a run directory (--out), as `fusefarm run` does: the
# document, the printed report, the bar chart and the io chart
expect fs 0 'vg0000/lvol0 *logbufs=8 *xfs-fsync *vg0000/lvol0 *1 *write' -- \
  "$specs/fs-2x2.conf" --nbd-client 0 --out "$tmp/fs-run" --timeout 900
for f in run.json report.txt run.svg run-io.svg; do
  [ -s "$tmp/fs-run/$f" ] || fail "fs: no $f in the run directory ($(ls "$tmp/fs-run" 2>&1 | tr '\n' ' '))"
done
grep -q 'xfs-fsync' "$tmp/fs-run/report.txt" || fail "fs: report.txt has no fs row"
grep -q "results in $tmp/fs-run/: report.txt, run-io.svg, run.json, run.svg" "$tmp/fs.out" ||
  fail "fs: the run does not name its run directory and files"
cp "$tmp/fs-run/run.json" "$tmp/fs.json" 2>/dev/null
# a run directory holds one run: a used --out is refused before any boot
expect out-used 2 "fusefarm vm: --out $tmp/fs-run: exists and is not empty" -- \
  "$specs/fs-2x2.conf" --out "$tmp/fs-run"
python3 - "$tmp/fs.json" <<'PY' || fail "fs: the run document"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
want = [(t, o) for t in ("pv0001", "vg0000/lvol0") for o in ("logbufs=2", "logbufs=8")]
got = [(c["settings"].get("fusefarm/target"), c["settings"].get("fusefarm/mount_options"))
       for c in sorted(d["configs"], key=lambda c: c["id"])]
if got != want: bad.append("configs %r, expected %r" % (got, want))
# they differ only in target and mount options: one boot
if len(d["guest"]["boots"]) != 1: bad.append("%d boots, expected 1" % len(d["guest"]["boots"]))
rows = 0
for c in d["configs"]:
    target = c["settings"].get("fusefarm/target"); opts = c["settings"].get("fusefarm/mount_options")
    for w in c["workloads"]:
        for r in w["runs"]:
            io = r.get("io") or {}
            where = "config %d %s" % (c["id"], w["name"])
            if w["type"] != "fs" or r["exit"] != 0 or r["errors"] != 0 or not io:
                bad.append("%s: run %r" % (where, r)); continue
            rows += 1
            if io["target"] != target: bad.append("%s: target %r" % (where, io["target"]))
            fs = io.get("fs", {})
            if (fs.get("fstype"), fs.get("mount_options")) != ("xfs", opts):
                bad.append("%s: io.fs %r" % (where, fs))
            # the kernel's own view of the mount: busybox mount passed the option
            if opts not in fs.get("mounted", "").split(","):
                bad.append("%s: mounted with %r" % (where, fs.get("mounted")))
            if not all(fs.get(k, -1) >= 0 for k in ("mkfs_wall", "mount_wall", "umount_wall")):
                bad.append("%s: io.fs times %r" % (where, fs))
            # 2 jobs x 256 KiB in 4 KiB writes, every one done
            if io["write"]["ios"] != 128 or io["write"]["bytes"] != 512 << 10:
                bad.append("%s: fio wrote %d I/Os" % (where, io["write"]["ios"]))
            # an fsync after every write: fio's bytes reached the target's
            # device with flushes, and no other device was written
            dev = io.get("devices", {}).get("pv0000", {}) if "/" in target else io.get("farm", {})
            if dev.get("bytes_written", -1) < 512 << 10 or dev.get("flushes", -1) < 1:
                bad.append("%s: %s took %r" % (where, "pv0000" if "/" in target else target, dev))
            if r["writes"] != dev.get("writes") or r["flushes"] != dev.get("flushes"):
                bad.append("%s: the farm took %d writes, %d flushes; the target %r"
                           % (where, r["writes"], r["flushes"], dev))
if rows != 4: bad.append("%d fs rows, expected 4" % rows)
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
# the ext4 mkdir storm (ext4-prefetch.conf, the CI-sized form of
# configs/scenarios/ext4-bitmap-prefetch.conf): one boot, 2 rows
expect ext4 0 'mkdir-storm' -- \
  "$specs/ext4-prefetch.conf" --nbd-client 0 --json "$tmp/ext4.json" --timeout 900
python3 - "$tmp/ext4.json" <<'PY' || fail "ext4: the run document"
import json, sys
d = json.load(open(sys.argv[1]))
bad, rows = [], 0
if len(d["guest"]["boots"]) != 1: bad.append("%d boots, expected 1" % len(d["guest"]["boots"]))
for c in d["configs"]:
    opt = c["settings"].get("fusefarm/mount_options")
    for w in c["workloads"]:
        for r in w["runs"]:
            fs = r.get("fs", {})
            where = "config %d (%r)" % (c["id"], opt)
            if w["type"] != "fs" or r["exit"] != 0 or r["errors"] != 0:
                bad.append("%s: run %r" % (where, r)); continue
            rows += 1
            m = fs.get("mkdir", {})
            if (m.get("jobs"), m.get("per_job"), m.get("made")) != (4, 200, 800) or not m.get("per_second", 0) > 0:
                bad.append("%s: mkdir %r" % (where, m))
            # the guest kernel took the option where given, and only there
            if ("no_prefetch_block_bitmaps" in fs.get("mounted", "").split(",")) != bool(opt):
                bad.append("%s: mounted %r" % (where, fs.get("mounted")))
            if fs.get("tunables") != {"mb_prefetch_limit": "0"}:
                bad.append("%s: tunables %r" % (where, fs.get("tunables")))
            # the farm (on the host) served the guest's reads at mount and
            # during the storm
            for k in ("mount_farm", "load_farm"):
                if not fs.get(k, {}).get("reads", 0) > 0:
                    bad.append("%s: %s %r" % (where, k, fs.get(k)))
if rows != 2: bad.append("%d storm rows, expected 2" % rows)
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
"$ff" report "$tmp/boot16.json" >"$tmp/report16.out" 2>&1 &&
  grep -q 'obtain_device_list_from_udev' "$tmp/report16.out" ||
  { fail "boot16: fusefarm report cannot render the document"; cat "$tmp/report16.out"; }
# a missing build is found before anything boots, as `fusefarm run` finds
# it (exit 1: a build that cannot run; --expect would say 125)
expect bad-lvm 1 "lvm '/nonexistent/lvm': '/nonexistent/lvm version' failed: not an executable file" -- \
  "$tmp/scenario.conf" --lvm /nonexistent/lvm --config 1

n256=$("$ff" manifest "$specs/farm64.conf" --devices 256 | python3 -c '
import json, sys
m = json.load(sys.stdin)
print(len(m["devices"]), sum(len(v["lvs"]) for v in m["vgs"]))')
read -r d256 l256 <<<"$n256"
expect boot256 0 "verdict: ff-dmcheck: $l256 LVs checked, 0 mismatched" -- \
  "$specs/scaled256.conf" --nbd-client 2 --timeout 1800
grep -q "($d256/$d256 disks)" "$tmp/boot256.out" || fail "boot256: not $d256 disks (devices = 256 of farm64)"
grep -q 'nbd-client pv0001: rc 0' "$tmp/boot256.out" || fail "boot256: nbd-client pv0001 did not attach"

expect systemd16 0 'verdict: PASS: 11/11 LVs activated by udev/systemd' -- \
  "$specs/farm16.conf" --boot systemd --out "$tmp/sd16" --timeout 1800
grep -q '<svg' "$tmp/sd16/plot.svg" 2>/dev/null || fail "systemd16: no plot.svg"
grep -q 'systemd-udev' "$tmp/sd16/blame.txt" 2>/dev/null || fail "systemd16: blame has no udev"
grep -q 'Startup finished' "$tmp/sd16/analyze.txt" 2>/dev/null || fail "systemd16: no systemd-analyze time"
grep -q "lvm-activate-" "$tmp/sd16/activation-journal.txt" 2>/dev/null || fail "systemd16: no lvm-activate-VG unit in the journal (not event activation?)"
grep -q "guest lvm2: .*(the build" "$tmp/sd16/summary.txt" && fail "systemd16: says it ran a build"

# The systemd boot with an lvm build (--lvm): the layout `fusefarm
# lvm-build` makes, here from the host's Debian lvm (no lvm2 tree needed):
# sbin/lvm, build.json and the udev rule with every lvm call naming the
# build.  The build replaces Debian's rule, so the journal's units name
# its path; the summary says which build ran.
bdir=$tmp/lvm-cache/0123abcd
mkdir -p "$bdir/sbin" "$bdir/lib/udev/rules.d"
cp "$(command -v lvm)" "$bdir/sbin/lvm"
echo '{"lvm_version": "LVM version: (the host lvm, test-vm)"}' >"$bdir/build.json"
sed "s+/sbin/lvm+$bdir/sbin/lvm+g" /usr/lib/udev/rules.d/69-lvm.rules \
  >"$bdir/lib/udev/rules.d/69-dm-lvm.rules"
expect systemd16-build 0 'verdict: PASS: 11/11 LVs activated by udev/systemd' -- \
  "$specs/farm16.conf" --boot systemd --lvm "$bdir/sbin/lvm" --out "$tmp/sd16b" --timeout 1800
grep -qF "(the build $bdir, with its own udev rule and units)" "$tmp/sd16b/summary.txt" 2>/dev/null ||
  fail "systemd16-build: the summary does not name the build"
grep -qF "$bdir/sbin/lvm vgchange" "$tmp/sd16b/activation-journal.txt" 2>/dev/null ||
  fail "systemd16-build: no activation unit ran the build's lvm: $(head -5 "$tmp/sd16b/activation-journal.txt" 2>/dev/null)"
grep -q "slowest lvm unit (blame, or the journal for lvm-activate-VG): lvm-activate-.* [0-9.]*s$" "$tmp/sd16b/summary.txt" 2>/dev/null ||
  fail "systemd16-build: no slowest lvm unit in the summary"
# refused before anything boots: not a build, several builds for a spec,
# a ref without a tree
expect lvm-not-build 2 'not the sbin/lvm of a `fusefarm lvm-build` build' -- \
  --boot systemd --lvm "$(command -v lvm)" --out "$tmp/sd-nb" "$specs/farm16.conf"
expect lvm-two-spec 2 'several builds are a matrix axis' -- \
  --lvm "$bdir/sbin/lvm" --lvm "$bdir/sbin/lvm" "$specs/farm16.conf"
FF_LVM_GIT= expect lvm-ref-no-tree 2 'no lvm2 tree was given' -- \
  --boot systemd --lvm v2_03_05 "$specs/farm16.conf"

# SIGTERM to the whole run (its process group, as a CI job's timeout or a
# ^C sends it) while its first boot runs: that boot stops (qemu, nbdkit)
# and the second of the scenario's 2 boots never starts.  The signal is
# sent when the first boot's script says its qemu started (read from the
# run's output as it comes), not after a time.
rm -f "$tmp/stop.out" "$tmp/stop.fifo"
mkfifo "$tmp/stop.fifo"
setsid "$ff" vm "$tmp/scenario.conf" --timeout 1800 >"$tmp/stop.fifo" 2>&1 &
stop_pid=$!
sent=0
while IFS= read -r line; do
  printf '%s\n' "$line" >>"$tmp/stop.out"
  if [ "$sent" = 0 ] && [[ $line == *"qemu started"* ]]; then
    kill -TERM -- "-$stop_pid" 2>/dev/null || true
    sent=1
  fi
done <"$tmp/stop.fifo"
rc=0
wait "$stop_pid" || rc=$?
nboots=$(grep -c 'fusefarm vm: initramfs boot of' "$tmp/stop.out" || true)
if [ "$rc" = 0 ] || [ "$nboots" != 1 ] || ! grep -q 'fusefarm vm: stopped by signal 15' "$tmp/stop.out"; then
  fail "stop: rc $rc, $nboots boots started (want 1), in:"; sed 's/^/  /' "$tmp/stop.out"
else
  echo "ok   stop: rc $rc after 1 of 2 boots: $(grep -m1 'stopped by signal' "$tmp/stop.out")"
fi
[ -z "$(leftovers)" ] || { fail "stop: left processes behind:"; pgrep -af "$runs_re" | cut -c1-160; }

FF_APPEND='rdinit=/nonexistent' expect panic 1 'error: guest kernel panic' -- "$specs/farm16.conf"
expect timeout 1 'error: timeout: the guest did not finish in 3s' -- --timeout 3 "$specs/farm16.conf"
expect timeout-systemd 1 'error: timeout: the guest did not finish in 5s' -- \
  --boot systemd --timeout 5 --out "$tmp/sd-timeout" "$specs/farm16.conf"
FF_QEMU=/nonexistent/qemu expect no-qemu 2 'error: /nonexistent/qemu not found' -- "$specs/farm16.conf"
expect bad-boot 2 'expected initramfs or systemd' -- --boot grub "$specs/farm16.conf"
expect nbd-systemd 2 'fusefarm/transport has "nbd": only the initramfs boot' -- \
  --boot systemd "$specs/io-nbd.conf"

[ "$fails" = 0 ] && echo "test-vm: PASS" || { echo "test-vm: $fails FAILED"; exit 1; }
