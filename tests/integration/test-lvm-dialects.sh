#!/usr/bin/env bash
# Each lvm build runs in its own dialect, fenced off the host's disks.
#
# For every lvm in $FF_LVM_BUILDS (space-separated paths of lvm binaries,
# e.g. builds of `fusefarm lvm-build`; empty: the system's lvm only), a
# small scenario (8 devices: event activation, direct activation, pvs) runs
# with a PV outside the farm on a loop of the test's own, and:
#   - event activation ran the build's own udev rule / systemd unit
#     commands: the run document's "command" and the log of every lvm
#     command the run started (a wrapper writes it) match the dialect of
#     the version (2.03.15+ pvscan --listvg ... --autoactivation event +
#     vgchange; 2.03.14 without --autoactivation; 2.03.00-13 pvscan --cache
#     --activate ay MAJ:MIN; 2.02 the same with a private lvmetad, or no
#     event activation at all without lvmetad: then the document says it
#     was left out);
#   - every VG of the farm was activated (--driverloaded n: the run
#     document's activations, one per VG, all exit 0), every command
#     exited 0;
#   - settings the build does not know are left out of its lvm.conf and
#     the run document names them;
#   - no lvm process opened a block device that is not one of the farm's
#     loops (each lvm runs under `strace -f -e trace=open,openat`; every
#     /dev path it opened, or tried to, that is a block device must be a
#     farm loop), and the foreign PV is never reported;
#   - a workload whose commands fail makes `fusefarm run` exit 1, and the
#     report and the summary line give lvm's real error, not its warnings.
# Event activation times per version are printed, not judged.
# usage: test-lvm-dialects.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-lvm-dialects.sh FUSEFARM}
top=$here/../..
ff_require python3 strace losetup lvm
ff_env_init
s=$FF_SCRATCH

