#!/bin/bash
# test-host-tier.sh: the host tier (docs/guest.md "The host tier"):
# guest/run-hosttier.sh installs this build into a copy of the systemd
# guest's root (Debian 12: systemd 252, udev, lvm2 2.03.16 with event
# activation, device-mapper) and runs fusefarm there as a user does on a
# host of their own, under qemu TCG (three boots):
#   1. fenced: mount mixed-1000.conf at 200 devices, attach with the
#      default state dir: attach says every loop is fenced and no dm
#      device sits on them, udev's record of every loop has
#      FUSEFARM_MOUNT and DM_UDEV_DISABLE_OTHER_RULES_FLAG=1 and no
#      LVM2_member, the host made no dm device, no lvm online record, no
#      lvm-activate unit and no journal line for a farm VG; detach and
#      fusermount3 -u leave no loop, mount or udev rule
#   2. run: `fusefarm run --devices 6 --repeat 1` (the built-in default
#      scenario,
#      dm = auto: real here): exit 0, the run document says "real", udev
#      saw the run's loops fenced, dm devices came only from the run's
#      VGs, the host activated none of them, nothing of it is left
#   3. dmreal: `fusefarm run ci-small --dm real --devices 6`: as 2, and
#      the run document counts real dm devices: as many at once as the
#      manifest has LVs (10), every one removed
#   4. kill9: a run with dm devices up killed with SIGKILL, its watchdog
#      too; `fusefarm cleanup` alone leaves no dm device, loop, mount,
#      udev rule or scratch
#   5. control: two images of smoke.conf attached by losetup, without
#      fusefarm: the host activates them and the same probe sees it (else
#      1 to 4 prove nothing)
#   6. a guest step that fails (an unknown step) makes the run exit 1,
#      and a boot that does not finish in --timeout is killed with a
#      clear message; nothing is left running after either
# The guest images are built or checked first by the ctest fixture
# guest/images, as for test-vm.sh; run by hand, the boot builds them.
# usage: test-host-tier.sh FUSEFARM  (FF_BUILD_DIR: the build tree to
#        install into the guest; FF_SOURCE_DIR: the source tree; root;
#        qemu-system-x86, e2fsprogs, cmake: scripts/deps.sh)
set -uo pipefail
ff=${1:?usage: test-host-tier.sh FUSEFARM}
ff=$(realpath "$ff")
src=${FF_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${FF_BUILD_DIR:-$(dirname "$(dirname "$ff")")}
[ -f "$build/CMakeCache.txt" ] || { echo "test-host-tier: $build is not a build tree"; exit 1; }
for t in qemu-system-x86_64 debugfs cmake python3 fusermount3; do
  command -v $t >/dev/null || { echo "test-host-tier: $t missing (scripts/deps.sh installs it)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# run-hosttier.sh makes its run dir in TMPDIR: a qemu it left behind names
# $tmp in its command line, and other guest runs are not taken for ours
export TMPDIR=$tmp
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
leftovers() { pgrep -f "$tmp/ff-hosttier\." || true; }

hosttier() { # hosttier NAME WANT_RC ARGS...: one boot
  local name=$1 want=$2 rc=0 t0=$SECONDS; shift 2
  "$src/guest/run-hosttier.sh" --build "$build" "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  # a failed run keeps its directory for debugging; not ours to keep
  sed -n 's|^run-hosttier: kept \(/.*/ff-hosttier\.[A-Za-z0-9]*\)$|\1|p' "$tmp/$name.out" | xargs -r rm -rf
  echo "-- $name: exit $rc ($((SECONDS - t0))s)"
  [ "$rc" = "$want" ] || { fail "$name: exit $rc, want $want:"; sed 's/^/  /' "$tmp/$name.out"; }
  [ -z "$(leftovers)" ] || { fail "$name: left processes behind:"; pgrep -af "$tmp/ff-hosttier\." | cut -c1-160; }
}
has() { # has NAME PATTERN
  grep -q -E -- "$2" "$tmp/$1.out" || fail "$1: no line matching '$2'"
}

# limits for a hung boot, not a measurement: a loaded machine (load 30)
# may take three times as long as an idle one
hosttier tier 0 --out "$tmp/tier" --timeout 1800
grep -E '^  guest: FF-(CHECK|FAIL)|^(step|boot|prepare|qemu|checks|verdict)' "$tmp/tier.out"
has tier '^verdict: PASS'
has tier 'FF-CHECK fenced: attach says: udev: all 200 loop devices fenced'
has tier "FF-CHECK fenced: attach says: host: no device-mapper device on the farm's loops"
has tier 'FF-CHECK fenced: udev: every one of 200 loops has FUSEFARM_MOUNT=/mnt/farm, DM_UDEV_DISABLE_OTHER_RULES_FLAG=1'
has tier 'FF-CHECK fenced: host: no dm device, lvm online record, lvm-activate unit or journal line'
has tier 'FF-CHECK fenced: detach and unmount: nothing left'
has tier 'FF-CHECK run: fusefarm run --devices 6 --repeat 1: exit 0'
has tier 'FF-CHECK run: run.json: the default dm = auto ran "real" on this kernel'
has tier "FF-CHECK run: dm devices while it ran: [1-9][0-9]* of the run's VGs, none else"
has tier 'FF-CHECK run: host: no dm device left, no lvm online record'
has tier 'FF-CHECK run: after fusefarm run: nothing left'
has tier 'FF-CHECK dmreal: fusefarm run ci-small --dm real --devices 6: exit 0'
# mixed-1000 at --devices 6: 17 devices, 4 VGs, 7 LVs (`fusefarm manifest`)
has tier "FF-CHECK dmreal: run.json: the most at once is the manifest's 7 LVs \(max_active: 7 7\)"
has tier 'FF-CHECK dmreal: run.json: every device the activations made was removed'
has tier 'FF-CHECK dmreal: host: no dm device left, no lvm online record'
has tier 'FF-CHECK dmreal: after fusefarm run: nothing left'
has tier "FF-CHECK kill9: after kill -9 of the runner and its watchdog its dm devices are still there"
has tier 'FF-CHECK kill9: fusefarm cleanup: exit 0'
has tier 'FF-CHECK kill9: after fusefarm cleanup: nothing left'
has tier 'FF-CHECK pvrule: fusefarm udev-rule --install'
has tier "FF-CHECK pvrule: udev's record of /dev/loop[0-9]+: FUSEFARM_PV=1, DM_UDEV_DISABLE_OTHER_RULES_FLAG=1, ID_FS_UUID=fusefm-"
has tier 'FF-CHECK pvrule: host: no dm device, lvm online record, lvm-activate unit or journal line for smoke'
has tier 'FF-CHECK pvrule: pvrule cleaned up: nothing left'
has tier 'FF-CHECK control: host activated an unfenced farm \(expected\)'
has tier 'FF-INFO control: 2 x dm device: smoke-lin, smoke-str'
has tier 'FF-CHECK control: control cleaned up: nothing left'
for s in fenced run dmreal kill9 pvrule control; do
  has tier "^step $s .* pass$"
done
[ -s "$tmp/tier/report.log" ] || fail "tier: --out has no report.log"

# a failing check in the guest is the run's failure
hosttier nostep 1 --steps "fenced-nosuch"
has nostep 'FF-FAIL fenced-nosuch: no such step'
has nostep '^verdict: FAIL'

# a guest that does not finish is killed
hosttier timeout 1 --timeout 10 --steps control
has timeout 'error: timeout: the guest did not finish in 10s'

[ "$fails" = 0 ] || { echo "test-host-tier: $fails failure(s)"; exit 1; }
echo "test-host-tier: ok"
