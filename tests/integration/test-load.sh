#!/usr/bin/env bash
# Load: the FUSE daemon at 10,000 devices (docs/testing.md).
#   a. `fusefarm mount --devices 10000` of a 1000-device spec (the shape of
#      configs/mixed-1000.conf), checked against the same spec written at
#      10x by hand (same manifest); `fusefarm attach` makes 10,000 loops:
#      every loop has its device's size and its first 128 KiB (lvm's
#      label-scan block) equal `fusefarm gen`'s image; 50 of them also
#      their first and last 2 MiB; `fusefarm detach` frees all 10,000.
#      Mount, attach and detach are timed.
#   b. 10,000 reads in flight at once: with a fixed 1 s read latency,
#      one O_DIRECT read per device, all submitted with Linux aio
#      (tests/tools/ff-aio-reads.c), on the FUSE files and through the
#      loops.  The daemon holds more of them at once than it has FUSE
#      threads (stats inflight_max): no thread sleeps through a delay.
#      How many it holds is printed, not judged: on a quiet machine all
#      10,000 on the files (submitting them takes less than the latency),
#      on a loaded one fewer, as the first complete before the last are
#      submitted (bench/bench-fuse.sh measures it).  Every read waits its
#      whole latency.  The batch times are printed (about one latency on
#      the files, a few through the loops), not judged; 100 latencies is
#      the hang limit (one at a time: 10,000).
#   c. Writers hammering one overlay through two paths at once: 4 write
#      through loop devices (O_DIRECT), 4 through NBD (nbdkit's file
#      plugin serving the FUSE files themselves, so both paths reach the
#      same daemon and overlay; the fusefarm plugin would be a second
#      process with an overlay of its own), each to its own stripes of
#      the same 8 devices, stripes of 6 KiB interleaved so that writers
#      share 4 KiB overlay blocks (tests/lib/load-writes.py).  Every
#      stripe is read back through the loops, NBD and the FUSE files:
#      each holds its owner's last record, checksummed, none lost or
#      torn.  The overlay is saved; after a remount with --overlay every
#      stripe is verified again through all three paths.
# The ASan build (FF_SANITIZE=ON in FF_BUILD_DIR's CMakeCache.txt) runs
# every part at full size, says so, and fails on any sanitizer report in
# the daemon's log.  Figures and times: docs/testing.md.
# usage: test-load.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-load.sh FUSEFARM}
build=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}
aio=$build/tests/ff-aio-reads
writes=$here/../lib/load-writes.py
py=/usr/bin/python3 # Debian's: python3-libnbd is not on other pythons' path
ff_require python3 fusermount3 mountpoint nbdkit
"$py" -c 'import nbd' 2>/dev/null ||
  ff_die "$py cannot import nbd: install python3-libnbd (scripts/deps.sh)"
[[ -x $aio ]] || ff_die "$aio: not built (cmake --build $build)"
[[ -d /sys/module/loop ]] || ff_die "no loop driver (modprobe loop)"
ff_env_init # scratch dir and cleanup trap; lvm is not run here
# 10,000 loops must never outlive the test: a closed pipe or terminal
# ends it through the EXIT trap too (lvm-env.sh traps INT and TERM).
trap 'exit 129' HUP
trap 'exit 141' PIPE
s=$FF_SCRATCH
t_start=$(date +%s.%N)

k=10 # the farm is 1000 * k devices
nwrites=2000
n=$((1000 * k))
# Nothing needs scaling down under ASan+UBSan: the daemon is not the
# bottleneck (loop attach, the kernel's loop workers and the Python
# writers are), and the whole test stays within 1-2 minutes.
if grep -qx 'FF_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  ff_log "sanitizer build (FF_SANITIZE=ON): full size, $n devices; the daemon's log is checked for reports"
fi
latency_ms=1000 # long enough that all 10,000 are submitted before one is due

# 10,000 open files in ff-aio-reads, 10,000 aio slots of the machine's
# fs.aio-max-nr (65536, shared: each lvm process takes 256).
hard=$(ulimit -Hn)
[[ $hard == unlimited ]] || ((hard >= n + 64)) ||
  ff_die "the fd hard limit $hard is below $n devices + 64"
