#!/usr/bin/env bash
#
# test-byte-identical.sh: prove that `fusefarm gen` writes the same bytes as
# lvm2 (lvm2-ondisk-format.md §9.2).
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
#
# Every lvm command that writes gets `--devices LOOP,LOOP…`: with the
# devices file in use, vgcreate would add device_id_type/device_id lines to
# every PV section, which the spec cannot express.  The option therefore
# appears in each description, which the spec copies verbatim.
#
# lvm stamps an LV's creation_time and its write's creation_time from two
# time() calls; when they straddle a second the spec (one `time` per LV)
# cannot express it, and the scenario is re-run (at most 3 attempts).
#
# Usage:
#   test-byte-identical.sh FUSEFARM_BIN
#   test-byte-identical.sh --dry-run [FUSEFARM_BIN]
#       build the lvm images, print the extracted values and the specs,
#       do not run the generator (exit 0 when lvm side works)
# Environment:
#   FF_KEEP=1            keep the scratch dir (images, dumps, specs)
#   FF_SCENARIOS="a b c" run only these scenarios
#
# Exit status: 0 when every image is identical, 1 otherwise.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
dumper=$here/../lib/lvm-pv-dump.py

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
ff_env_init

failed=0

# write_spec DIR SCENARIO VG: read DIR/intent, DIR/dump.json, DIR/pvs.json,
# DIR/lvs.json and DIR/devs; write DIR/spec.conf and DIR/values.txt.
# Exit 3 when an LV's creation_time differs from its write's (retry).
write_spec() {
	python3 - "$@" <<'PY'
import json, os, sys

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
chg_intent = [i[1] for i in intent if i[0] == "chg"]
pv_keys = [i[1] for i in intent if i[0] == "pvkeys" and len(i) > 1 and i[1]]

# Every mda of every PV must hold the same history: seqno 1..n, same
# offsets, sizes and per-write values; the last copy is the current one.
hist = None
for img in dump:
    if not img["label_crc_ok"]:
        fail("%s: label CRC does not verify (lvm-pv-dump.py bug?)" % img["path"])
    for m in img["mdas"]:
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
        if hist is None:
            hist = h
        elif h != hist:
            fail("%s mda at %d: history differs from the first PV's" % (img["path"], m["start"]))
nw = 1 + len(lv_intent) + len(chg_intent)
if [h[0] for h in hist] != list(range(1, nw + 1)):
    fail("seqnos on disk are %s, expected 1..%d" % ([h[0] for h in hist], nw))
copies = dump[0]["mdas"][0]["copies"]
cur = copies[-1]

hosts = {(c["creation_host"], c["uname"]) for c in copies}
if len(hosts) != 1:
    fail("creation_host/uname differ between writes: %s" % hosts)
versions = {c["lvm_version"] for c in copies}
if len(versions) != 1:
    fail("lvm versions differ between writes: %s" % versions)

# What lvm reports must agree with what is on disk.
if [p["pv_name"] for p in pvrep] != devs:
    fail("pvs lists %s, expected %s" % ([p["pv_name"] for p in pvrep], devs))
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
mda_copies = {len(i["mdas"]) for i in dump}
if len(mda_copies) != 1:
    fail("mda counts differ: %s" % mda_copies)
mda_copies = mda_copies.pop()
extent_size = cur["extent_size_sectors"] * 512

lvuuid = {l["lv_name"]: l["lv_uuid"] for l in lvrep}
curlv = {l["name"]: l for l in cur["lvs"]}
if [l[0] for l in lv_intent] != [l["name"] for l in cur["lvs"]]:
    fail("LVs on disk %s, expected %s" % ([l["name"] for l in cur["lvs"]], lv_intent))

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
w("    mda_copies = %d;" % mda_copies)
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
vals.append("vg %s uuid %s extent_size %d mda_copies %d dev_size %d"
            % (vgname, vg_uuid, extent_size, mda_copies, dev_size))
for i, u in enumerate(pv_uuids):
    vals.append("pv r%d %s uuid %s" % (i, devs[i], u))
vals.append("host %s uname %s lvm %s" % (cur["creation_host"], cur["uname"], cur["lvm_version"]))
for c in copies:
    vals.append("write seqno %d at mda+%d size %d time %d (%s) description %s"
                % (c["seqno"], c["offset"], c["size"], c["creation_time"],
                   c["creation_time_comment"], c["description"]))
if lv_intent:
    w("    lvs = (")
    for k, (name, frag) in enumerate(lv_intent):
        wr = copies[k + 1]
        lv = curlv[name]
        if lv["creation_time"] != wr["creation_time"]:
            fail("LV %s creation_time %d != write seqno %d time %d (second boundary), running the scenario again"
                 % (name, lv["creation_time"], wr["seqno"], wr["creation_time"]), 3)
        if lv["creation_host"] != wr["creation_host"]:
            fail("LV %s creation_host differs from the write's" % name)
        if lvuuid.get(name) != lv["id"]:
            fail("LV %s: lvs says %s, text says %s" % (name, lvuuid.get(name), lv["id"]))
        w("      {")
        w("        name = %s;" % q(name))
        w("        uuid = %s;" % q(lv["id"]))
        for part in frag.split(";"):
            if part.strip():
                w("        %s;" % part.strip())
        w("        time = %d;" % wr["creation_time"])
        w("        description = %s;" % q(wr["description"]))
        w("      }%s" % ("," if k + 1 < len(lv_intent) else ""))
        vals.append("lv %s uuid %s time %d segments %s" % (name, lv["id"], lv["creation_time"],
                    "; ".join("le %d+%d stripes %d %s" % (s["start_extent"], s["extent_count"],
                              s["stripe_count"], s["stripes"]) for s in lv["segments"])))
    w("    );")
if chg_intent:
    w("    changes = (")
    for k, frag in enumerate(chg_intent):
        wr = copies[1 + len(lv_intent) + k]
        w("      {")
        for part in frag.split(";"):
            if part.strip():
                w("        %s;" % part.strip())
        w("        time = %d;" % wr["creation_time"])
        w("        description = %s;" % q(wr["description"]))
        w("      }%s" % ("," if k + 1 < len(chg_intent) else ""))
    w("    );")
w("  }")
w(");")
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

# run_scenario NAME VG NPV SIZE[,SIZE...] "PVCREATE-OPTS|VG spec fragment|VGCREATE-OPTS" LV-SPEC...
#   LV-SPEC = "NAME|spec fragment|lvcreate options[|PV ranges]", the PV
#   ranges as INDEX:RANGE words (the INDEXth PV of the scenario); a change
#   is "!COMMAND|spec fragment|options and target" (@PVn: the n-th PV)
#   SIZE: of every PV, or one per PV; PVCREATE-OPTS may hold @devicesfile:
#   the loops are in the devices file by their backing file (loop_file)
#   and the commands use it (no --devices), so lvm writes device_id lines
run_scenario() {
	local sc=$1 vg=$2 npv=$3 devsize=$4 pvopts pvkeys vgopts usedf=0 dsel
	IFS='|' read -r pvopts pvkeys vgopts <<<"$5"
	shift 5
	if [[ $pvopts == *@devicesfile* ]]; then
		usedf=1
		pvopts=${pvopts//@devicesfile/}
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
		printf 'vg\t%s\n' "$vg" >"$d/intent"
		printf 'pvkeys\t%s\n' "$pvkeys" >>"$d/intent"
		((usedf)) && printf 'devicesfile\n' >>"$d/intent"

		# shellcheck disable=SC2086  # pvopts, vgopts are word lists
		ff_lvm pvcreate "${dsel[@]}" $pvopts "${devs[@]}" >/dev/null 2>"$d/err" ||
			{ cat "$d/err" >&2; ff_die "scenario $sc: pvcreate failed"; }
		# shellcheck disable=SC2086  # vgopts is a word list
		ff_lvm vgcreate "${dsel[@]}" $vgopts "$vg" "${devs[@]}" >/dev/null 2>"$d/err" ||
			{ cat "$d/err" >&2; ff_die "scenario $sc: vgcreate failed"; }
		for lv in "$@"; do
			IFS='|' read -r name frag opts ranges <<<"$lv"
			if [[ $name == !* ]]; then
				# a change: !COMMAND|spec fragment|options and target
				# (@PVn: the n-th PV's device)
				opts=${opts//@PV0/${devs[0]}}
				opts=${opts//@PV1/${devs[1]:-}}
				# shellcheck disable=SC2086
				ff_lvm "${name#!}" "${dsel[@]}" $opts >/dev/null 2>"$d/err" ||
					{ cat "$d/err" >&2; ff_die "scenario $sc: ${name#!} $opts failed"; }
				printf 'chg\t%s\n' "$frag" >>"$d/intent"
				continue
			fi
			pvargs=()
			for w in $ranges; do
				pvargs+=("${devs[${w%%:*}]}:${w#*:}")
			done
			# shellcheck disable=SC2086
			ff_lvm lvcreate "${dsel[@]}" -an -Zn --driverloaded n $opts -n "$name" "$vg" \
				"${pvargs[@]}" >/dev/null 2>"$d/err" ||
				{ cat "$d/err" >&2; ff_die "scenario $sc: lvcreate $name failed"; }
			printf 'lv\t%s\t%s\n' "$name" "$frag" >>"$d/intent"
		done
		ff_lvm pvs "${dsel[@]}" --reportformat json -o pv_name,pv_uuid,vg_name,vg_uuid \
			>"$d/pvs.json"
		ff_lvm lvs "${dsel[@]}" --reportformat json -o lv_name,lv_uuid,vg_name \
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
	for ((i = 0; i < npv; i++)); do
		if [[ ! -f $d/gen/r$i ]]; then
			echo "FAIL: scenario $sc: $d/gen/r$i not written" >&2
			ls -la "$d/gen" >&2
			failed=1
		elif cmp -s "$d/lvm/r$i" "$d/gen/r$i"; then
			echo "ok: scenario $sc: r$i identical ($(stat -c %s "$d/gen/r$i") bytes)"
		else
			echo "FAIL: scenario $sc: r$i differs" >&2
			show_diff "$d/lvm/r$i" "$d/gen/r$i" >&2
			failed=1
		fi
	done
}

for sc in ${FF_SCENARIOS:-a b c d e f g h i j k l m n o t u v w}; do
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
	*) ff_die "unknown scenario '$sc' (expected a to o, t to w)" ;;
	esac
done

if ((dry_run)); then
	echo "DRY RUN: lvm side done, generator not run"
	exit 0
fi
if ((failed)); then
	echo "FAIL: test-byte-identical.sh: images differ (see above)" >&2
	exit 1
fi
echo "PASS: test-byte-identical.sh: every image identical"
