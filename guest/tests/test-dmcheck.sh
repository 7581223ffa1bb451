#!/bin/bash
# test-dmcheck.sh: ff-dmcheck on the host, without device-mapper, from
# `dmsetup table` text: the tables lvm should make for guest/tests/farm16.conf
# pass; each kind of damage to them fails naming the LV.
# Not registered with ctest yet (docs/guest.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${FF_BUILD_DIR:-$here/../../build}
check=$build/guest/ff-dmcheck
ff=$build/fusefarm/fusefarm
for t in "$check" "$ff"; do
  [ -x "$t" ] || { echo "test-dmcheck: $t not built (cmake --build $build)"; exit 1; }
done
command -v python3 >/dev/null || { echo "test-dmcheck: needs python3"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ff" manifest "$here/farm16.conf" >"$tmp/m.json"
python3 "$here/dmtables.py" "$tmp/m.json" "$tmp/good" "$tmp/devmap"
fails=0

expect() { # expect NAME RC PATTERN TABLEFILE
  local name=$1 want=$2 pat=$3 tab=$4 rc=0
  "$check" --tables "$tab" --devmap "$tmp/devmap" "$tmp/m.json" >"$tmp/out" 2>&1 || rc=$?
  if [ "$rc" != "$want" ] || ! grep -q -- "$pat" "$tmp/out"; then
    echo "FAIL $name: rc $rc (want $want), output:"; sed 's/^/  /' "$tmp/out"
    fails=$((fails + 1))
  else
    echo "ok   $name: $(grep -m1 -- "$pat" "$tmp/out")"
  fi
}
mutate() { # mutate NAME SED-EXPR: a copy of the good tables, edited
  sed "$2" "$tmp/good" >"$tmp/$1"
  cmp -s "$tmp/good" "$tmp/$1" && { echo "FAIL $1: the edit changed nothing"; fails=$((fails + 1)); }
  echo "$tmp/$1"
}

expect good 0 'ff-dmcheck: 11 LVs checked, 0 mismatched' "$tmp/good"
expect dash-names 0 '^OK span-vg/a-b: 3 segments' "$tmp/good"
# a linear segment one sector off
expect linear-offset 1 '^MISMATCH single0/root: segment 0: on pv0000 at sector 2049, expected sector 2048' \
  "$(mutate off '/^single0-root:/s/ 2048$/ 2049/')"
# the stripes of str4/data in another order
expect stripe-order 1 '^MISMATCH str4/data: segment 0: stripe 0 on' \
  "$(mutate order '/^str4-data:/s/striped 4 256 \([0-9:]*\) \([0-9]*\) \([0-9:]*\) \([0-9]*\)/striped 4 256 \3 \4 \1 \2/')"
# wrong chunk size
expect chunk 1 '^MISMATCH str23/s3: segment 0: chunk 128 sectors, expected 512' \
  "$(mutate chunk '/^str23-s3:/s/striped 3 512/striped 3 128/')"
# an LV not activated
expect missing 1 '^MISMATCH str23/lin: no dm device str23-lin' "$(mutate missing '/^str23-lin:/d')"
# a segment missing from a spanning LV
expect segments 1 '^MISMATCH span-vg/a-b: 2 targets, expected 3 segments' \
  "$(mutate seg '0,/^span--vg-a--b:/{/^span--vg-a--b:/d}')"
# linear where striped was expected
expect type 1 '^MISMATCH str23/s2: segment 0: target type linear' \
  "$(mutate type '/^str23-s2:/s/striped 2 128 \([0-9:]*\) \([0-9]*\) .*/linear \1 \2/')"
# a dm device that is no LV is reported, not a failure
cp "$tmp/good" "$tmp/extra"; echo "other: 0 100 linear 8:0 0" >>"$tmp/extra"
expect extra 0 '^EXTRA other' "$tmp/extra"
# bad input is an error (2), not a pass
echo "garbage" >"$tmp/bad"
expect bad-input 2 'expected "NAME: START LEN TYPE PARAMS"' "$tmp/bad"

[ "$fails" = 0 ] && echo "test-dmcheck: PASS" || { echo "test-dmcheck: $fails FAILED"; exit 1; }
