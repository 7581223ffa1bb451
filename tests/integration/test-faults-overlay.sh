#!/usr/bin/env bash
# Saving the FUSE daemon's write overlay where it cannot be written
# (docs/fuse.md, "Faults"):
#   - `fusefarm mount --save-overlay F` with F in a directory the daemon
#     may not write (EACCES), on a read-only file system (EROFS) or in no
#     directory (ENOENT): refused before mounting, exit 1 (an output
#     file that cannot be written), the message names F and the reason;
#   - "save-overlay PATH" through the control file onto a full file system
#     (a 64 KiB tmpfs: ENOSPC), a read-only one, an EACCES directory, or a
#     relative path: the write fails with that errno, last-error and the
#     daemon's log name PATH and the reason, the previous file at PATH is
#     intact and no PATH.tmp is left; the daemon keeps serving, the writes
#     stay in memory, and a save to a good path then holds them all;
#   - --save-overlay at exit onto a full file system: the daemon still
#     exits, its log says the overlay was NOT saved and is lost, and
#     nothing (no torn file, no .tmp) is left at F;
#   - a torn or corrupted overlay file is refused by `mount --overlay`
#     with a message naming it, and nothing is mounted.
# As root, EACCES needs a daemon without CAP_DAC_OVERRIDE: it runs under
# `setpriv --bounding-set -dac_override,-dac_read_search`.
# usage: test-faults-overlay.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-faults-overlay.sh FUSEFARM}
spec=$here/../../configs/smoke.conf
ff_require python3 fusermount3 setpriv mount umount cmp dd truncate
ff_env_init # scratch dir and cleanup trap; no lvm here
s=$FF_SCRATCH
bound_s=60 # give-up limit for a hang, never a measurement (times are reported)

# The daemon without the capabilities that let root write anywhere.
cat >"$s/fusefarm-nodac" <<EOF
#!/bin/sh
exec setpriv --bounding-set -dac_override,-dac_read_search -- '$bin' "\$@"
EOF
chmod +x "$s/fusefarm-nodac"

# A 64 KiB tmpfs (full after one 4 KiB block or so), a read-only tmpfs,
# and a directory nobody but CAP_DAC_OVERRIDE may write into.
mkdir -p "$s/small" "$s/ro" "$s/noperm" "$s/mnt"
mount -t tmpfs -o size=64k,mode=0755 ff-faults-small "$s/small"
ff_on_cleanup "umount '$s/small' 2>/dev/null || umount -l '$s/small'"
mount -t tmpfs -o size=64k,mode=0755,ro ff-faults-ro "$s/ro"
ff_on_cleanup "umount '$s/ro' 2>/dev/null || umount -l '$s/ro'"
chmod 0555 "$s/noperm"

# expect_in FILE TEXT WHAT: FILE holds TEXT.
expect_in() {
  grep -qF -- "$2" "$1" || ff_die "$3: expected '$2' in: $(cat "$1")"
}

# ---- refused before mounting --------------------------------------------------
# Should a refused mount mount after all, unmount it (the daemon then ends).
ff_on_cleanup "ff_is_mounted '$s/mnt' && { fusermount3 -u '$s/mnt' || umount -l '$s/mnt'; }"
refused() { # WHAT SAVE-PATH REASON
  local rc=0
  timeout "$bound_s" "$s/fusefarm-nodac" mount "$spec" "$s/mnt" --save-overlay "$2" \
    --log "$s/refused.log" 2>"$s/refused.err" || rc=$?
  # An output file that cannot be written is a runtime failure: 1.
  ((rc == 1)) || ff_die "$1: mount exit $rc, expected 1: $(cat "$s/refused.err")"
  expect_in "$s/refused.err" "create $2.tmp: $3" "$1"
  ff_is_mounted "$s/mnt" && ff_die "$1: $s/mnt was mounted anyway"
  ff_log "refused ($1): $(cat "$s/refused.err")"
}
refused "EACCES dir" "$s/noperm/x.ovl" "Permission denied"
refused "read-only fs" "$s/ro/x.ovl" "Read-only file system"
refused "no such dir" "$s/nodir/x.ovl" "No such file or directory"
[[ ! -e $s/noperm/x.ovl.tmp ]] || ff_die "the check left a .tmp behind"

# ---- control-file saves that fail, then one that works ---------------------------
ff_fuse_mount "$s/fusefarm-nodac" "$spec" "$s/mnt" --save-overlay "$s/small/exit.ovl"
[[ -z $(ls -A "$s/small") ]] || ff_die "the start-up check left files in $s/small: $(ls -A "$s/small")"
ctl=$FF_MNT/.fusefarm/control
head -c 4K /dev/urandom >"$s/data1"
head -c 256K /dev/urandom >"$s/data2"
dd if="$s/data1" of="$FF_MNT/pv0000" bs=4K seek=2048 conv=notrunc,fsync status=none
echo "save-overlay $s/small/old.ovl" >"$ctl" || ff_die "a small save failed: $(cat "$FF_MNT/.fusefarm/last-error")"
cp "$s/small/old.ovl" "$s/old.copy"
dd if="$s/data2" of="$FF_MNT/pv0001" bs=64K seek=256 conv=notrunc,fsync status=none

