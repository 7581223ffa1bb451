#!/usr/bin/env bash
#
# test-byte-identical.sh: prove that `fusefarm gen` writes the same bytes as
# lvm2 (docs/ondisk-format.md §9).
#
# For each scenario, real pvcreate/vgcreate/lvcreate (lvm2 2.03.16, fenced
# by tests/lib/lvm-env.sh) build PV images on loop devices.  The test reads
# back what lvm chose (PV/VG/LV UUIDs from pvs/lvs, and per metadata write
# its description, creation_time, creation_host and uname comment from the
# on-disk copies), writes a farm spec (docs/spec-format.md) that pins all of
# it, runs `FUSEFARM_BIN gen SPEC -o OUTDIR` and cmp's every image.
#
# Scenarios (64 MiB PVs, 4 MiB extents, 15 extents per PV, unless said):
#   a: 2 PVs, vgA, lvlin (-L 8M linear), lvstr (-i 2 -I 64k -L 16M)
#   b: 3 PVs, vgB, lvspan (-l 40 linear over all three PVs)
#   c: 1 PV with --pvmetadatacopies 2, vgC, lvlin (-L 8M linear)
# pvcreate's options (the spec's keys of the same names):
#   d: --pvmetadatacopies 2 --metadatasize 4m (mda0 grows to the
#      alignment, mda1 keeps the asked size: (62914560, 4194304))
#   e: 66 MiB, --pvmetadatacopies 2 --dataalignment 4m (pe_start 4 MiB,
#      mda1 (67108864, 2097152), pe_count 15)
#   f: --pvmetadatacopies 2 --bootloaderareasize 600k (the area rounded up
#      to 1 MiB between mda0 and pe_start, in the label and the text)
#   g: --dataalignment 1m --dataalignmentoffset 192k
# lvm's allocation (normal policy: the areas sorted by the extents they
# give, most first; then cling to the PVs already used):
#   h: 2 PVs of 3 extents (13 MiB), lva -l 2, lvb -l 2 (lvb whole on the
#      second PV, not split)
#   i: 2 PVs of 3 extents, lva -l 1, lvb -l 4 (lvb: the second PV, then
#      the first PV's extent 1)
#   j: 6 PVs of 15 extents, lvs -i 3 -l 30, then lvl -l 40 linear (on PVs
#      3, 4, 5: the largest areas first)
#   k: as j with vgcreate -s 1k and 4 KiB stripes: 2 MiB + 15 KiB PVs
#      (pvcreate refuses less than 2 MiB, pv_min_size) with
#      --metadatasize 2000k, so pe_start is 2 MiB and each PV has 15
#      extents
# lvcreate --alloc (the spec's LV key alloc; each writes allocation_policy):
#   l: 3 PVs of 3 extents: lva contiguous -l 2, lvb cling -l 2, lvc normal
#      -l 4 (PV2 then PV0's last extent), lvd anywhere -l 1
#   m: 2 PVs of 3 extents: lva -l 2, lvb --alloc anywhere -i 2 -l 4: the
#      normal passes place one extent per stripe, the anywhere pass puts
#      both stripes of the rest on the second PV
# explicit placement (the spec's LV key placement; lvcreate VG PV:RANGE…):
#   n: 3 PVs of 3 extents: lva on PV1:1-2, lvb -l 3 (policy), lvc -i 2 on
#      PV1:0 PV2:0, lvd -l 2 on PV2:2 PV2:1 (lvm places extent 2 first)
#   o: 2 PVs of 5 extents: lva on PV0:1-3, lvb -l 3, lvc -l 4: the policy
#      around the holes (PV1:3-4, then PV0:4 before PV0:0: an area
#      reserved and given back goes after the areas of its size)
# and what the spec says beside (keys of the same names):
#   t: tags: vgcreate --addtag zeta --addtag alpha, an LV with
#      --addtag yy --addtag bb and one without
#   u: a devices file naming the loops by backing file: every PV section
#      gets device_id_type = "loop_file" and its device_id
#   v: PVs of 64 and 96 MiB in one VG (device_sizes)
#   w: writes after the LVs (changes): vgchange --addtag, lvchange
#      --addtag --deltag, pvchange --addtag, vgchange --deltag, each with
#      its own time and description
# histories (changes of other commands):
#   hx: 3 PVs: lva, lvb on PV0, striped lvs on PV1, PV2; then lvchange -p r
#       -ky, vgchange -x n --addtag, pvchange -x n --addtag (PV1), lvextend
#       of lvb (merged into its segment), of lvs (PV1 not allocatable: its
#       stripe 0 elsewhere, stripe 1 contiguous), of lva (the rest of PV0,
#       then PV2), lvchange -My --minor, -p rw, lvrename lvb lvc, lvchange
#       -r -ky --addtag (one write), vgchange -x y, pvchange -x y
#   hy: 2 PVs of 5 extents: lvextend of a contiguous LV (the next extent),
#       a cling LV (its PV), a normal one (contiguous, its PV, then the
#       other PV)
# metadata areas per PV and per VG (the spec's mda_copies as a list,
# vg_mda_copies; one pvcreate per PV with its --pvmetadatacopies):
#   z0: 3 PVs with 1, 0, 0 mdas: lvlin -L 8M, lvspan -l 40 over all three
#   z1: 0, 2, 0 mdas, vgcreate --vgmetadatacopies 2 (PV1 one extent less)
#   z2: 1, 2, 0 mdas, --vgmetadatacopies 5 (more than the VG has)
#   z3: 1, 1 mdas, --vgmetadatacopies all (written as 0, unmanaged)
#   z4: 0, 2 mdas with --bootloaderareasize 600k (the area after the
#       alignment on PV0, after mda0 on PV1: the same pe_start)
#   z5: 1, 2, 1 mdas, --vgmetadatacopies 2: lvm marks 2 of the 4 mdas
#       ignored, chosen at random; the spec names them (ignored_mdas)
# system IDs (the spec's system_id, top level: the host's, written as
# creation_host_system_id; in a VG group: vgcreate --systemid), the host's
# from lvm.conf (@hostid=NAME: system_id_source = "lvmlocal", local/system_id):
#   s0: vgcreate --systemid myhost, no host ID: a foreign VG (WRITE_LOCKED
#       in its flags, system_id), no LVs (lvm refuses them there)
#   s1: host ID hostA, vgcreate takes it: WRITE_LOCKED on the VG and its
#       LVs, creation_host_system_id in every write; -p r, -ky
#   s2: host ID hostB, vgcreate --systemid= (none): a VG as usual but
#       creation_host_system_id in every write
#   s3: host ID hostC, fake device-mapper: a raid1 LV, a thin pool and a
#       thin LV (every sub-LV WRITE_LOCKED)
# vgcreate --maxlogicalvolumes, --maxphysicalvolumes and --alloc (max_lv,
# max_pv, alloc in the VG group; the LVs of policy inherit are placed by
# the VG's):
#   x0: as l with the VG contiguous: lva -l 2, lvb -l 2, lvc -l 1,
#       max_lv 3, max_pv 3
#   x1: 1 PV, VG anywhere, max_lv 2: lva --alloc normal, lvb inherits
#   x2: 2 PVs of 3 extents, VG cling, max_pv 2: lva -l 2, lvb -l 3
#       --alloc inherit (written as nothing)
# LV flags (permission, activation_skip, read_ahead, minor, major):
#   y0: 1 PV: -p r; -ky; --readahead 100 (96); --readahead none; -My
#       --minor 123 (major: the host's device-mapper major, 0 without
#       one); -p r -ky -r 128k -My --minor 5
#   y1: 2 PVs, striped -i 2 with -p r --readahead 8 -ky
# mirror and raid LVs (the spec's type, mirrors, stripes, mirror_log,
# nosync, uuids, write_times, descriptions), lvm run with the fake
# device-mapper (tests/lib/fakedm.c; docs/testing.md): lvm refuses to
# create them without dm, and it activates the rmeta and mlog sub-LVs to
# wipe them between the two metadata writes of such an lvcreate.  The
# shim forwards those writes to the PVs; tests/lib/fakedm-check.py checks
# where they landed (the disk-log header, the rmeta wipes), and before the
# first of them tests/lib/fakedm-selftest.py drives the shim's other paths
# (chained and two-target linear tables, a non-linear target):
#   ma: 3 PVs, --type mirror --mirrorlog core -m1 -L 8M (one write)
#   mb: 3 PVs, --type mirror -m1 -L 8M (disk log on PV2: two writes)
#   mc: as mb with --nosync (NOTSYNCED; the log extent 0xFF after its
#       header)
#   md: 4 PVs, --type mirror -m2 -L 8M (images on PVs 0-2, log on PV3)
#   me: 2 PVs, --type mirror -m1 -L 8M (the log shares PV1 with an image)
#   ra: 2 PVs, --type raid1 -m1 -L 8M (rmeta_i, rimage_i on PV i)
#   rb: 3 PVs, --type raid1 -m2 -L 8M
#   rc: 3 PVs, --type raid4 -i2 -L 8M
#   rd: 3 PVs, --type raid5 -i2 -I 64k -L 8M
#   re: 5 PVs, --type raid6 -i3 -L 8M (rounded up to 12 MiB, 3 extents)
#   rf: 4 PVs, --type raid10 -i2 -m1 -L 8M
#   r0: 3 PVs, --type raid0 -i2 -L 8M, then -i3 -I 128k -L 12M: the
#      rimages alone (raid0_lvs, no region_size), one write each
#   r1: 3 PVs, the same with --type raid0_meta: rmeta, rimage pairs, two
#      writes each (as raid5)
#   r2: 3 PVs: lvA -l 10, raid0 -i2 -I 8m (cut to 4 MiB) --nosync
#      --addtag, raid0_meta -R 1m --nosync --addtag (neither NOTSYNCED nor
#      a region_size written)
#   mx: 3 PVs: lvA -l 10, lvR raid1 -m1, lvB -l 1, lvM mirror -m1: the
#       text lists the visible LVs first, then every sub-LV in creation
#       order; lvM's images avoid the full PV0, its log goes there
#   rt: 1 PV, --alloc anywhere with tags: a raid1 -m1 (both images on the
#       one PV; the rmetas keep the tags, every sub-LV gets
#       allocation_policy) and a disk-log mirror -m1 (the mlog has the
#       tags in the first write only)
# thin pools, thin LVs and old-style snapshots (docs/research/
# thin-snapshot.md), also with the fake device-mapper (thin_check off in
# the env's lvmlocal.conf: the shim cannot format a pool's metadata); the
# tmeta of a pool with thin LVs is what the kernel writes, so it is
# compared apart: zeros in lvm's image, and in the generator's metadata
# thin_check accepts with the expected devices (thin_dump), then the
# images are cmp'd with that range masked:
#   tp: 1 PV, --type thin-pool -Zn -L 16M (the spare lvol0_pmspare,
#       tdata, then tmeta after it; three writes)
#   t1: 1 PV, a pool -Zy and one thin LV (-T -V 20M)
#   t2: 2 PVs: a pool -c 128k (tmeta on the other PV), thin1, a linear
#       LV, thin2, a second pool (--poolmetadatasize 4m --discards
#       nopassdown; the spare exists: two writes)
#   t3: 2 PVs, 1 MiB extents: lvol3, a pool -c 2m (its thin's -V 3M
#       rounded up to the chunk; the spare is lvol4_pmspare), a pool
#       with --poolmetadataspare n
#   tg: --addtag on a pool, a thin and a snapshot (the tags on those
#       LVs only, the pool's from its write 2 on)
#   sn: 1 PV: lv -L 8M, snap -s -L 4M, snap2 -s -c 8k -L 40M (cut to 12M)
#   tq: 4 PVs of 512 KiB extents: thin pools with -i 2 and -i 3 -I 1m
#       (their tdata striped, the stripe cut to the extent)
#   tx: 2 PVs: two thin LVs of one external origin (a read-only linear
#       LV), one with -ky, and a thin snapshot of the first
#   tn: 2 PVs: thin snapshots (-s of a thin LV: device ids 2 and 4 with
#       origin =, ACTIVATION_SKIP but for the one made with -kn)
#   ts: configs/thin-snapshot.conf's VG (a pool, two thins, a linear LV
#       and a snapshot of it)
# cache pools and cache LVs (docs/research/cache.md), with the fake
# device-mapper too (it reports dm-cache-smq present, as a distribution
# kernel has it: lvm's default policy is then smq); lvm wipes the cmeta
# and leaves it all zero, as the generator does:
#   ca: 1 PV, --type cache-pool -L 8M (the spare, then cmeta and cdata
#       from one area, cmeta first; three writes)
#   cb: 1 PV, the pool, then --type cache -L 8M --cachepool: the LV
#       linear in write 1, cached in write 2 (lv_corig; the pool renamed
#       cpool_cpool and hidden, writethrough, smq, metadata_format 2)
#   cc: 2 PVs, lv -L 12M, the pool, lin -L 4M, then lvconvert --type
#       cache --cachepool (a change: one write; lv_corig after every LV)
#   cd: 2 PVs, big -L 40M, cp1 with --chunksize 128k --cachemode
#       writeback --cachepolicy mq --poolmetadatasize 4m (raised to 8M;
#       on the other PV), cp2 --poolmetadataspare n -L 4M, lv --type cache
#       --cachemode passthrough on cp2, lv2 on cp1 (the last attached
#       pool leads the hidden LVs)
#   ce: 1 PV, --addtag on a cache pool and a cache LV; a pool made with
#       --cachemode writeback --cachepolicy smq, then lvconvert of a
#       linear LV with --cachemode passthrough --cachepolicy mq
#   wc: 2 PVs: lvconvert --type writecache --cachevol of a linear LV (a
#       cache pool before it, a tagged cachevol, a change after it)
#   cv: 2 PVs: two lvconvert --type cache --cachevol (8 and 24 MiB
#       cachevols: metadata half of it, then the 4 MiB minimum plus the
#       chunks' share), one writeback mq
#   cg: 2 PVs: --cachesettings on two cache pools (one mq), one of them
#       attached by lvconvert (its policy_settings stay with the pool)
#   cf: 2 PVs, a cache LV, then a raid1 and a disk-log mirror (their
#       write 1 lists the rmetas, the mlog before the hidden pool)
#
# Every lvm command that writes gets `--devices LOOP,LOOP…`: with the
# devices file in use, vgcreate would add device_id_type/device_id lines to
# every PV section, which the spec cannot express.  The option therefore
# appears in each description, which the spec copies verbatim.
#
# lvm stamps an LV's creation_time and its write's creation_time from two
# time() calls; when they straddle a second the spec (one `time` per LV)
# cannot express it, and the scenario is re-run (at most 3 attempts).  A
# mirror or raid LV's sub-LVs share the top LV's `time` (each of its two
# writes has its own, write_times): when they differ, the same re-run.
#
# Usage:
#   test-byte-identical.sh FUSEFARM_BIN
#   test-byte-identical.sh --dry-run [FUSEFARM_BIN]
#       build the lvm images, print the extracted values and the specs,
#       do not run the generator (exit 0 when lvm side works)
# Environment:
#   FF_KEEP=1            keep the scratch dir (images, dumps, specs)
#   FF_SCENARIOS="a b c" run only these scenarios
#   FF_BUILD_DIR         the build tree, for the fake device-mapper
#                        (tests/ff-fakedm.so) of the mirror/raid scenarios
#                        (default: the one FUSEFARM_BIN is in)
#
# Exit status: 0 when every image is identical, 1 otherwise.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=SCRIPTDIR/../lib/fakedm.sh
. "$here/../lib/fakedm.sh"
dumper=$here/../lib/lvm-pv-dump.py
fdcheck=$here/../lib/fakedm-check.py

