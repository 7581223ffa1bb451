#!/usr/bin/env bash
# test-attach.sh: `fusefarm attach` and `fusefarm detach` over a farm of
# 1000 devices (default configs/mixed-1000.conf), checked against the
# kernel's view of the loop devices, the farm's manifest and real lvm2:
#   - attach attaches every listed device: each loop carries the right
#     file with no autoclear, no partscan, 512-byte blocks, direct I/O
#     (with the real daemon, not the device its profile says direct_io =
#     false for: that one reads through the page cache; --direct-io off:
#     none; a bad --direct-io is refused);
#   - the devices file lists exactly those loops, and `lvm pvs` with the
#     lvm.conf attach wrote lists exactly the farm's PVs (not a foreign PV
#     on a loop this test attached itself);
#   - attach is incremental: again attaches nothing, a device added to
#     MNT/.fusefarm/devices is attached alone;
#   - a directory without .fusefarm/devices is refused (exit 1, clear
#     message) and nothing is attached or created;
#   - the default state dir, --only, and a loop held open (busy: exit 1,
#     it stays recorded; detach again once it is closed);
#   - detach, with the farm's files gone, leaves none of our loops, never
#     touches the foreign loop, and leaves alone a recorded loop that
#     someone else detached and reused (with a warning).
# Prints attach and detach rates.
#
# The farm is a fake mount (a directory of `fusefarm gen` images plus a
# .fusefarm/devices) unless FF_ATTACH_FARM=fuse, which runs the real
# `fusefarm mount` daemon and kills it (kill -9) before detaching; only
# the farm_* functions below differ.
#
# usage: [FF_ATTACH_FARM=fake|fuse] test-attach.sh FUSEFARM [SPEC]
#        (root; lvm2, util-linux, python3; fuse3 for FF_ATTACH_FARM=fuse)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=SCRIPTDIR/../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-attach.sh FUSEFARM [SPEC]}
spec=${2:-$here/../../configs/mixed-1000.conf}
ff_require python3 losetup unshare mount realpath awk cmp
ff_env_init
s=$FF_SCRATCH
mnt=$s/mnt
state=$s/state
default_state=
holder=

# ---- the farm: the only part that differs between fake and real daemon -----
# FF_ATTACH_FARM=fake (default): the "mount" is a directory of `fusefarm
# gen` images plus a .fusefarm/devices written from the manifest.
# FF_ATTACH_FARM=fuse: `fusefarm mount` serves the farm; the held-back
# device is hidden by a profile (an appear_at far beyond any test) until
# farm_add_device switches to a profile without it: the device appears
# on that event, not after a time.
farm_mode=${FF_ATTACH_FARM:-fake}
daemon_pid=

# farm_setup HELD: serve $spec at $mnt, listing every device but HELD.
farm_setup() {
	case $farm_mode in
	fake)
		mkdir -p "$mnt/.fusefarm"
		"$bin" gen -q "$spec" -o "$mnt"
		awk -v held="$1" '$1 != held' "$s/devices.all" >"$mnt/.fusefarm/devices"
		;;
	fuse)
		ff_require fusermount3
		mkdir -p "$mnt"
		printf 'groups = ( { devices = ["%s"]; faults = { appear_at = "1000000s"; }; },\n  { devices = ["%s"]; direct_io = false; } );\n' \
			"$1" "$cached" >"$s/appear.conf"
		"$bin" mount "$spec" "$mnt" --profile "$s/appear.conf" --log "$s/daemon.log" ||
			ff_die "fusefarm mount failed"
		daemon_pid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' \
			"$mnt/.fusefarm/info.json")
		if grep -q "^$1 " "$mnt/.fusefarm/devices"; then
			ff_die "farm_setup: $1 is listed before its appear_at"
		fi
		;;
	*) ff_die "FF_ATTACH_FARM=$farm_mode: expected fake or fuse" ;;
	esac
}

# farm_add_device NAME: make NAME appear in the farm.
farm_add_device() {
	case $farm_mode in
	fake) awk -v n="$1" '$1 == n' "$s/devices.all" >>"$mnt/.fusefarm/devices" ;;
	fuse)
		"$bin" profile "$mnt" builtin:ideal >/dev/null ||
			ff_die "farm_add_device: profile switch failed"
		grep -q "^$1 " "$mnt/.fusefarm/devices" ||
			ff_die "farm_add_device: $1 is not listed after the profile switch"
		;;
	esac
}

