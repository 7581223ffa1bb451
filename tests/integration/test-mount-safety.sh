#!/usr/bin/env bash
# What `fusefarm mount` must never do quietly (issue: "no write lost in
# silence"):
# - an overlay that cannot be saved at exit (--save-overlay F on a full
#   file system, the daemon in the background without --log) leaves
#   F.failed with the reason, and `fusefarm stats MNT` and `fusefarm
#   detach MNT` say so and exit 1 (detach once: it is told then);
# - two `fusefarm mount` of one mount point at once: exactly one mounts,
#   the other is refused;
# - a control command holding a NUL byte is refused, not cut at the NUL;
# - manifest.json opened by many readers at once is built once;
# - a spec, profile or overlay that is a fifo is refused at once, never
#   read forever;
# - `fusefarm cleanup` lists a farm mounted by hand and leaves it alone.
# usage: test-mount-safety.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-mount-safety.sh FUSEFARM}
spec=$here/../../configs/smoke.conf
ff_require python3 fusermount3 timeout
ff_env_init
s=$FF_SCRATCH
FF_FUSEFARM=$bin

# daemon_pid MNT: the pid of the daemon serving MNT (its info.json).
daemon_pid() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' \
    "$1/.fusefarm/info.json"
}

# ---- a failed save at exit is impossible to miss -------------------------
# A 1 MiB tmpfs of the test's own holds the save; 3 MiB of writes cannot
# fit.  The daemon goes to the background without --log: its stderr is
# /dev/null, as a user's would be.
full=$s/full
mkdir -p "$full"
mount -t tmpfs -o size=1m fusefarm-test-full "$full"
ff_on_cleanup "umount '$full' 2>/dev/null || true"
FF_MNT=$s/mnt
FF_STATE=$s/state
mkdir -p "$FF_MNT"
ff_on_cleanup "ff_fuse_cleanup '$FF_MNT'"
# The record detach tells is keyed by the mount point (under our scratch).
ff_on_cleanup "rm -f /run/fusefarm/$(python3 -c 'import sys, re
print(re.sub(rb"[^A-Za-z0-9._+-]", lambda m: b"%%%02X" % m.group()[0], sys.argv[1].encode()).decode())' "$(realpath "$FF_MNT")").save-failed"
"$bin" mount "$spec" "$FF_MNT" --save-overlay "$full/farm.ovl" ||
  ff_die "fusefarm mount failed"
FF_DAEMON_PID=$(daemon_pid "$FF_MNT")
head -c $((3 << 20)) /dev/urandom >"$s/junk"
dd if="$s/junk" of="$FF_MNT/pv0001" bs=1M seek=8 conv=notrunc status=none ||
  ff_die "writing 3 MiB to pv0001 failed"
fusermount3 -u "$FF_MNT"
ff_wait_exit "$FF_DAEMON_PID" 120 || ff_die "the daemon did not exit after the unmount"
[[ ! -e $full/farm.ovl ]] || ff_die "a 3 MiB overlay cannot fit in 1 MiB, yet $full/farm.ovl exists"
[[ -f $full/farm.ovl.failed ]] || ff_die "no $full/farm.ovl.failed marker after a failed save"
grep -q "was NOT saved and is lost" "$full/farm.ovl.failed" ||
  ff_die "the marker does not say the overlay is lost: $(cat "$full/farm.ovl.failed")"
grep -q "No space left on device" "$full/farm.ovl.failed" ||
  ff_die "the marker does not give the reason: $(cat "$full/farm.ovl.failed")"
ff_log "marker: $(cat "$full/farm.ovl.failed")"

rc=0
"$bin" stats "$FF_MNT" >/dev/null 2>"$s/stats.err" || rc=$?
((rc == 1)) || ff_die "fusefarm stats of the unmounted farm: exit $rc, expected 1"
grep -q "did NOT save its write overlay.*No space left on device" "$s/stats.err" ||
  ff_die "fusefarm stats does not report the lost overlay: $(cat "$s/stats.err")"
rc=0
"$bin" detach "$FF_MNT" >/dev/null 2>"$s/detach.err" || rc=$?
((rc == 1)) || ff_die "fusefarm detach after the failed save: exit $rc, expected 1"
grep -q "did NOT save its write overlay.*No space left on device" "$s/detach.err" ||
  ff_die "fusefarm detach does not report the lost overlay: $(cat "$s/detach.err")"
# Told once: a second detach has nothing to say.
"$bin" detach "$FF_MNT" --quiet 2>"$s/detach2.err" ||
  ff_die "a second detach still fails: $(cat "$s/detach2.err")"
# A save that works again removes the stale marker.
umount "$full"
mount -t tmpfs -o size=16m fusefarm-test-full "$full"
echo stale >"$full/farm.ovl.failed"
"$bin" mount "$spec" "$FF_MNT" --save-overlay "$full/farm.ovl" ||
  ff_die "fusefarm mount failed"
FF_DAEMON_PID=$(daemon_pid "$FF_MNT")
dd if="$s/junk" of="$FF_MNT/pv0001" bs=1M seek=8 conv=notrunc status=none
fusermount3 -u "$FF_MNT"
ff_wait_exit "$FF_DAEMON_PID" 120 || ff_die "the daemon did not exit after the unmount"
[[ -s $full/farm.ovl ]] || ff_die "the save to a file system with room failed"
[[ ! -e $full/farm.ovl.failed ]] || ff_die "a good save left the stale marker"

