#!/bin/bash
# run-systemd.sh [options] SPEC: boot a Debian root with systemd, udev and
# lvm2 over a farm and measure boot-time event activation (`fusefarm vm
# --boot systemd`, docs/guest.md).
#
#   --out DIR        put the results there (default ./fusefarm-vm-systemd):
#                    analyze.txt, blame.txt, critical-chain.txt, plot.svg,
#                    summary.txt, activation-journal.txt, console.log,
#                    report.log
#   --disks N        attach only the farm's first N devices (farm-subset.py)
#   --profile FILE   I/O profile for the plugin (latency, contention)
#   --lvm-conf FILE  the guest's /etc/lvm/lvm.conf (a matrix configuration)
#   --lvm PATH       boot with this lvm2 build instead of the image's
#                    Debian lvm2: PATH is the sbin/lvm of a `fusefarm
#                    lvm-build` (its build.json beside); its own udev rule
#                    and systemd units (lvm2-pvscan@ before 2.03.14, the
#                    activation generator, lvmetad for 2.02) replace
#                    Debian's, so the boot runs that version's event
#                    activation (docs/guest.md)
#   --timeout S      kill the guest after S seconds (default 900)
#   --cache DIR      image cache (default $FF_GUEST_CACHE, else
#                    /var/cache/fusefarm/guest)
#   --build DIR      fusefarm build directory (default ../build): the
#                    default of the next options
#   --fusefarm FILE  the fusefarm program (BUILD/fusefarm/fusefarm)
#   --plugin FILE    the nbd plugin (BUILD/nbd-plugin/*.so)
#   --keep           keep the run directory (image copy, logs)
#   --json FILE      also write the timings as JSON
#   --devices N      scale the farm to about N devices (the plugin's
#                    devices=N, `fusefarm manifest --devices N`)
#
# The root is a copy of the cached image (guest/build-rootfs.sh) on
# virtio-blk with the run's files written in by debugfs: the LVs to wait
# for, the disk count, the lvm.conf.  The farm's devices are scsi-hd on
# virtio-scsi over one nbdkit (unix socket, --threads 1).  Nothing
# activates the VGs but udev's lvm rules and the systemd units they start;
# the image's ff-report service waits until every LV of the manifest is a
# dm device, then sends systemd-analyze's time, blame, critical-chain and
# plot over ttyS1 and powers off.  Exit 0 when every LV became active.
# Every process it starts is killed on exit, whatever happened.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
ff=""
plugin=""
cache=${FF_GUEST_CACHE:-/var/cache/fusefarm/guest}
qemu=${FF_QEMU:-qemu-system-x86_64}
timeout=900
keep=0
spec=""
disks=0
fdevices=0
profile=""
lvmconf=""
lvm=""
json=""
out=fusefarm-vm-systemd

say() { printf 'run-systemd: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --disks) disks=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --lvm-conf) lvmconf=$2; shift 2 ;;
    --lvm) lvm=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --fusefarm) ff=$2; shift 2 ;;
    --plugin) plugin=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --json) json=$2; shift 2 ;;
    --devices) fdevices=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) say "unknown option $1"; usage ;;
    *) [ -z "$spec" ] || usage; spec=$1; shift ;;
  esac
done
[ -n "$spec" ] || usage
[ -f "$spec" ] || die "spec $spec: no such file"
[[ $disks =~ ^[0-9]+$ ]] || die "--disks $disks: expected a number"
[[ $timeout =~ ^[0-9]+$ ]] || die "--timeout $timeout: expected seconds"
[ -z "$profile" ] || [ -f "$profile" ] || die "profile $profile: no such file"
[ -z "$lvmconf" ] || [ -f "$lvmconf" ] || die "lvm.conf $lvmconf: no such file"
# The build's tree: the install prefix of `fusefarm lvm-build`, holding
# sbin/lvm, lib/ (its libdevmapper), build.json, and what a boot needs:
# lib/udev/rules.d/69-*.rules, lib/systemd/system/*, the generator.
bdir="" brule=""
if [ -n "$lvm" ]; then
  lvm_real=$(realpath -e "$lvm" 2>/dev/null) || die "--lvm $lvm: no such file"
  bdir=${lvm_real%/sbin/lvm}
  [ "$bdir" != "$lvm_real" ] && [ -f "$bdir/build.json" ] ||
    die "--lvm $lvm: not the sbin/lvm of a \`fusefarm lvm-build\` build (no build.json beside sbin/): the systemd boot takes the build's own udev rule and systemd units from its build"
  brule=$(ls "$bdir"/lib/udev/rules.d/69-*.rules 2>/dev/null | head -n1)
  [ -n "$brule" ] ||
    die "--lvm $lvm: the build has no udev rule (lib/udev/rules.d/69-*.rules): it was built by an older fusefarm; rebuild it: fusefarm lvm-build REF --force"
  case $bdir in *[[:space:]]*) die "--lvm $lvm: the build's path has a blank" ;; esac
