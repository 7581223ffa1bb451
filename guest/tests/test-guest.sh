#!/bin/bash
# test-guest.sh: the guest tier's initramfs boot, end to end (several
# qemu boots under TCG, ~1 min).  Not registered with ctest yet.
#   1. farm16: real dm activation passes ff-dmcheck; nbd-client attaches 2
#      exports and pvs sees their PV UUIDs
#   2. a manifest that disagrees with the disks fails, naming the LVs
#   3. a guest that panics, one that times out and a missing qemu each end
#      with a clear message and leave no qemu or nbdkit behind
# FF_GUEST_CACHE: the base image cache (default /var/cache/fusefarm/guest).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run=$here/../run-initramfs.sh
build=${FF_BUILD_DIR:-$here/../../build}
ff=$build/fusefarm/fusefarm
for t in "$ff" "$build/guest/ff-dmcheck" "$build/nbd-plugin/nbdkit-fusefarm-plugin.so"; do
  [ -e "$t" ] || { echo "test-guest: $t not built"; exit 1; }
done
for t in qemu-system-x86_64 nbdkit cpio python3; do
  command -v $t >/dev/null || { echo "test-guest: $t missing (see docs/guest.md for packages)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# Processes a run started and left behind: its run directory is in their
# command line (qemu: -initrd, nbdkit: -U); it is in TMPDIR (default /tmp).
runs_re="${TMPDIR:-/tmp}/ff-guest\."
leftovers() { pgrep -f "$runs_re" || true; }

expect() { # expect NAME RC PATTERN -- ARGS...
  local name=$1 want=$2 pat=$3; shift 4
  local rc=0
  "$run" --build "$build" "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  # a failed run keeps its directory for debugging; not ours to keep
  sed -n 's|^run-initramfs: kept \(/.*/ff-guest\.[A-Za-z0-9]*\)$|\1|p' "$tmp/$name.out" | xargs -r rm -rf
  if [ "$rc" != "$want" ] || ! grep -q -- "$pat" "$tmp/$name.out"; then
    fail "$name: rc $rc (want $want), no \"$pat\" in:"; sed 's/^/  /' "$tmp/$name.out"
  else
    echo "ok   $name: $(grep -m1 -- "$pat" "$tmp/$name.out")"
  fi
  [ -z "$(leftovers)" ] || { fail "$name: left processes behind:"; pgrep -af "$runs_re"; }
}

expect boot16 0 'verdict: ff-dmcheck: 11 LVs checked, 0 mismatched' -- \
  --nbd-client 2 "$here/farm16.conf"
grep -q 'nbd-client pv0001: rc 0' "$tmp/boot16.out" || fail "boot16: nbd-client pv0001 did not attach"

# A wrong manifest: str4/data with another stripe size, str23/lin moved.
"$ff" manifest "$here/farm16.conf" | python3 -c '
import json, sys
m = json.load(sys.stdin)
for vg in m["vgs"]:
    for lv in vg["lvs"]:
        if (vg["name"], lv["name"]) == ("str4", "data"):
            lv["segments"][0]["stripe_size"] = 65536
        if (vg["name"], lv["name"]) == ("str23", "lin"):
            lv["segments"][0]["areas"][0]["start_pe"] += 1
json.dump(m, sys.stdout)' >"$tmp/wrong.json"
expect mismatch 1 'MISMATCH str4/data: segment 0: chunk 256 sectors, expected 128' -- \
  --manifest "$tmp/wrong.json" "$here/farm16.conf"
grep -q 'MISMATCH str23/lin: segment 0: on pv' "$tmp/mismatch.out" || fail "mismatch: str23/lin not reported"

expect panic 1 'error: guest kernel panic' -- --append 'rdinit=/nonexistent' "$here/farm16.conf"
expect timeout 1 'error: timeout: the guest did not finish in 3s' -- --timeout 3 "$here/farm16.conf"
FF_QEMU=/nonexistent/qemu expect no-qemu 2 'error: /nonexistent/qemu not found' -- "$here/farm16.conf"

[ "$fails" = 0 ] && echo "test-guest: PASS" || { echo "test-guest: $fails FAILED"; exit 1; }
