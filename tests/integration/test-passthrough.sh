#!/usr/bin/env bash
# fusefarm mount --passthrough: devices the profile gives nothing to model
# are served by the kernel from a memory file (FUSE passthrough).  Checks:
# every device reads as `fusefarm gen` writes it; the daemon sees none of
# a passed-through device's reads (stats) but does see a duplicate-pv
# pair's (never passed through); lvm's writes through loops land and show
# in lvm; a trim (fallocate punch) reaches the backing file; a profile
# switched in later does not reach a passed-through device (it stays the
# kernel's); the overlay saved through the control file and at exit holds
# the passthrough writes, and a mount without --passthrough from it reads
# the same bytes and lvm sees its changes.  Exits 77 (skipped) where the
# kernel does not take FUSE_PASSTHROUGH (before 6.9, or without
# CONFIG_FUSE_PASSTHROUGH), saying so.
# usage: test-passthrough.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-passthrough.sh FUSEFARM}
ff_require python3 fusermount3 cmp fallocate
ff_env_init
s=$FF_SCRATCH

cat >"$s/farm.conf" <<'EOF'
seed = 5; device_size = "64M";
vgs = ({ name = "pt"; pvs = 2; lvs = ({ name = "lin"; size = "8M"; }); },
       { name = "dup"; damage = "duplicate-pv"; });
EOF
"$bin" gen -q "$s/farm.conf" -o "$s/img" || ff_die "fusefarm gen failed"

run() {
  ff_lvm "$@" >"$s/lvm.out" 2>&1 || { cat "$s/lvm.out" >&2; ff_die "lvm $* failed"; }
}
info() { # info PYTHON-EXPR: of info.json as d
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$FF_MNT/.fusefarm/info.json" "$1"
}
reads_of() { # reads_of NAME: the daemon's reads of device NAME since reset
  python3 -c 'import json,sys
st = json.load(open(sys.argv[1]))
print(sum(d["reads"] for d in st["devices"] if d["name"] == sys.argv[2]))' \
    "$FF_MNT/.fusefarm/stats.json" "$1"
}

ff_fuse_mount "$bin" "$s/farm.conf" "$s/mnt" --passthrough --save-overlay "$s/at-exit.ovl"
[[ $(info 'd["passthrough"]["asked"]') == True ]] || ff_die "info.json: passthrough not asked"
if [[ $(info 'd["passthrough"]["kernel"]') != True ]]; then
  echo "SKIP: test-passthrough.sh: this kernel ($(uname -r)) did not take FUSE_PASSTHROUGH (Linux 6.9+ with CONFIG_FUSE_PASSTHROUGH)"
  exit 77
fi