# ---- two mounts of one mount point at once --------------------------------
for try in 1 2 3 4 5; do
  m=$s/race$try
  mkdir -p "$m"
  ff_on_cleanup "fusermount3 -u '$m' 2>/dev/null || true"
  "$bin" mount "$spec" "$m" 2>"$s/race$try.a" &
  a=$!
  "$bin" mount "$spec" "$m" 2>"$s/race$try.b" &
  b=$!
  ra=0 rb=0
  wait "$a" || ra=$?
  wait "$b" || rb=$?
  n=$(awk -v d="$(realpath "$m")" '$5 == d' /proc/self/mountinfo | wc -l)
  pid=$(daemon_pid "$m" 2>/dev/null || true)
  fusermount3 -u "$m" 2>/dev/null || true
  while fusermount3 -u "$m" 2>/dev/null; do :; done
  [[ -z $pid ]] || ff_wait_exit "$pid" 120 || ff_die "a daemon did not exit"
  ((n == 1)) || ff_die "try $try: $n farm mounts at $m (exit $ra and $rb)"
  if ((ra == 0 && rb == 0)) || ((ra != 0 && rb != 0)); then
    ff_die "try $try: exits $ra and $rb, expected one success and one refusal"
  fi
  cat "$s/race$try.a" "$s/race$try.b" | grep -q "already a mount point" ||
    ff_die "try $try: the refusal does not say why: $(cat "$s/race$try.a" "$s/race$try.b")"
done

# ---- control commands are text; manifest.json is built once ---------------
FF_MNT=$s/mnt
FF_STATE=$s/state
"$bin" mount "$spec" "$FF_MNT" || ff_die "fusefarm mount failed"
FF_DAEMON_PID=$(daemon_pid "$FF_MNT")
# fusefarm cleanup lists a farm mounted by hand and leaves it alone.
"$bin" cleanup --prefix "$s" >"$s/cleanup.out" 2>&1 || ff_die "fusefarm cleanup failed: $(cat "$s/cleanup.out")"
grep -q "left alone: $(realpath "$FF_MNT"), a farm mounted by hand" "$s/cleanup.out" ||
  ff_die "fusefarm cleanup does not list the farm mounted by hand: $(cat "$s/cleanup.out")"
ff_is_mounted "$FF_MNT" && ff_alive "$FF_DAEMON_PID" ||
  ff_die "fusefarm cleanup touched a farm mounted by hand"
mkdir -p "$s/saves"
python3 - "$FF_MNT/.fusefarm/control" "$s/saves/z" <<'PY' || ff_die "a command with a NUL byte was not refused"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, b"save-overlay " + sys.argv[2].encode() + b"\0junk\n")
except OSError as e:
    sys.exit(0 if e.errno == errno.EINVAL else f"errno {e.errno}, expected EINVAL")
sys.exit("the write was accepted")
PY
[[ ! -e $s/saves/z ]] || ff_die "save-overlay PATH\\0junk saved to PATH"
grep -q "NUL byte" "$FF_MNT/.fusefarm/last-error" ||
  ff_die "last-error does not name the NUL: $(cat "$FF_MNT/.fusefarm/last-error")"

python3 - "$FF_MNT/.fusefarm" <<'PY' || ff_die "manifest.json readers"
import json, os, sys
d = sys.argv[1]
fds = [os.open(os.path.join(d, "manifest.json"), os.O_RDONLY) for _ in range(8)]
texts = []
for fd in fds:
    chunks = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            break
        chunks.append(b)
    texts.append(b"".join(chunks))
for fd in fds:
    os.close(fd)
assert len(set(texts)) == 1, "readers saw different manifests"
json.loads(texts[0])
builds = json.load(open(os.path.join(d, "info.json")))["manifest_builds"]
print(f"8 readers, manifest of {len(texts[0])} bytes built {builds} time(s)")
sys.exit(0 if builds == 1 else f"manifest built {builds} times for 8 readers")
PY
fusermount3 -u "$FF_MNT"
ff_wait_exit "$FF_DAEMON_PID" 120 || ff_die "the daemon did not exit after the unmount"

# ---- a fifo is no input -------------------------------------------------
mkfifo "$s/fifo.conf"
rc=0
timeout 60 "$bin" check "$s/fifo.conf" 2>"$s/fifo.err" || rc=$?
((rc == 2)) || ff_die "fusefarm check FIFO: exit $rc, expected 2 (124: it hung)"
grep -q "not a regular file (a fifo)" "$s/fifo.err" ||
  ff_die "fusefarm check FIFO does not say why: $(cat "$s/fifo.err")"
rc=0
timeout 60 "$bin" gen "$spec" -o "$s/gen" --overlay "$s/fifo.conf" 2>"$s/fifo.err" || rc=$?
((rc == 2)) || ff_die "fusefarm gen --overlay FIFO: exit $rc, expected 2 (124: it hung)"
grep -q "not a regular file (a fifo)" "$s/fifo.err" ||
  ff_die "--overlay FIFO does not say why: $(cat "$s/fifo.err")"
echo "ok"
