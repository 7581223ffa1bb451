#!/usr/bin/env bash
# The FUSE daemon under valgrind's memcheck for one real workload, twice:
#   1. `fusefarm mount -f` of configs/smoke.conf under valgrind, with a
#      profile whose replies are delayed (so they go through the timer
#      heap and the reply pool, ff-sched.c); attach; lvm pvs, vgs, lvs
#      through the private env; lvm writes (pvchange/vgchange --addtag,
#      lvcreate); every control file read; a live profile switch; stats
#      reset; save-overlay through the control file; detach; unmount,
#      which saves the overlay again (--save-overlay).
#   2. a second mount under valgrind loading that overlay (--overlay):
#      lvm sees the tags and the new LV; detach; unmount.
# Each run must exit 0 with no memcheck error and no definite, indirect
# or possible leak (--error-exitcode, --leak-check=full,
# --errors-for-leak-kinds=definite,indirect,possible); its log is printed
# on failure.  Suppressions: tests/valgrind.supp, for libfuse and glibc
# internals only, each one explained there.
# Skipped (exit 77, ctest's SKIP_RETURN_CODE) in a sanitizer build:
# valgrind cannot run an ASan binary.
# usage: test-valgrind.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-valgrind.sh FUSEFARM}
build=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}
spec=$here/../../configs/smoke.conf
supp=$here/../valgrind.supp
if grep -qx 'FF_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "SKIP: $build is a sanitizer build (FF_SANITIZE=ON): valgrind cannot run" \
    "ASan binaries; the non-sanitizer pass runs this test"
  exit 77
fi
ff_require valgrind python3 fusermount3 mountpoint
ff_env_init
s=$FF_SCRATCH

cat >"$s/delay.conf" <<'CONF'
name = "delay-2ms";
groups = ({ devices = "all";
            read = { dist = "lognormal"; median = "1ms"; p99 = "4ms"; };
            write = { dist = "fixed"; value = "2ms"; };
            flush = { dist = "fixed"; value = "1ms"; }; });
CONF
cat >"$s/other.conf" <<'CONF'
name = "other";
groups = ({ devices = "all"; read = { dist = "uniform"; min = "0ms"; max = "2ms"; }; });
CONF

VG_PID=
# vg_mount NAME ARGS...: start `fusefarm mount -f SPEC MNT ARGS` under
# valgrind in the background (log $s/NAME.vg.log) and wait for the mount.
vg_mount() {
  local name=$1
  shift
  # shellcheck disable=SC2034  # FF_FUSEFARM, FF_DAEMON_PID: read by farm.sh
  FF_FUSEFARM=$bin
  FF_MNT=$s/mnt
  FF_STATE=$s/state
  mkdir -p "$FF_MNT"
  valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
    --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible \
    --track-origins=yes --num-callers=30 --suppressions="$supp" \
    --log-file="$s/$name.vg.log" \
    "$bin" mount -f "$spec" "$FF_MNT" "$@" >"$s/$name.out" 2>&1 &
  VG_PID=$!
  # shellcheck disable=SC2034
  FF_DAEMON_PID=$VG_PID
  ff_wait_until 300 vg_mounted_or_dead
  [[ -e $FF_MNT/.fusefarm/info.json ]] && return 0
  cat "$s/$name.out" "$s/$name.vg.log" >&2 || true
  if ff_alive "$VG_PID"; then
    ff_die "$name: the daemon under valgrind did not mount in 300 s"
  fi
  ff_die "$name: the daemon under valgrind exited before mounting"
}

# vg_mounted_or_dead: the daemon under valgrind serves its control files,
# or it is gone.
vg_mounted_or_dead() {
  [[ -e $FF_MNT/.fusefarm/info.json ]] || ! ff_alive "$VG_PID"
}

# unmount_quietly MNT: one fusermount3 -u, no message (for ff_wait_until).
unmount_quietly() {
  fusermount3 -u "$1" 2>/dev/null
}

# vg_end NAME: detach, unmount, and require a clean valgrind exit.
vg_end() {
  local name=$1 rc=0
  "$bin" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "$name: detach failed"
  # The kernel lets go of the detached loops' files asynchronously: until
  # then the mount is busy.
  ff_wait_until 60 unmount_quietly "$FF_MNT" ||
    ff_die "$name: cannot unmount $FF_MNT: $(fusermount3 -u "$FF_MNT" 2>&1)"
  wait "$VG_PID" || rc=$?
  VG_PID=
  if ((rc != 0)) || grep -q 'ERROR SUMMARY: [1-9]' "$s/$name.vg.log"; then
    cat "$s/$name.out" "$s/$name.vg.log" >&2
    ff_die "$name: valgrind found errors (exit $rc; log above)"
  fi
  grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|suppressed:' \
    "$s/$name.vg.log" | sed "s/^==[0-9]*== */$name: /" >&2
}
# A failure leaves the daemon running under valgrind: the farm.sh cleanup
# detaches, unmounts and kills it (FF_DAEMON_PID).
ff_on_cleanup "ff_fuse_cleanup '$s/mnt'"

run() {
  ff_lvm "$@" >"$s/lvm.out" 2>&1 || { cat "$s/lvm.out" >&2; ff_die "lvm $* failed"; }
}

# 1. The workload.
vg_mount first --profile "$s/delay.conf" --save-overlay "$s/at-exit.ovl"
ff_fuse_attach
for c in pvs vgs lvs; do
  run "$c"
done
run pvchange --addtag pvtag "$(ff_loop_of pv0000)"
run vgchange --addtag vgtag smoke
run lvcreate --driverloaded n -an -Zn -L 4M -n added smoke
ff_lvm vgs --noheadings -o vg_name,vg_tags,lv_count >"$s/vgs1" 2>/dev/null
for f in devices manifest.json stats.json stats info.json profile last-error profile.json; do
  cat "$FF_MNT/.fusefarm/$f" >/dev/null || ff_die "reading .fusefarm/$f failed"
done
"$bin" stats "$FF_MNT" --json >/dev/null || ff_die "fusefarm stats failed"
"$bin" profile "$FF_MNT" "$s/other.conf" >/dev/null || ff_die "profile switch failed"
echo reset >"$FF_MNT/.fusefarm/control"
if echo bogus >"$FF_MNT/.fusefarm/control" 2>/dev/null; then
  ff_die "an unknown control command was accepted"
fi
echo "save-overlay $s/saved.ovl" >"$FF_MNT/.fusefarm/control"
[[ -s $s/saved.ovl ]] || ff_die "save-overlay wrote nothing"
vg_end first
[[ -s $s/at-exit.ovl ]] || ff_die "--save-overlay wrote nothing at exit"

# 2. Load the overlay; lvm sees what it wrote.
vg_mount second --overlay "$s/saved.ovl"
ff_fuse_attach
ff_lvm vgs --noheadings -o vg_name,vg_tags,lv_count >"$s/vgs2" 2>/dev/null
cmp -s "$s/vgs1" "$s/vgs2" || ff_die "after --overlay vgs shows $(cat "$s/vgs2"), not $(cat "$s/vgs1")"
vg_end second
echo "PASS: the FUSE daemon under valgrind: mount, lvm reads and writes, control files, save, reload: no errors, no leaks"
