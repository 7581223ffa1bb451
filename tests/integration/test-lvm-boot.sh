#!/usr/bin/env bash
# test-lvm-boot.sh: historic lvm2 builds boot under systemd in their own
# dialect (issue 31 item 3, docs/lvm-builds.md "Booting a build").  For
# each REF of $FF_LVM_BOOT_REFS (default "v2_02_177 v2_03_05"), built by
# `fusefarm lvm-build REF --git $FF_LVM_GIT` (a cache hit when built
# before), it checks:
#   - build.json names the build's udev rule and its activation
#     generator (boot.generator), and both files are in the build; the
#     rule runs pvscan (before lvm2 99bfbbf22, 2018, the template's bare
#     pvscan line is replaced by the rule Makefile.in spells out);
#   - boot 1, event activation on (use_lvmetad = 1 for 2.02, as its
#     distributions shipped it; event_activation = 1 for 2.03):
#     guest/run-systemd.sh --lvm boots the 16-disk farm with the build's
#     rule, units and generator replacing Debian's; every LV becomes
#     active, through one lvm2-pvscan@MAJ:MIN unit per PV (15: 14 in VGs
#     and an orphan; the rule ran, 2.02's with lvmetad, 2.03's without),
#     none of the generator's units, and the guest's lvm is the build;
#   - boot 2, event activation off in lvm.conf (use_lvmetad = 0 for 2.02,
#     event_activation = 0 for 2.03): the generator ran: every LV active
#     with its lvm2-activation*.service units started (the rule still
#     starts pvscan@ units, whose pvscan sees event activation off).
# A real build is minutes of CPU and each boot minutes under TCG, so the
# test is registered only on request (ctest label lvmbuild, with
# FF_LVM_GIT set):
#   cmake -B build -DFF_LVM_BUILD_TEST=ON
#   FF_LVM_GIT=/path/to/lvm2 ctest --test-dir build -R lvmbuild/boot
#
# usage: [FF_LVM_BOOT_REFS=...] [FF_LVM_BUILD_FLAGS=--debug] FF_LVM_GIT=DIR
#        test-lvm-boot.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh" # ff_die, ff_log

bin=${1:?usage: test-lvm-boot.sh FUSEFARM}
top=$(cd "$here/../.." && pwd)
build=${FF_BUILD_DIR:-$(dirname "$(dirname "$bin")")}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (nbdkit, qemu)"; exit 77; }
[ -n "${FF_LVM_GIT:-}" ] || { echo "SKIP: FF_LVM_GIT names no lvm2 git tree"; exit 77; }
refs=${FF_LVM_BOOT_REFS:-v2_02_177 v2_03_05}
# FF_LVM_BUILD_FLAGS: more lvm-build options, e.g. --debug (its own cache
# entry: the builds a flame graph needs serve here too)
flags=${FF_LVM_BUILD_FLAGS:-}
[[ $flags =~ ^(--debug)?$ ]] || ff_die "FF_LVM_BUILD_FLAGS=$flags: only --debug is known"
s=$(mktemp -d "${TMPDIR:-/tmp}/ff-lvmboot.XXXXXX")
trap 'rm -rf "$s"' EXIT

# boot OUT LVM [LVMCONF]: a systemd boot of the 16-disk farm with the build
boot() {
  local out=$1 lvm=$2 conf=${3:-} rc=0
  "$top/guest/run-systemd.sh" --build "$build" --lvm "$lvm" \
    ${conf:+--lvm-conf "$conf"} --timeout 1500 --out "$out" \
    "$top/guest/tests/farm16.conf" >"$out.log" 2>&1 || rc=$?
  ((rc == 0)) || ff_die "boot with $lvm${conf:+ and $conf}: exit $rc: $(tail -n 30 "$out.log")"
  grep -q '^verdict: PASS' "$out.log" || ff_die "boot with $lvm: no PASS verdict: $(tail -n 30 "$out.log")"
}
# boot_file KEY BUILD.JSON: build.json's boot.KEY, empty when null
boot_file() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[2]))["boot"].get(sys.argv[1]) or "")' "$1" "$2"
}
# units OUT: "PVSCAN DIRECT", the units the summary counted
units() {
  sed -n 's/^lvm2-pvscan@ units.*: \([0-9]*\); direct activation units.*: \([0-9]*\)$/\1 \2/p' "$1/summary.txt"
}

