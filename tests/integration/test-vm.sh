#!/bin/bash
# test-vm.sh: `fusefarm vm`, end to end (qemu boots under TCG; the first
# run downloads the guest's Debian packages into the default cache,
# /var/cache/fusefarm/guest, ~1 min; later runs ~4 min on 2 cores):
#   1. initramfs boot, 16 disks, from a scenario whose matrix sets
#      lvm.conf keys: every dm table matches the manifest (ff-dmcheck),
#      nbd-client attaches 2 exports and pvs sees their PV UUIDs
#   2. initramfs boot, 256 disks: 180 LVs checked, nbd-client on 2
#   3. systemd boot, 16 disks: udev and systemd activate every LV by
#      themselves; systemd-analyze time, blame and plot (SVG) come back
#   4. a guest that panics, one that times out (initramfs and systemd)
#      and a missing qemu each end with a clear message and leave no qemu
#      or nbdkit behind
#
# usage: test-vm.sh FUSEFARM  (FF_SOURCE_DIR: the source tree; root;
#        qemu-system-x86, nbdkit, cpio, kmod, mmdebstrap, e2fsprogs,
#        python3: scripts/deps.sh)
set -uo pipefail
ff=${1:?usage: test-vm.sh FUSEFARM}
ff=$(realpath "$ff")
src=${FF_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export FF_GUEST_DIR=$src/guest
specs=$src/guest/tests
build=${FF_BUILD_DIR:-$(dirname "$(dirname "$ff")")}
for t in "$build/guest/ff-dmcheck" "$build/nbd-plugin/nbdkit-fusefarm-plugin.so"; do
  [ -e "$t" ] || { echo "test-vm: $t not built"; exit 1; }
done
for t in qemu-system-x86_64 nbdkit cpio python3 debugfs mkfs.ext4; do
  command -v $t >/dev/null || { echo "test-vm: $t missing (scripts/deps.sh installs it)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# Processes a run left behind: their command lines name its run directory.
leftovers() { pgrep -f '/tmp/ff-guest\.|/var/tmp/ff-systemd\.' || true; }

expect() { # expect NAME RC PATTERN -- ARGS...
  local name=$1 want=$2 pat=$3; shift 4
  local rc=0 t0=$SECONDS
  "$ff" vm "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  # a failed run keeps its directory for debugging; not ours to keep
  sed -n 's|^run-[a-z]*: kept \(/[a-z/]*tmp/ff-[a-z]*\.[A-Za-z0-9]*\)$|\1|p' "$tmp/$name.out" | xargs -r rm -rf
  if [ "$rc" != "$want" ] || ! grep -q -- "$pat" "$tmp/$name.out"; then
    fail "$name: rc $rc (want $want), no \"$pat\" in:"; sed 's/^/  /' "$tmp/$name.out"
  else
    echo "ok   $name ($((SECONDS - t0))s): $(grep -m1 -- "$pat" "$tmp/$name.out")"
  fi
  [ -z "$(leftovers)" ] || { fail "$name: left processes behind:"; pgrep -af '/tmp/ff-guest\.|/var/tmp/ff-systemd\.'; }
}

cat >"$tmp/scenario.conf" <<SC
name = "vm16";
spec = "$specs/farm16.conf";
matrix = (
  { key = "devices/obtain_device_list_from_udev"; values = [0, 1]; },
  { key = "global/event_activation"; values = [1]; }
);
workloads = ( { type = "pvs"; } );
SC
expect boot16 0 'verdict: ff-dmcheck: 11 LVs checked, 0 mismatched' -- \
  "$tmp/scenario.conf" --nbd-client 2 --json "$tmp/boot16.json"
grep -q 'lvm.conf: devices/obtain_device_list_from_udev = 0' "$tmp/boot16.out" ||
  fail "boot16: the matrix's lvm.conf was not applied"
grep -q 'nbd-client pv0001: rc 0' "$tmp/boot16.out" || fail "boot16: nbd-client pv0001 did not attach"
grep -q '"lvm_version": "2\.' "$tmp/boot16.json" 2>/dev/null || fail "boot16: no lvm version in the JSON"

expect boot256 0 'verdict: ff-dmcheck: 180 LVs checked, 0 mismatched' -- \
  "$specs/farm256.conf" --nbd-client 2
grep -q 'nbd-client pv0001: rc 0' "$tmp/boot256.out" || fail "boot256: nbd-client pv0001 did not attach"

expect systemd16 0 'verdict: PASS: 11/11 LVs activated by udev/systemd' -- \
  "$specs/farm16.conf" --boot systemd --out "$tmp/sd16" --timeout 300
grep -q '<svg' "$tmp/sd16/plot.svg" 2>/dev/null || fail "systemd16: no plot.svg"
grep -q 'systemd-udev' "$tmp/sd16/blame.txt" 2>/dev/null || fail "systemd16: blame has no udev"
grep -q 'Startup finished' "$tmp/sd16/analyze.txt" 2>/dev/null || fail "systemd16: no systemd-analyze time"
grep -q "lvm-activate-" "$tmp/sd16/activation-journal.txt" 2>/dev/null || fail "systemd16: no lvm-activate-VG unit in the journal (not event activation?)"

FF_APPEND='rdinit=/nonexistent' expect panic 1 'error: guest kernel panic' -- "$specs/farm16.conf"
expect timeout 1 'error: timeout: the guest did not finish in 3s' -- --timeout 3 "$specs/farm16.conf"
expect timeout-systemd 1 'error: timeout: the guest did not finish in 5s' -- \
  --boot systemd --timeout 5 --out "$tmp/sd-timeout" "$specs/farm16.conf"
FF_QEMU=/nonexistent/qemu expect no-qemu 2 'error: /nonexistent/qemu not found' -- "$specs/farm16.conf"
expect bad-boot 2 'expected initramfs or systemd' -- --boot grub "$specs/farm16.conf"

[ "$fails" = 0 ] && echo "test-vm: PASS" || { echo "test-vm: $fails FAILED"; exit 1; }
