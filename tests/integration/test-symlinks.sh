#!/usr/bin/env bash
# test-symlinks.sh: no file fusefarm writes goes through a link it did not
# make (generators/ff-file.h).  In a sticky world-writable directory (a
# /tmp), the unprivileged user nobody plants symbolic links to a file
# (mode 0600, root's) or a directory of root's at the names fusefarm
# writes, and root runs fusefarm there:
#   - the nbdkit plugin's stats= (its .tmp and the file itself) and trace=;
#   - `fusefarm mount --save-overlay F`: F.tmp or F planted before the
#     mount (refused at start), F.tmp planted while mounted (the save at
#     unmount refuses it); --log F; --trace F;
#   - `fusefarm gen -o DIR --force` over a planted image name, and -o a
#     link to a directory;
#   - `fusefarm fence --dir D` with D/lvm.conf.tmp planted, and D a link;
#   - `fusefarm run --out D` and `fusefarm attach --state D`, D a link.
# Each time the victim is unchanged and the command's message names the
# link as a symbolic link.
#
# usage: test-symlinks.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=SCRIPTDIR/../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-symlinks.sh FUSEFARM}
top=$(cd "${FF_SOURCE_DIR:-$here/../..}" && pwd)
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
spec=$top/configs/smoke.conf
ff_require runuser nbdkit fusermount3 python3
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
id nobody >/dev/null 2>&1 || ff_die "no user nobody (runuser -u nobody plants the links)"

ff_env_init
s=$FF_SCRATCH
w=$s/w # the sticky directory anyone may write to
mkdir -m 1777 "$w"
victim=$s/victim
printf 'SECRET\n' >"$victim"
chmod 0600 "$victim"
vdir=$s/victim-dir # a directory of root's, not empty
mkdir "$vdir"
printf 'KEEP\n' >"$vdir/keep"
checked=0

# as_nobody CMD ARGS...: run CMD as nobody with the sticky dir as fd 3:
# nobody reaches it as /proc/self/fd/3 without search rights on the
# scratch dirs above it (TMPDIR may be 0700).
as_nobody() {
  runuser -u nobody -- "$@" 3<"$w"
}

# plant NAME [TARGET]: nobody makes $w/NAME a symbolic link to TARGET
# (default: the victim file).
plant() {
  as_nobody ln -s "${2:-$victim}" "/proc/self/fd/3/$1" ||
    ff_die "nobody could not plant $w/$1"
  [[ $(stat -c %U "$w/$1") == nobody ]] || ff_die "$w/$1: not nobody's link"
}

# intact WHAT: the victim file and directory are as they were.
intact() {
  [[ $(cat "$victim") == SECRET && $(stat -c %U:%a "$victim") == root:600 ]] ||
    ff_die "$1: the victim was written through the link: $(head -c 200 "$victim")"
  [[ $(ls -A "$vdir") == keep && $(cat "$vdir/keep") == KEEP ]] ||
    ff_die "$1: the victim directory changed: $(ls -A "$vdir")"
}

# refused WHAT FILE LINK: FILE (a command's messages) has a line naming
# LINK as a symbolic link; the victims are intact.
refused() {
  intact "$1"
  grep -F -- "$3" "$2" | grep -q "symbolic link" ||
    ff_die "$1: no message naming $3 as a symbolic link in: $(cat "$2")"
  checked=$((checked + 1))
}

# 1. The nbdkit plugin: stats= (its .tmp, the file), trace=.
plant stats.json.tmp
rc=0
"$nbdkit" -U - "$plugin" spec="$spec" stats="$w/stats.json" --run true \
  2>"$s/nbd.err" || rc=$?
refused "stats= over a planted stats.json.tmp" "$s/nbd.err" "$w/stats.json.tmp"
[[ $rc != 0 ]] || ff_die "nbdkit stats=: exit 0 with the link refused"
plant stats2.json
"$nbdkit" -U - "$plugin" spec="$spec" stats="$w/stats2.json" --run true \
  2>"$s/nbd.err" || true
refused "stats= a planted link" "$s/nbd.err" "$w/stats2.json"
plant nbd.trace
"$nbdkit" -U - "$plugin" spec="$spec" trace="$w/nbd.trace" --run true \
  2>"$s/nbd.err" || true
refused "trace= a planted link" "$s/nbd.err" "$w/nbd.trace"