aio_free=$(($(cat /proc/sys/fs/aio-max-nr) - $(cat /proc/sys/fs/aio-nr)))
((aio_free >= n)) ||
  ff_die "fs.aio-max-nr leaves $aio_free aio slots free, $n needed"

# ctl_read NAME: the control file .fusefarm/NAME on stdout.  (The daemon
# replies to a control-file read from a copy the request owns, so a
# reader may close the file the moment its last chunk arrives.)
ctl_read() {
  cat "$FF_MNT/.fusefarm/$1"
}

# mount_farm ARGS...: mount the farm at $s/mnt at $n devices (ff_fuse_mount
# of farm.sh, reading info.json with ctl_read).
# shellcheck disable=SC2034  # FF_FUSEFARM is read by farm.sh
FF_FUSEFARM=$bin
FF_MNT=$s/mnt
FF_STATE=$s/state
mkdir -p "$FF_MNT"
mount_farm() {
  "$bin" mount "$s/farm.conf" "$FF_MNT" --log "$s/daemon.log" --devices "$n" "$@" ||
    ff_die "fusefarm mount failed"
  FF_DAEMON_PID=$(ctl_read info.json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
}

# unmount_checked: unmount (retrying while the kernel still releases
# the loops' files), wait for the daemon to exit, and fail on any
# sanitizer report in its log (a sanitizer build reports leaks at exit).
unmount_quietly() { fusermount3 -u "$FF_MNT" 2>/dev/null || ! ff_is_mounted "$FF_MNT"; }
unmount_checked() {
  local t0
  ff_wait_until 120 unmount_quietly ||
    ff_die "cannot unmount $FF_MNT: $(fusermount3 -u "$FF_MNT" 2>&1)"
  t0=$(date +%s.%N)
  ff_wait_exit "$FF_DAEMON_PID" 300 ||
    ff_die "the daemon still runs 300 s after the unmount; namespaces holding $FF_MNT: $(ff_mount_holders "$FF_MNT")"
  ff_log "the daemon exited $(elapsed "$t0") s after the unmount"
  if grep -Eq 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$s/daemon.log"; then
    head -40 "$s/daemon.log" >&2
    ff_die "the daemon reported errors (above, $s/daemon.log)"
  fi
  return 0
}

elapsed() { # elapsed T0: seconds since T0, 2 decimals
  awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'
}

# The 1000-device spec (mixed-1000's shape) at scale K.
spec_at() {
  local k=$1
  cat <<CONF
seed = 1000; device_size = "1G";
vgs = ( { count = $((600 * k)); lvs = ({ fill = 0.5; }); },
        { count = $((50 * k)); pvs = 4;
          lvs = ({ name = "data"; type = "striped"; stripes = 4;
                   stripe_size = "128K"; fill = 0.6; },
                 { name = "span"; fill = 0.3; }); },
        { count = $((20 * k)); pvs = 3; mda_copies = 2; extent_size = "8M";
          lvs = ({ name = "big"; fill = 0.95; }); },
        { count = $((40 * k)); mda_size = "64K"; pe_start = "1M"; seqno = 120;
          lvs = ({ count = 3; name = "h%u"; size = "100M"; }); } );
orphans = ({ count = $((50 * k)); }, { count = $((20 * k)); mda_copies = 2; });
blanks = ({ count = $((20 * k)); });
signatures = ( { type = "mbr"; count = $((2 * k)); }, { type = "gpt"; count = $((2 * k)); },
               { type = "ext4"; count = $((2 * k)); }, { type = "xfs"; count = $((2 * k)); },
               { type = "md"; count = $((2 * k)); } );
CONF
}
spec_at 1 >"$s/farm.conf"
spec_at "$k" >"$s/farm-x$k.conf"
cat >"$s/fixed.conf" <<CONF
name = "fixed-${latency_ms}ms";
groups = ({ devices = "all"; read = { dist = "fixed"; value = "${latency_ms}ms"; }; });
CONF
# Writes and their read-back with a little jitter, so that replies (and
# the loop driver's pieces of a write) come back out of order.
cat >"$s/jitter.conf" <<'CONF'
name = "jitter-1ms";
groups = ({ devices = "all";
            read = { dist = "uniform"; min = "0ms"; max = "1ms"; };
            write = { dist = "uniform"; min = "0ms"; max = "1ms"; }; });
CONF

# ---- a. mount, attach, check, (detach in part c) ---------------------------
# Cleanup, whatever happens: detach (the loops hold the mount's files),
# unmount what the mount table shows, stop the daemon.  ff_fuse_cleanup
# asks mountpoint(1), which says "not a mount point" once the daemon has
# died (stat fails with ENOTCONN) and so would leave a dead mount behind.
ff_on_cleanup "'$bin' detach '$FF_MNT' --state '$FF_STATE' --quiet 2>/dev/null;
  grep -qF ' $FF_MNT fuse' /proc/self/mounts &&
  { fusermount3 -u '$FF_MNT' 2>/dev/null || fusermount3 -uz '$FF_MNT'; }
  ff_fuse_cleanup '$FF_MNT'"
t0=$(date +%s.%N)
mount_farm
t_mount=$(elapsed "$t0")
ctl_read devices >"$s/devices"
got=$(wc -l <"$s/devices")
((got == n)) || ff_die "--devices $n serves $got devices"
"$bin" manifest "$s/farm-x$k.conf" >"$s/manifest.json"
ctl_read manifest.json >"$s/mount-manifest.json"
"$py" - "$s/manifest.json" "$s/mount-manifest.json" <<'PY' ||
import json, sys
sys.exit(0 if json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])) else 1)
PY
  ff_die "the mount at --devices $n is not the spec written at ${k}x (manifests differ)"
