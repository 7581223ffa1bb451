#!/bin/bash
# test-dmcheck.sh: ff-dmcheck on the host, without device-mapper, from
# `dmsetup table` text: the tables lvm should make for guest/tests/farm16.conf
# pass; each kind of damage to them fails naming the LV.
# guest/tests/raid-mirror: the same for configs/raid-mirror.conf's mirror
# and raid LVs, whose tables name their sub-LVs by dm device number, for
# configs/thin-snapshot.conf's thin pool, thin LVs and snapshot, and for
# configs/cache.conf's cache LVs.
# Registered with ctest as integration/test-dmcheck.
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
python3 "$here/dmtables.py" "$tmp/m.json" "$tmp/good" "$tmp/devmap" "$tmp/dmdevs"
m=$tmp/m.json
fails=0

expect() { # expect NAME RC PATTERN TABLEFILE
  local name=$1 want=$2 pat=$3 tab=$4 rc=0
  "$check" --tables "$tab" --devmap "$tmp/devmap" --dmdevs "$tmp/dmdevs" "$m" >"$tmp/out" 2>&1 || rc=$?
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

# --dmdevs numbers the devices of --tables; without --tables it is refused
rc=0; "$check" --dmdevs "$tmp/dmdevs" "$m" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" = 2 ] && grep -q -- '--dmdevs goes with --tables' "$tmp/out"; then
  echo "ok   dmdevs-alone: $(cat "$tmp/out")"
else
  echo "FAIL dmdevs-alone: rc $rc"; fails=$((fails + 1))
fi

# a devmap naming a device the manifest lacks, a dmdevs line without MAJ:MIN
cp "$tmp/devmap" "$tmp/devmap.good"; echo "8:4000 pv9999" >>"$tmp/devmap"
expect bad-devmap 2 'devmap:[0-9]*: pv9999 is no device of the manifest' "$tmp/good"
cp "$tmp/devmap.good" "$tmp/devmap"; echo "bogus-line" >>"$tmp/dmdevs"
expect bad-dmdevs 2 'dmdevs:[0-9]*: expected "MAJ:MIN DM-NAME"' "$tmp/good"

# Mirror and raid LVs: one target each, naming the sub-LVs (themselves
# LVs of the manifest, checked as linear) by their dm numbers.
"$ff" manifest "$here/../../configs/raid-mirror.conf" >"$tmp/rm.json"
python3 "$here/dmtables.py" "$tmp/rm.json" "$tmp/good" "$tmp/devmap" "$tmp/dmdevs"
m=$tmp/rm.json
nlv=$(python3 -c 'import json,sys; print(sum(len(v["lvs"]) for v in json.load(open(sys.argv[1]))["vgs"]))' "$m")
expect rm-good 0 "ff-dmcheck: $nlv LVs checked, 0 mismatched" "$tmp/good"
expect rm-raid10 0 '^OK rm/r10: 1 segment' "$tmp/good"
# the two legs of a mirror swapped
expect mirror-legs 1 '^MISMATCH rm/m: segment 0: image 0 is 254:3, expected 254:2 (rm-m_mimage_0)' \
  "$(mutate legs '/^rm-m:/s/ 254:2 0 254:3 0 / 254:3 0 254:2 0 /')"
# a core log where the spec made a disk log
expect mirror-log 1 '^MISMATCH rm/m: segment 0: mirror log "core 1", expected disk 2' \
  "$(mutate corelog '/^rm-m:/s/mirror disk 2 254:4 4096 2/mirror core 1 4096 2/')"
# another region size
expect mirror-region 1 '^MISMATCH rm/mcore: segment 0: region size 1024 sectors, expected 4096' \
  "$(mutate mregion '/^rm-mcore:/s/core 1 4096/core 1 1024/')"
# raid5 with another layout
expect raid-type 1 '^MISMATCH rm/r5: segment 0: raid type raid5_rs, expected raid5_ls' \
  "$(mutate rtype '/^rm-r5:/s/raid raid5_ls/raid raid5_rs/')"
# nosync: only lvcreate's own activation loads it
expect raid-nosync 1 '^MISMATCH rm/r1: segment 0: unexpected raid parameter "nosync' \
  "$(mutate nosync '/^rm-r1:/s/raid raid1 3 0 region_size/raid raid1 4 0 nosync region_size/')"
# rmeta and rimage of a pair swapped
expect raid-pair 1 '^MISMATCH rm/r1: segment 0: rmeta 0 is 254:23, expected 254:25 (rm-r1_rmeta_0)' \
  "$(mutate pair '/^rm-r1:/s/ 2 254:25 254:23 / 2 254:23 254:25 /')"
# raid10 without its copies
expect raid10-copies 1 '^MISMATCH rm/r10: segment 0: raid params' \
  "$(mutate copies '/^rm-r10:/s/raid10 5 128 region_size 4096 raid10_copies 2/raid10 3 128 region_size 4096/')"
# a sub-LV not activated: it, and the LV naming it, mismatch
expect sub-missing 1 '^MISMATCH rm/r6: segment 0: rimage 2 r6_rimage_2: no dm device rm-r6_rimage_2' \
  "$(mutate sub '/^rm-r6_rimage_2:/d'; sed -i '/ rm-r6_rimage_2$/d' "$tmp/dmdevs")"

# raid0 (no rmetas: "-") and raid0_meta: no region_size in the table
cat >"$tmp/r0.conf" <<'EOF'
vgs = ( { name = "z"; pvs = 3; device_size = "64M";
          lvs = ( { name = "r0"; type = "raid0"; size = "8M"; },
                  { name = "r0m"; type = "raid0_meta"; stripes = 3; size = "12M"; } ); } );
EOF
"$ff" manifest "$tmp/r0.conf" >"$tmp/r0.json"
python3 "$here/dmtables.py" "$tmp/r0.json" "$tmp/good" "$tmp/devmap" "$tmp/dmdevs"
m=$tmp/r0.json
expect raid0-good 0 "ff-dmcheck: 10 LVs checked, 0 mismatched" "$tmp/good"
expect raid0-table 0 '^OK z/r0: 1 segment' "$tmp/good"
# a region_size raid0 does not have
expect raid0-region 1 '^MISMATCH z/r0: segment 0: unexpected raid parameter "region_size 4096"' \
  "$(mutate r0region '/^z-r0:/s/raid raid0 1 128 /raid raid0 3 128 region_size 4096 /')"
# raid0_meta without its rmetas
expect raid0-meta 1 '^MISMATCH z/r0m: segment 0: rmeta 0 is -' \
  "$(mutate r0meta '/^z-r0m:/s/ 3 254:[0-9]* / 3 - /')"

# --raidintegrity: each rimage an integrity target over its _iorig, its
# metadata on its _imeta (the table as dm-integrity reports it)
cat >"$tmp/ri.conf" <<'EOF'
vgs = ( { name = "y"; pvs = 3; device_size = "64M";
          lvs = ( { name = "ri"; type = "raid1"; size = "8M"; raidintegrity = true; } ); } );
EOF
"$ff" manifest "$tmp/ri.conf" >"$tmp/ri.json"
python3 "$here/dmtables.py" "$tmp/ri.json" "$tmp/good" "$tmp/devmap" "$tmp/dmdevs"
m=$tmp/ri.json
expect integrity-good 0 "ff-dmcheck: 9 LVs checked, 0 mismatched" "$tmp/good"
expect integrity-table 0 '^OK y/ri_rimage_0: 1 segment' "$tmp/good"
# still recalculating: lvm's metadata asks for that once only
expect integrity-recalc 1 '^MISMATCH y/ri_rimage_1: recalculate in the table' \
  "$(mutate irecalc '/^y-ri_rimage_1:/s/ 7 meta_device/ 8 recalculate meta_device/')"
# another image's metadata
expect integrity-meta 1 '^MISMATCH y/ri_rimage_0: .* lacks meta_device:' \
  "$(mutate imeta '/^y-ri_rimage_0:/s/meta_device:254:[0-9]*/meta_device:254:99/')"
# bitmap mode where lvm made journal
expect integrity-mode 1 '^MISMATCH y/ri_rimage_0: "0 4 B" after the origin, expected "0 4 J"' \
  "$(mutate imode '/^y-ri_rimage_0:/s/ 0 4 J / 0 4 B /')"

# An interrupted pvmove: pvmove0's first segment a mirror of its extents
# and their new place, the others linear where they are; the moved LVs'
# segments over pvmove0 (split as pvmove0 is)
cat >"$tmp/pm.conf" <<'EOF'
vgs = ( { name = "w"; pvs = 3; device_size = "64M";
          lvs = ( { name = "a"; size = "8M"; placement = ( ["0:0-1"] ); },
                  { name = "x"; size = "8M"; placement = ( ["1:2-3"] ); },
                  { name = "y"; size = "32M"; placement = ( ["1:7-14"] ); },
                  { name = "c"; size = "12M"; placement = ( ["0:5-7"] ); } );
          changes = ( { command = "pvmove"; pv = 0; to = [1]; } ); } );
EOF
"$ff" manifest "$tmp/pm.conf" >"$tmp/pm.json"
python3 "$here/dmtables.py" "$tmp/pm.json" "$tmp/good" "$tmp/devmap" "$tmp/dmdevs"
m=$tmp/pm.json
expect pvmove-good 0 "ff-dmcheck: 5 LVs checked, 0 mismatched" "$tmp/good"
expect pvmove-split 0 '^OK w/c: 2 segments' "$tmp/good"
# the move's two legs swapped
expect pvmove-legs 1 '^MISMATCH w/pvmove0: segment 0: on ' \
  "$(mutate pmlegs '/^w-pvmove0: 0 /s/2 \(8:[0-9]* [0-9]*\) \(8:[0-9]* [0-9]*\)$/2 \2 \1/')"
# a waiting segment already a mirror (lvm moves one at a time)
expect pvmove-waiting 1 '^MISMATCH w/pvmove0: segment 1: mirror ' \
  "$(mutate pmwait '/^w-pvmove0: 16384 /s/linear \(8:[0-9]* [0-9]*\)$/mirror core 1 4096 2 \1 \1/')"
# an LV on its PV instead of over pvmove0
expect pvmove-lv 1 '^MISMATCH w/a: segment 0: the LV below is' \
  "$(mutate pmlv '/^w-a:/s/linear 254:[0-9]* 0$/linear 8:0 2048/')"

# Thin pools, thin LVs and an old-style snapshot (configs/thin-snapshot.conf):
# the pool's -tpool layer over _tmeta and _tdata, the public pool device
# over the layer, thin LVs over the layer, the origin over its -real
# device, the snapshot over -real and its -cow; no device for the pool
# metadata spare or snapshot0 (docs/research/thin-snapshot.md section 5).
"$ff" manifest "$here/../../configs/thin-snapshot.conf" >"$tmp/ts.json"
python3 "$here/dmtables.py" "$tmp/ts.json" "$tmp/good" "$tmp/devmap" "$tmp/dmdevs"
m=$tmp/ts.json
expect ts-good 0 'ff-dmcheck: 9 LVs checked, 0 mismatched, 0 VGs skipped, 0 other' "$tmp/good"
expect ts-spare 0 '^OK ts/lvol0_pmspare: no dm device (pmspare)' "$tmp/good"
# _tmeta and _tdata swapped in the pool's table
expect pool-swap 1 '^MISMATCH ts/pool: metadata is 254:4, expected 254:5 (ts-pool_tmeta)' \
  "$(mutate pswap '/^ts-pool-tpool:/s/thin-pool 254:5 254:4/thin-pool 254:4 254:5/')"
# another chunk size, a low water mark
expect pool-chunk 1 '^MISMATCH ts/pool: "256 0 0" after the devices, expected "128 0 0"' \
  "$(mutate pchunk '/^ts-pool-tpool:/s/ 128 0 0$/ 256 0 0/')"
expect pool-lowwater 1 '^MISMATCH ts/pool: "128 8 0" after the devices, expected "128 0 0"' \
  "$(mutate plw '/^ts-pool-tpool:/s/ 128 0 0$/ 128 8 0/')"
# no zeroing where the spec zeroes
expect pool-features 1 '^MISMATCH ts/pool: "128 0 1 skip_block_zeroing" after the devices, expected "128 0 0"' \
  "$(mutate pfeat '/^ts-pool-tpool:/s/ 128 0 0$/ 128 0 1 skip_block_zeroing/')"
# the public pool device at another offset of the layer
expect pool-public 1 '^MISMATCH ts/pool: ts-pool: "8" after the devices, expected "0"' \
  "$(mutate ppub '/^ts-pool:/s/ 254:3 0$/ 254:3 8/')"
# a thin LV with another device id, and one over the public device
expect thin-id 1 '^MISMATCH ts/thin2: "3" after the devices, expected "2"' \
  "$(mutate tid '/^ts-thin2:/s/ 2$/ 3/')"
expect thin-pool 1 '^MISMATCH ts/thin1: the pool is 254:2, expected 254:3 (ts-pool-tpool)' \
  "$(mutate tpool '/^ts-thin1:/s/thin 254:3/thin 254:2/')"
# a thin LV of the wrong virtual size
expect thin-size 1 '^MISMATCH ts/thin1: ts-thin1: thin over sectors 0+32768, expected thin over 0+40960' \
  "$(mutate tsize '/^ts-thin1:/s/0 40960/0 32768/')"
# the snapshot: transient, another chunk, the COW where the origin goes
expect snap-transient 1 '^MISMATCH ts/snap: "N 8" after the devices, expected "P 8"' \
  "$(mutate sn '/^ts-snap:/s/ P 8$/ N 8/')"
expect snap-chunk 1 '^MISMATCH ts/snap: "P 16" after the devices, expected "P 8"' \
  "$(mutate sc '/^ts-snap:/s/ P 8$/ P 16/')"
expect snap-origin 1 '^MISMATCH ts/snap: the origin is 254:7, expected 254:1 (ts-lin-real)' \
  "$(mutate so '/^ts-snap:/s/snapshot 254:1 254:7/snapshot 254:7 254:7/')"
# the COW one sector off; the origin not a snapshot-origin
expect snap-cow 1 '^MISMATCH ts/snap: segment 0: on ts0 at sector 67585, expected sector 67584' \
  "$(mutate cow '/^ts-snap-cow:/s/ 67584$/ 67585/')"
expect origin 1 '^MISMATCH ts/lin: ts-lin: linear over sectors 0+16384, expected snapshot-origin' \
  "$(mutate orig '/^ts-lin:/s/snapshot-origin 254:1/linear 8:0 51200/')"
# lvm never activates the spare
cp "$tmp/good" "$tmp/spare"; echo "ts-lvol0_pmspare: 0 8192 linear 8:0 2048" >>"$tmp/spare"
expect spare-active 1 '^MISMATCH ts/lvol0_pmspare: dm device ts-lvol0_pmspare exists' "$tmp/spare"
# a pool with no thin LV: its thin-pool table on the public device
sed -e '/^ts-pool-tpool:/d' -e 's/^ts-pool: 0 32768 linear 254:3 0$/ts-pool: 0 32768 thin-pool 254:5 254:4 128 0 0/' \
  "$tmp/good" >"$tmp/nothin"
sed '/ ts-pool-tpool$/d' "$tmp/dmdevs" >"$tmp/nothin.dmdevs"
"$check" --tables "$tmp/nothin" --devmap "$tmp/devmap" --dmdevs "$tmp/nothin.dmdevs" "$m" >"$tmp/out" 2>&1 || true
if grep -q '^OK ts/pool: 1 segment' "$tmp/out" && grep -q '^MISMATCH ts/thin1: the pool: no dm device ts-pool-tpool' "$tmp/out"; then
  echo "ok   pool-without-layer: the pool's table on ts-pool is accepted, its thins miss the layer"
else
  echo "FAIL pool-without-layer:"; sed 's/^/  /' "$tmp/out"; fails=$((fails + 1))
fi

# Cache LVs (configs/cache.conf): "cache CMETA CDATA CORIG CHUNK 2
# metadata2 MODE POLICY 0" over the pool's _cmeta and _cdata and the LV's
# _corig; no device for a cache pool, nor for the parts of one that
# caches nothing (docs/research/cache.md section 5).
"$ff" manifest "$here/../../configs/cache.conf" >"$tmp/cv.json"
python3 "$here/dmtables.py" "$tmp/cv.json" "$tmp/good" "$tmp/devmap" "$tmp/dmdevs"
m=$tmp/cv.json
expect cv-good 0 'ff-dmcheck: 14 LVs checked, 0 mismatched, 0 VGs skipped, 0 other' "$tmp/good"
expect cv-pool 0 '^OK cv/cp1_cpool: no dm device (cache pool)' "$tmp/good"
expect cv-unused 0 '^OK cv/spare_cmeta: no dm device (unused cache pool)' "$tmp/good"
# _cmeta and _cdata swapped
expect cache-swap 1 '^MISMATCH cv/data: metadata is 254:0, expected 254:1 (cv-cp1_cpool_cmeta)' \
  "$(mutate cswap '/^cv-data:/s/cache 254:1 254:0/cache 254:0 254:1/')"
# the origin another LV's
expect cache-origin 1 '^MISMATCH cv/fast: origin is 254:5, expected 254:7 (cv-fast_corig)' \
  "$(mutate corig '/^cv-fast:/s/ 254:7 128 / 254:5 128 /')"
# another mode, policy, chunk, no metadata2
expect cache-mode 1 '^MISMATCH cv/fast: "128 2 metadata2 writethrough smq 0" after the devices, expected "128 2 metadata2 writeback smq 0"' \
  "$(mutate cmode '/^cv-fast:/s/writeback/writethrough/')"
expect cache-policy 1 '^MISMATCH cv/data: "128 2 metadata2 writethrough mq 0" after' \
  "$(mutate cpol '/^cv-data:/s/ smq 0$/ mq 0/')"
expect cache-format 1 '^MISMATCH cv/data: "128 1 writethrough smq 0" after' \
  "$(mutate cfmt '/^cv-data:/s/ 2 metadata2 / 1 /')"
# policy arguments the pool has no settings for (the manifest's
# policy_args: "0")
expect cache-policy-args 1 '^MISMATCH cv/data: "128 2 metadata2 writethrough smq 2 migration_threshold 4096" after' \
  "$(mutate cargs '/^cv-data:/s/ smq 0$/ smq 2 migration_threshold 4096/')"
# the origin's extents one sector off
expect corig-offset 1 '^MISMATCH cv/data_corig: segment 0: on pv0000 at sector 2049, expected sector 2048' \
  "$(mutate coff '/^cv-data_corig:/s/ 2048$/ 2049/')"
# a device for the pool, or for an unused pool's metadata
cp "$tmp/good" "$tmp/pooldev"; echo "cv-cp1_cpool: 0 16384 linear 8:0 59392" >>"$tmp/pooldev"
expect cache-pool-active 1 '^MISMATCH cv/cp1_cpool: dm device cv-cp1_cpool exists' "$tmp/pooldev"
cp "$tmp/good" "$tmp/unused"; echo "cv-spare_cmeta: 0 16384 linear 8:16 2048" >>"$tmp/unused"
expect cache-unused-active 1 '^MISMATCH cv/spare_cmeta: dm device cv-spare_cmeta exists' "$tmp/unused"

[ "$fails" = 0 ] && echo "test-dmcheck: PASS" || { echo "test-dmcheck: $fails FAILED"; exit 1; }
