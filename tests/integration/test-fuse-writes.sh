#!/usr/bin/env bash
# Writes through loop devices over `fusefarm mount` land in the overlay:
# lvm metadata writes (pvchange --addtag, lvcreate, vgchange --addtag)
# survive, the overlay saved through the control file (and by
# --save-overlay at exit) reloads into a new mount with the same bytes,
# and lvm sees its changes after the remount.  The daemon ends on
# `fusermount3 -u` although another mount namespace holds a copy of the
# mount.
# usage: test-fuse-writes.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-fuse-writes.sh FUSEFARM}
spec=$here/../../configs/smoke.conf
ff_require python3 fusermount3 mountpoint cmp
ff_env_init
s=$FF_SCRATCH

run() {
  ff_lvm "$@" >"$s/lvm.out" 2>&1 || { cat "$s/lvm.out" >&2; ff_die "lvm $* failed"; }
}

ff_fuse_mount "$bin" "$spec" "$s/mnt" --save-overlay "$s/at-exit.ovl"
ff_fuse_attach
a=$(ff_loop_of pv0000)
run pvchange --addtag pvtag "$a"
run vgchange --addtag vgtag smoke
run lvcreate --driverloaded n -an -Zn -L 4M -n added smoke
ff_lvm vgs --noheadings -o vg_name,vg_tags,lv_count >"$s/vgs1" 2>/dev/null
read -r name tags count <"$s/vgs1"
[[ $name == smoke && $tags == vgtag && $count == 3 ]] ||
  ff_die "vgs after the writes: '$name $tags $count'"

# The bytes the farm now serves, the stats of the writes, a saved overlay.
for f in pv0000 pv0001; do
  head -c $((2 << 20)) "$FF_MNT/$f" >"$s/$f.before"
done
python3 - "$FF_MNT/.fusefarm/stats.json" <<'PY' || ff_die "the stats miss the writes"
import json, sys
st = json.load(open(sys.argv[1]))
w = sum(d["writes"] for d in st["devices"])
print(f"lvm wrote {w} times ({sum(d['bytes_written'] for d in st['devices'])} bytes)")
sys.exit(0 if w > 0 else 1)
PY
echo "save-overlay $s/saved.ovl" >"$FF_MNT/.fusefarm/control"
[[ -s $s/saved.ovl ]] || ff_die "save-overlay wrote nothing"

# Unmount (the daemon saves at exit too), then mount again from the save.
# A mount namespace made now holds a copy of the mount, as any `unshare
# -m` on the machine would (a fenced lvm call, a chroot builder): the
# kernel keeps the connection up for it, yet the daemon must end on its
# unmount.  The holder is ours, released right after.
mkfifo "$s/hold"
exec {hold}<>"$s/hold"
unshare -m --propagation private sh -c "read -r _ <'$s/hold'" &
holder=$!
ff_on_cleanup "{ exec 9<>'$s/hold'; echo go >&9; exec 9>&-; wait $holder; } 2>/dev/null"
holds_copy() { grep -qF " $FF_MNT " "/proc/$holder/mountinfo"; }
ff_wait_until 60 holds_copy || ff_die "the holder's namespace has no copy of $FF_MNT"
"$bin" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "detach failed"
fusermount3 -u "$FF_MNT" || ff_die "fusermount3 -u failed"
ff_wait_exit "$FF_DAEMON_PID" 120 ||
  ff_die "the daemon still runs 120 s after its unmount (a copy of the mount is in the namespace of $holder)"
echo go >&"$hold"
wait "$holder"
exec {hold}>&-
[[ -s $s/at-exit.ovl ]] || ff_die "--save-overlay wrote nothing at exit"
cmp "$s/saved.ovl" "$s/at-exit.ovl" || ff_die "the two saves differ"

ff_fuse_mount "$bin" "$spec" "$s/mnt" --overlay "$s/saved.ovl"
for f in pv0000 pv0001; do
  head -c $((2 << 20)) "$FF_MNT/$f" | cmp - "$s/$f.before" ||
    ff_die "$f reads differently after the overlay was reloaded"
done
ff_fuse_attach
ff_lvm vgs --noheadings -o vg_name,vg_tags,lv_count >"$s/vgs2" 2>/dev/null
ff_lvm pvs --noheadings -o pv_tags "$(ff_loop_of pv0000)" >"$s/pvs2" 2>/dev/null
cmp "$s/vgs1" "$s/vgs2" || ff_die "vgs differs after the remount: $(cat "$s/vgs2")"
grep -qw pvtag "$s/pvs2" || ff_die "the PV tag is gone after the remount"

# A wrong overlay (another farm's) is refused before anything is mounted.
ff_fuse_cleanup "$FF_MNT"
mkdir -p "$s/mnt2"
if "$bin" mount "$s/mnt2" --overlay "$s/saved.ovl" 2>"$s/err"; then
  fusermount3 -u "$s/mnt2"
  ff_die "an overlay saved for another farm was accepted"
fi
grep -q "another farm" "$s/err" || ff_die "unclear message: $(cat "$s/err")"
mountpoint -q "$s/mnt2" && ff_die "a refused mount left $s/mnt2 mounted"
echo "PASS: lvm's writes survive, save and reload through the FUSE daemon"
