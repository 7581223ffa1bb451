#!/usr/bin/env bash
# A hostile environment for `fusefarm mount` and `fusefarm attach`
# (docs/fuse.md, "Faults"):
#   - `ulimit -n` below the device count: neither the daemon nor attach
#     holds a descriptor per device, so a 200-device farm is mounted with
#     ulimit -n 40 and attached with ulimit -n 20, and lvm (given its own
#     limit) then sees all 200 PVs through that daemon; attach warns that
#     lvm needs more than the hard limit it was given; below what they need
#     themselves, mount and attach refuse up front with a clear message and
#     nothing is mounted, attached or created;
#   - /dev/loop-control absent or replaced, in a private mount namespace
#     (a tmpfs over /dev, with nothing or a directory in its place; an
#     empty file or /dev/null bind-mounted over it; the node present but
#     no /dev/loopN nodes):
#     `fusefarm attach` fails with a message naming the device, attaches
#     nothing, leaves no state dir, and the farm stays mounted and served.
# usage: test-faults-env.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-faults-env.sh FUSEFARM}
ff_require python3 fusermount3 losetup unshare mount mknod pgrep timeout
ff_env_init
s=$FF_SCRATCH
bound_s=60 # give-up limit for a hang, never a measurement (times are reported)

cat >"$s/farm.conf" <<'CONF'
seed = 7; device_size = "16M";
vgs = ({ count = 100; name = "fvg%03u"; pvs = 2; lvs = ({ fill = 0.5; }); });
CONF

# with_nofile N: a wrapper running fusefarm with `ulimit -n N` (soft and
# hard), as $s/fusefarm-N.
with_nofile() {
  printf '#!/bin/sh\nulimit -n %s || exit 1\nexec %q "$@"\n' "$1" "$bin" >"$s/fusefarm-$1"
  chmod +x "$s/fusefarm-$1"
}
for n in 10 12 20 40; do
  with_nofile "$n"
done

# nothing_attached WHAT: no loop carries a file of the farm, no state dir.
nothing_attached() {
  local left
  left=$(losetup -l -n -O NAME,BACK-FILE | awk -v d="$s/mnt/" 'index($2, d) == 1')
  [[ -z $left ]] || ff_die "$1: loops attached: $left"
  [[ ! -e $FF_STATE ]] || ff_die "$1: left a state dir: $(ls -A "$FF_STATE")"
}

# ---- ulimit -n -------------------------------------------------------------------
mkdir -p "$s/mnt"
# Should a refused mount mount after all, unmount it (the daemon then ends).
ff_on_cleanup "ff_is_mounted '$s/mnt' && { fusermount3 -u '$s/mnt' || umount -l '$s/mnt'; }"
rc=0
timeout "$bound_s" "$s/fusefarm-12" mount "$s/farm.conf" "$s/mnt" --log "$s/daemon.log" \
  2>"$s/mount12.err" || rc=$?
((rc == 1)) || ff_die "mount with ulimit -n 12: exit $rc, expected 1: $(cat "$s/mount12.err")"
grep -q "file descriptor limit too low: ulimit -n is 12 and the hard limit 12, but the daemon needs 32" \
  "$s/mount12.err" || ff_die "mount with ulimit -n 12: $(cat "$s/mount12.err")"
ff_is_mounted "$s/mnt" && ff_die "mount with ulimit -n 12 mounted anyway"
pgrep -f -- "mount $s/farm.conf $s/mnt" >/dev/null && ff_die "mount with ulimit -n 12 left a daemon"
ff_log "ulimit -n 12: $(cat "$s/mount12.err")"

ff_fuse_mount "$s/fusefarm-40" "$s/farm.conf" "$s/mnt"
grep -q "^Max open files *40 *40 " "/proc/$FF_DAEMON_PID/limits" ||
  ff_die "the daemon's limit is not 40: $(grep 'open files' "/proc/$FF_DAEMON_PID/limits")"
FF_STATE=$s/state

rc=0
timeout "$bound_s" "$s/fusefarm-10" attach "$FF_MNT" --state "$FF_STATE" >/dev/null \
  2>"$s/attach10.err" || rc=$?