# Every device reads as gen wrote it; the two PVs of pt went to the kernel,
# the duplicate-pv pair (dup's PV and its copy) did not.
echo reset >"$FF_MNT/.fusefarm/control"
for f in "$s"/img/*; do
  cmp "$f" "$FF_MNT/${f##*/}" || ff_die "${f##*/} reads differently with --passthrough"
done
[[ $(info 'd["passthrough"]["devices"]') == 2 ]] ||
  ff_die "info.json: $(info 'd["passthrough"]') passed through (expected the 2 PVs of pt)"
for f in pv0000 pv0001; do
  [[ $(reads_of "$f") == 0 ]] || ff_die "$f: the daemon saw $(reads_of "$f") reads of a passed-through device"
done
for f in pv0002 pv0003; do
  (($(reads_of "$f") > 0)) || ff_die "$f (duplicate-pv): the daemon saw none of its reads"
done
# (a pair is served as usual by design: nothing to say at each open)
if grep -- '--passthrough:' "$FF_SCRATCH/daemon.log" >&2; then
  ff_die "the daemon's log complains of devices that are served as usual by design"
fi

# lvm writes through loops over the passed-through files.
ff_fuse_attach
run pvchange --addtag pttag "$(ff_loop_of pv0000)"
run lvcreate --driverloaded n -an -Zn -L 4M -n added pt
ff_lvm vgs --noheadings -o vg_name,lv_count pt >"$s/vgs1" 2>/dev/null
read -r name count <"$s/vgs1"
[[ $name == pt && $count == 2 ]] || ff_die "vgs after the writes: '$name $count'"
[[ $(reads_of pv0000) == 0 ]] || ff_die "pv0000: lvm's reads reached the daemon"

# A trim: written bytes, then a punch through FUSE fallocate, read as zeros.
off=$((40 << 20))
printf 'PASSTHROUGH-DATA' | dd of="$FF_MNT/pv0001" bs=1 seek=$off conv=notrunc status=none
[[ $(dd if="$FF_MNT/pv0001" bs=1 skip=$off count=16 status=none) == PASSTHROUGH-DATA ]] ||
  ff_die "pv0001: the write did not read back"
printf 'KEEP' | dd of="$FF_MNT/pv0001" bs=1 seek=$((off + 8192)) conv=notrunc status=none
fallocate -p -o $off -l 4096 "$FF_MNT/pv0001" || ff_die "fallocate -p on pv0001 failed"
[[ $(dd if="$FF_MNT/pv0001" bs=1 skip=$off count=16 status=none | tr -d '\0') == "" ]] ||
  ff_die "pv0001: the punched range still reads data"

# A later profile does not reach a passed-through device.
"$bin" profile "$FF_MNT" "$here/../../configs/profiles/fixed-5ms.conf" >/dev/null ||
  ff_die "fusefarm profile failed"
echo reset >"$FF_MNT/.fusefarm/control"
head -c 1M "$FF_MNT/pv0000" >/dev/null
[[ $(reads_of pv0000) == 0 ]] || ff_die "pv0000: served by the daemon after a profile switch"

# Saves hold the passthrough writes; a plain mount from them reads the same.
for f in pv0000 pv0001; do
  head -c $((2 << 20)) "$FF_MNT/$f" >"$s/$f.head"
  dd if="$FF_MNT/$f" bs=1M skip=40 count=1 status=none >"$s/$f.40m"
done
echo "save-overlay $s/saved.ovl" >"$FF_MNT/.fusefarm/control"
[[ -s $s/saved.ovl ]] || ff_die "save-overlay wrote nothing"
"$bin" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "detach failed"
fusermount3 -u "$FF_MNT" || ff_die "fusermount3 -u failed"
ff_wait_exit "$FF_DAEMON_PID" 120 || ff_die "the daemon still runs 120 s after its unmount"
cmp "$s/saved.ovl" "$s/at-exit.ovl" || ff_die "the save at exit differs from the one before it"

ff_fuse_mount "$bin" "$s/farm.conf" "$s/mnt" --overlay "$s/at-exit.ovl"
[[ $(info 'd["passthrough"]["devices"]') == 0 ]] || ff_die "a plain mount passed devices through"
for f in pv0000 pv0001; do
  head -c $((2 << 20)) "$FF_MNT/$f" | cmp - "$s/$f.head" ||
    ff_die "$f: the overlay saved from --passthrough reads differently"
  dd if="$FF_MNT/$f" bs=1M skip=40 count=1 status=none | cmp - "$s/$f.40m" ||
    ff_die "$f: the 40 MiB block (written, punched) reads differently"
done
[[ $(dd if="$FF_MNT/pv0001" bs=1 skip=$((off + 8192)) count=4 status=none) == KEEP ]] ||
  ff_die "pv0001: the write next to the punch was lost"
ff_fuse_attach
ff_lvm vgs --noheadings -o vg_name,lv_count pt >"$s/vgs2" 2>/dev/null
ff_lvm pvs --noheadings -o pv_tags "$(ff_loop_of pv0000)" >"$s/tags" 2>/dev/null
read -r name count <"$s/vgs2"
read -r tags <"$s/tags"
[[ $name == pt && $count == 2 && $tags == pttag ]] ||
  ff_die "after the remount lvm sees '$name $count', tags '$tags'"
echo "PASS: test-passthrough.sh: 2 devices passed through, reads, lvm writes, a trim and the saves"