fi

ff=${ff:-$build/fusefarm/fusefarm}
plugin=${plugin:-$build/nbd-plugin/nbdkit-fusefarm-plugin.so}
. "$here/lib.sh"
guest_require "$ff" "$plugin" -- "$qemu:qemu-system-x86" nbdkit:nbdkit \
  debugfs:e2fsprogs python3:python3 base64:coreutils
# the root image copy is large: /var/tmp unless TMPDIR says otherwise
guest_run_dir "${TMPDIR:-/var/tmp}/ff-systemd.XXXXXX"

# --- prepare -----------------------------------------------------------
t0=$(now)
guest_manifest
mapfile -t devices < <("$here/farm-subset.py" "$run/manifest-full.json" "$disks" \
  "$run/manifest.json" "$run/dm-names") || die "--disks $disks failed"
ndisks=${#devices[@]}
[ "$ndisks" -gt 0 ] || die "$spec has no devices"
[ "$ndisks" -le 4096 ] || die "$ndisks devices: at most 4096 (16 controllers)"
nlvs=$(grep -c . "$run/dm-names" || true)
say "farm: $ndisks devices, $nlvs LVs to activate, from $spec${profile:+, profile $profile}"

say "preparing the root image (cache $cache)"
img=$("$here/build-rootfs.sh" "$cache") || die "building the root image failed"
t_base=$(since "$t0")

# build_cmds: the debugfs commands that put the lvm build into the image
# copy at its own path (its rpath names it), its udev rule and units into
# /etc (an /etc rule or unit of a name overrides /usr/lib's; Debian's
# 69-lvm.rules, its event activation, and lvm2-monitor, which runs
# Debian's lvm, are masked), and its activation generator.
build_cmds() {
  local d="" c f u name
  for c in $(echo "${bdir#/}" | tr '/' ' '); do
    d=$d/$c
    echo "mkdir $d"
  done
  echo "mkdir $bdir/sbin"
  for f in lvm lvmetad; do
    [ -f "$bdir/sbin/$f" ] && echo "write $bdir/sbin/$f $bdir/sbin/$f"
  done
  # 2.03's activation generator asks the build's lvmconfig (its
  # LVMCONFIG_PATH) whether event activation is on; without it the
  # generator falls back to making its direct activation units
  [ -L "$bdir/sbin/lvmconfig" ] && echo "symlink $bdir/sbin/lvmconfig lvm"
  echo "mkdir $bdir/lib"
  for f in "$bdir"/lib/*.so*; do
    [ -e "$f" ] || continue
    if [ -L "$f" ]; then
      echo "symlink $f $(readlink "$f")"
    else
      echo "write $f $f"
    fi
  done
  echo "mkdir /etc/udev/rules.d"
  echo "cd /etc/udev/rules.d"
  echo "symlink 69-lvm.rules /dev/null"
  echo "write $brule ${brule##*/}"
  echo "cd /etc/systemd/system"
  echo "symlink lvm2-monitor.service /dev/null"
  echo "mkdir sysinit.target.wants"
  for u in "$bdir"/lib/systemd/system/*; do
    [ -f "$u" ] || continue
    name=${u##*/}
    echo "write $u $name"
    # a socket is enabled as the distribution's preset does (2.02's
    # lvm2-lvmetad.socket: WantedBy=sysinit.target)
    case $name in *.socket)
      echo "symlink sysinit.target.wants/$name /etc/systemd/system/$name" ;;
    esac
  done
  # A build under /tmp (a test's scratch) would be gone before udev runs:
  # Debian's tmpfiles.d/tmp.conf empties /tmp at boot ("D").  The same
  # name in /etc keeps /tmp as it is.
  case $bdir in /tmp/*)
    printf 'd /tmp 1777 root root -\n' >"$run/tmp.conf"
    echo "mkdir /etc/tmpfiles.d"
    echo "write $run/tmp.conf /etc/tmpfiles.d/tmp.conf" ;;
  esac
  if [ -x "$bdir/lib/systemd/system-generators/lvm2-activation-generator" ]; then
    echo "mkdir /etc/systemd/system-generators"
    echo "write $bdir/lib/systemd/system-generators/lvm2-activation-generator /etc/systemd/system-generators/lvm2-activation-generator"
  fi
}

# the run's copy, with its files written in (no mount needed)
cp --sparse=always "$img/root.img" "$run/root.img"
cat >"$run/run.conf" <<EOF
FF_DISKS=$ndisks
FF_WAIT=$((timeout * 2 / 3))
FF_LVM=${bdir:+$bdir/sbin/lvm}
EOF
{
  echo "cd /etc/ff"
  echo "rm run.conf"
  echo "write $run/run.conf run.conf"
  echo "rm dm-names"
  echo "write $run/dm-names dm-names"
  echo "cd /etc/lvm"
  echo "rm lvm.conf"
  if [ -n "$lvmconf" ]; then
    echo "write $(realpath "$lvmconf") lvm.conf"
  else
    echo "write $run/lvm.conf.debian lvm.conf"
  fi
  [ -z "$bdir" ] || build_cmds
} >"$run/debugfs.cmd"
debugfs -R "dump /etc/ff/lvm.conf.debian $run/lvm.conf.debian" "$img/root.img" 2>/dev/null
debugfs -w -f "$run/debugfs.cmd" "$run/root.img" >"$run/debugfs.log" 2>&1 ||
  { cat "$run/debugfs.log" >&2; die "debugfs could not write the run's files"; }
debugfs -R "cat /etc/ff/run.conf" "$run/root.img" 2>/dev/null | grep -q "FF_DISKS=$ndisks" ||
  { cat "$run/debugfs.log" >&2; die "the run's files are not in the image copy"; }
if [ -n "$bdir" ]; then
  # debugfs reports a failed write but exits 0: check what the boot needs
  for f in "$bdir/sbin/lvm" "/etc/udev/rules.d/${brule##*/}"; do
    debugfs -R "stat $f" "$run/root.img" 2>/dev/null | grep -q 'Type: regular' ||
      { cat "$run/debugfs.log" >&2; die "the build's $f is not in the image copy"; }
  done
  say "lvm build $bdir ($(sed -n 's/.*"lvm_version": "LVM version: *\([^"]*\)".*/\1/p' "$bdir/build.json")): its ${brule##*/} and $(ls "$bdir"/lib/systemd/system 2>/dev/null | wc -l) unit(s) replace Debian's"
fi
t_prep=$(since "$t0")
say "image ready in ${t_prep}s (base ${t_base}s)"

# --- serve ---------------------------------------------------------------
guest_serve
guest_wait_socket

# --- boot ----------------------------------------------------------------
guest_accel

guest_systemd_args
guest_disk_args

guest_systemd_boot "$ndisks disks on $(( (ndisks + 255) / 256 )) virtio-scsi controller(s), systemd boot" \
  '^FF-(MARK|PROGRESS|DM|ERROR)'

guest_verdict "$result" "$clog" console

# --- results -------------------------------------------------------------
glog=$rlog
mkdir -p "$out"
section analyze >"$out/analyze.txt"
section blame >"$out/blame.txt"
section critical-chain >"$out/critical-chain.txt"
section plot | base64 -d >"$out/plot.svg" 2>/dev/null || true
cp "$clog" "$out/console.log"
cp "$rlog" "$out/report.log"
m_disks=$(mark disks) m_lvs=$(mark lvs-active) m_booted=$(mark booted)
m_start=$(mark report-start)
lvm_version=$(section lvm-version | awk '/LVM version/ && !n++ { print $3 }')
section activation-journal >"$out/activation-journal.txt"
# "[  68.959286] host lvm[1492]:   1 logical volume(s) in ... now active"
j_first=$(awk -F'[][]' '/now active/ { gsub(/ /, "", $2); if (!n++) print $2 }' "$out/activation-journal.txt")
j_last=$(awk -F'[][]' '/now active/ { gsub(/ /, "", $2); t = $2 } END { print t }' "$out/activation-journal.txt")
# the units that activated: per complete VG (2.03.14+), per PV (the
# lvm2-pvscan@MAJ:MIN services before), or the generator's direct ones
units_of() { (grep -o -E "$1" "$out/activation-journal.txt" || true) | sort -u | wc -l; }
n_units=$(units_of 'lvm-activate-[^ :\[]*')
n_pvscan=$(units_of 'lvm2-pvscan@[0-9:]+')
n_direct=$(units_of 'lvm2-activation(-early|-net)?\.service')
# The slowest lvm unit: the report's "time in lvm2-pvscan@ services".
# lvm2-pvscan@ and the generator's units are oneshot services, which
# systemd-analyze blame lists, slowest first ("1min 3.201s NAME" or
# "873ms NAME" into seconds and the name).  lvm-activate-VG units
# (systemd-run, 2.03.14+) are simple services that blame leaves out:
# their time is from "Started lvm-activate-VG" to lvm's "... in volume
# group "VG" now active" in the journal.
read -r slow_s slow_unit < <(grep -E 'lvm2-pvscan@|lvm2-activation' "$out/blame.txt" |
  head -n1 | awk '{ t = 0; for (i = 1; i < NF; i++) { v = $i + 0
      if ($i ~ /ms$/) t += v / 1000; else if ($i ~ /min$/) t += v * 60
      else if ($i ~ /h$/) t += v * 3600; else if ($i ~ /us$/) t += v / 1e6
      else t += v }
    printf "%.3f %s\n", t, $NF }') || true
if [ -z "${slow_unit:-}" ]; then
  read -r slow_s slow_unit < <(awk -F'[][]' '
    { t = $2 + 0 }
    match($0, /Started lvm-activate-[^ ]*\.service/) {
      u = substr($0, RSTART + 8, RLENGTH - 8); vg = u
      sub(/^lvm-activate-/, "", vg); sub(/\.service$/, "", vg)
      start[vg] = t; unit[vg] = u }
    match($0, /volume group "[^"]*" now active/) {
      vg = substr($0, RSTART + 14, RLENGTH - 26)
      if (vg in start && t - start[vg] > best) { best = t - start[vg]; who = unit[vg] } }
    END { if (who != "") printf "%.3f %s\n", best, who }' "$out/activation-journal.txt") || true
fi
dm_seen=$(tr -d '\r' <"$rlog" | awk '$1 == "FF-DM" { print $2 }')
status=0
{
  echo "== guest tier, systemd boot: $ndisks disks, $nlvs LVs, $accel_name"
  printf '%-34s %8s\n' "prepare image (host)" "${t_prep}s"
  # the report service polls from its start: earlier events show as its start
  printf '%-34s %8s\n' "report service started (uptime)" "${m_start:-?}s"
  printf '%-34s %8s\n' "all disks present (uptime)" "${m_disks:-never}s"
  printf '%-34s %8s\n' "first VG activated (journal)" "${j_first:-?}s"
  printf '%-34s %8s\n' "last VG activated (journal)" "${j_last:-?}s"
  printf '%-34s %8s  (%s dm devices)\n' "every LV active (uptime)" "${m_lvs:-never}s" "$dm_seen"
  printf '%-34s %8s\n' "boot finished (uptime)" "${m_booted:-?}s"
  printf '%-34s %8s\n' "qemu start to report (host)" "${t_run}s"
  printf '%-34s %8s\n' "peak RSS qemu / nbdkit (MiB)" "$rss_qemu / $rss_nbdkit"
  echo "-- systemd-analyze"
  sed 's/^/  /' "$out/analyze.txt"
  echo "-- systemd-analyze blame (top 10)"
  head -10 "$out/blame.txt" | sed 's/^/  /'
  echo "VGs activated by lvm-activate-VG units (udev rule + systemd-run): $n_units"
  echo "lvm2-pvscan@ units (one per PV, lvm2 before 2.03.14): $n_pvscan; direct activation units (the generator's): $n_direct"
  echo "slowest lvm unit (blame, or the journal for lvm-activate-VG): ${slow_unit:-none}${slow_unit:+ ${slow_s}s}"
  echo "guest lvm2: ${lvm_version:-unknown}${bdir:+ (the build $bdir, with its own udev rule and units)}"
  echo "lvm.conf: ${lvmconf:-the default of the image}"
} | tee "$out/summary.txt"
if [ -z "$m_lvs" ]; then
  echo "-- LVs never active:"; section missing | head -20 | sed 's/^/  /'
  echo "-- lvs in the guest:"; section lvs | head -40 | sed 's/^/  /'
  echo "-- lvm in the journal:"; section journal-lvm | sed 's/^/  /'
  say "error: not every LV became active (udev/systemd event activation)"; status=1
fi
[ -s "$out/plot.svg" ] && grep -q '<svg' "$out/plot.svg" ||
  { say "error: no systemd-analyze plot came back"; status=1; }
[ -s "$out/blame.txt" ] || { say "error: no systemd-analyze blame came back"; status=1; }
echo "results in $out/ (analyze.txt blame.txt critical-chain.txt plot.svg
summary.txt activation-journal.txt)"
echo "verdict: $([ $status = 0 ] && echo PASS || echo FAIL): $([ -n "$m_lvs" ] && echo "$nlvs/$nlvs" || echo "not all of $nlvs") LVs activated by udev/systemd"
if [ -n "$json" ]; then
  J_SPEC=$spec J_DISKS=$ndisks J_LVS=$nlvs J_ACCEL=$accel_name J_LVM=$lvm_version \
  J_PREP=$t_prep J_RUN=$t_run J_EXIT=$t_exit J_MD=$m_disks J_ML=$m_lvs \
  J_MB=$m_booted J_MS=$m_start J_JF=$j_first J_JL=$j_last J_DM=$dm_seen J_STATUS=$status J_QRSS=$rss_qemu J_NRSS=$rss_nbdkit J_MEM=$mem J_OUT=$out \
  J_ANALYZE="$(cat "$out/analyze.txt")" J_CONF=$lvmconf J_BUILD=$bdir \
  J_NACT=$n_units J_NPV=$n_pvscan J_NDIR=$n_direct J_SLOWU=${slow_unit:-} J_SLOWS=${slow_s:-} python3 -c '