# farm_stop: the farm's files go away under the attached loops (fake:
# deleted; fuse: the daemon dies, so they answer ENOTCONN/EIO).
farm_stop() {
	case $farm_mode in
	fake) rm -rf -- "$mnt" ;;
	fuse)
		kill -9 "$daemon_pid"
		ff_wait_exit "$daemon_pid" 120 || ff_die "farm_stop: daemon $daemon_pid survived kill -9"
		;;
	esac
}

# farm_teardown: after our loops are detached.
farm_teardown() {
	if [[ $farm_mode == fuse ]] && ff_is_mounted "$mnt"; then
		[[ -z $daemon_pid ]] || kill "$daemon_pid" 2>/dev/null || true
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" || true
	fi
}
# -------------------------------------------------------------------------

# detach_recorded STATE: detach the loops recorded in STATE/loops, only
# while they still carry the recorded file (cleanup must not depend on
# the code under test).
detach_recorded() {
	local dev back cur
	[[ -f $1/loops ]] || return 0
	while read -r dev _ back; do
		[[ -n $dev ]] || continue
		cur=$(cat "/sys/block/${dev#/dev/}/loop/backing_file" 2>/dev/null) || continue
		if [[ $cur == "$back" || $cur == "$back (deleted)" ]]; then
			losetup -d "$dev" 2>/dev/null || true
		fi
	done <"$1/loops"
}

test_cleanup() {
	if [[ -n $holder ]]; then
		exec {holder}<&-
		holder=
	fi
	detach_recorded "$state"
	if [[ -n $default_state ]]; then
		detach_recorded "$default_state"
		rm -rf -- "$default_state"
	fi
	farm_teardown
}
ff_on_cleanup test_cleanup

# state_lvm ARGS...: lvm with the config attach wrote (LVM_SYSTEM_DIR =
# $state/lvm), fenced like ff_lvm: private /run/lvm and /run/lock/lvm in
# a mount namespace, fd limit raised (lvm keeps one fd per PV).
state_lvm() {
	(
		ulimit -Sn "$(ulimit -Hn)"
		ff_lvm_exec "$state/lvm" "$s/run" "$s/lock" "$@"
	)
}

# ours_attached: loops on the machine whose backing file is under $s
# (the farm, a non-farm dir), but not the foreign or reused ones.
ours_attached() {
	losetup -l -n -O BACK-FILE | sed 's/^ *//; s/ *$//' |
		grep -F -e "$s/mnt/" -e "$s/notfarm/" || true
}

loop_backing() {
	cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null || true
}

now() {
	echo "$EPOCHREALTIME"
}

elapsed() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'
}

# ---- setup ----------------------------------------------------------------
"$bin" manifest "$spec" >"$s/manifest.json"
python3 - "$s/manifest.json" >"$s/devices.all" <<'PY'
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    u = d["pv_uuid"]
    print(d["name"], d["role"], u.replace("-", "") if u else "-")
PY
ndev=$(wc -l <"$s/devices.all")
# Hold back the last plain PV, to be added after the first attach.
held=$(awk '$2 == "pv" { n = $1 } END { print n }' "$s/devices.all")
[[ -n $held ]] || ff_die "$spec has no pv device to hold back"
# With the real daemon, the first PV's profile caches its pages
# (direct_io = false): its loop must not use direct I/O.
cached=
if [[ $farm_mode == fuse ]]; then
	cached=$(awk '$2 == "pv" { print $1; exit }' "$s/devices.all")
fi

# A loop of our own, attached before anything else: a PV that must
# never show up in the farm's lvm view and that detach must not touch.
truncate -s 64M "$s/foreign.img"
foreign=$(ff_loop_attach "$s/foreign.img")
foreign_back=$(loop_backing "$foreign")
ff_lvm pvcreate -q "$foreign" >/dev/null 2>"$s/pvcreate.err" ||
	ff_die "pvcreate $foreign: $(cat "$s/pvcreate.err")"
foreign_uuid=$(ff_lvm pvs --noheadings -o pv_uuid "$foreign" 2>/dev/null | tr -d ' -')

farm_setup "$held"
mnt_real=$(realpath "$mnt")