# The reference images (10,000 sparse files, 111 MiB) on tmpfs: on a
# busy disk writing and deleting them took 10-20 s each, and their dirty
# pages slowed attach's fsyncs behind them.
if [[ -d /dev/shm && -w /dev/shm ]]; then
  img=$(mktemp -d /dev/shm/ff-load-img.XXXXXX)
  ff_on_cleanup "rm -rf -- '$img'"
else
  img=$s/img
fi
"$bin" gen -q "$s/farm-x$k.conf" -o "$img"

t0=$(date +%s.%N)
"$bin" attach "$FF_MNT" --state "$FF_STATE" --quiet >/dev/null ||
  ff_die "fusefarm attach of $n devices failed"
t_attach=$(elapsed "$t0")
cp "$FF_STATE/loops" "$s/attached"
got=$(wc -l <"$s/attached")
((got == n)) || ff_die "attach attached $got loops, not $n"
ff_log "$n devices: mount $t_mount s, attach $t_attach s"

# Every loop's size; 50 loops' first and last 2 MiB.
"$py" - "$s/attached" "$s/manifest.json" "$img" <<'PY' || ff_die "a loop device is not its farm device"
import json, mmap, os, sys
size = {d["name"]: d["size"] for d in json.load(open(sys.argv[2]))["devices"]}
loops = [l.split() for l in open(sys.argv[1])]
bad = []
for dev, name, _ in loops:
    sectors = int(open(f"/sys/block/{os.path.basename(dev)}/size").read())
    if sectors * 512 != size[name]:
        bad.append(f"{dev} ({name}): {sectors * 512} bytes, expected {size[name]}")