builds=${FF_LVM_BUILDS:-}
if [[ -z ${builds// /} ]]; then
  builds=$(command -v lvm)
  ff_log "FF_LVM_BUILDS is empty: testing the system lvm ($builds) only"
fi
for b in $builds; do
  [[ -x $b ]] || ff_die "FF_LVM_BUILDS: $b is not an executable lvm"
done

# ---- a PV outside the farm, as the host would have one ----------------------
hostloop=$(ff_foreign_pv "$s/host.img" ffforeignvg)

export TMPDIR=$s

# wrapper DIR REAL: DIR/lvm logs its arguments to DIR/cmds.log and runs
# REAL under strace (-yy: each opened block device with its MAJ:MIN), one
# trace file per command in DIR/strace/; on its first call in a run it
# records the run's loops (MAJ:MIN and backing file, from sysfs: the
# farm's files under this test's scratch) in DIR/farm-loops; DIR/lvmetad
# is REAL's lvmetad, where the runner looks for it (beside its lvm).
wrapper() {
  local dir=$1 real=$2
  mkdir -p "$dir/strace"
  cat >"$dir/lvm" <<SH
#!/bin/sh
printf '%s\n' "\$*" >>"$dir/cmds.log"
if [ ! -s "$dir/farm-loops" ]; then
  for f in \$(grep -lF "$s/fusefarm-run." /sys/block/loop*/loop/backing_file); do
    echo "\$(cat "\${f%/loop/backing_file}/dev") \$(cat "\$f")"
  done >"$dir/farm-loops"
fi
exec strace -f -qq -yy --seccomp-bpf -e trace=open,openat -o "$dir/strace/lvm.\$\$" "$real" "\$@"
SH
  chmod +x "$dir/lvm"
  if [[ -x ${real%/*}/lvmetad ]]; then
    ln -s "${real%/*}/lvmetad" "$dir/lvmetad"
  fi
}

# run_scenario DIR LVMETAD_VALUES: the dialect scenario with the wrapper of
# DIR; the run directory is DIR/run, the kept scratch DIR/kept.
run_scenario() {
  local dir=$1 values=$2 where=${3:-private} rc=0 fence=none
  local env=()
  if [[ $where == host ]]; then
    env=(FUSEFARM_TEST_NO_PRIVATE_DEV=1)
    fence=devicesfile # the filter form before 2.03.12
  fi
  cat >"$dir/dialect.conf" <<SC
name = "dialects";
spec = "$top/configs/mixed-1000.conf";
fence = "$fence";
devices = 8;
matrix = ( { key = "global/use_lvmetad"; values = [$values]; } );
workloads = ( { type = "event-activation"; concurrency = 4; },
              { type = "direct-activation"; },
              { type = "pvs"; } );
SC
  env "${env[@]}" "$bin" run "$dir/dialect.conf" --lvm "$dir/lvm" --out "$dir/run" --no-svg \
    --keep --quiet >"$dir/table.txt" 2>"$dir/run.err" || rc=$?
  kept=$(sed -n 's/^fusefarm run: kept //p' "$dir/run.err")
  [[ -n $kept && -d $kept ]] || ff_die "no kept scratch dir in: $(cat "$dir/run.err")"
  mv "$kept" "$dir/kept"
  ((rc == 0)) || ff_die "fusefarm run with $dir/lvm exited $rc: $(cat "$dir/run.err")"
}

# check DIR VERSION LVMETAD: the checks above for one run.
check() {
  python3 - "$1" "$2" "$3" "$hostloop" <<'PY'
import json, os, re, stat, sys
d, version, lvmetad, hostloop = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
v = tuple(int(x) for x in version.split("."))
bad = []
doc = json.load(open(f"{d}/run/run.json"))
if not doc["host"]["lvm_version"].startswith(version):
    bad.append(f"lvm_version {doc['host']['lvm_version']}, expected {version}")
if v < (2, 3, 0):
    dialect = "lvmetad" if lvmetad else "none"
elif v < (2, 3, 14):
    dialect = "pvscan-activate"
elif v < (2, 3, 15):
    dialect = "event-2.03.14"
else:
    dialect = "event"
notes = " ".join(doc["notes"])
cmds = open(f"{d}/cmds.log").read().splitlines()
(c,) = doc["configs"]
wl = {w["type"]: w for w in c["workloads"]}
for w in c["workloads"]:
    for r in w["runs"]:
        if r["exit"] or r["errors"]:
            bad.append(f"{w['name']}: exit {r['exit']}, {r['errors']} errors: {r.get('message')}")
# The build's dialect, in the document and in the commands it ran.
ev = wl.get("event-activation")
pv_event = [x for x in cmds if x.startswith("pvscan --cache --listvg")]
pv_ay = [x for x in cmds if x.startswith("pvscan --cache --activate ay")]
vg_event = [x for x in cmds if x.startswith("vgchange -aay --autoactivation event ")]
vg_214 = [x for x in cmds if x.startswith("vgchange -aay --nohints ")]
n = c["farm"]["devices"]
if dialect == "none":
    if ev:
        bad.append("event activation ran on 2.02 without lvmetad")
    if "event-activation: not applicable" not in notes:
        bad.append(f"no 'not applicable' note: {notes}")
    if pv_event or pv_ay:
        bad.append("pvscans of event activation ran")
else:
    if not ev:
        bad.append("no event-activation workload")
    else:
        if dialect in ("event", "event-2.03.14"):
            want = [x for x in pv_event
                    if ("--autoactivation event" in x) == (dialect == "event")]
            if len(want) != n * ev["repeat"] or len(want) != len(pv_event) or pv_ay:
                bad.append(f"{dialect}: {len(pv_event)} listvg pvscans "
                           f"({len(want)} of the dialect), {len(pv_ay)} -aay ones")
            vgc = vg_event if dialect == "event" else vg_214
            if len(vgc) != c["farm"]["vgs"] * ev["repeat"] or len(vg_event) + len(vg_214) != len(vgc):
                bad.append(f"{dialect}: {len(vg_event)} vgchange --autoactivation, "
                           f"{len(vg_214)} vgchange --nohints for {c['farm']['vgs']} VGs")
        else:
            ok = [x for x in pv_ay
                  if re.fullmatch(r"pvscan --cache --activate ay --driverloaded n \d+:\d+", x)]
            if len(ok) != n * ev["repeat"] or pv_event or vg_event or vg_214:
                bad.append(f"{dialect}: {len(ok)} 'pvscan --cache --activate ay MAJ:MIN' "
                           f"of {n * ev['repeat']}, {len(pv_event)} listvg ones")
            if "--listvg" in ev["command"] or "--activate ay" not in ev["command"]:
                bad.append(f"command: {ev['command']}")
        acts = ev["activations"]
        vgs = sorted(a["vg"] for a in acts)
        # Every VG activated; once, but with lvmetad: 2.02 has no
        # vgs_online guard, so every pvscan that finds its VG complete in
        # lvmetad activates it (again).
        if len(set(vgs)) != c["farm"]["vgs"] or (dialect != "lvmetad" and len(set(vgs)) != len(vgs)):
            bad.append(f"{len(vgs)} activations for {c['farm']['vgs']} VGs: {vgs}")
        if any(a["exit"] for a in acts):
            bad.append("an activation failed")
        if len(ev["devices"]) != n:
            bad.append(f"{len(ev['devices'])} device records of {n}")
        print(f"  {version} {dialect}: event activation median {ev['median']:.3f} s, "
              f"direct {wl['direct-activation']['median']:.3f} s, {n} devices, "
              f"{len(set(vgs))} VGs activated ({len(vgs)} activations)")
if wl.get("direct-activation") is None or wl.get("pvs") is None:
    bad.append("direct-activation or pvs missing")
# Settings this build does not know: left out, and said so.
if v >= (2, 3, 0) and "global/use_lvmetad (removed in 2.03.00)" not in notes:
    bad.append(f"use_lvmetad not named as left out: {notes}")
conf = open(f"{d}/kept/etc/lvm.conf").read() + open(f"{d}/kept/etc/lvmlocal.conf").read()
unknown = [("use_devicesfile", (2, 3, 12)), ("hints", (2, 3, 2)),
           ("event_activation", (2, 3, 1)), ("use_aio", (2, 2, 183))]
for key, since in unknown:
    if v < since and re.search(rf"^\s*{key}\s*=", conf, re.M):
        bad.append(f"lvm.conf of {version} sets {key} (since {since})")
if v >= (2, 3, 0) and re.search(r"^\s*use_lvmetad\s*=", conf, re.M):
    bad.append(f"lvm.conf of {version} sets use_lvmetad")
# No warning of an unknown setting in any command's output.
for f in os.listdir(f"{d}/kept/out"):
    t = open(f"{d}/kept/out/{f}", errors="replace").read()
    if "unknown." in t and "Configuration setting" in t:
        bad.append(f"{f}: {t.strip().splitlines()[0]}")
    if hostloop in re.findall(r"/dev/loop\d+", t) or "ffforeignvg" in t:
        bad.append(f"{f} names the foreign PV")
# What lvm opened: every block device a farm loop, told by its MAJ:MIN
# (lvm names them in the runner's private /dev, which this process does
# not see).  The farm's loops: those the wrapper found bound to the run's
# files.
farm = {line.split()[0] for line in open(f"{d}/farm-loops") if line.strip()}
if len(farm) != n:
    bad.append(f"{len(farm)} loops over the run's files, expected {n}")
st = os.stat(hostloop)
host = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
opened, seen, farm_opened = {}, 0, set()
for f in os.listdir(f"{d}/strace"):
    for line in open(f"{d}/strace/{f}", errors="replace"):
        m = re.search(r'open(?:at)?\((?:[^,"]*, )?"(/dev/[^"]*)".*= \d+<.*<block (\d+:\d+)>>', line)
        if not m:
            seen += '"/dev/' in line
            continue
        seen += 1
        if m.group(2) in farm:
            farm_opened.add(m.group(2))
        else:
            opened.setdefault(f"{m.group(1)} ({m.group(2)})", f)
if opened:
    bad.append(f"lvm opened {len(opened)} block devices outside the farm: "
               + ", ".join(f"{p} ({f})" for p, f in sorted(opened.items())[:10]))
if not seen or len(farm_opened) != n:
    bad.append(f"the traces show {len(farm_opened)} of {n} farm devices opened: "
               "the trace is not working")
if any(k.endswith(f"({host})") for k in opened):
    bad.append("lvm opened the foreign PV")
for b in bad[:20]:
    print(f"  {version}: {b}")
sys.exit(1 if bad else 0)
PY
}

# fail_check DIR: a workload whose command fails (an LV that does not
# exist): exit 1, the real error in the report and the summary line.
fail_check() {
  local dir=$1 rc=0
  cat >"$dir/fail.conf" <<SC
name = "dialects-fail";
spec = "$top/configs/mixed-1000.conf";
devices = 8;
workloads = ( { type = "lvchange"; lv = "ffnovg/nolv"; count = 2; } );
SC
  "$bin" run "$dir/fail.conf" --lvm "$dir/lvm" --out "$dir/fail-run" --no-svg \
    --quiet >"$dir/fail.txt" 2>"$dir/fail.err" || rc=$?
  ((rc == 1)) || ff_die "a run whose lvchanges fail exited $rc, expected 1: $(cat "$dir/fail.err")"
  grep -q 'Volume group "ffnovg" not found' "$dir/fail.txt" ||
    ff_die "the report does not give lvm's error: $(cat "$dir/fail.txt")"
  grep -q '^fusefarm run: 2 lvm commands failed: config 1 (default) lvchange: 2 failed (Volume group "ffnovg" not found' "$dir/fail.err" ||
    ff_die "no summary line naming the failed workload: $(cat "$dir/fail.err")"
  if grep -q 'Configuration setting' "$dir/fail.txt" "$dir/fail.err"; then
    ff_die "a warning was reported as the error: $(grep 'Configuration setting' "$dir/fail.txt" "$dir/fail.err")"
  fi
}

i=0 failed=0
for b in $builds; do
  i=$((i + 1))
  version=$("$b" version 2>/dev/null | sed -n 's/^ *LVM version: *\([0-9.]*\).*/\1/p')
  [[ -n $version ]] || ff_die "$b version printed no 'LVM version:'"
  if [[ $version == 2.02.* ]]; then values=(0 1); else values=(0); fi
  # The runner's private /dev (the default: fence none), then the host's
  # /dev with the build's fence (a devices file, or a filter before
  # 2.03.12): there the host's disks are in reach, and none may be opened.
  for run in "${values[@]/#/private-}" host-0; do
    lvmetad=${run#*-} where=${run%-*}
    dir=$s/b$i-$lvmetad
    [[ $where == host ]] && dir=$s/b$i-host
    mkdir -p "$dir"
    [[ -x $dir/lvm ]] || wrapper "$dir" "$b"
    ff_log "lvm $version ($b), global/use_lvmetad=$lvmetad, $where /dev"
    run_scenario "$dir" "$lvmetad" "$where"
    check "$dir" "$version" "$lvmetad" || failed=1
    find "$dir/strace" -type f -delete # the next run's commands trace here
    rm -f "$dir/farm-loops"
  done
  fail_check "$s/b$i-0"
  if [[ $version == 2.02.* ]]; then
    # use_lvmetad = 1 and no lvmetad beside the lvm: the run stops with a
    # clear error instead of running 2.02 without it (another dialect).
    dir=$s/b$i-nolvmetad rc=0
    mkdir -p "$dir"
    wrapper "$dir" "$b"
    rm -f "$dir/lvmetad"
    sed "s|$s/b$i-0/|$dir/|g" "$s/b$i-0/dialect.conf" | sed 's/values = \[0\]/values = [1]/' >"$dir/dialect.conf"
    "$bin" run "$dir/dialect.conf" --lvm "$dir/lvm" --out "$dir/run" --no-svg \
      --quiet >/dev/null 2>"$dir/run.err" || rc=$?
    ((rc == 1)) && grep -q "uses lvmetad, but $dir/lvmetad" "$dir/run.err" ||
      ff_die "2.02 with use_lvmetad=1 and no lvmetad: exit $rc: $(cat "$dir/run.err")"
  fi
done
((failed == 0)) || ff_die "a build ran out of its dialect or off the fence (above)"
echo "PASS: every lvm build ran its own dialect, activated every VG, opened only farm devices"