import json, os, sys
e = os.environ
def f(k):
    try: return float(e.get(k, ""))
    except ValueError: return None
d = {"boot": "systemd", "spec": e["J_SPEC"], "disks": int(e["J_DISKS"]),
     "lvs": int(e["J_LVS"]), "accelerator": e["J_ACCEL"],
     "lvm_version": e["J_LVM"], "lvm_conf": e["J_CONF"] or None,
     "lvm_build": e["J_BUILD"] or None,
     "activation_units": {"lvm_activate": int(e["J_NACT"]),
                          "pvscan": int(e["J_NPV"]),
                          "direct": int(e["J_NDIR"])},
     "slowest_unit": ({"name": e["J_SLOWU"], "seconds": f("J_SLOWS")}
                      if e["J_SLOWU"] else None),
     "prepare_s": f("J_PREP"), "qemu_to_report_s": f("J_RUN"),
     "qemu_to_exit_s": f("J_EXIT"),
     "guest_uptime_s": {"disks": f("J_MD"), "lvs_active": f("J_ML"),
                        "report_start": f("J_MS"), "first_vg_active": f("J_JF"),
                        "last_vg_active": f("J_JL"),
                        "booted": f("J_MB")},
     "dm_devices": f("J_DM"), "systemd_analyze": e["J_ANALYZE"],
     "results": e["J_OUT"], "status": int(e["J_STATUS"]),
     "guest_memory": e["J_MEM"],
     "peak_rss_mib": {"qemu": f("J_QRSS"), "nbdkit": f("J_NRSS")}}
json.dump(d, open(sys.argv[1], "w"), indent=2)
print(file=open(sys.argv[1], "a"))' "$json" || say "error: writing $json failed"
fi
[ "$status" = 0 ] || keep=1
exit $status
