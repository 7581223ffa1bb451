#!/usr/bin/env bash
# When things go wrong:
#   - kill -9 of the daemon: reads through its loop devices fail with EIO
#     (nothing hangs: 60 s is the give-up limit, the time is only
#     reported), `fusefarm detach` and `fusermount3 -u` clean up;
#   - a bad profile, a missing mount point, a mount point that is a file:
#     a clear message, exit status 2, nothing mounted or attached;
#   - injected faults reach the reader and are counted as injected in the
#     stats: an EIO range (EIO through a loop); a device that vanishes
#     after its 5th request (vanish_after: its 6th read fails with ENODEV,
#     whatever the time); a profile switch restarting that count; a live
#     switch to vanish_at = "0s" (the device vanishes at the switch).
#     Every fault is triggered by an event (a request count, a control
#     command), never by wall time.
# usage: test-fuse-faults.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-fuse-faults.sh FUSEFARM}
spec=$here/../../configs/smoke.conf
ff_require python3 fusermount3 mountpoint timeout dd
ff_env_init
s=$FF_SCRATCH

# ---- refused before mounting -------------------------------------------
expect_refused() { # WHAT MNT EXPECTED-TEXT -- ARGS...
  local what=$1 mnt=$2 want=$3 rc=0
  shift 4
  "$bin" mount "$@" 2>"$s/err" || rc=$?
  ((rc == 2)) || ff_die "$what: exit status $rc, expected 2"
  grep -qF -- "$want" "$s/err" || ff_die "$what: message lacks '$want': $(cat "$s/err")"
  if [[ -d $mnt ]] && mountpoint -q "$mnt"; then
    ff_die "$what: $mnt was left mounted"
  fi
  ff_log "$what: $(head -1 "$s/err")"
}
mkdir -p "$s/mnt"
printf 'groups = ({ devices = "all";\n  read = { dist = "lognormal"; median = "5"; }; });\n' \
  >"$s/bad.conf"
expect_refused "bad profile" "$s/mnt" "bad.conf:2: groups.[0].read.median" -- \
  "$spec" "$s/mnt" --profile "$s/bad.conf"
expect_refused "missing mount point" "$s/nowhere" "mount point $s/nowhere: No such file or directory" -- \
  "$spec" "$s/nowhere"
: >"$s/file"
expect_refused "mount point is a file" "$s/file" "is not a directory" -- "$spec" "$s/file"
expect_refused "a profile as the spec" "$s/mnt" "bad.conf: this is a profile, not a farm spec" -- "$s/bad.conf" "$s/mnt"
printf 'seed = 1;\ncolour = "red";\n' >"$s/badspec.conf"
expect_refused "bad spec" "$s/mnt" "badspec.conf:2: colour: unknown key" -- "$s/badspec.conf" "$s/mnt"
pgrep -f "fusefarm mount .*$s" >/dev/null && ff_die "a refused mount left a daemon running"
ff_require losetup
losetup -l -n -O BACK-FILE | grep -qF "$s/" && ff_die "a refused mount left loops attached"

# ---- injected faults -------------------------------------------------------
# pv0001 vanishes after 5 requests.  Only pv0000 gets a loop: pv0001 is
# read by this test alone, through its file (one O_DIRECT read of 4 KiB is
# one request), so the count is ours (a loop would be probed by udev).
cat >"$s/faults.conf" <<'CONF'
name = "test-faults";
groups = ({ devices = "pv0000"; faults = { eio_ranges = ( ("1M", "64K") ); }; },
          { devices = "pv0001"; faults = { vanish_after = 5; }; });
CONF
# The same EIO range; pv0001 vanishes the moment this profile is applied.
cat >"$s/gone.conf" <<'CONF'
name = "test-faults-gone";
groups = ({ devices = "pv0000"; faults = { eio_ranges = ( ("1M", "64K") ); }; },
          { devices = "pv0001"; faults = { vanish_at = "0s"; }; });
CONF
ff_fuse_mount "$bin" "$spec" "$s/mnt" --profile "$s/faults.conf"
ff_fuse_attach --only pv0000
a=$(ff_loop_of pv0000)
[[ -n $a ]] || ff_die "attach --only pv0000 attached no loop for pv0000"
dd if="$a" of=/dev/null bs=64k count=1 iflag=direct 2>/dev/null ||
  ff_die "a read outside the EIO range failed"
if dd if="$a" of=/dev/null bs=64k skip=16 count=1 iflag=direct 2>"$s/dd.err"; then
  ff_die "a read inside the EIO range succeeded"
fi
grep -q "Input/output error" "$s/dd.err" || ff_die "not EIO: $(cat "$s/dd.err")"

