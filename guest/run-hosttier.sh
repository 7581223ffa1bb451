#!/bin/bash
# run-hosttier.sh [options]: the host tier (docs/guest.md "The host
# tier"): fusefarm run inside the systemd guest as a user runs it on a
# host with udev, systemd, lvm2 and device-mapper live, and checks that
# the host leaves the farm alone.
#
#   --build DIR      the fusefarm build tree to install into the guest
#                    (default ../build; `cmake --install` of it:
#                    build-fusefarm-layer.sh)
#   --steps LIST     the in-guest steps, in order (default "fenced run
#                    dmreal kill9 pvrule control"; guest/host-tier.sh's step_NAME
#                    functions)
#   --devices N      the fenced step's farm: mixed-1000.conf scaled to N
#                    devices (default 200)
#   --run-devices N  the farm of each `fusefarm run` step (run --devices;
#                    default 6)
#   --scenario "NAME ARGS..."  the step "scenario" (a measurement, not a
#                    check): `fusefarm run NAME ARGS...` in the guest, NAME
#                    an installed configs/scenarios/NAME.conf, its report
#                    printed, e.g. --scenario "dm-udev --devices 1258"
#   --timeout S      kill the guest after S seconds (default 900); one
#                    wait in the guest may take a third of it
#   --cache DIR      image cache (default $FF_GUEST_CACHE, else
#                    /var/cache/fusefarm/guest)
#   --out DIR        also keep the guest's report and console there
#   --keep           keep the run directory (image copy, logs)
#
# The root is a copy of the cached image (guest/build-rootfs.sh) with the
# build installed under /usr/local (and the libraries the image lacks),
# guest/host-tier.sh as /usr/local/sbin/ff-host-tier, its settings in
# /etc/ff/hosttier.conf, ff-report.service masked and ff-hosttier.service
# enabled, written by debugfs.  It boots with no farm disks: the farm is
# fusefarm's own, in the guest.  The guest's FF-CHECK and FF-FAIL lines
# are shown as they arrive, then a table of the steps.  Exit 0 when every
# step passed, 1 when a check failed or the guest did not finish, 2 bad
# usage or a missing tool.  Every process it starts is killed on exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
cache=${FF_GUEST_CACHE:-/var/cache/fusefarm/guest}
qemu=${FF_QEMU:-qemu-system-x86_64}
timeout=900
keep=0
steps="fenced run dmreal kill9 pvrule control"
devices=200
run_devices=6
out=""
scenario=""

say() { printf 'run-hosttier: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --devices) devices=$2; shift 2 ;;
    --run-devices) run_devices=$2; shift 2 ;;
    --scenario) scenario=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage ;;
    *) say "unknown argument $1"; usage ;;
  esac
done
[[ $timeout =~ ^[0-9]+$ ]] || die "--timeout $timeout: expected seconds"
[[ $devices =~ ^[1-9][0-9]*$ ]] || die "--devices $devices: expected a number"
[[ $run_devices =~ ^[1-9][0-9]*$ ]] || die "--run-devices $run_devices: expected a number"
[[ $scenario =~ ^[A-Za-z0-9_.\ -]*$ ]] || die "--scenario $scenario: expected a scenario name and options"
[[ $steps =~ ^[a-z0-9_\ -]+$ ]] || die "--steps $steps: expected step names"

. "$here/lib.sh"
guest_require "$build/fusefarm/fusefarm" -- "$qemu:qemu-system-x86" \
  debugfs:e2fsprogs cmake:cmake python3:python3
guest_run_dir "${TMPDIR:-/var/tmp}/ff-hosttier.XXXXXX"

# --- prepare -----------------------------------------------------------
t0=$(now)
say "preparing the root image (cache $cache)"
img=$("$here/build-rootfs.sh" "$cache") || die "building the root image failed"
layer=$("$here/build-fusefarm-layer.sh" "$build" "$cache") || die "staging $build failed"
cp --sparse=always "$img/root.img" "$run/root.img"
# the libraries the image has: the layer's own copies of those stay out
lib=/usr/lib/x86_64-linux-gnu
debugfs -R "ls -p $lib" "$img/root.img" 2>/dev/null |
  awk -F/ -v d="$lib" 'NF > 6 && $6 != "." && $6 != ".." { print d "/" $6 }' >"$run/have"