buf = mmap.mmap(-1, 2 << 20)
for dev, name, _ in loops[::len(loops) // 50]:
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    with open(f"{sys.argv[3]}/{name}", "rb") as ref:
        for off in (0, size[name] - (2 << 20)):
            os.preadv(fd, [buf], off)
            ref.seek(off)
            if buf[:] != ref.read(2 << 20):
                bad.append(f"{dev} ({name}): 2 MiB at {off} differ from the image")
    os.close(fd)
if bad:
    print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
PY
# Every loop's first 128 KiB, all at once.
awk -v img="$img" '{ print $1, img "/" $2 }' "$s/attached" >"$s/aio-loops"
awk -v img="$img" '{ print $3, img "/" $2 }' "$s/attached" >"$s/aio-files"
"$aio" --size 131072 -l "$s/aio-loops" >"$s/label.json" ||
  ff_die "the first 128 KiB of some loops differ from the images"
ff_log "$n loops: sizes right, first 128 KiB of each and 2 MiB at both ends of 50 equal the images"

# ---- b. 10,000 delayed reads in flight -------------------------------------
"$bin" profile "$FF_MNT" "$s/fixed.conf" >/dev/null
inflight() { # inflight WHAT: one aio batch over the list, checked
  echo reset >"$FF_MNT/.fusefarm/control"
  "$aio" -l "$1" >"$s/$2.json" || ff_die "$2: reads failed"
  ctl_read stats.json >"$s/$2-stats.json"
}
inflight "$s/aio-files" files
inflight "$s/aio-loops" loops
ctl_read info.json >"$s/info.json"
"$py" - "$s" "$n" "$latency_ms" <<'PY' || ff_die "the reads were not in flight together"
import json, sys
s, n, lat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) / 1e3
ok = True
info = json.load(open(f"{s}/info.json"))
hang = 100  # latencies; one at a time would be n, 12 sleeping threads n/12
for what in ("files", "loops"):
    r = json.load(open(f"{s}/{what}.json"))
    st = json.load(open(f"{s}/{what}-stats.json"))
    print(f"{n} aio reads on the {what}, {lat * 1e3:.0f} ms each: "
          f"submitted in {r['submit_s']:.2f} s, all done in {r['wall_s']:.2f} s "
          f"= {r['wall_s'] / lat:.1f} x the latency (one at a time: {n} x); "
          f"first {r['lat_min_s']:.3f} s, median {r['lat_p50_s']:.3f} s; "
          f"the daemon held {st['inflight_max']} at once")
    # Every read was held its whole latency (a lower bound: load only
    # adds to it).  In flight together: more than the daemon's FUSE
    # threads could hold if they slept.  All n at once needs the whole
    # batch submitted within one latency, which a loaded machine does not
    # give (10,000 io_submits took 1.3 s at load 10): printed, not judged.
    # Wall time is printed, not judged (bench/run measures it); the hang
    # limit is far below the n/threads latencies that sleeping threads
    # would need.
    if r["n"] != n or r["errors"] or r["lat_min_s"] < lat * 0.99:
        print(f"{what}: {r}")
        ok = False
    if r["wall_s"] > hang * lat:
        print(f"{what}: {r['wall_s']:.2f} s is more than {hang} latencies: hung")
        ok = False
    if st["inflight_max"] <= info["fuse_threads"]:
        print(f"{what}: only {st['inflight_max']} reads were in flight at once "
              f"({info['fuse_threads']} FUSE threads)")
        ok = False
print(f"daemon: {info['fuse_threads']} FUSE threads, {info['sched_threads']} "
      f"scheduler threads, {info['delayed_max']} delayed replies at most")
sys.exit(0 if ok else 1)
PY

# ---- c. writers on loop and NBD, one overlay -------------------------------
"$bin" profile "$FF_MNT" "$s/jitter.conf" >/dev/null
# 8 PVs spread over the farm: past 64 MiB they hold LV data, zeros.
mapfile -t wdevs < <(awk '$2 == "pv" { print $1 }' "$s/devices" |
  awk -v n="$n" 'NR % int(n / 10) == 1' | head -8)