# read_b BLOCK: one 4 KiB O_DIRECT read of pv0001's file (one request).
read_b() {
  dd if="$FF_MNT/pv0001" of=/dev/null bs=4k count=1 skip="$1" iflag=direct 2>"$s/dd.err"
}
# expect_vanished WHAT: the next read of pv0001 fails with ENODEV.
expect_vanished() {
  if read_b 99; then
    ff_die "$1: pv0001 still reads"
  fi
  grep -q "No such device" "$s/dd.err" || ff_die "$1: not ENODEV: $(cat "$s/dd.err")"
}
# b_stats: pv0001's "reads errors errors_injected" from the daemon's stats.
b_stats() {
  python3 -c 'import json, sys
d = [d for d in json.load(open(sys.argv[1]))["devices"] if d["name"] == "pv0001"]
print(*(d[0][k] for k in ("reads", "errors", "errors_injected")) if d else "0 0 0")' \
    "$FF_MNT/.fusefarm/stats.json"
}
# b_recorded N: the stats hold pv0001's first N reads.  The daemon records
# a request just after answering it, so the reader can be a moment ahead.
b_recorded() {
  local r
  read -r r _ <<<"$(b_stats)"
  ((r >= $1))
}
for ((i = 1; i <= 5; i++)); do
  read_b "$i" || ff_die "pv0001's read $i of 5 failed before it vanished: $(cat "$s/dd.err")"
done
expect_vanished "vanish_after = 5, the 6th read"
expect_vanished "vanish_after = 5, the 7th read"
ff_wait_until 60 b_recorded 7 || ff_die "pv0001's stats: $(b_stats), 7 reads never recorded"
read -r reads errors injected <<<"$(b_stats)"
((reads == 7 && errors == 2 && injected == 2)) ||
  ff_die "pv0001's stats after 5 answered and 2 refused reads: reads $reads, errors $errors, injected $injected"
ff_log "vanish_after = 5: reads 1-5 answered, 6 and 7 failed with ENODEV, counted as injected"

# A control command is an event too: applying the profile again restarts
# pv0001's count (5 more reads), then a switch to gone.conf makes it
# vanish at once.
"$bin" profile "$FF_MNT" "$s/faults.conf" >/dev/null || ff_die "fusefarm profile faults.conf failed"
for ((i = 1; i <= 5; i++)); do
  read_b "$i" || ff_die "after the profile was applied again, pv0001's read $i failed: $(cat "$s/dd.err")"
done
expect_vanished "the profile applied again, the 6th read"
"$bin" profile "$FF_MNT" "$s/gone.conf" >/dev/null || ff_die "fusefarm profile gone.conf failed"
expect_vanished "vanish_at = \"0s\" applied live"
"$bin" profile "$FF_MNT" "$s/faults.conf" >/dev/null || ff_die "fusefarm profile faults.conf failed"
read_b 1 || ff_die "pv0001 did not come back with faults.conf: $(cat "$s/dd.err")"
ff_wait_until 60 b_recorded 15 || ff_die "pv0001's stats: $(b_stats), 15 reads never recorded"
read -r reads errors injected <<<"$(b_stats)"
((reads == 15 && errors == 4 && injected == 4)) ||
  ff_die "pv0001's stats after the switches: reads $reads, errors $errors, injected $injected (want 15 4 4)"
python3 - "$FF_MNT/.fusefarm/stats.json" <<'PY' || ff_die "injected errors not counted"
import json, sys
st = {d["name"]: d for d in json.load(open(sys.argv[1]))["devices"]}
a = st["pv0000"]["errors_injected"]
print(f"injected errors: pv0000 {a}, pv0001 {st['pv0001']['errors_injected']}")
sys.exit(0 if a >= 1 else 1)
PY
ff_log "profile switches: the count restarted; vanish_at = \"0s\" applied live failed the next read"

# ---- kill -9 -----------------------------------------------------------------
# 60 s is a give-up limit for a hang, not a measurement: the time is
# only reported (bench/ measures).
kill -9 "$FF_DAEMON_PID"
t0=$EPOCHREALTIME
rc=0
timeout 60 dd if="$a" of=/dev/null bs=4k count=1 iflag=direct 2>"$s/dd.err" || rc=$?
((rc != 124)) || ff_die "a read after kill -9 still hung after 60 s"
((rc != 0)) || ff_die "a read after kill -9 succeeded"
grep -q "Input/output error" "$s/dd.err" || ff_die "after kill -9: $(cat "$s/dd.err")"
ff_log "after kill -9 a read failed with EIO in $(ff_ms_since "$t0") ms"
"$bin" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "detach after kill -9 failed"
losetup -l -n -O BACK-FILE | grep -qF "$FF_MNT/" && ff_die "loops left after detach"
ff_is_mounted "$FF_MNT" && ff_die "detach after kill -9 left the dead mount"
echo "PASS: refused inputs leave nothing behind; faults reach readers; kill -9 is clean"