[ -s "$run/have" ] || die "debugfs could not list $lib in $img/root.img"
cat >"$run/hosttier.conf" <<EOF
FF_STEPS="$steps"
FF_DEVICES=$devices
FF_RUN_DEVICES=$run_devices
FF_SCENARIO="$scenario"
FF_WAIT=$((timeout / 3))
EOF
{
  guest_tree_cmds "$layer/root" "$run/have"
  echo "write $here/host-tier.sh /usr/local/sbin/ff-host-tier"
  echo "write $run/hosttier.conf /etc/ff/hosttier.conf"
  echo "cd /etc/systemd/system"
  echo "rm ff-report.service"
  echo "symlink ff-report.service /dev/null"
  echo "rm multi-user.target.wants/ff-report.service"
  echo "write $here/ff-hosttier.service ff-hosttier.service"
  echo "symlink multi-user.target.wants/ff-hosttier.service /etc/systemd/system/ff-hosttier.service"
} >"$run/debugfs.cmd"
debugfs -w -f "$run/debugfs.cmd" "$run/root.img" >"$run/debugfs.log" 2>&1 ||
  { cat "$run/debugfs.log" >&2; die "debugfs could not write the run's files"; }
# debugfs reports a failed write but exits 0: check what the boot needs
for f in /usr/local/bin/fusefarm /usr/bin/fusermount3 /usr/local/sbin/ff-host-tier \
         /etc/ff/hosttier.conf /etc/systemd/system/ff-hosttier.service; do
  debugfs -R "stat $f" "$run/root.img" 2>/dev/null | grep -q 'Type: regular' ||
    { cat "$run/debugfs.log" >&2; die "$f is not in the image copy"; }
done
debugfs -R "stat /etc/systemd/system/ff-report.service" "$run/root.img" 2>/dev/null |
  grep -q 'Type: symlink' || die "ff-report.service is not masked in the image copy"
t_prep=$(since "$t0")
say "image ready in ${t_prep}s: $(sed -n 's/^fusefarm=//p' "$layer/versions") from $build ($layer), steps: $steps"

# --- boot ----------------------------------------------------------------
guest_accel
guest_systemd_args
guest_systemd_boot "no farm disks, systemd boot, fusefarm in the guest" \
  '^FF-(STEP|CHECK|FAIL|INFO)'
guest_verdict "$result" "$clog" console

# --- results -------------------------------------------------------------
glog=$rlog
[ -z "$out" ] || { mkdir -p "$out"; cp "$rlog" "$out/report.log"; cp "$clog" "$out/console.log"; }
tr -d '\r' <"$rlog" >"$run/report.txt"
status=0
{
  echo "== host tier: fusefarm $(sed -n 's/^fusefarm=//p' "$layer/versions") in the systemd guest, $accel_name"
  printf '%-40s %8s\n' "prepare image (host)" "${t_prep}s"
  printf '%-40s %8s\n' "boot to the host tier's start (uptime)" "$(mark host-tier-start)s"
  for s in $steps; do
    awk -v s="$s" '$1 == "FF-STEP" && $2 == s && $3 == "begin" { b = $4 }
      $1 == "FF-STEP" && $2 == s && $3 != "begin" { r = $3; e = $4 }
      END { if (r == "") r = "not run"
            printf "%-40s %8s  %s\n", "step " s, (e != "" ? sprintf("%.1fs", e - b) : "-"), r }' "$run/report.txt"
  done
  printf '%-40s %8s\n' "qemu start to report (host)" "${t_run}s"
  echo "checks passed: $(grep -c '^FF-CHECK' "$run/report.txt" || true), failed: $(grep -c '^FF-FAIL' "$run/report.txt" || true)"
} | tee "$run/summary.txt"
grep -q '^FF-FAIL' "$run/report.txt" && status=1
grep -q '^FF-DONE pass' "$run/report.txt" || status=1
for s in $steps; do
  grep -q "^FF-STEP $s pass" "$run/report.txt" || status=1
done
[ -z "$out" ] || cp "$run/summary.txt" "$out/summary.txt"
if [ "$status" = 0 ]; then
  echo "verdict: PASS: every check of $steps passed"
else
  grep '^FF-FAIL' "$run/report.txt" | sed 's/^/  /'
  echo "verdict: FAIL: $(grep -c '^FF-FAIL' "$run/report.txt" || true) check(s) failed"
  keep=1
fi
exit $status
