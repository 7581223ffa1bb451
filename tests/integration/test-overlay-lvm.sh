#!/usr/bin/env bash
# Writes land in the overlay so that lvm commands that write metadata work
# on farm devices.  Real lvm writes to images of the smoke farm
# (vgchange --addtag, pvchange --addtag, lvcreate, vgrename); ff-replay
# turns the blocks lvm changed into farm writes, saves the overlay, reloads
# it into a fresh farm and checks the farm reads exactly like the images;
# `fusefarm gen --overlay` then writes images that cmp equal to lvm's, and
# lvm, reading those, sees the tag, the new LV and the new name.
# usage: test-overlay-lvm.sh FUSEFARM [FF_REPLAY]
#   (FF_REPLAY defaults to $FF_BUILD_DIR/tests/ff-replay, as ctest sets it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-overlay-lvm.sh FUSEFARM FF_REPLAY}
replay=${2:-${FF_BUILD_DIR:?set FF_BUILD_DIR or pass FF_REPLAY}/tests/ff-replay}
spec=$here/../../configs/smoke.conf
ff_require python3 cmp
ff_env_init
s=$FF_SCRATCH
ff_farm_attach "$bin" "$spec"
a=$(ff_loop_of pv0000)

run() {
  ff_lvm "$@" >"$s/lvm.out" 2>&1 || { cat "$s/lvm.out" >&2; ff_die "lvm $* failed"; }
}
run vgchange --addtag from_lvm smoke
run pvchange --addtag pvtag "$a"
run lvcreate --driverloaded n -an -Zn -L 4M -n added smoke
run vgrename smoke renamed
ff_loop_detach_all

"$replay" "$spec" "$s/img" "$s/overlay.bin" || ff_die "replay failed"
"$bin" gen -q "$spec" --overlay "$s/overlay.bin" -o "$s/regen" ||
  ff_die "gen --overlay failed"
for f in "$s"/img/*; do
  cmp "$f" "$s/regen/${f##*/}" || ff_die "${f##*/}: gen --overlay differs from what lvm wrote"
done

# A second env reads the regenerated images: lvm sees its own changes.
ff_env_init
mapfile -t loops < <(ff_loop_attach "$s"/regen/*)
ff_lvm vgs --noheadings -o vg_name,vg_tags,lv_count >"$FF_SCRATCH/vgs" 2>/dev/null
ff_lvm lvs --noheadings -o lv_name >"$FF_SCRATCH/lvs" 2>/dev/null
ff_lvm pvs --noheadings -o pv_tags "${loops[0]}" >"$FF_SCRATCH/pvs" 2>/dev/null
read -r name tags count <"$FF_SCRATCH/vgs"
[[ $name == renamed && $tags == from_lvm && $count == 3 ]] ||
  ff_die "vgs after reload: '$name $tags $count', expected 'renamed from_lvm 3'"
grep -qw added "$FF_SCRATCH/lvs" || ff_die "the LV lvm created is not there"
grep -qw pvtag "$FF_SCRATCH/pvs" || ff_die "the PV tag lvm wrote is not there"
echo "PASS: lvm's metadata writes survive the overlay, its save and reload"