# 2. fusefarm mount: --save-overlay (F.tmp, F), --log, --trace refused at
# start; the mount must not stay.
mkdir "$s/mnt"
ff_on_cleanup "ff_is_mounted '$s/mnt' && { fusermount3 -u '$s/mnt' || fusermount3 -uz '$s/mnt'; }"
mount_refused() { # WHAT LINK MOUNT-ARGS...
  local what=$1 link=$2 rc=0
  shift 2
  "$bin" mount "$spec" "$s/mnt" "$@" 2>"$s/mount.err" </dev/null || rc=$?
  if ff_is_mounted "$s/mnt"; then
    fusermount3 -u "$s/mnt" || true
    ff_die "$what: mounted"
  fi
  [[ $rc != 0 ]] || ff_die "$what: exit 0"
  refused "$what" "$s/mount.err" "$link"
}
plant a.ovl.tmp
mount_refused "--save-overlay F, F.tmp planted" "$w/a.ovl.tmp" \
  --save-overlay "$w/a.ovl" --log "$s/m.log"
plant b.ovl
mount_refused "--save-overlay F, F planted" "$w/b.ovl" \
  --save-overlay "$w/b.ovl" --log "$s/m.log"
plant m.log
mount_refused "--log F planted" "$w/m.log" --log "$w/m.log"
plant m.trace
mount_refused "--trace F planted" "$w/m.trace" --trace "$w/m.trace" --log "$s/m.log"

# F.tmp planted while the farm is mounted: the save at unmount refuses it.
ff_fuse_mount "$bin" "$spec" "$s/mnt" --save-overlay "$w/c.ovl"
dd if=/dev/urandom of="$s/mnt/pv0000" bs=4096 count=1 conv=notrunc status=none
plant c.ovl.tmp
# attach --state a link to a directory: refused, nothing attached.
plant state "$vdir"
rc=0
"$bin" attach "$s/mnt" --state "$w/state" --quiet 2>"$s/attach.err" || rc=$?
[[ $rc != 0 ]] || ff_die "attach --state a link: exit 0"
refused "attach --state a link" "$s/attach.err" "$w/state"
fusermount3 -u "$s/mnt"
ff_wait_exit "$FF_DAEMON_PID" 60 || ff_die "the daemon did not exit after the unmount"
refused "--save-overlay F.tmp planted while mounted" "$FF_SCRATCH/daemon.log" "$w/c.ovl.tmp"
[[ ! -e $w/c.ovl ]] || ff_die "the save went through: $w/c.ovl exists"

# 3. fusefarm gen: an image name planted (--force), -o a link.
plant pv0000
"$bin" gen "$spec" -o "$w" --force --quiet 2>"$s/gen.err" && ff_die "gen --force over a link: exit 0"
refused "gen --force over a planted image" "$s/gen.err" "$w/pv0000"
plant gen "$vdir"
"$bin" gen "$spec" -o "$w/gen" --quiet 2>"$s/gen.err" && ff_die "gen -o a link: exit 0"
refused "gen -o a link" "$s/gen.err" "$w/gen"

# 4. fusefarm fence: lvm.conf.tmp planted in a dir of nobody's, --dir a link.
as_nobody mkdir /proc/self/fd/3/fence
as_nobody ln -s "$victim" /proc/self/fd/3/fence/lvm.conf.tmp
"$bin" fence --dir "$w/fence" --lvm-version 2.03.16 --quiet 2>"$s/fence.err" &&
  ff_die "fence over a planted lvm.conf.tmp: exit 0"
refused "fence over a planted lvm.conf.tmp" "$s/fence.err" "$w/fence/lvm.conf.tmp"
plant fencedir "$vdir"
"$bin" fence --dir "$w/fencedir" --lvm-version 2.03.16 --quiet 2>"$s/fence.err" &&
  ff_die "fence --dir a link: exit 0"
refused "fence --dir a link" "$s/fence.err" "$w/fencedir"

# 5. fusefarm run --out a link (refused before anything runs).
plant out "$vdir"
rc=0
(cd "$s" && timeout 600 "$bin" run --out "$w/out" 2>"$s/run.err" >/dev/null) || rc=$?
[[ $rc == 2 ]] || ff_die "run --out a link: exit $rc, expected 2"
refused "run --out a link" "$s/run.err" "$w/out"

ff_log "test-symlinks: $checked planted links refused, the victims intact"