((rc == 1)) || ff_die "attach with ulimit -n 10: exit $rc, expected 1: $(cat "$s/attach10.err")"
grep -q "file descriptor limit too low: ulimit -n is 10 and the hard limit 10, but attach needs 16" \
  "$s/attach10.err" || ff_die "attach with ulimit -n 10: $(cat "$s/attach10.err")"
nothing_attached "attach with ulimit -n 10"
ff_log "ulimit -n 10: $(cat "$s/attach10.err")"

"$s/fusefarm-20" attach "$FF_MNT" --state "$FF_STATE" >/dev/null 2>"$s/attach20.err" ||
  ff_die "attach of 200 devices with ulimit -n 20 failed: $(cat "$s/attach20.err")"
grep -q "^attached 200 loop devices" "$s/attach20.err" || ff_die "attach: $(cat "$s/attach20.err")"
grep -q "warning: the hard file descriptor limit here is 20, but lvm keeps one per device and needs 264 for these 200 devices .*ulimit -n 264" \
  "$s/attach20.err" || ff_die "attach did not warn about lvm's limit: $(cat "$s/attach20.err")"
ff_log "ulimit -n 20: $(grep warning "$s/attach20.err")"
ff_fuse_attach --quiet # the records and lvm view, for ff_lvm and cleanup
ff_lvm pvs --noheadings -o pv_name >"$s/pvs.out" 2>"$s/pvs.err" || ff_die "pvs: $(head -5 "$s/pvs.err")"
n=$(wc -l <"$s/pvs.out")
((n == 200)) || ff_die "pvs through a daemon with ulimit -n 40 listed $n of 200 PVs"
ff_log "a daemon with ulimit -n 40 served pvs over 200 loops attached with ulimit -n 20"
"$bin" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "detach failed"
: >"$FF_SCRATCH/loops"

# ---- /dev/loop-control absent or replaced ------------------------------------------
: >"$s/empty-file"
# no_loop_control WHAT WANT SETUP: attach in a private mount namespace
# after SETUP (sh code) fails, naming WANT, within the bound.
no_loop_control() {
  local rc=0 t0=$EPOCHREALTIME
  # shellcheck disable=SC2016  # $1.. belong to the inner sh
  timeout "$bound_s" unshare -m --propagation private -- /bin/sh -c '
    set -e
    '"$3"'
    exec "$@"' ff-no-loop-control "$bin" attach "$FF_MNT" --state "$FF_STATE" \
    >/dev/null 2>"$s/nlc.err" || rc=$?
  ((rc == 1)) || ff_die "$1: attach exit $rc, expected 1: $(cat "$s/nlc.err")"
  grep -qF -- "$2" "$s/nlc.err" || ff_die "$1: expected '$2' in: $(cat "$s/nlc.err")"
  nothing_attached "$1"
  ff_is_mounted "$FF_MNT" || ff_die "$1: the farm was unmounted"
  head -c 4096 "$FF_MNT/pv0000" >/dev/null || ff_die "$1: the farm stopped serving"
  ff_log "$1 ($(ff_ms_since "$t0") ms): $(head -1 "$s/nlc.err")"
}
no_loop_control "tmpfs over /dev" \
  "open /dev/loop-control: No such file or directory (the loop driver is loaded but /dev has no node for it" \
  'mount -t tmpfs -o mode=0755 ff-nodev /dev'
no_loop_control "empty file over it" \
  "/dev/loop-control is not the loop control device but a regular file" \
  "mount --bind '$s/empty-file' /dev/loop-control"
no_loop_control "a directory in its place" \
  "open /dev/loop-control: Is a directory (a directory is in the place of the loop control device" \
  'mount -t tmpfs -o mode=0755 ff-nodev /dev; mkdir /dev/loop-control'

no_loop_control "/dev/null over it" \
  "/dev/loop-control is character device 1:3, not the loop control device (10:237)" \
  "mount --bind /dev/null /dev/loop-control"
no_loop_control "no /dev/loopN nodes" \
  "the device node did not appear within 5000 ms (is devtmpfs mounted on /dev?)" \
  'mount -t tmpfs -o mode=0755 ff-nodev /dev; mknod -m 0600 /dev/loop-control c 10 237'
[[ -c /dev/loop-control ]] || ff_die "the host's /dev/loop-control is gone"
echo "PASS: low fd limits are refused up front or need no fd per device; a missing /dev/loop-control fails clearly with nothing attached"