# ctl_fails PATH REASON WHAT: "save-overlay PATH" fails with REASON (the
# writer's errno and last-error), logged by the daemon, no PATH.tmp left.
ctl_fails() {
  if echo "save-overlay $1" 2>"$s/ctl.err" >"$ctl"; then
    ff_die "$3: save-overlay $1 succeeded"
  fi
  expect_in "$s/ctl.err" "$2" "$3: the writer's error"
  expect_in "$FF_MNT/.fusefarm/last-error" "save overlay $1: " "$3: last-error"
  expect_in "$FF_MNT/.fusefarm/last-error" "$2" "$3: last-error"
  expect_in "$s/daemon.log" "fusefarm: .fusefarm/control: save overlay $1: " "$3: the daemon's log"
  [[ ! -e $1.tmp ]] || ff_die "$3: $1.tmp was left behind"
  ff_log "control save ($3): $(cat "$FF_MNT/.fusefarm/last-error")"
}
ctl_fails "$s/small/old.ovl" "No space left on device" "disk full"
cmp "$s/small/old.ovl" "$s/old.copy" || ff_die "a failed save changed the previous file"
ctl_fails "$s/noperm/x.ovl" "Permission denied" "EACCES"
mount -o remount,ro "$s/small"
ctl_fails "$s/small/y.ovl" "Read-only file system" "read-only fs"
mount -o remount,rw "$s/small"
if echo "save-overlay rel.ovl" 2>"$s/ctl.err" >"$ctl"; then
  ff_die "a relative save-overlay path was accepted"
fi
expect_in "$FF_MNT/.fusefarm/last-error" "save-overlay rel.ovl: expected an absolute path" "relative path"
expect_in "$s/ctl.err" "Invalid argument" "relative path"

# Still serving, the writes still there; a good path takes them all.
cmp <(dd if="$FF_MNT/pv0000" bs=4K skip=2048 count=1 status=none) "$s/data1" ||
  ff_die "pv0000 lost its write after the failed saves"
cmp <(dd if="$FF_MNT/pv0001" bs=64K skip=256 count=4 status=none) "$s/data2" ||
  ff_die "pv0001 lost its write after the failed saves"
echo "save-overlay $s/good.ovl" >"$ctl" || ff_die "save to a good path failed: $(cat "$FF_MNT/.fusefarm/last-error")"

# ---- --save-overlay at exit onto the full tmpfs ------------------------------------
t0=$EPOCHREALTIME
fusermount3 -u "$FF_MNT"
ff_wait_exit "$FF_DAEMON_PID" "$bound_s" || ff_die "the daemon is still there ${bound_s}s after unmount"
ff_log "exit with a failing save took $(ff_ms_since "$t0") ms"
expect_in "$s/daemon.log" "fusefarm: save overlay $s/small/exit.ovl: write $s/small/exit.ovl.tmp: No space left on device" \
  "save at exit"
expect_in "$s/daemon.log" "was NOT saved and is lost ($s/small/exit.ovl.failed says so) with this daemon" "save at exit"
expect_in "$s/small/exit.ovl.failed" "No space left on device: the write overlay" "the marker of the save at exit"
[[ ! -e $s/small/exit.ovl && ! -e $s/small/exit.ovl.tmp ]] ||
  ff_die "a failed save at exit left $(ls "$s/small")"
cmp "$s/small/old.ovl" "$s/old.copy" || ff_die "the failed save at exit changed old.ovl"
ff_log "save at exit: $(grep 'NOT saved' "$s/daemon.log")"

ff_fuse_mount "$bin" "$spec" "$s/mnt" --overlay "$s/good.ovl"
cmp <(dd if="$FF_MNT/pv0000" bs=4K skip=2048 count=1 status=none) "$s/data1" ||
  ff_die "good.ovl lacks pv0000's write"
cmp <(dd if="$FF_MNT/pv0001" bs=64K skip=256 count=4 status=none) "$s/data2" ||
  ff_die "good.ovl lacks pv0001's write"
ff_fuse_cleanup "$FF_MNT"
ff_wait_exit "$FF_DAEMON_PID" "$bound_s" || ff_die "the daemon did not exit"

# ---- torn and corrupted overlay files ------------------------------------------------
size=$(stat -c %s "$s/good.ovl")
head -c $((size / 2)) "$s/good.ovl" >"$s/half.ovl"
head -c $((size - 1)) "$s/good.ovl" >"$s/short.ovl"
head -c 32 "$s/good.ovl" >"$s/header.ovl"
: >"$s/empty.ovl"
cp "$s/good.ovl" "$s/flipped.ovl"
printf '\xff' | dd of="$s/flipped.ovl" bs=1 seek=$((size / 2)) conv=notrunc status=none
for t in half short header empty flipped; do
  rc=0
  "$bin" mount "$spec" "$s/mnt" --overlay "$s/$t.ovl" 2>"$s/torn.err" || rc=$?
  ((rc != 0)) || ff_die "$t.ovl: a torn overlay was accepted"
  grep -qE "overlay $s/$t.ovl is (truncated|corrupt)" "$s/torn.err" ||
    ff_die "$t.ovl: unclear message: $(cat "$s/torn.err")"
  ff_is_mounted "$s/mnt" && ff_die "$t.ovl: mounted anyway"
  ff_log "torn $t.ovl: $(cat "$s/torn.err")"
done
echo "PASS: unwritable and full save paths fail clearly, keep the old file and the data; torn files are refused"