# the PVs of the farm (VG members and orphans, not blank disks): one
# lvm2-pvscan@ unit each
npv=$("$bin" manifest "$top/guest/tests/farm16.conf" | python3 -c '
import json, sys
print(sum(d["role"] in ("pv", "orphan") for d in json.load(sys.stdin)["devices"]))')
((npv > 0)) || ff_die "farm16.conf: no PVs in its manifest"

for ref in $refs; do
  ff_log "lvm-build $ref"
  lvm=$("$bin" lvm-build "$ref" --git "$FF_LVM_GIT" $flags --quiet) || ff_die "lvm-build $ref failed"
  bdir=${lvm%/sbin/lvm}
  ver=$("$lvm" version 2>/dev/null | awk '/LVM version/ { print $3; exit }')
  [ -n "$ver" ] || ff_die "$lvm version: no version"
  gen=$(boot_file generator "$bdir/build.json")
  rule=$(boot_file udev_rule "$bdir/build.json")
  [[ -n $gen && -x $bdir/$gen ]] ||
    ff_die "$ref: build.json's boot.generator is '${gen:-null}', not an executable of the build"
  [[ -n $rule && -f $bdir/$rule ]] ||
    ff_die "$ref: build.json's boot.udev_rule is '${rule:-null}', not a file of the build"
  grep -q 'pvscan' "$bdir/$rule" || ff_die "$ref: the build's rule $rule runs no pvscan"
  if grep -qE '^[[:space:]]*(\(PVSCAN_RULE\)|systemd_background)[[:space:]]*$' "$bdir/$rule"; then
    ff_die "$ref: the build's rule $rule keeps a bare template line"
  fi

  # event activation on, as each series' distributions shipped it: 2.02
  # with lvmetad (use_lvmetad = 1 in their lvm.conf: the build's own
  # default is 0, which is the generator's case), 2.03 event_activation
  case $ver in
    2.02.*) key=use_lvmetad ;;
    *) key=event_activation ;;
  esac
  printf 'global {\n\t%s = 1\n}\n' "$key" >"$s/$ref-on.conf"
  printf 'global {\n\t%s = 0\n}\n' "$key" >"$s/$ref-off.conf"
  ff_log "$ref ($ver): boot with $key = 1"
  boot "$s/$ref-event" "$lvm" "$s/$ref-on.conf"
  grep -q "^guest lvm2: ${ver%%(*}" "$s/$ref-event/summary.txt" ||
    ff_die "$ref: the guest did not run the build: $(grep '^guest lvm2' "$s/$ref-event/summary.txt")"
  read -r np nd < <(units "$s/$ref-event")
  ((np == npv && nd == 0)) ||
    ff_die "$ref: event activation: $np lvm2-pvscan@ units ($npv PVs), $nd generator units (0 expected)"

  ff_log "$ref: boot with $key = 0 (the generator's units)"
  boot "$s/$ref-gen" "$lvm" "$s/$ref-off.conf"
  read -r np nd < <(units "$s/$ref-gen")
  # the rule still starts its pvscan@ units (it reads no lvm.conf);
  # their pvscan sees event activation off and activates nothing
  ((nd >= 1)) ||
    ff_die "$ref: event activation off: no generator units ($np lvm2-pvscan@ units)"
  ff_log "$ref: rule ran ($npv lvm2-pvscan@), generator ran ($nd units)"
done
ff_log "PASS: $refs boot in their own dialect"