# ---- attach: everything listed ---------------------------------------------
ff_log "attaching $((ndev - 1)) devices"
t0=$(now)
"$bin" attach "$mnt" --state "$state" >"$s/attach1.out" 2>"$s/attach1.err" ||
	ff_die "attach failed: $(cat "$s/attach1.err")"
t1=$(now)
[[ $(tail -n1 "$s/attach1.out") == "$state/lvm/devices/system.devices" ]] ||
	ff_die "attach: last stdout line is not the devices file: $(cat "$s/attach1.out")"
grep -q "^LVM_SYSTEM_DIR=$state/lvm lvm pvs\$" "$s/attach1.err" ||
	ff_die "attach: no LVM_SYSTEM_DIR hint on stderr: $(cat "$s/attach1.err")"
grep -q "^attached $((ndev - 1)) loop devices in .*, $((ndev - 1 - (${#cached} > 0))) with direct I/O\$" "$s/attach1.err" ||
	ff_die "attach: summary line missing: $(cat "$s/attach1.err")"
[[ $(wc -l <"$state/loops") == $((ndev - 1)) ]] ||
	ff_die "attach recorded $(wc -l <"$state/loops") loops, expected $((ndev - 1))"
attach_s=$(elapsed "$t0" "$t1")

# With the real daemon (--transport-share auto), attach timed the path
# through a temporary loop over .fusefarm/probe and gave the daemon the
# median: said on stderr and in info.json; that loop is gone (autoclear),
# and it is in no record.
if [[ $farm_mode == fuse ]]; then
	grep -q "^transport share: [0-9.]* us (median of a probe loop's reads)" "$s/attach1.err" ||
		ff_die "attach: no transport share on stderr: $(cat "$s/attach1.err")"
	read -r share_ns probe_loop < <(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["transport_share"]
print(t["ns"], (t["by"] or "").split()[-1])' "$mnt/.fusefarm/info.json")
	[[ $share_ns -gt 0 && $probe_loop == /dev/loop* ]] ||
		ff_die "info.json transport_share after attach: $share_ns, by $probe_loop"
	# (the kernel may finish an autoclear after the last close returned)
	probe_gone() { [[ $(loop_backing "$probe_loop") != "$mnt_real/.fusefarm/probe" ]]; }
	ff_wait_until 30 probe_gone ||
		ff_die "the probe's loop $probe_loop is still attached"
	if grep -q "^$probe_loop " "$state/loops" || grep -q "^$probe_loop\$" "$state/created"; then
		ff_die "the probe's loop $probe_loop was recorded"
	fi
	ff_log "transport share measured by attach: $share_ns ns through $probe_loop (gone)"
fi

# ---- incremental: a new device, then nothing new ----------------------------
farm_add_device "$held"
cp "$state/loops" "$s/loops.1"
"$bin" attach "$mnt" --state "$state" >"$s/attach2.out" 2>"$s/attach2.err" ||
	ff_die "second attach failed: $(cat "$s/attach2.err")"
grep -q "^attached 1 loop device in .* ($((ndev - 1)) were attached already)" "$s/attach2.err" ||
	ff_die "attach after adding $held: $(cat "$s/attach2.err")"
cmp -s "$s/loops.1" <(head -n $((ndev - 1)) "$state/loops") ||
	ff_die "attach after adding $held changed the existing records"
new=$(tail -n +"$ndev" "$state/loops")
[[ $(awk '{ print $2 }' <<<"$new") == "$held" && $(wc -l <<<"$new") == 1 ]] ||
	ff_die "attach after adding $held recorded: $new"

cp "$state/loops" "$s/loops.2"
nloops_before=$(ours_attached | wc -l)
"$bin" attach "$mnt" --state "$state" >/dev/null 2>"$s/attach3.err" ||
	ff_die "third attach failed: $(cat "$s/attach3.err")"
grep -q "^attached 0 loop devices" "$s/attach3.err" ||
	ff_die "third attach attached something: $(cat "$s/attach3.err")"
cmp -s "$s/loops.2" "$state/loops" || ff_die "third attach changed the records"
[[ $(ours_attached | wc -l) == "$nloops_before" ]] ||
	ff_die "third attach changed the number of loops carrying farm files"

# ---- the kernel's view, the devices file --------------------------------------
# map: "<loop> <name>" for farm.sh's ff_loop_of / ff_expect_clean_stderr
awk '{ print $1, $2 }' "$state/loops" >"$s/map"
python3 - "$state" "$mnt_real" "$s/devices.all" "$cached" <<'PY' || ff_die "loops or devices file wrong (above)"
import os, sys
state, mnt, devall, cached = sys.argv[1:5]
farm = {}
for line in open(devall):
    name, role, pvid = line.split()
    farm[name] = (role, pvid)
recs = [l.rstrip("\n").split(" ", 2) for l in open(state + "/loops")]
errs = []
names = [r[1] for r in recs]
devs = [r[0] for r in recs]
if sorted(names) != sorted(farm):
    errs.append("recorded names differ from the farm's devices")
if len(set(devs)) != len(devs):
    errs.append("a loop device is recorded twice")
def sysread(dev, attr):
    with open("/sys/block/%s/%s" % (dev[5:], attr)) as f:
        return f.read().strip()
for dev, name, back in recs:
    want = mnt + "/" + name
    if back != want:
        errs.append("%s: recorded backing %s, expected %s" % (dev, back, want))
    try:
        got = sysread(dev, "loop/backing_file")
    except OSError as e:
        errs.append("%s (%s): not attached: %s" % (dev, name, e))
        continue
    if got != want:
        errs.append("%s: kernel says %s, expected %s" % (dev, got, want))
    for attr, val in (("loop/autoclear", "0"), ("loop/partscan", "0"),
                      ("loop/dio", "0" if name == cached else "1"), ("ro", "0"),
                      ("queue/logical_block_size", "512")):
        if sysread(dev, attr) != val:
            errs.append("%s: %s is %s, expected %s"
                        % (dev, attr, sysread(dev, attr), val))
lines = open(state + "/lvm/devices/system.devices").read().splitlines()
if "VERSION=1.1.1" not in lines:
    errs.append("devices file: no VERSION=1.1.1 line")
got = set()
for l in lines:
    if l.startswith("IDTYPE="):
        f = dict(kv.split("=", 1) for kv in l.split())
        got.add((f["IDTYPE"], f["IDNAME"], f["DEVNAME"], f["PVID"]))
want = set(("loop_file", back, dev,
            farm[name][1] if farm[name][1] != "-" else ".")
           for dev, name, back in recs)
if got != want:
    errs.append("devices file: %d entries not expected, %d missing, e.g. %s"
                % (len(got - want), len(want - got),
                   sorted(got ^ want)[:3]))
for e in errs[:20]:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY
grep -q 'use_devicesfile = 1' "$state/lvm/lvm.conf" || ff_die "lvm.conf: no use_devicesfile = 1"

# ---- real lvm with the config attach wrote -------------------------------------
t0=$(now)
state_lvm pvs --reportformat json -o pv_name,pv_uuid >"$s/pvs.json" 2>"$s/pvs.err" ||
	ff_die "pvs failed: $(head -5 "$s/pvs.err")"
t1=$(now)
ff_expect_clean_stderr "$s/pvs.err" pvs
python3 - "$s/pvs.json" "$s/manifest.json" "$s/map" "$foreign_uuid" <<'PY' || ff_die "pvs disagrees with the manifest (above)"
import json, sys
pvs = json.load(open(sys.argv[1]))["report"][0]["pv"]
m = json.load(open(sys.argv[2]))
name_of = dict(l.split() for l in open(sys.argv[3]))
foreign = sys.argv[4]
uuid = {d["name"]: d["pv_uuid"] for d in m["devices"]}
want = {d["pv_uuid"] for d in m["devices"]
        if d["role"] in ("pv", "orphan", "duplicate")}
errs = []
seen = set()
for p in pvs:
    u = p["pv_uuid"]
    if u.replace("-", "") == foreign:
        errs.append("pvs lists the foreign PV on %s" % p["pv_name"])
        continue
    name = name_of.get(p["pv_name"])
    if name is None:
        errs.append("pvs lists %s, not a farm loop" % p["pv_name"])
    elif uuid[name] != u:
        errs.append("%s (%s): uuid %s, manifest %s"
                    % (p["pv_name"], name, u, uuid[name]))
    seen.add(u)
if seen != want:
    errs.append("%d farm PVs missing from pvs, %d extra"
                % (len(want - seen), len(seen - want)))
if len(pvs) != len(want):
    errs.append("pvs lists %d PVs, the farm has %d" % (len(pvs), len(want)))
for e in errs[:20]:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY
ff_log "pvs lists exactly the farm's $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["report"][0]["pv"]))' "$s/pvs.json") PVs ($(elapsed "$t0" "$t1") s)"

# ---- not a fusefarm mount -----------------------------------------------------
mkdir -p "$s/notfarm"
truncate -s 16M "$s/notfarm/pv0000"
rc=0
"$bin" attach "$s/notfarm" --state "$s/state-nf" >"$s/nf.out" 2>"$s/nf.err" || rc=$?
[[ $rc == 1 ]] || ff_die "attach of a non-farm dir: exit $rc, expected 1"
grep -q "not a fusefarm mount (no .fusefarm/devices)" "$s/nf.err" ||
	ff_die "attach of a non-farm dir: unclear message: $(cat "$s/nf.err")"
[[ ! -e $s/state-nf ]] || ff_die "attach of a non-farm dir created its state dir"
[[ ! -s $s/nf.out ]] || ff_die "attach of a non-farm dir printed on stdout"
if ours_attached | grep -qF "$s/notfarm/"; then
	ff_die "attach of a non-farm dir attached a loop"
fi

# ---- default state dir, --only, a busy loop ---------------------------------
default_state=/run/fusefarm/$(python3 -c '
import sys
print("".join(c if c.isascii() and (c.isalnum() or c in "._+-")
              else "".join("%%%02X" % b for b in c.encode())
              for c in sys.argv[1]))' "$mnt_real")
two=$(awk 'NR <= 2 { print $1 }' "$s/devices.all" | paste -sd,)
rc=0
"$bin" attach "$mnt" --only "$two" --direct-io sometimes >/dev/null 2>"$s/dio.err" || rc=$?
if [[ $rc != 2 ]] || ! grep -q -- "--direct-io 'sometimes': expected auto, on or off" "$s/dio.err"; then
	ff_die "attach --direct-io sometimes: exit $rc: $(cat "$s/dio.err")"
fi
[[ ! -e $default_state ]] || ff_die "attach with a bad --direct-io created $default_state"
"$bin" attach "$mnt" --only "$two" --direct-io off >"$s/only.out" 2>"$s/only.err" ||
	ff_die "attach --only failed: $(cat "$s/only.err")"
grep -q "^attached 2 loop devices in .*, 0 with direct I/O\$" "$s/only.err" ||
	ff_die "attach --direct-io off: summary: $(cat "$s/only.err")"
while read -r dev _; do
	[[ $(cat "/sys/block/${dev#/dev/}/loop/dio") == 0 ]] ||
		ff_die "attach --direct-io off: $dev reads with direct I/O"
done <"$default_state/loops"
[[ $(tail -n1 "$s/only.out") == "$default_state/lvm/devices/system.devices" ]] ||
	ff_die "attach without --state: state dir is not $default_state: $(cat "$s/only.out")"
[[ $(awk '{ print $2 }' "$default_state/loops" | paste -sd,) == "$two" ]] ||
	ff_die "attach --only $two recorded: $(cat "$default_state/loops")"
busy_dev=$(awk 'NR == 1 { print $1 }' "$default_state/loops")
exec {holder}<"$busy_dev"
rc=0
"$bin" detach "$mnt" >"$s/busy.out" 2>"$s/busy.err" || rc=$?
[[ $rc == 1 ]] || ff_die "detach with $busy_dev held open: exit $rc, expected 1"
grep -q "still open elsewhere.*$busy_dev" "$s/busy.err" ||
	ff_die "detach with $busy_dev held open: busy loop not named: $(cat "$s/busy.err")"
[[ $(awk '{ print $1 }' "$default_state/loops") == "$busy_dev" ]] ||
	ff_die "detach with $busy_dev held open: left records: $(cat "$default_state/loops")"
exec {holder}<&-
holder=
"$bin" detach "$mnt" >/dev/null 2>"$s/busy2.err" ||
	ff_die "detach after closing $busy_dev: $(cat "$s/busy2.err")"
[[ ! -e $default_state ]] || ff_die "detach left $default_state behind"
ff_log "default state dir, --only and a busy loop: ok"

# The main state's loops were not touched by that detach.
[[ $(loop_backing "$(awk 'NR == 1 { print $1 }' "$state/loops")") == "$mnt_real/$(awk 'NR == 1 { print $2 }' "$state/loops")" ]] ||
	ff_die "detach of another state dir detached a loop of $state"

# ---- detach: farm gone, one recorded loop reused by someone else ----------------
# Someone detaches one of our loops by hand and attaches another file to
# the same loop number: detach must leave it alone.  On a shared machine
# another farm may take the freed number first (LOOP_CTL_GET_FREE hands
# out the lowest free one): that loop is someone else's from then on
# (never checked or cleaned up here, it may come and go), and the next
# recorded loop is tried.
truncate -s 16M "$s/other.img"
reused_dev=
lost=()
for line in 10 11 12 13 14 15 16 17 18 19; do
	reused_line=$(awk -v n=$line 'NR == n' "$state/loops")
	dev=${reused_line%% *}
	losetup -d "$dev"
	if losetup --direct-io=off "$dev" "$s/other.img" 2>"$s/reattach.err"; then
		reused_dev=$dev
		reused_name=$(awk '{ print $2 }' <<<"$reused_line")
		break
	fi
	ff_log "$dev was taken by someone else once freed ($(cat "$s/reattach.err")): trying the next"
	lost+=("$dev")
done
[[ -n $reused_dev ]] || ff_die "10 freed loops in a row were taken by someone else: ${lost[*]}"
other_back=$(loop_backing "$reused_dev")
# The reused loop is the test's own now: lvm-env detaches it at exit, and
# deletes its node when our attach created it (a machine with few loop
# devices), as detach would have.
ff_loop_adopt "$reused_dev" "$other_back" "$state/created"

cp "$state/loops" "$s/loops.final"
farm_stop
# attach now fails cleanly: exit 1, a message, nothing new recorded.
rc=0
"$bin" attach "$mnt" --state "$state" >/dev/null 2>"$s/dead.err" || rc=$?
[[ $rc == 1 ]] || ff_die "attach after farm_stop: exit $rc, expected 1"
grep -q "^fusefarm attach: " "$s/dead.err" || ff_die "attach after farm_stop: no message"
cmp -s "$s/loops.final" "$state/loops" ||
	ff_die "attach after farm_stop changed the records: $(cat "$s/dead.err")"
ff_log "detaching $ndev devices (farm files gone)"
t0=$(now)
"$bin" detach "$mnt" --state "$state" >"$s/detach.out" 2>"$s/detach.err" ||
	ff_die "detach failed: $(cat "$s/detach.err")"
t1=$(now)
detach_s=$(elapsed "$t0" "$t1")
grep -q "warning: $reused_name: $reused_dev now carries $other_back, not .*someone else reused it" "$s/detach.err" ||
	ff_die "detach: no warning about the reused $reused_dev: $(cat "$s/detach.err")"
# A lost loop is not detached by us: its new owner still has it (left
# alone, with a warning) or has let it go (nothing to do).
ndetached=$(sed -n 's/^detached \([0-9]*\) loop devices in .*/\1/p' "$s/detach.err")
[[ -n $ndetached ]] && ((ndetached <= ndev - 1 && ndetached >= ndev - 1 - ${#lost[@]})) ||
	ff_die "detach: summary (expected $((ndev - 1)) detached, less ${#lost[@]} lost): $(cat "$s/detach.err")"
[[ ! -e $state ]] || ff_die "detach left the state dir $state"
[[ $(loop_backing "$reused_dev") == "$other_back" ]] ||
	ff_die "detach touched the reused $reused_dev (now '$(loop_backing "$reused_dev")')"
[[ $(loop_backing "$foreign") == "$foreign_back" ]] ||
	ff_die "detach touched the foreign $foreign"
left=$(ours_attached)
[[ -z $left ]] || ff_die "loops still carry farm files after detach: $(head -5 <<<"$left")"
while read -r dev _ back; do
	cur=$(loop_backing "$dev")
	if [[ $dev != "$reused_dev" && " ${lost[*]} " != *" $dev "* &&
		($cur == "$back" || $cur == "$back (deleted)") ]]; then
		ff_die "$dev still carries $back after detach"
	fi
done <"$s/loops.final"

rate() {
	awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }'
}
ff_log "attach: $((ndev - 1)) loops in $attach_s s ($(rate $((ndev - 1)) "$attach_s")/s, wall clock with process start)"
ff_log "detach: $ndev records in $detach_s s ($(rate "$ndev" "$detach_s")/s)"
echo "PASS: attach and detach $ndev farm devices; lvm sees exactly the farm's PVs"