((${#wdevs[@]} == 8)) || ff_die "found ${#wdevs[@]} PVs to write to, not 8"
devlist=$(IFS=,; echo "${wdevs[*]}")
looplist=$(for d in "${wdevs[@]}"; do awk -v d="$d" '$2 == d { print $1 }' "$s/attached"; done | paste -sd,)
filelist=$(for d in "${wdevs[@]}"; do echo "$FF_MNT/$d"; done | paste -sd,)

# nbdkit's file plugin serves the FUSE files (dir=MNT: one export per
# file, opened per connection): NBD writes reach the same daemon.
# The pid file lives only while nbdkit runs: the cleanup hook kills a
# server a failing test left, never a later process with its pid.
ff_on_cleanup "[[ -s '$s/nbdkit.pid' ]] && kill \$(cat '$s/nbdkit.pid') 2>/dev/null"
nbd_run() { # nbd_run SCRIPT: a captive nbdkit over MNT running SCRIPT
  local rc=0
  nbdkit -U - -P "$s/nbdkit.pid" file dir="$FF_MNT" --run "$1" 2>"$s/nbdkit.err" || rc=$?
  rm -f "$s/nbdkit.pid"
  return $rc
}
t0=$(date +%s.%N)
nbd_run "$py $writes write --socket \"\$unixsocket\" --devices $devlist --loops $looplist \
           --writes $nwrites --log $s/writes.json &&
         $py $writes verify --socket \"\$unixsocket\" --loops $looplist --files $filelist \
           --log $s/writes.json" ||
  ff_die "writes through loop and NBD were lost or torn (above) $(cat "$s/nbdkit.err")"
ff_log "write and verify: $(elapsed "$t0") s"
ctl_read stats.json >"$s/write-stats.json"
"$py" - "$s/write-stats.json" "$((8 * nwrites))" <<'PY' || ff_die "the stats miss writes"
import json, sys
st = json.load(open(sys.argv[1]))
w = sum(d["writes"] for d in st["devices"])
e = sum(d["errors"] for d in st["devices"])
print(f"the daemon counted {w} writes for {sys.argv[2]} issued "
      f"(the loop driver may split one), {e} errors")
sys.exit(0 if w >= int(sys.argv[2]) and e == 0 else 1)
PY
echo "save-overlay $s/saved.ovl" >"$FF_MNT/.fusefarm/control" ||
  ff_die "save-overlay failed: $(ctl_read last-error)"

# Detach all 10,000: none left pointing into the mount, the state gone.
t0=$(date +%s.%N)
"$bin" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "fusefarm detach failed"
t_detach=$(elapsed "$t0")
"$py" - "$s/attached" "$FF_MNT" <<'PY' || ff_die "detach left loops behind"
import glob, sys
mine = {l.split()[0] for l in open(sys.argv[1])}
left = []
for bf in glob.glob("/sys/block/loop*/loop/backing_file"):
    try:
        f = open(bf).read().strip()
    except OSError:
        continue  # detached meanwhile
    if f.startswith(sys.argv[2] + "/"):
        left.append(f"{bf.split('/')[3]} -> {f}")
if left:
    print("\n".join(left[:10]))
sys.exit(1 if left else 0)
PY
[[ ! -e $FF_STATE ]] || ff_die "detach left its state dir $FF_STATE"
ff_log "detached $n loops in $t_detach s"

# Remount from the saved overlay; verify through all three paths again.
unmount_checked
mount_farm --overlay "$s/saved.ovl"
"$bin" attach "$FF_MNT" --state "$FF_STATE" --quiet --only "$devlist" >/dev/null ||
  ff_die "fusefarm attach --only $devlist failed"
looplist=$(for d in "${wdevs[@]}"; do awk -v d="$d" '$2 == d { print $1 }' "$FF_STATE/loops"; done | paste -sd,)
nbd_run "$py $writes verify --socket \"\$unixsocket\" --loops $looplist --files $filelist \
           --log $s/writes.json" ||
  ff_die "after the remount with --overlay, writes are lost or torn (above)"
# The overlay changed nothing else: every file's first 128 KiB again.
"$aio" --size 131072 -l "$s/aio-files" >/dev/null ||
  ff_die "after the remount, some devices' first 128 KiB differ from the images"
"$bin" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "detach after the remount failed"
unmount_checked

echo "PASS: $n devices: mount $t_mount s, attach $t_attach s, detach $t_detach s;" \
  "$n reads in flight at once; $((8 * nwrites)) writes through loop and NBD kept" \
  "across save and remount (whole test $(elapsed "$t_start") s)"