dry_run=0
if [[ ${1:-} == --dry-run ]]; then
	dry_run=1
	shift
fi
bin=${1:-}
if ((!dry_run)); then
	[[ -n $bin ]] || ff_die "usage: ${0##*/} [--dry-run] FUSEFARM_BIN"
	[[ -x $bin && -f $bin ]] || ff_die "$bin: fusefarm binary missing or not executable (build it first)"
	bin=$(realpath -- "$bin")
fi

ff_require python3 cmp hexdump truncate blockdev diff awk
# the fake device-mapper of the fusefarm binary's build tree when
# FF_BUILD_DIR does not name one
if [[ -z ${FF_BUILD_DIR:-} && -z $FF_FAKEDM_SO && -n $bin && -f ${bin%/*}/../tests/ff-fakedm.so ]]; then
	FF_FAKEDM_SO=${bin%/*}/../tests/ff-fakedm.so
fi
ff_env_init

failed=0

# write_spec DIR SCENARIO VG: read DIR/intent, DIR/dump.json, DIR/pvs.json,
# DIR/lvs.json and DIR/devs; write DIR/spec.conf and DIR/values.txt.
# Exit 3 when an LV's creation_time differs from its write's, or a sub-LV's
# from its top LV's (retry).
write_spec() {
	python3 - "$@" <<'PY'
import json, os, re, sys

d, scen, vgname = sys.argv[1:4]
opn, cls = "[", "]"

def fail(msg, code=1):
    sys.stderr.write("%s: scenario %s: %s\n" % ("note" if code == 3 else "FAIL", scen, msg))
    sys.exit(code)

def q(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

def size(b):
    for unit, mul in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b % mul == 0:
            return '"%d%s"' % (b // mul, unit)
    return "%d" % b

dump = json.load(open(os.path.join(d, "dump.json")))["images"]
pvrep = json.load(open(os.path.join(d, "pvs.json")))["report"][0]["pv"]
lvrep = json.load(open(os.path.join(d, "lvs.json")))["report"][0]["lv"]
devs = open(os.path.join(d, "devs")).read().split()
intent = [l.rstrip("\n").split("\t") for l in open(os.path.join(d, "intent")) if l.strip()]
lv_intent = [(i[1], i[2]) for i in intent if i[0] == "lv"]

def keys_of(frag):
    """The spec keys of an LV's fragment: name -> raw value."""
    return {m.group(1): m.group(2).strip() for m in re.finditer(
        r'(\w+)\s*=\s*("(?:[^"\\]|\\.)*"|\[[^\]]*\]|\([^)]*\)|[^;]+)', frag)}

def layout(name, frag):
    """(sub-LV names in lvm's creation order, metadata writes) of the LV
    the fragment describes: a raid LV's rimage_i, rmeta_i pairs (raid0:
    the rimages, one write) and a
    mirror's mimages then its disk log; two writes for raid and a
    disk-log mirror (docs/ondisk-format.md §9)."""
    k = keys_of(frag)
    t = k.get("type", '"linear"').strip('"')
    if t.startswith("raid"):
        m = int(k.get("mirrors", "1"))
        st = int(k.get("stripes", {"raid6": "3"}.get(t, "2")))
        if t == "raid0":
            # the rimages alone: no rmeta to wipe, one write
            return ["%s_rimage_%d" % (name, i) for i in range(st)], 1
        n = {"raid1": m + 1, "raid4": st + 1, "raid5": st + 1, "raid6": st + 2,
             "raid10": st * (m + 1), "raid0_meta": st}.get(t)
        if n is None:
            fail("LV %s: type %s is not one this test knows" % (name, t))
        subs = [x for i in range(n) for x in ("%s_rimage_%d" % (name, i), "%s_rmeta_%d" % (name, i))]
        if k.get("raidintegrity") == "true":
            # --raidintegrity: an _imeta LV per image (a write each), then
            # the _iorig layers (recalculate = 1), then the flag cleared
            return (subs + ["%s_rimage_%d_imeta" % (name, i) for i in range(n)] +
                    ["%s_rimage_%d_iorig" % (name, i) for i in range(n)]), 2 + n + 2
        return subs, 2
    if t == "mirror":
        subs = ["%s_mimage_%d" % (name, i) for i in range(int(k.get("mirrors", "1")) + 1)]
        if k.get("mirror_log", '"disk"').strip('"') == "core":
            return subs, 1
        return subs + [name + "_mlog"], 2
    if t in ("thin-pool", "cache-pool"):
        # [the VG's new pool metadata spare], NAME_tmeta, NAME_tdata (a
        # cache pool: NAME_cmeta, NAME_cdata, NAME_cpool_cmeta... once it
        # caches an LV); the first pool that wants a spare makes it, in a
        # write of its own (docs/research/thin-snapshot.md §2, cache.md)
        global have_spare
        subs = [disk(name) + x for x in (("_tmeta", "_tdata") if t == "thin-pool" else ("_cmeta", "_cdata"))]
        if k.get("pmspare", "true") == "false" or have_spare:
            return subs, 2
        have_spare = True
        spare = [n for n in curlv if re.match(r"^lvol\d+_pmspare$", n)]
        if len(spare) != 1:
            fail("pool %s: no single lvolN_pmspare LV on disk (%s)" % (name, spare))
        return spare + subs, 3
    if t == "thin":
        return [], 2
    if t in ("cache", "writecache") and "cachevol" in k:
        # lvcreate --cachevol: the LV, then the attach (LV_corig or
        # LV_wcorig listed as an lvconvert's, after every LV)
        return [], 2
    if t == "cache":
        return [name + "_corig"], 2
    if t == "snapshot":
        global nsnap
        nsnap += 1
        return ["snapshot%d" % (nsnap - 1)], 2
    return [], 1
have_spare = False
nsnap = 0
# the first PV with a metadata area (PVs made with --pvmetadatacopies 0
# have none)
# and in use (vgcreate --vgmetadatacopies marks others ignored: they keep
# write 1 only)
def ignored(m):
    return bool(m["raw_locn"][0]["flags"] & 1)
mda0 = next((m for i in json.load(open(os.path.join(d, "dump.json")))["images"]
             for m in i["mdas"] if not ignored(m)), None)
if mda0 is None:
    fail("no PV has a metadata area")
curlv = {l["name"]: l for l in mda0["copies"][-1]["lvs"]}
def disk(name):
    """An LV's name on disk: a cache pool that caches an LV is NAME_cpool, a
    writecache's cachevol NAME_cvol."""
    for suf in ("_cpool", "_cvol"):
        if name not in curlv and name + suf in curlv:
            return name + suf
    return name
lay = {name: layout(name, frag) for name, frag in lv_intent}
chg_intent = [i[1] for i in intent if i[0] == "chg"]
# lvconvert --type cache (writecache): the LV's new LV_corig (LV_wcorig),
# after every LV
def corig(f):
    ck = keys_of(f)
    return ck["lv"].strip('"') + ("_wcorig" if ck.get("type") == '"writecache"' else "_corig")
converted = [corig(f) for f in chg_intent if "lvconvert" in keys_of(f).get("command", "")]
# lvrename: each LV's name on disk now
renamed = {}
for f in chg_intent:
    ck = keys_of(f)
    if ck.get("command") == '"lvrename"':
        old, new = ck["lv"].strip('"'), ck["new_name"].strip('"')
        for k in [k for k, v in renamed.items() if v == old] + [old]:
            renamed[k] = new
def final(name):
    return renamed.get(name, name)
# lvremove: the LVs gone (by their name when removed); a thin LV's
# lvremove takes two writes (the pool's delete message, then none)
# (removed: by the names lvcreate gave them)
removed = set()
now = {n: n for n, _ in lv_intent}
for f in chg_intent:
    ck = keys_of(f)
    if ck.get("command") == '"lvrename"':
        now = {o: ck["new_name"].strip('"') if c == ck["lv"].strip('"') and o not in removed else c
               for o, c in now.items()}
    elif ck.get("command") == '"lvremove"':
        removed |= {o for o, c in now.items() if c == ck["lv"].strip('"') and o not in removed}
def last_of(name):
    """A removed LV as the copies show it last: the first run of copies
    holding its name, one UUID throughout."""
    got = None
    for c in copies:
        l = next((l for l in c["lvs"] if l["name"] == name), None)
        if got and (l is None or l["id"] != got["id"]):
            break
        got = l or got
    return got
pv_keys = [i[1] for i in intent if i[0] == "pvkeys" and len(i) > 1 and i[1]]

# Every mda of every PV must hold the same history: seqno 1..n, same
# offsets, sizes and per-write values; the last copy is the current one.
# An ignored mda holds write 1 only.
hist = None
ign = []
for p, img in enumerate(dump):
    ign += ["%d:%d" % (p, k) for k, m in enumerate(img["mdas"]) if ignored(m)]
for img in dump:
    if not img["label_crc_ok"]:
        fail("%s: label CRC does not verify (lvm-pv-dump.py bug?)" % img["path"])
# the mdas in use first, then the ignored ones
for img, m in sorted(((i, m) for i in dump for m in i["mdas"]), key=lambda x: ignored(x[1])):
    if not m["header_crc_ok"] or not m["magic_ok"]:
        fail("%s mda at %d: header CRC/magic does not verify" % (img["path"], m["start"]))
    if m["copies"] and m["copies"][-1]["crc"] != m["raw_locn"][0]["checksum"]:
        fail("%s mda at %d: text CRC %s != raw_locn %s" % (img["path"], m["start"],
             m["copies"][-1]["crc"], m["raw_locn"][0]["checksum"]))
    h = [(c["seqno"], c["offset"], c["size"], c["description"],
          c["creation_time"], c["creation_host"], c["uname"], c["vg_uuid"])
         for c in m["copies"]]
    if not m["copies"] or not m["copies"][-1]["current"]:
        fail("%s mda at %d: last copy is not raw_locn[0]" % (img["path"], m["start"]))
    if ignored(m):
        if hist is None or h != hist[:1]:
            fail("%s mda at %d: ignored, but does not hold write 1 alone" % (img["path"], m["start"]))
    elif hist is None:
        hist = h
    elif h != hist:
        fail("%s mda at %d: history differs from the first PV's" % (img["path"], m["start"]))
nw = 1 + sum(lay[n][1] for n, _ in lv_intent) + len(chg_intent)
nw += sum(1 for h in hist if h[3].startswith("Write[2] from lvremove "))
if [h[0] for h in hist] != list(range(1, nw + 1)):
    fail("seqnos on disk are %s, expected 1..%d" % ([h[0] for h in hist], nw))
copies = mda0["copies"]
cur = copies[-1]

hosts = {(c["creation_host"], c["uname"]) for c in copies}
if len(hosts) != 1:
    fail("creation_host/uname differ between writes: %s" % hosts)
versions = {c["lvm_version"] for c in copies}
if len(versions) != 1:
    fail("lvm versions differ between writes: %s" % versions)

# What lvm reports must agree with what is on disk.  pvs sorts by name;
# the loops come in attach order, which is not the names' order when
# other loops came and went meanwhile (another test run beside this one).
if sorted(p["pv_name"] for p in pvrep) != sorted(devs):
    fail("pvs lists %s, expected %s" % ([p["pv_name"] for p in pvrep], devs))
pvrep = sorted(pvrep, key=lambda p: devs.index(p["pv_name"]))
pv_uuids = [p["pv_uuid"] for p in pvrep]
if pv_uuids != [i["pv_uuid"] for i in dump] or pv_uuids != [p["id"] for p in cur["pvs"]]:
    fail("PV UUIDs: pvs %s, labels %s, text %s" % (pv_uuids, [i["pv_uuid"] for i in dump],
                                                   [p["id"] for p in cur["pvs"]]))
vg_uuid = pvrep[0]["vg_uuid"]
if {p["vg_uuid"] for p in pvrep} != {vg_uuid} or cur["vg_uuid"] != vg_uuid or cur["vg"] != vgname:
    fail("VG UUID/name mismatch between pvs and the text")
hints = [p["device"] for p in cur["pvs"]]
if hints != devs:
    fail("device hints %s, expected %s" % (hints, devs))
devids = [(p["device_id_type"], p["device_id"]) for p in cur["pvs"]]
use_devids = any(i[0] == "devicesfile" for i in intent)
if use_devids != any(t for t, _ in devids):
    fail("device_id lines %s, but the devices file %s in use" % (devids, "is" if use_devids else "is not"))
if use_devids and len({t for t, _ in devids}) != 1:
    fail("device_id_types differ between PVs: %s" % devids)
for i in dump:
    if i["device_size"] != i["file_size"]:
        fail("%s: label device_size %d, file %d" % (i["path"], i["device_size"], i["file_size"]))
dev_sizes = [i["device_size"] for i in dump]
dev_size = dev_sizes[0]
# --pvmetadatacopies per PV (@mdas): a list when they differ
mda_list = [len(i["mdas"]) for i in dump]
if len(set(mda_list)) == 1:
    mda_copies = "%d" % mda_list[0]
else:
    mda_copies = "%s %s %s" % (opn, ", ".join("%d" % n for n in mda_list), cls)
extent_size = cur["extent_size_sectors"] * 512

# lvs -a: hidden LVs in brackets
lvuuid = {l["lv_name"].strip("[]"): l["lv_uuid"] for l in lvrep}
curlv = {l["name"]: l for l in cur["lvs"]}
# the text lists the visible LVs, then the hidden ones, each in creation
# order
# the cache pools attached (lvcreate --type cache, then each lvconvert),
# hidden since: each command reads the LVs in the order of the text
# before it, so the last attached leads the hidden LVs
attached = ([keys_of(f).get("pool", keys_of(f).get("cachevol", "")).strip('"') for _, f in lv_intent
             if keys_of(f).get("type") in ('"cache"', '"writecache"')] +
            [keys_of(f).get("pool", keys_of(f).get("cachevol", "")).strip('"')
             for f in chg_intent if "lvconvert" in keys_of(f).get("command", "")])
# lvcreate --type cache|writecache --cachevol: LV_corig (LV_wcorig) as an
# lvconvert makes it, before those of the changes
cvol_made = [n + ("_wcorig" if keys_of(f).get("type") == '"writecache"' else "_corig")
             for n, f in lv_intent if "cachevol" in keys_of(f)]
converted = cvol_made + converted
moving = any(keys_of(f).get("command") == '"pvmove"' for f in chg_intent)
want = ([final(n) for n, _ in lv_intent if n not in attached and n not in removed] +
        [disk(n) for n in reversed(attached)] +
        [x for n, _ in lv_intent for x in lay[n][0]] + converted)
if moving:
    want.append("pvmove0")
if want != [l["name"] for l in cur["lvs"]]:
    fail("LVs on disk %s, expected %s" % ([l["name"] for l in cur["lvs"]], want))

out = []
vals = []
w = out.append
w("# farm spec written by tests/integration/test-byte-identical.sh, scenario %s" % scen)
w("# from a real lvm2 run on %s" % " ".join(devs))
w("seed = 0;")
w("device_size = %s;" % size(dev_size))
w("creation_host = %s;" % q(cur["creation_host"]))
w("uname = %s;" % q(cur["uname"]))
w("creation_time = %d;" % copies[0]["creation_time"])
w("lvm_version = %s;" % q(cur["lvm_version"]))
for i in intent:
    if i[0] == "hostid":
        w("system_id = %s;" % q(i[1]))
w("vgs = (")
w("  {")
w("    count = 1;")
w("    name = %s;" % q(vgname))
w("    pvs = %d;" % len(devs))
w("    device_size = %s;" % size(dev_size))
if len(set(dev_sizes)) > 1:
    w("    device_sizes = %s %s %s;" % (opn, ", ".join(size(z) for z in dev_sizes), cls))
if use_devids:
    w("    device_id_type = %s;" % q(devids[0][0]))
    w("    device_ids = %s %s %s;" % (opn, ", ".join(q(i) for _, i in devids), cls))
w("    extent_size = %s;" % size(extent_size))
w("    mda_copies = %s;" % mda_copies)
if ign:
    w("    ignored_mdas = %s %s %s;" % (opn, ", ".join(q(x) for x in ign), cls))
for frag in pv_keys:
    for part in frag.split(";"):
        if part.strip():
            w("    %s;" % part.strip())
w("    uuid = %s;" % q(vg_uuid))
w("    devices = %s %s %s;" % (opn, ", ".join(q("r%d" % i) for i in range(len(devs))), cls))
w("    pv_uuids = %s %s %s;" % (opn, ", ".join(q(u) for u in pv_uuids), cls))
w("    hints = %s %s %s;" % (opn, ", ".join(q(h) for h in hints), cls))
w("    time = %d;" % copies[0]["creation_time"])
w("    description = %s;" % q(copies[0]["description"]))
vals.append("vg %s uuid %s extent_size %d mda_copies %s dev_size %d"
            % (vgname, vg_uuid, extent_size, mda_copies, dev_size))
for i, u in enumerate(pv_uuids):
    vals.append("pv r%d %s uuid %s" % (i, devs[i], u))
vals.append("host %s uname %s lvm %s" % (cur["creation_host"], cur["uname"], cur["lvm_version"]))
for c in copies:
    vals.append("write seqno %d at mda+%d size %d time %d (%s) description %s"
                % (c["seqno"], c["offset"], c["size"], c["creation_time"],
                   c["creation_time_comment"], c["description"]))
def seg_text(lv):
    return "; ".join("le %d+%d %s %s" % (s["start_extent"], s["extent_count"], s["type"],
                     s["stripes"] or s["images"]) for s in lv["segments"])

nwr = 1  # copies[0] is vgcreate's
if lv_intent:
    w("    lvs = (")
    for k, (name, frag) in enumerate(lv_intent):
        subs, nwrites = lay[name]
        wrs = copies[nwr:nwr + nwrites]
        nwr += nwrites
        gone = name in removed
        lv = curlv[final(disk(name))] if not gone else last_of(final(name))
        group = [lv] + [curlv[x] for x in subs]
        if nwrites == 1 and lv["creation_time"] != wrs[0]["creation_time"]:
            fail("LV %s creation_time %d != write seqno %d time %d (second boundary), running the scenario again"
                 % (name, lv["creation_time"], wrs[0]["seqno"], wrs[0]["creation_time"]), 3)
        for g in group[1:]:
            # a pool's spare has write 1's time, its tmeta and tdata the
            # last write's, a snapshotN write 2's (each is made just
            # before that write); mirror and raid sub-LVs the LV's
            want_t = lv["creation_time"]
            if g["name"].endswith("_pmspare"):
                want_t = wrs[0]["creation_time"]
            elif g["name"].endswith("_imeta"):
                # its own lvcreate's write
                want_t = wrs[2 + int(re.search(r"_(\d+)_imeta$", g["name"]).group(1))]["creation_time"]
            elif g["name"].endswith("_iorig"):
                want_t = wrs[-2]["creation_time"]
            elif g["name"].endswith(("_tmeta", "_tdata", "_cmeta", "_cdata", "_corig")) or g["name"].startswith("snapshot"):
                want_t = wrs[-1]["creation_time"]
            if g["creation_time"] != want_t:
                fail("sub-LV %s creation_time %d != %d (second boundary), running the scenario again"
                     % (g["name"], g["creation_time"], want_t), 3)
        if nwrites >= 2:
            d1 = wrs[0]["description"]
            for wk in range(1, nwrites):
                dk = wrs[wk]["description"]
                if not d1.startswith("Write from lvcreate ") or dk != "Write[%d] from " % (wk + 1) + d1[len("Write from "):]:
                    fail("LV %s: its writes are %r, not one lvcreate's Write, Write[2], ..."
                         % (name, [c["description"] for c in wrs]))
        for g in group:
            if g["creation_host"] != wrs[0]["creation_host"]:
                fail("LV %s creation_host differs from the write's" % g["name"])
            # lvs -a does not list an old-style snapshot's snapshotN
            if g["name"].startswith("snapshot") and g["name"] not in lvuuid:
                continue
            if gone:
                continue
            if lvuuid.get(g["name"]) != g["id"]:
                fail("LV %s: lvs -a says %s, text says %s" % (g["name"], lvuuid.get(g["name"]), g["id"]))
        w("      {")
        w("        name = %s;" % q(name))
        w("        uuid = %s;" % q(lv["id"]))
        for part in frag.split(";"):
            if part.strip():
                w("        %s;" % part.strip())
        if subs:
            w("        uuids = %s %s %s;" % (opn, ", ".join(q(curlv[x]["id"]) for x in subs), cls))
        co = next((x for x in cvol_made if x.rsplit("_", 1)[0] == name), None)
        if co:
            if curlv[co]["creation_time"] != wrs[-1]["creation_time"]:
                fail("%s creation_time %d != the attaching write's %d (second boundary), running the scenario again"
                     % (co, curlv[co]["creation_time"], wrs[-1]["creation_time"]), 3)
            w("        uuids = %s %s %s;" % (opn, q(curlv[co]["id"]), cls))
            vals.append("lv %s uuid %s time %d (lvcreate --cachevol)" % (co, curlv[co]["id"], curlv[co]["creation_time"]))
        w("        time = %d;" % lv["creation_time"])
        if nwrites == 1:
            w("        description = %s;" % q(wrs[0]["description"]))
        elif keys_of(frag).get("raidintegrity") == "true":
            # every write's time; the descriptions "Write[N] from" the first
            w("        write_times = %s %s %s;" % (opn, ", ".join("%d" % c["creation_time"] for c in wrs), cls))
            w("        description = %s;" % q(wrs[0]["description"]))
        else:
            w("        write_times = %s %s %s;" % (opn, ", ".join("%d" % c["creation_time"] for c in wrs), cls))
            w("        descriptions = %s %s %s;" % (opn, ", ".join(q(c["description"]) for c in wrs), cls))
        w("      }%s" % ("," if k + 1 < len(lv_intent) else ""))
        for g in group:
            vals.append("lv %s uuid %s time %d%s%s%s segments %s"
                        % (g["name"], g["id"], g["creation_time"],
                           " status %s" % ",".join(g["status"]),
                           " tags %s" % ",".join(g["tags"]) if g["tags"] else "",
                           " alloc %s" % g["allocation_policy"] if g["allocation_policy"] else "",
                           seg_text(g)))
    w("    );")
if chg_intent:
    w("    changes = (")
    for k, frag in enumerate(chg_intent):
        wr = copies[nwr]
        nwr += 1
        wr2 = None
        if nwr < len(copies) and copies[nwr]["description"].startswith("Write[2] from lvremove "):
            wr2 = copies[nwr]
            nwr += 1
        w("      {")
        for part in frag.split(";"):
            if part.strip():
                w("        %s;" % part.strip())
        ck = keys_of(frag)
        if ck.get("command") == '"pvmove"':
            pm = curlv["pvmove0"]
            if pm["creation_time"] != wr["creation_time"]:
                fail("pvmove0 creation_time %d != pvmove write time %d (second boundary), running the scenario again"
                     % (pm["creation_time"], wr["creation_time"]), 3)
            w("        uuid = %s;" % q(pm["id"]))
            vals.append("lv pvmove0 uuid %s time %d (pvmove)" % (pm["id"], pm["creation_time"]))
        if "lvconvert" in ck.get("command", ""):
            co = curlv[corig(frag)]
            if co["creation_time"] != wr["creation_time"]:
                fail("%s creation_time %d != lvconvert write time %d (second boundary), running the scenario again"
                     % (co["name"], co["creation_time"], wr["creation_time"]), 3)
            w("        uuid = %s;" % q(co["id"]))
            vals.append("lv %s uuid %s time %d (lvconvert)" % (co["name"], co["id"], co["creation_time"]))
        if wr2 and wr2["creation_time"] != wr["creation_time"]:
            # lvremove of a thin LV: its two writes a second apart
            w("        write_times = %s %d, %d %s;" % (opn, wr["creation_time"], wr2["creation_time"], cls))
        else:
            w("        time = %d;" % wr["creation_time"])
        w("        description = %s;" % q(wr["description"]))
        w("      }%s" % ("," if k + 1 < len(chg_intent) else ""))
    w("    );")
w("  }")
w(");")
# what only the kernel writes, compared apart: the tmeta of each pool
# with thin LVs (lvm leaves it zeroed; the farm holds the metadata the
# kernel formats): "IMAGE OFFSET LENGTH POOL THINS" lines
kr = []
for l in cur["lvs"]:
    for seg in l["segments"]:
        if seg["type"] != "thin-pool":
            continue
        # the pool's transaction and its devices (id:transaction), which
        # thin_dump of the kernel's metadata must show
        devs_t = sorted((int(s2["device_id"]), int(s2["transaction_id"])) for t in cur["lvs"] for s2 in t["segments"]
                        if s2["type"] == "thin" and s2["thin_pool"] == l["name"])
        tm = curlv[seg["metadata"]]
        m = re.match(r'^\["pv(\d+)", (\d+)\]$', tm["segments"][0]["stripes"])
        pv = cur["pvs"][int(m.group(1))]
        if int(seg["transaction_id"]):
            kr.append("r%d %d %d %s %s %s" % (int(m.group(1)), pv["pe_start_sectors"] * 512 + int(m.group(2)) * extent_size,
                                              tm["segments"][0]["extent_count"] * extent_size, l["name"],
                                              seg["transaction_id"], ",".join("%d:%d" % d for d in devs_t) or "-"))
open(os.path.join(d, "kranges"), "w").write("".join(x + "\n" for x in kr))
open(os.path.join(d, "spec.conf"), "w").write("\n".join(out) + "\n")
open(os.path.join(d, "values.txt"), "w").write("\n".join(vals) + "\n")
PY
}

# show_diff LVMIMG GENIMG: cmp -l excerpt, hexdump around the first
# difference in both, and the decoded headers/texts side by side.
show_diff() {
	local a=$1 b=$2 first start n
	echo "--- cmp -l $a $b | head -20 (offset is 1-based, octal bytes)"
	cmp -l "$a" "$b" 2>&1 | head -20 || true
	n=$(cmp -l "$a" "$b" 2>/dev/null | wc -l || true)
	echo "--- $n differing bytes"
	first=$(cmp "$a" "$b" 2>&1 | awk '/differ/ { sub(",", "", $5); print $5 }') || true
	if [[ -n $first ]]; then
		start=$(((first - 1) / 16 * 16 - 64))
		((start >= 0)) || start=0
		echo "--- first difference at byte offset $((first - 1)) (0x$(printf %x $((first - 1))))"
		echo "--- lvm:       hexdump -C -s $start -n 192 $a"
		hexdump -C -s "$start" -n 192 "$a"
		echo "--- generated: hexdump -C -s $start -n 192 $b"
		hexdump -C -s "$start" -n 192 "$b"
	else
		cmp "$a" "$b" 2>&1 || true
	fi
	# Decoded view: label/mda headers and copy placement, then each
	# metadata text copy, line by line.
	local ta=$a.texts tb=$b.texts
	echo "--- decoded headers (lvm-pv-dump.py): diff -u lvm generated"
	python3 "$dumper" --texts "$ta" "$a" >"$a.dump" 2>&1 || true
	python3 "$dumper" --texts "$tb" "$b" >"$b.dump" 2>&1 || true
	sed -i 's|"path": "[^"]*"|"path": "…"|' "$a.dump" "$b.dump"
	diff -u "$a.dump" "$b.dump" | head -60 || true
	echo "--- metadata texts: diff -ru lvm generated"
	diff -ru "$ta" "$tb" | head -60 || true
}

selftest_done=0
# fakedm_selftest: before the first scenario that uses the fake
# device-mapper, the paths of the shim lvm does not reach (a two-target
# linear table, a linear device on a linear device, write(), a non-linear
# target), on a 1 MiB loop of its own (tests/lib/fakedm-selftest.py).
fakedm_selftest() {
	local img=$FF_SCRATCH/fakedm-selftest.img out loop
	[[ -d $FF_SCRATCH/fakedm/bin ]] || ff_fakedm_init
	truncate -s 1M "$img"
	out=$(ff_loop_attach "$img")
	loop=$out
	FF_FAKEDM_LOG=$FF_SCRATCH/fakedm-selftest.log \
		ff_fakedm_run python3 "$here/../lib/fakedm-selftest.py" "$loop" "$FF_SCRATCH/fakedm-selftest.log" ||
		ff_die "the fake device-mapper's self-test failed (log: $FF_SCRATCH/fakedm-selftest.log)"
	ff_loop_detach_all
	rm -f "$img"
}

# stop_pvmove_pollers: kill the lvm processes polling this scenario's
# pvmove (pvmove -b forks one that leaves our process group; ours carry
# the shim's scratch dir in their environment), and wait for them to go.
stop_pvmove_pollers() {
	local p want=FF_FAKEDM_DIR=$FF_SCRATCH/fakedm/dm
	local -a mine=()
	for p in $(pgrep -x lvm || true); do
		if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxF "$want"; then
			mine+=("$p")
		fi
	done
	((${#mine[@]})) || ff_die "pvmove -b left no poller to stop (did it finish?)"
	kill "${mine[@]}" 2>/dev/null || true
	ff_wait_until 30 bash -c 'for p; do [ -e /proc/$p ] && exit 1; done; exit 0' _ "${mine[@]}" ||
		ff_die "the pvmove poller (${mine[*]}) did not exit"
}

# run_scenario NAME VG NPV SIZE[,SIZE...] "PVCREATE-OPTS|VG spec fragment|VGCREATE-OPTS" LV-SPEC...
#   LV-SPEC = "NAME|spec fragment|lvcreate options[|PV ranges]", the PV
#   ranges as INDEX:RANGE words (the INDEXth PV of the scenario); a change
#   is "!COMMAND|spec fragment|options and target" (@PVn: the n-th PV)
#   SIZE: of every PV, or one per PV; PVCREATE-OPTS may hold @devicesfile:
#   the loops are in the devices file by their backing file (loop_file)
#   and the commands use it (no --devices), so lvm writes device_id lines;
#   and @fakedm: every lvm command of the scenario runs with the fake
#   device-mapper (ff_fakedm_lvm), lvcreate without --driverloaded n, and
#   the shim's forwarded writes are checked (tests/lib/fakedm-check.py)
run_scenario() {
	local sc=$1 vg=$2 npv=$3 devsize=$4 pvopts pvkeys vgopts usedf=0 dsel
	local lvmf=ff_lvm usefd=0 target hostid
	local -a drv=(--driverloaded n) zopt pvmdas=()
	IFS='|' read -r pvopts pvkeys vgopts <<<"$5"
	shift 5
	if [[ $pvopts == *@devicesfile* ]]; then
		usedf=1
		pvopts=${pvopts//@devicesfile/}
	fi
	if [[ $pvopts =~ @mdas=([0-9,]+) ]]; then
		# one pvcreate per PV, each with its --pvmetadatacopies
		IFS=, read -r -a pvmdas <<<"${BASH_REMATCH[1]}"
		pvopts=${pvopts//@mdas=${BASH_REMATCH[1]}/}
	fi
	hostid=
	if [[ $pvopts =~ @hostid=([A-Za-z0-9._+-]+) ]]; then
		hostid=${BASH_REMATCH[1]}
		pvopts=${pvopts//@hostid=$hostid/}
	fi
	if [[ $pvopts == *@fakedm* ]]; then
		usefd=1
		pvopts=${pvopts//@fakedm/}
		lvmf=ff_fakedm_lvm
		drv=()
		if ((!selftest_done)); then
			fakedm_selftest
			selftest_done=1
		fi
		# lvm runs thin_check before activating a pool; the shim cannot
		# format a tmeta (the kernel does), so the check is off (lvm
		# merges lvmlocal.conf into lvm.conf; the fence leaves it)
		printf 'global {\n\tthin_check_executable = ""\n}\n' >"$FF_LVM_SYSTEM_DIR/lvmlocal.conf"
	fi
	local -a sizes
	IFS=, read -r -a sizes <<<"$devsize"
	local d=$FF_SCRATCH/$sc attempt rc i out lv name frag opts list ranges w
	local -a imgs devs pvargs
	for attempt in 1 2 3; do
		rm -rf "$d"
		mkdir -p "$d/lvm" "$d/gen"
		imgs=()
		for ((i = 0; i < npv; i++)); do
			imgs+=("$d/lvm/r$i")
		done
		for ((i = 0; i < npv; i++)); do
			truncate -s "${sizes[i]:-${sizes[0]}}" "${imgs[i]}"
		done
		out=$(ff_loop_attach "${imgs[@]}")
		mapfile -t devs <<<"$out"
		if [[ -n $hostid ]]; then
			# the host's system ID, in the lvm.conf the fence just
			# wrote (its lvmlocal.conf has a global section of its own)
			printf 'global {\n\tsystem_id_source = "lvmlocal"\n}\nlocal {\n\tsystem_id = "%s"\n}\n' \
				"$hostid" >>"$FF_LVM_SYSTEM_DIR/lvm.conf"
		fi
		list=$(IFS=,; echo "${devs[*]}")
		dsel=(--devices "$list")
		if ((usedf)); then
			# the loops by their backing files, in the env's devices file
			for i in "${devs[@]}"; do
				ff_lvm lvmdevices --deldev "$i" >/dev/null 2>&1 || true
				ff_lvm lvmdevices --adddev "$i" --deviceidtype loop_file >/dev/null 2>"$d/err" ||
					{ cat "$d/err" >&2; ff_die "scenario $sc: lvmdevices --adddev $i failed"; }
			done
			dsel=()
		fi
		printf '%s\n' "${devs[@]}" >"$d/devs"
		export FF_FAKEDM_LOG=$d/fakedm.log
		printf 'vg\t%s\n' "$vg" >"$d/intent"
		printf 'pvkeys\t%s\n' "$pvkeys" >>"$d/intent"
		((usedf)) && printf 'devicesfile\n' >>"$d/intent"
		[[ -n $hostid ]] && printf 'hostid\t%s\n' "$hostid" >>"$d/intent"

		if ((${#pvmdas[@]})); then
			for ((i = 0; i < npv; i++)); do
				# shellcheck disable=SC2086  # pvopts is a word list
				$lvmf pvcreate "${dsel[@]}" $pvopts --pvmetadatacopies "${pvmdas[i]}" "${devs[i]}" \
					>/dev/null 2>"$d/err" ||
					{ cat "$d/err" >&2; ff_die "scenario $sc: pvcreate ${devs[i]} failed"; }
			done
		else
			# shellcheck disable=SC2086  # pvopts, vgopts are word lists
			$lvmf pvcreate "${dsel[@]}" $pvopts "${devs[@]}" >/dev/null 2>"$d/err" ||
				{ cat "$d/err" >&2; ff_die "scenario $sc: pvcreate failed"; }
		fi
		# shellcheck disable=SC2086  # vgopts is a word list
		$lvmf vgcreate "${dsel[@]}" $vgopts "$vg" "${devs[@]}" >/dev/null 2>"$d/err" ||
			{ cat "$d/err" >&2; ff_die "scenario $sc: vgcreate failed"; }
		for lv in "$@"; do
			IFS='|' read -r name frag opts ranges <<<"$lv"
			if [[ $name == !* ]]; then
				# a change: !COMMAND|spec fragment|options and target
				# (@PVn: the n-th PV's device)
				opts=${opts//@PV0/${devs[0]}}
				opts=${opts//@PV1/${devs[1]:-}}
				opts=${opts//@PV2/${devs[2]:-}}
				if [[ $name == '!pvmove' ]]; then
					# an interrupted pvmove: its mirrors never sync
					# (the shim's FF_FAKEDM_PVMOVE_STALLS), -b leaves
					# its first write and a poller, which we stop
					# shellcheck disable=SC2086
					FF_FAKEDM_PVMOVE_STALLS=1 $lvmf pvmove "${dsel[@]}" -b \
						--config global/use_lvmpolld=0 $opts >/dev/null 2>"$d/err" ||
						{ cat "$d/err" >&2; ff_die "scenario $sc: pvmove $opts failed"; }
					stop_pvmove_pollers
					printf 'chg\t%s\n' "$frag" >>"$d/intent"
					continue
				fi
				# shellcheck disable=SC2086
				$lvmf "${name#!}" "${dsel[@]}" $opts >/dev/null 2>"$d/err" ||
					{ cat "$d/err" >&2; ff_die "scenario $sc: ${name#!} $opts failed"; }
				printf 'chg\t%s\n' "$frag" >>"$d/intent"
				continue
			fi
			pvargs=()
			target=$vg
			if [[ $ranges == @* ]]; then
				# @VG/LV: lvcreate's positional argument (a
				# snapshot's origin)
				target=${ranges#@}
				ranges=
			fi
			for w in $ranges; do
				pvargs+=("${devs[${w%%:*}]}:${w#*:}")
			done
			# -Zn (no zeroing of the LV's start) is refused for thin
			# LVs and snapshots, and a pool's -Z is its own option
			zopt=(-Zn)
			if [[ " $opts " =~ \ (-T|-s|-V|-Z[yn]?)\  || " $opts " == *" --type thin "* ||
				" $opts " == *" --type cache"* ]]; then
				zopt=()
			fi
			# shellcheck disable=SC2086
			$lvmf lvcreate "${dsel[@]}" -an "${zopt[@]}" "${drv[@]}" $opts -n "$name" "$target" \
				"${pvargs[@]}" >/dev/null 2>"$d/err" ||
				{ cat "$d/err" >&2; ff_die "scenario $sc: lvcreate $name failed"; }
			printf 'lv\t%s\t%s\n' "$name" "$frag" >>"$d/intent"
		done
		# --foreign: a VG of another system ID (s0) too
		$lvmf pvs "${dsel[@]}" --foreign --reportformat json -o pv_name,pv_uuid,vg_name,vg_uuid \
			>"$d/pvs.json"
		$lvmf lvs -a "${dsel[@]}" --foreign --reportformat json -o lv_name,lv_uuid,vg_name \
			>"$d/lvs.json" 2>"$d/err" || { cat "$d/err" >&2; ff_die "scenario $sc: lvs failed"; }
		for i in "${devs[@]}"; do
			blockdev --flushbufs "$i"
		done
		python3 "$dumper" "${imgs[@]}" >"$d/dump.json"
		rc=0
		write_spec "$d" "$sc" "$vg" || rc=$?
		if ((rc == 3 && attempt < 3)); then
			ff_loop_detach_all
			continue
		fi
		((rc == 0)) || exit 1
		break
	done
	if ((usefd)); then
		# where lvm's writes through the shim landed: the loops' numbers
		local ma mi
		for i in "${devs[@]}"; do
			read -r ma mi < <(stat -L -c '%t %T' "$i")
			printf '%s %d:%d\n' "$i" "0x$ma" "0x$mi"
		done >"$d/devnums"
		python3 "$fdcheck" "$sc" "$vg" "$d/dump.json" "$d/fakedm.log" "$d/devnums" ||
			ff_die "scenario $sc: lvm's writes through the fake device-mapper are not where they belong (log: $d/fakedm.log)"
	fi

	echo "=== scenario $sc: values lvm chose"
	cat "$d/values.txt"
	echo "=== scenario $sc: spec ($d/spec.conf)"
	cat "$d/spec.conf"

	if ((dry_run)); then
		ff_loop_detach_all
		return 0
	fi

	rc=0
	"$bin" gen "$d/spec.conf" -o "$d/gen" >"$d/gen.log" 2>&1 || rc=$?
	# loops stay attached until the generator ran; detaching flushes them
	ff_loop_detach_all
	if ((rc != 0)); then
		echo "FAIL: scenario $sc: $bin gen exited $rc:" >&2
		cat "$d/gen.log" >&2
		failed=1
		return 0
	fi
	local g kern
	for ((i = 0; i < npv; i++)); do
		g=$d/gen/r$i
		kern=
		if [[ ! -f $g ]]; then
			echo "FAIL: scenario $sc: $g not written" >&2
			ls -la "$d/gen" >&2
			failed=1
			continue
		fi
		if grep -q "^r$i " "$d/kranges"; then
			# the kernel's bytes apart: checked, then masked with lvm's
			if ! kernel_extents "$sc" "$d" "r$i"; then
				failed=1
				continue
			fi
			g=$d/gen/r$i.masked
			kern=1
		fi
		if cmp -s "$d/lvm/r$i" "$g"; then
			echo "ok: scenario $sc: r$i identical ($(stat -c %s "$g") bytes${kern:+; kernel-written extents compared apart})"
		else
			echo "FAIL: scenario $sc: r$i differs" >&2
			show_diff "$d/lvm/r$i" "$g" >&2
			failed=1
		fi
	done
}

# kernel_extents SCENARIO DIR rN: each thin pool's tmeta on image rN
# (DIR/kranges), which the kernel writes and the fake device-mapper
# cannot: lvm's image must hold zeros there (lvm wiped it), the
# generator's must be metadata thin_check accepts, holding the devices
# lvm's text has (device_id, and the pool's transaction when each was
# made) and the pool's transaction id (thin_dump); DIR/gen/rN.masked is the generator's image with lvm's
# zeros over those ranges, for cmp.
kernel_extents() {
	local sc=$1 d=$2 img=$3 im off len pool trans devs dumpf
	ff_require thin_check thin_dump
	cp --sparse=always "$d/gen/$img" "$d/gen/$img.masked"
	while read -r im off len pool trans devs; do
		[[ $im == "$img" ]] || continue
		if ! cmp -s -n "$len" -i "$off:0" "$d/lvm/$img" /dev/zero; then
			echo "FAIL: scenario $sc: $img: lvm left non-zero bytes in $pool's tmeta ($off+$len)" >&2
			return 1
		fi
		dd if="$d/gen/$img" of="$d/gen/$img.$pool.tmeta" bs=64k iflag=skip_bytes,count_bytes \
			skip="$off" count="$len" status=none
		if ! thin_check "$d/gen/$img.$pool.tmeta" >"$d/gen/$img.$pool.check" 2>&1; then
			echo "FAIL: scenario $sc: $img: thin_check refuses the generated tmeta of $pool:" >&2
			cat "$d/gen/$img.$pool.check" >&2
			return 1
		fi
		dumpf=$d/gen/$img.$pool.xml
		thin_dump "$d/gen/$img.$pool.tmeta" >"$dumpf"
		if ! python3 - "$dumpf" "$trans" "$devs" <<'PY'
import re, sys
x = open(sys.argv[1]).read()
want = [] if sys.argv[3] == "-" else [tuple(int(v) for v in d.split(":")) for d in sys.argv[3].split(",")]
sb = re.search(r'<superblock [^>]*transaction="(\d+)"', x)
devs = [(int(i), int(t)) for i, t in re.findall(r'<device dev_id="(\d+)"[^>]*transaction="(\d+)"', x)]
sys.exit(0 if sb and int(sb.group(1)) == int(sys.argv[2]) and devs == want else 1)
PY
		then
			echo "FAIL: scenario $sc: $img: thin_dump of $pool's tmeta is not devices $devs (id:transaction) at transaction $trans:" >&2
			cat "$dumpf" >&2
			return 1
		fi
		dd if=/dev/zero of="$d/gen/$img.masked" bs=64k oflag=seek_bytes iflag=count_bytes \
			seek="$off" count="$len" conv=notrunc status=none
		echo "ok: scenario $sc: $img: $pool's tmeta ($off+$len): lvm wiped it; the generator's passes thin_check (devices $devs, transaction $trans)"
	done <"$d/kranges"
}


# the major lvm writes for --persistent y: the host's device-mapper major
# (lvm reads /proc/devices; 0 without device-mapper)
dmmajor=$(awk '$2 == "device-mapper" { print $1 }' /proc/devices)
dmmajor=${dmmajor:-0}
for sc in ${FF_SCENARIOS:-a b c d e f g h i j k l m n o t u v w hx hy hs pm pn z0 z1 z2 z3 z4 z5 s0 s1 s2 s3 x0 x1 x2 y0 y1 ma mb mc md me ra rb rc rd re rf r0 r1 r2 ri mx rt tp t1 t2 t3 tg sn tn tq tx ts hr ca cb cc cd ce cf cg wc wd cw cv}; do
	case $sc in
	a)
		run_scenario a vgA 2 64M "" \
			'lvlin|size = "8M"; type = "linear"|-L 8M' \
			'lvstr|size = "16M"; type = "striped"; stripes = 2; stripe_size = "64K"|-i 2 -I 64k -L 16M'
		;;
	b)
		# lvcreate -l 40: the spec has no extent-count key; 40 x 4 MiB
		run_scenario b vgB 3 64M "" \
			'lvspan|size = "160M"; type = "linear"|-l 40'
		;;
	c)
		run_scenario c vgC 1 64M "--pvmetadatacopies 2" \
			'lvlin|size = "8M"; type = "linear"|-L 8M'
		;;
	d)
		run_scenario d vgD 1 64M '--pvmetadatacopies 2 --metadatasize 4m|metadatasize = "4M"' \
			'lvlin|size = "8M"; type = "linear"|-L 8M'
		;;
	e)
		run_scenario e vgE 1 66M '--pvmetadatacopies 2 --dataalignment 4m|dataalignment = "4M"' \
			'lvlin|size = "8M"; type = "linear"|-L 8M'
		;;
	f)
		run_scenario f vgF 1 64M '--pvmetadatacopies 2 --bootloaderareasize 600k|bootloaderareasize = "600K"' \
			'lvlin|size = "8M"; type = "linear"|-L 8M'
		;;
	g)
		run_scenario g vgG 1 64M '--dataalignment 1m --dataalignmentoffset 192k|dataalignmentoffset = "192K"' \
			'lvlin|size = "8M"; type = "linear"|-L 8M'
		;;
	h)
		run_scenario h vgH 2 13M "" \
			'lva|size = "8M"|-l 2' \
			'lvb|size = "8M"|-l 2'
		;;
	i)
		run_scenario i vgI 2 13M "" \
			'lva|size = "4M"|-l 1' \
			'lvb|size = "16M"|-l 4'
		;;
	j)
		run_scenario j vgJ 6 64M "" \
			'lvs|size = "120M"; type = "striped"; stripes = 3; stripe_size = "64K"|-i 3 -I 64k -l 30' \
			'lvl|size = "160M"|-l 40'
		;;
	k)
		run_scenario k vgK 6 2063K '--metadatasize 2000k|metadatasize = "2000K"|-s 1k' \
			'lvs|size = "30K"; type = "striped"; stripes = 3; stripe_size = "4K"|-i 3 -I 4k -l 30' \
			'lvl|size = "40K"|-l 40'
		;;
	l)
		run_scenario l vgL 3 13M "" \
			'lva|size = "8M"; alloc = "contiguous"|--alloc contiguous -l 2' \
			'lvb|size = "8M"; alloc = "cling"|--alloc cling -l 2' \
			'lvc|size = "16M"; alloc = "normal"|--alloc normal -l 4' \
			'lvd|size = "4M"; alloc = "anywhere"|--alloc anywhere -l 1'
		;;
	m)
		run_scenario m vgM 2 13M "" \
			'lva|size = "8M"|-l 2' \
			'lvb|size = "16M"; type = "striped"; stripes = 2; stripe_size = "64K"; alloc = "anywhere"|--alloc anywhere -i 2 -I 64k -l 4'
		;;
	n)
		run_scenario n vgN 3 13M "" \
			'lva|placement = ( ["1:1-2"] )|-l 2|1:1-2' \
			'lvb|size = "12M"|-l 3' \
			'lvc|type = "striped"; stripes = 2; stripe_size = "64K"; placement = ( ["1:0", "2:0"] )|-i 2 -I 64k -l 2|1:0 2:0' \
			'lvd|placement = ( ["2:2"], ["2:1"] )|-l 2|2:2 2:1'
		;;
	o)
		run_scenario o vgO 2 21M "" \
			'lva|placement = ( ["0:1-3"] )|-l 3|0:1-3' \
			'lvb|size = "12M"|-l 3' \
			'lvc|size = "16M"|-l 4'
		;;
	t)
		run_scenario t vgT 2 64M '|tags = ["zeta", "alpha"]|--addtag zeta --addtag alpha' \
			'lvtag|size = "8M"; type = "linear"; tags = ["yy", "bb"]|-L 8M --addtag yy --addtag bb' \
			'lvplain|size = "4M"; type = "linear"|-L 4M'
		;;
	u)
		run_scenario u vgU 2 64M '@devicesfile' \
			'lvlin|size = "8M"; type = "linear"|-L 8M'
		;;
	v)
		run_scenario v vgV 2 64M,96M ''
		;;
	w)
		run_scenario w vgW 2 64M '|tags = ["zeta", "alpha"]|--addtag zeta --addtag alpha' \
			'lvtag|size = "8M"; type = "linear"; tags = ["yy", "bb"]|-L 8M --addtag yy --addtag bb' \
			'!vgchange|command = "vgchange"; addtag = ["mid"]|--addtag mid vgW' \
			'!lvchange|command = "lvchange"; lv = "lvtag"; addtag = ["x1"]; deltag = ["yy"]|--addtag x1 --deltag yy vgW/lvtag' \
			'!pvchange|command = "pvchange"; pv = 1; addtag = ["p1"]|--addtag p1 @PV1' \
			'!vgchange|command = "vgchange"; deltag = ["zeta"]; addtag = ["omega"]|--deltag zeta --addtag omega vgW'
		;;
	hx)
		run_scenario hx vgX 3 64M "" \
			'lva|placement = ( ["0:0-2"] )|-l 3|0:0-2' \
			'lvb|placement = ( ["0:3-4"] )|-l 2|0:3-4' \
			'lvs|type = "striped"; stripes = 2; stripe_size = "64K"; placement = ( ["1:0-1", "2:0-1"] )|-i 2 -I 64k -l 4|1:0-1 2:0-1' \
			'!lvchange|command = "lvchange"; lv = "lva"; permission = "r"; activation_skip = true|--driverloaded n -p r -ky vgX/lva' \
			'!vgchange|command = "vgchange"; resizeable = false; addtag = ["t1"]|-x n --addtag t1 vgX' \
			'!pvchange|command = "pvchange"; pv = 1; allocatable = false; addtag = ["p1"]|-x n --addtag p1 @PV1' \
			'!lvextend|command = "lvextend"; lv = "lvb"; size = "16M"|--driverloaded n -L 16M vgX/lvb' \
			'!lvextend|command = "lvextend"; lv = "lvs"; size = "32M"|--driverloaded n -L 32M vgX/lvs' \
			'!lvextend|command = "lvextend"; lv = "lva"; size = "60M"|--driverloaded n -L 60M vgX/lva' \
			"!lvchange|command = \"lvchange\"; lv = \"lvb\"; minor = 9; major = $dmmajor|--driverloaded n -My --minor 9 -y vgX/lvb" \
			'!lvchange|command = "lvchange"; lv = "lva"; permission = "rw"|--driverloaded n -p rw vgX/lva' \
			'!lvrename|command = "lvrename"; lv = "lvb"; new_name = "lvc"|--driverloaded n vgX lvb lvc' \
			'!lvchange|command = "lvchange"; lv = "lvc"; read_ahead = 256; activation_skip = true; addtag = ["after"]|--driverloaded n -r 256 -ky --addtag after vgX/lvc' \
			'!vgchange|command = "vgchange"; resizeable = true|-x y vgX' \
			'!pvchange|command = "pvchange"; pv = 1; allocatable = true|-x y @PV1'
		;;
	hy)
		run_scenario hy vgY 2 21M "" \
			'lva|alloc = "contiguous"; placement = ( ["0:0"] )|--alloc contiguous -l 1|0:0' \
			'lvb|alloc = "cling"; placement = ( ["1:0"] )|--alloc cling -l 1|1:0' \
			'lvc|placement = ( ["0:2"] )|-l 1|0:2' \
			'!lvextend|command = "lvextend"; lv = "lva"; size = "8M"|--driverloaded n -l 2 vgY/lva' \
			'!lvextend|command = "lvextend"; lv = "lvb"; size = "12M"|--driverloaded n -l 3 vgY/lvb' \
			'!lvextend|command = "lvextend"; lv = "lvc"; size = "16M"|--driverloaded n -l 4 vgY/lvc'
		;;
	pm)
		# pvmove, interrupted after its first write (pvmove -b, its
		# poller stopped before a segment synced): pvmove0 mirrors each
		# moved segment onto the destination, the LVs LOCKED over it
		run_scenario pm vgpm 3 64M "@fakedm" \
			'a|size = "8M"; placement = ( ["0:0-1"] )|-L 8M|0:0-1' \
			'keep|size = "4M"; placement = ( ["1:0"] )|-L 4M|1:0' \
			'b|size = "4M"; placement = ( ["0:2"] )|-L 4M|0:2' \
			'c|size = "12M"; placement = ( ["0:5-7"] )|-L 12M|0:5-7' \
			'!pvmove|command = "pvmove"; pv = 0|@PV0'
		;;
	pn)
		# pvmove PV0 PV1 onto a fragmented PV1: the new extents from its
		# biggest free area first, a segment split where it ends
		run_scenario pn vgpn 3 64M "@fakedm" \
			'a|size = "8M"; placement = ( ["0:0-1"] )|-L 8M|0:0-1' \
			'x|size = "8M"; placement = ( ["1:2-3"] )|-L 8M|1:2-3' \
			'y|size = "32M"; placement = ( ["1:7-14"] )|-L 32M|1:7-14' \
			'c|size = "12M"; placement = ( ["0:5-7"] )|-L 12M|0:5-7' \
			'!pvmove|command = "pvmove"; pv = 0; to = [1]|@PV0 @PV1'
		;;
	hs)
		# lvremove of linear LVs: their extents free again (an lvextend
		# fills the hole), their names free for an lvrename
		run_scenario hs vgS 1 21M "" \
			'lva|placement = ( ["0:0"] )|-l 1|0:0' \
			'lvb|placement = ( ["0:1"] )|-l 1|0:1' \
			'lvc|placement = ( ["0:2"] )|-l 1|0:2' \
			'lvd|placement = ( ["0:3-4"] )|-l 2|0:3-4' \
			'!lvremove|command = "lvremove"; lv = "lvb"|--driverloaded n -y vgS/lvb' \
			'!lvextend|command = "lvextend"; lv = "lvc"; size = "8M"|--driverloaded n -l 2 vgS/lvc' \
			'!lvremove|command = "lvremove"; lv = "lva"|--driverloaded n -y vgS/lva' \
			'!lvrename|command = "lvrename"; lv = "lvd"; new_name = "lva"|--driverloaded n vgS lvd lva' \
			'!lvextend|command = "lvextend"; lv = "lva"; size = "12M"|--driverloaded n -l 3 vgS/lva'
		;;
	hr)
		# lvremove of thin LVs (a delete message in the pool, then
		# none): with record_lvs_history an origin whose snapshot lives
		# stays as a historical LV (-a) until the snapshot goes too; a
		# snapshot loses its origin line; the kernel's metadata loses
		# the devices
		run_scenario hr vghr 2 64M "@fakedm" \
			'pool|type = "thin-pool"; size = "16M"|--type thin-pool -Zy -L 16M' \
			'a|type = "thin"; pool = "pool"; size = "20M"|-T -V 20M --thinpool pool' \
			'as|type = "thin"; origin = "a"|-s|@vghr/a' \
			'b|type = "thin"; pool = "pool"; size = "8M"|-T -V 8M --thinpool pool' \
			'bs|type = "thin"; origin = "b"; activation_skip = false|-s -kn|@vghr/b' \
			'c|type = "thin"; pool = "pool"; size = "8M"|-T -V 8M --thinpool pool' \
			'lin|size = "4M"|-L 4M' \
			'!lvremove|command = "lvremove"; lv = "a"; record_lvs_history = true|--config metadata/record_lvs_history=1 -y vghr/a' \
			'!lvremove|command = "lvremove"; lv = "c"; record_lvs_history = true|--config metadata/record_lvs_history=1 -y vghr/c' \
			'!lvremove|command = "lvremove"; lv = "b"|-y vghr/b' \
			'!lvremove|command = "lvremove"; lv = "lin"|-y vghr/lin' \
			'!lvchange|command = "lvchange"; lv = "bs"; addtag = ["t"]|--addtag t vghr/bs' \
			'!lvremove|command = "lvremove"; lv = "as"; record_lvs_history = true|--config metadata/record_lvs_history=1 -y vghr/as'
		;;
	ma)
		run_scenario ma vgma 3 64M "@fakedm" \
			'lv|size = "8M"; type = "mirror"; mirrors = 1; mirror_log = "core"|--type mirror --mirrorlog core -m1 -L 8M'
		;;
	mb)
		run_scenario mb vgmb 3 64M "@fakedm" \
			'lv|size = "8M"; type = "mirror"; mirrors = 1; mirror_log = "disk"|--type mirror --mirrorlog disk -m1 -L 8M'
		;;
	mc)
		run_scenario mc vgmc 3 64M "@fakedm" \
			'lv|size = "8M"; type = "mirror"; mirrors = 1; nosync = true|--type mirror -m1 --nosync -L 8M'
		;;
	md)
		run_scenario md vgmd 4 64M "@fakedm" \
			'lv|size = "8M"; type = "mirror"; mirrors = 2; region_size = "2M"|--type mirror -m2 --regionsize 2m -L 8M'
		;;
	me)
		run_scenario me vgme 2 64M "@fakedm" \
			'lv|size = "8M"; type = "mirror"; mirrors = 1|--type mirror -m1 -L 8M'
		;;
	ra)
		run_scenario ra vgra 2 64M "@fakedm" \
			'lv|size = "8M"; type = "raid1"; mirrors = 1|--type raid1 -m1 -L 8M'
		;;
	rb)
		run_scenario rb vgrb 3 64M "@fakedm" \
			'lv|size = "8M"; type = "raid1"; mirrors = 2|--type raid1 -m2 -L 8M'
		;;
	rc)
		run_scenario rc vgrc 3 64M "@fakedm" \
			'lv|size = "8M"; type = "raid4"; stripes = 2|--type raid4 -i2 -L 8M'
		;;
	rd)
		run_scenario rd vgrd 3 64M "@fakedm" \
			'lv|size = "8M"; type = "raid5"; stripes = 2; stripe_size = "64K"|--type raid5 -i2 -I 64k -L 8M'
		;;
	re)
		# lvm rounds 8M (2 extents) up to 3 stripes: 12M; the generator
		# rounds the same
		run_scenario re vgre 5 64M "@fakedm" \
			'lv|size = "8M"; type = "raid6"; stripes = 3|--type raid6 -i3 -L 8M'
		;;
	rf)
		run_scenario rf vgrf 4 64M "@fakedm" \
			'lv|size = "8M"; type = "raid10"; stripes = 2; mirrors = 1|--type raid10 -i2 -m1 -L 8M'
		;;
	r0)
		run_scenario r0 vgr0 3 64M "@fakedm" \
			'lva|size = "8M"; type = "raid0"; stripes = 2|--type raid0 -i2 -L 8M' \
			'lvb|size = "12M"; type = "raid0"; stripes = 3; stripe_size = "128K"|--type raid0 -i3 -I 128k -L 12M'
		;;
	r1)
		run_scenario r1 vgr1 3 64M "@fakedm" \
			'lva|size = "8M"; type = "raid0_meta"; stripes = 2|--type raid0_meta -i2 -L 8M' \
			'lvb|size = "12M"; type = "raid0_meta"; stripes = 3; stripe_size = "128K"|--type raid0_meta -i3 -I 128k -L 12M'
		;;
	r2)
		# after a linear LV: the images where most is free; -I 8m cut
		# to the extent size; --nosync and -R taken, not written
		run_scenario r2 vgr2 3 64M "@fakedm" \
			'lvA|size = "40M"|-L 40M' \
			'lvz|size = "16M"; type = "raid0"; stripes = 2; stripe_size = "8M"; nosync = true; tags = ["foo"]|--type raid0 -i2 -I 8m --nosync --addtag foo -L 16M' \
			'lvm|size = "8M"; type = "raid0_meta"; stripes = 2; region_size = "1M"; nosync = true; tags = ["bar"]|--type raid0_meta -i2 -R 1m --nosync --addtag bar -L 8M'
		;;
	mx)
		run_scenario mx vgmx 3 64M "@fakedm" \
			'lvA|size = "40M"|-l 10' \
			'lvR|size = "8M"; type = "raid1"; mirrors = 1|--type raid1 -m1 -L 8M' \
			'lvB|size = "4M"|-l 1' \
			'lvM|size = "8M"; type = "mirror"; mirrors = 1|--type mirror -m1 -L 8M'
		;;
	tp)
		# a pool alone: the spare, then tdata and tmeta on one PV (tmeta
		# after tdata); three writes; -Zn: no zero_new_blocks
		run_scenario tp vgtp 1 64M "@fakedm" \
			'pool|type = "thin-pool"; size = "16M"; zero = false|--type thin-pool -Zn -L 16M'
		;;
	t1)
		# a pool with its defaults and one thin LV: the tmeta the kernel
		# formats, the create message in write 1 of the thin's lvcreate
		run_scenario t1 vgt1 1 64M "@fakedm" \
			'pool|type = "thin-pool"; size = "16M"|--type thin-pool -Zy -L 16M' \
			'thin1|type = "thin"; pool = "pool"; size = "20M"|-T -V 20M --thinpool pool'
		;;
	t2)
		# 2 PVs: tmeta on the other PV; two thins (device ids 1, 2,
		# transaction ids 0, 1), a linear LV between them; a second pool
		# with the spare already there (two writes)
		run_scenario t2 vgt2 2 64M "@fakedm" \
			'pool|type = "thin-pool"; size = "16M"; chunk_size = "128K"|--type thin-pool -Zy -c 128k -L 16M' \
			'thin1|type = "thin"; pool = "pool"; size = "20M"|-T -V 20M --thinpool pool' \
			'lin|size = "8M"|-L 8M' \
			'thin2|type = "thin"; pool = "pool"; size = "40M"|-T -V 40M --thinpool pool' \
			'pool2|type = "thin-pool"; size = "8M"; metadata_size = "4M"; discards = "nopassdown"|--type thin-pool -Zy --poolmetadatasize 4m --discards nopassdown -L 8M'
		;;
	t3)
		# 1 MiB extents: a 2 MiB chunk (the thin's -V 3M rounded up to
		# the chunk), the spare named after lvol3 (lvol4_pmspare), a
		# second pool with --poolmetadataspare n
		run_scenario t3 vgt3 2 64M '@fakedm||-s 1m' \
			'lvol3|size = "4M"|-L 4M' \
			'pool|type = "thin-pool"; size = "32M"; chunk_size = "2M"|--type thin-pool -Zy -c 2m -L 32M' \
			'thin1|type = "thin"; pool = "pool"; size = "3M"|-T -V 3M --thinpool pool' \
			'p2|type = "thin-pool"; size = "8M"; pmspare = false; zero = false|--type thin-pool -Zn --poolmetadataspare n -L 8M'
		;;
	tg)
		# lvcreate --addtag: the pool's tags from its write 2 on (not on
		# the spare, tmeta, tdata), a thin's and a COW's in both writes
		# (not on snapshot0)
		run_scenario tg vgtg 1 64M "@fakedm" \
			'pool|type = "thin-pool"; size = "16M"; zero = false; tags = ["pa", "pb"]|--type thin-pool -Zn --addtag pa --addtag pb -L 16M' \
			'thin1|type = "thin"; pool = "pool"; size = "20M"; tags = ["ta"]|-T -V 20M --thinpool pool --addtag ta' \
			'lv|size = "8M"|-L 8M' \
			'snap|type = "snapshot"; origin = "lv"; size = "4M"; tags = ["sa"]|-s --addtag sa -L 4M|@vgtg/lv'
		;;
	sn)
		# old-style snapshots of a linear LV: the COW visible in write 1,
		# snapshot0/snapshot1 among the hidden LVs in write 2; 40M cut
		# to what the origin can use
		run_scenario sn vgsn 1 64M "@fakedm" \
			'lv|size = "8M"|-L 8M' \
			'snap|type = "snapshot"; origin = "lv"; size = "4M"|-s -L 4M|@vgsn/lv' \
			'snap2|type = "snapshot"; origin = "lv"; size = "40M"; chunk_size = "8K"|-s -c 8k -L 40M|@vgsn/lv'
		;;
	tn)
		# thin snapshots (lvcreate -s of a thin LV, no size): the origin's
		# pool and virtual size, ACTIVATION_SKIP unless -kn, origin =
		# after device_id, a create_snap in the kernel's metadata
		run_scenario tn vgtn 2 64M "@fakedm" \
			'pool|type = "thin-pool"; size = "16M"|--type thin-pool -Zy -L 16M' \
			'th|type = "thin"; pool = "pool"; size = "20M"|-T -V 20M --thinpool pool' \
			'snap|type = "thin"; origin = "th"|-s|@vgtn/th' \
			'th2|type = "thin"; pool = "pool"; size = "8M"|-T -V 8M --thinpool pool' \
			'lin|size = "4M"|-L 4M' \
			'snap2|type = "thin"; origin = "th2"; activation_skip = false; tags = ["s2"]|-s -kn --addtag s2|@vgtn/th2'
		;;
	tq)
		# striped thin pools (-i, -I): the data striped, the metadata on a
		# PV the data does not use; -I 1m cut to the 512 KiB extent;
		# -L 10M rounded up to whole stripes
		run_scenario tq vgtq 4 64M "@fakedm||-s 512k" \
			'pool|type = "thin-pool"; size = "16M"; stripes = 2; zero = false|--type thin-pool -i 2 -L 16M' \
			'thin1|type = "thin"; pool = "pool"; size = "20M"|-T -V 20M --thinpool pool' \
			'pool2|type = "thin-pool"; size = "10M"; stripes = 3; stripe_size = "1M"; zero = false|--type thin-pool -i 3 -I 1m -L 10M'
		;;
	tx)
		# external origins (lvcreate -s --thinpool of a read-only LV):
		# external_origin = after device_id, a create_thin in the pool;
		# no ACTIVATION_SKIP unless -ky; a thin snapshot of one
		run_scenario tx vgtx 2 64M "@fakedm" \
			'lin|size = "8M"; permission = "r"|-p r -L 8M' \
			'pool|type = "thin-pool"; size = "16M"|--type thin-pool -Zy -L 16M' \
			'ext|type = "thin"; pool = "pool"; origin = "lin"|-s --thinpool vgtx/pool|@vgtx/lin' \
			'ext2|type = "thin"; pool = "pool"; origin = "lin"; activation_skip = true|-s -ky --thinpool vgtx/pool|@vgtx/lin' \
			'snap|type = "thin"; origin = "ext"|-s|@vgtx/ext'
		;;
	ts)
		# configs/thin-snapshot.conf's VG: a pool, two thins, a linear
		# LV and a snapshot of it
		run_scenario ts ts 1 64M "@fakedm" \
			'pool|type = "thin-pool"; size = "16M"|--type thin-pool -Zy -L 16M' \
			'thin1|type = "thin"; pool = "pool"; size = "20M"|-T -V 20M --thinpool pool' \
			'thin2|type = "thin"; pool = "pool"; size = "40M"|-T -V 40M --thinpool pool' \
			'lin|size = "8M"|-L 8M' \
			'snap|type = "snapshot"; origin = "lin"; size = "4M"|-s -L 4M|@ts/lin'
		;;
	ca)
		# a cache pool alone: the spare, then cmeta and cdata from one
		# area (cmeta first); three writes
		run_scenario ca vgca 1 64M "@fakedm" \
			'cpool|type = "cache-pool"; size = "8M"|--type cache-pool -L 8M'
		;;
	wc)
		# lvconvert --type writecache --cachevol: the LV over LV_cvol
		# (hidden, CACHE_VOL, leading the hidden LVs) and LV_wcorig (its
		# old segments, after every LV)
		run_scenario wc vgwc 2 64M "@fakedm" \
			'slow|size = "8M"|-L 8M' \
			'cp|type = "cache-pool"; size = "8M"|--type cache-pool -L 8M' \
			'fast|size = "4M"; tags = ["f"]|-L 4M --addtag f' \
			'lin|size = "4M"|-L 4M' \
			'!lvconvert|command = "lvconvert"; type = "writecache"; lv = "slow"; cachevol = "fast"|-y --type writecache --cachevol fast vgwc/slow' \
			'!lvchange|command = "lvchange"; lv = "lin"; addtag = ["after"]|--addtag after vgwc/lin'
		;;
	wd)
		# writecache --cachesettings: each setting a line after
		# writecache_block_size, in lvm's order (block_size=512 is that
		# line)
		run_scenario wd vgwd 2 64M "@fakedm" \
			'slow|size = "8M"|-L 8M' \
			'fast|size = "4M"|-L 4M' \
			'slow2|size = "8M"|-L 8M' \
			'fast2|size = "4M"|-L 4M' \
			'!lvconvert|command = "lvconvert"; type = "writecache"; lv = "slow"; cachevol = "fast"; cachesettings = ["max_age=3000", "high_watermark=60", "low_watermark=10", "writeback_jobs=64", "autocommit_blocks=32", "autocommit_time=100", "nofua=1", "cleaner=1"]|-y --type writecache --cachevol fast --cachesettings max_age=3000 --cachesettings high_watermark=60 --cachesettings low_watermark=10 --cachesettings writeback_jobs=64 --cachesettings autocommit_blocks=32 --cachesettings autocommit_time=100 --cachesettings nofua=1 --cachesettings cleaner=1 vgwd/slow' \
			'!lvconvert|command = "lvconvert"; type = "writecache"; lv = "slow2"; cachevol = "fast2"; cachesettings = ["block_size=512", "fua=0", "cleaner=0"]|-y --type writecache --cachevol fast2 --cachesettings block_size=512 --cachesettings fua=0 --cachesettings cleaner=0 vgwd/slow2'
		;;
	ri)
		# --raidintegrity y (raid1, raid5 in bitmap mode): an _imeta LV
		# per image on the image's PV (a write each, visible), then
		# the images as integrity layers over _iorig LVs with
		# recalculate = 1, then without; a linear LV after them
		run_scenario ri vgri 3 64M "@fakedm" \
			'r|type = "raid1"; size = "8M"; raidintegrity = true|--type raid1 -m1 --raidintegrity y -L 8M' \
			'r5|type = "raid5"; size = "8M"; raidintegrity = true; raidintegritymode = "bitmap"|--type raid5 -i 2 --raidintegrity y --raidintegritymode bitmap -L 8M' \
			'lin|size = "4M"|-L 4M'
		;;
	cw)
		# lvcreate --type cache|writecache --cachevol: the LV (one
		# write), then attached as lvconvert attaches (Write[2]); an LV
		# after them
		run_scenario cw vgcw 2 64M "@fakedm" \
			'fast|size = "8M"|-L 8M' \
			'wfast|size = "4M"|-L 4M' \
			'main|type = "cache"; cachevol = "fast"; size = "8M"|-y --type cache --cachevol fast -L 8M' \
			'wmain|type = "writecache"; cachevol = "wfast"; size = "8M"; cachesettings = ["high_watermark=70"]|-y --type writecache --cachevol wfast --cachesettings high_watermark=70 -L 8M' \
			'after|size = "4M"|-L 4M'
		;;
	cv)
		# lvconvert --type cache --cachevol: a cache+CACHE_USES_CACHEVOL
		# segment, the cachevol split into metadata (lvm's size: at most
		# half) and data; --cachemode, --cachepolicy
		run_scenario cv vgcv 2 64M "@fakedm" \
			'slow|size = "8M"|-L 8M' \
			'fast|size = "8M"|-L 8M' \
			'slow2|size = "12M"|-L 12M' \
			'fast2|size = "24M"|-L 24M' \
			'!lvconvert|command = "lvconvert"; lv = "slow"; cachevol = "fast"|-y --type cache --cachevol fast vgcv/slow' \
			'!lvconvert|command = "lvconvert"; lv = "slow2"; cachevol = "fast2"; cachemode = "writeback"; policy = "mq"|-y --type cache --cachemode writeback --cachepolicy mq --cachevol fast2 vgcv/slow2'
		;;
	cg)
		# --cachesettings (policy_settings, the last given first, as
		# NAME=VALUE lines; the pool's policy smq by default then), kept by
		# the pool when an lvconvert attaches it
		run_scenario cg vgcg 2 64M "@fakedm" \
			'cp|type = "cache-pool"; size = "8M"; cachesettings = ["migration_threshold=2048", "random_threshold=4", "sequential_threshold=7"]|--type cache-pool --cachesettings migration_threshold=2048 --cachesettings random_threshold=4 --cachesettings sequential_threshold=7 -L 8M' \
			'cp2|type = "cache-pool"; size = "8M"; policy = "mq"; cachesettings = ["migration_threshold=100"]|--type cache-pool --cachepolicy mq --cachesettings migration_threshold=100 -L 8M' \
			'lin|size = "8M"|-L 8M' \
			'!lvconvert|command = "lvconvert"; lv = "lin"; pool = "cp"|-y --type cache --cachepool vgcg/cp vgcg/lin'
		;;
	cb)
		# lvcreate --type cache with a cache pool: the LV linear in
		# write 1, then cached (lv_corig), the pool renamed cpool_cpool
		# and hidden, with the default mode and policy
		run_scenario cb vgcb 1 64M "@fakedm" \
			'cpool|type = "cache-pool"; size = "8M"|--type cache-pool -L 8M' \
			'lv|type = "cache"; pool = "cpool"; size = "8M"|--type cache -L 8M --cachepool vgcb/cpool'
		;;
	cc)
		# lvconvert --type cache of a linear LV made before the pool:
		# one write; lv_corig after every LV
		run_scenario cc vgcc 2 64M "@fakedm" \
			'lv|size = "12M"|-L 12M' \
			'cpool|type = "cache-pool"; size = "8M"|--type cache-pool -L 8M' \
			'lin|size = "4M"|-L 4M' \
			'!lvconvert|command = "lvconvert"; lv = "lv"; pool = "cpool"|-y --type cache --cachepool vgcc/cpool vgcc/lv'
		;;
	cd)
		# the options: a pool with -c, the cache mode and policy and a
		# metadata size lvm raises to its minimum; a second pool with
		# --poolmetadataspare n caching an LV made with its own mode;
		# a third one left alone
		run_scenario cd vgcd 2 64M "@fakedm" \
			'big|size = "40M"|-L 40M' \
			'cp1|type = "cache-pool"; size = "8M"; chunk_size = "128K"; cachemode = "writeback"; policy = "mq"; metadata_size = "4M"|--type cache-pool -L 8M --chunksize 128k --cachemode writeback --cachepolicy mq --poolmetadatasize 4m' \
			'cp2|type = "cache-pool"; size = "4M"; pmspare = false|--type cache-pool --poolmetadataspare n -L 4M' \
			'lv|type = "cache"; pool = "cp2"; size = "8M"; cachemode = "passthrough"|--type cache --cachemode passthrough -L 8M --cachepool vgcd/cp2' \
			'lv2|type = "cache"; pool = "cp1"; size = "4M"|--type cache -L 4M --cachepool vgcd/cp1'
		;;
	ce)
		# --addtag on a cache pool and a cache LV (the pool keeps its
		# tags when it is hidden); an lvconvert with its own mode and
		# policy over a pool made with others
		run_scenario ce vgce 1 64M "@fakedm" \
			'cp|type = "cache-pool"; size = "8M"; tags = ["pa"]|--type cache-pool --addtag pa -L 8M' \
			'lv|type = "cache"; pool = "cp"; size = "4M"; tags = ["la", "lb"]|--type cache --addtag la --addtag lb -L 4M --cachepool vgce/cp' \
			'cp2|type = "cache-pool"; size = "4M"; cachemode = "writeback"; policy = "smq"|--type cache-pool --cachemode writeback --cachepolicy smq -L 4M' \
			'lin|size = "8M"|-L 8M' \
			'!lvconvert|command = "lvconvert"; lv = "lin"; pool = "cp2"; cachemode = "passthrough"; policy = "mq"|-y --type cache --cachemode passthrough --cachepolicy mq --cachepool vgce/cp2 vgce/lin'
		;;
	cf)
		# a raid1 and a disk-log mirror after a cache LV: their write 1
		# lists the rmetas and the mlog with the visible LVs, before
		# the hidden pool
		run_scenario cf vgcf 2 64M "@fakedm" \
			'cp|type = "cache-pool"; size = "8M"|--type cache-pool -L 8M' \
			'lv|type = "cache"; pool = "cp"; size = "4M"|--type cache -L 4M --cachepool vgcf/cp' \
			'lvR|size = "8M"; type = "raid1"; mirrors = 1|--type raid1 -m1 -L 8M' \
			'lvM|size = "4M"; type = "mirror"; mirrors = 1|--type mirror -m1 -L 4M'
		;;
	z0)
		# PVs without metadata areas: only PV0 holds the VG's text
		run_scenario z0 vgz0 3 64M '@mdas=1,0,0' \
			'lvlin|size = "8M"|-L 8M' \
			'lvspan|size = "160M"|-l 40'
		;;
	z1)
		# mda1 on PV1 only (its pe_count one less), none on PV0 and
		# PV2; --vgmetadatacopies 2: both in use
		run_scenario z1 vgz1 3 64M '@mdas=0,2,0|vg_mda_copies = 2|--vgmetadatacopies 2' \
			'lvspan|size = "160M"|-l 40'
		;;
	z2)
		# --vgmetadatacopies above the VG's areas: metadata_copies = 5,
		# nothing ignored; PV2 without an area, PV1 with two
		run_scenario z2 vgz2 3 64M '@mdas=1,2,0|vg_mda_copies = 5|--vgmetadatacopies 5' \
			'lvlin|size = "8M"|-L 8M'
		;;
	z3)
		# --vgmetadatacopies all: every area in use, written as
		# unmanaged (0)
		run_scenario z3 vgz3 2 64M '@mdas=1,1|vg_mda_copies = "all"|--vgmetadatacopies all' \
			'lvlin|size = "8M"|-L 8M'
		;;
	z5)
		# --vgmetadatacopies below the VG's mdas: lvm marks a random
		# choice of them ignored (write 1 only, RAW_LOCN_IGNORED); the
		# spec names its choice (ignored_mdas, read from the images)
		run_scenario z5 vgz5 3 64M '@mdas=1,2,1|vg_mda_copies = 2|--vgmetadatacopies 2' \
			'lva|size = "8M"|-L 8M' \
			'lvb|size = "8M"|-L 8M'
		;;
	z4)
		# pvcreate's layout options with a PV without an area: its
		# pe_start is the alignment's, as the others' (bootloader area
		# after it; mda0 grown to the alignment)
		run_scenario z4 vgz4 2 64M '@mdas=0,2 --bootloaderareasize 600k|bootloaderareasize = "600K"' \
			'lvlin|size = "8M"|-L 8M'
		;;
	s0)
		# a foreign VG: no host ID here, so no lvcreate
		run_scenario s0 vgs0 2 64M '|system_id = "myhost"|--systemid myhost'
		;;
	s1)
		run_scenario s1 vgs1 2 64M '@hostid=hostA' \
			'lva|size = "8M"|-L 8M' \
			'lvb|size = "8M"; permission = "r"|-p r -L 8M' \
			'lvc|size = "8M"; activation_skip = true; tags = ["t1"]|-ky --addtag t1 -L 8M'
		;;
	s2)
		run_scenario s2 vgs2 2 64M '@hostid=hostB|system_id = ""|--systemid=' \
			'lva|size = "8M"|-L 8M'
		;;
	s3)
		# sub-LVs in a VG with a system ID: WRITE_LOCKED on each, after
		# it ACTIVATION_SKIP in the raid LV's write 1
		run_scenario s3 vgs3 2 64M '@fakedm @hostid=hostC' \
			'lvR|size = "8M"; type = "raid1"; mirrors = 1|--type raid1 -m1 -L 8M' \
			'tp|size = "8M"; type = "thin-pool"; zero = false|--type thin-pool -Zn -L 8M' \
			'th|type = "thin"; pool = "tp"; size = "8M"|-T -V 8M --thinpool tp'
		;;
	x0)
		run_scenario x0 vgx0 3 13M '|alloc = "contiguous"; max_lv = 3; max_pv = 3|--alloc contiguous --maxlogicalvolumes 3 --maxphysicalvolumes 3' \
			'lva|size = "8M"|-l 2' \
			'lvb|size = "8M"|-l 2' \
			'lvc|size = "4M"|-l 1'
		;;
	x1)
		run_scenario x1 vgx1 1 64M '|alloc = "anywhere"; max_lv = 2|--alloc anywhere -l 2' \
			'lva|size = "8M"; alloc = "normal"|--alloc normal -L 8M' \
			'lvb|size = "8M"|-L 8M'
		;;
	x2)
		run_scenario x2 vgx2 2 13M '|alloc = "cling"; max_pv = 2|--alloc cling -p 2' \
			'lva|size = "8M"|-l 2' \
			'lvb|size = "12M"; alloc = "inherit"|--alloc inherit -l 3'
		;;
	y0)
		run_scenario y0 vgy0 1 64M "" \
			'lva|size = "4M"; permission = "r"|-p r -L 4M' \
			'lvb|size = "4M"; activation_skip = true|--setactivationskip y -L 4M' \
			'lvc|size = "4M"; read_ahead = 100|--readahead 100 -L 4M' \
			'lvd|size = "4M"; read_ahead = "none"|--readahead none -L 4M' \
			"lve|size = \"4M\"; minor = 123; major = $dmmajor|-My --minor 123 -L 4M" \
			"lvf|size = \"4M\"; permission = \"r\"; activation_skip = true; read_ahead = \"128K\"; minor = 5; major = $dmmajor|-p r -ky -r 128k -My --minor 5 -L 4M"
		;;
	y1)
		run_scenario y1 vgy1 2 64M "" \
			'lvs|size = "16M"; type = "striped"; stripes = 2; permission = "r"; read_ahead = 8; activation_skip = true|-i 2 -I 64k -p r --readahead 8 -ky -L 16M'
		;;
	rt)
		run_scenario rt vgrt 1 64M "@fakedm" \
			'lvR|size = "8M"; type = "raid1"; mirrors = 1; alloc = "anywhere"; tags = ["foo", "bar"]|--type raid1 -m1 --alloc anywhere --addtag foo --addtag bar -L 8M' \
			'lvM|size = "8M"; type = "mirror"; mirrors = 1; alloc = "anywhere"; tags = ["baz"]|--type mirror -m1 --alloc anywhere --addtag baz -L 8M'
		;;
	*) ff_die "unknown scenario '$sc' (expected a to o, t to w, z0 to z5, s0 to s3, x0 to x2, y0, y1, ma to me, ra to rf, r0 to r2, mx, rt, tp, t1, t2, t3, tg, sn, ts, ca to cf)" ;;
	esac
done

if ((dry_run)); then
	echo "DRY RUN: lvm side done, generator not run"
	exit 0
fi
if ((failed)); then
	echo "FAIL: test-byte-identical.sh: a scenario failed: an image differs or the generator refused its spec (see above)" >&2
	exit 1
fi
echo "PASS: test-byte-identical.sh: every image identical"
