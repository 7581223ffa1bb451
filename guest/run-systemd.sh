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

# the run's copy, with its files written in (no mount needed)
cp --sparse=always "$img/root.img" "$run/root.img"
cat >"$run/run.conf" <<EOF
FF_DISKS=$ndisks
FF_WAIT=$((timeout * 2 / 3))
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
} >"$run/debugfs.cmd"
debugfs -R "dump /etc/ff/lvm.conf.debian $run/lvm.conf.debian" "$img/root.img" 2>/dev/null
debugfs -w -f "$run/debugfs.cmd" "$run/root.img" >"$run/debugfs.log" 2>&1 ||
  { cat "$run/debugfs.log" >&2; die "debugfs could not write the run's files"; }
debugfs -R "cat /etc/ff/run.conf" "$run/root.img" 2>/dev/null | grep -q "FF_DISKS=$ndisks" ||
  { cat "$run/debugfs.log" >&2; die "the run's files are not in the image copy"; }
t_prep=$(since "$t0")
say "image ready in ${t_prep}s (base ${t_base}s)"

# --- serve ---------------------------------------------------------------
guest_serve
guest_wait_socket

# --- boot ----------------------------------------------------------------
guest_accel

args=(-nodefaults -display none -no-reboot -m "$mem" -smp 2 "${accel[@]}"
      -kernel "$img/vmlinuz" -initrd "$img/initrd.img"
      -append "root=/dev/vda rw console=ttyS0 panic=-1 quiet loglevel=3 systemd.show_status=0 ${FF_APPEND:-}"
      -drive "file=$run/root.img,if=virtio,format=raw,snapshot=on"
      -serial "file:$run/console.log" -serial "file:$run/report.log")
guest_disk_args

tq=$(now)
"$qemu" "${args[@]}" 2>"$run/qemu.log" &
qpid=$!
pids=("$qpid" "${pids[@]}")
say "qemu started (pid $qpid), $ndisks disks on $(( (ndisks + 255) / 256 )) virtio-scsi controller(s), systemd boot"

rlog=$run/report.log clog=$run/console.log
shown=0 result="" last_note=0
while :; do
  if [ -f "$rlog" ]; then
    lines=$(grep -a -c '' "$rlog" || true)
    if [ "$lines" -gt "$shown" ]; then
      sed -n "$((shown + 1)),${lines}p" "$rlog" | tr -d '\r' |
        grep -a -E '^FF-(MARK|PROGRESS|DM|ERROR)' | sed 's/^/  guest: /' >&2 || true
      shown=$lines
    fi
    if grep -a -q '^FF-DONE' "$rlog"; then result=done; fi
  fi
  if [ -f "$clog" ] && grep -a -q 'Kernel panic' "$clog"; then result=panic; fi
  [ -n "$result" ] && break
  peak_rss  # qemu's and nbdkit's VmHWM, while they live
  if ! kill -0 "$qpid" 2>/dev/null; then
    # qemu is gone, so its logs are whole: read them once more (what was
    # written just before qemu exited may have missed the checks above)
    if [ -f "$clog" ] && grep -a -q 'Kernel panic' "$clog"; then result=panic
    elif [ -f "$rlog" ] && grep -a -q '^FF-DONE' "$rlog"; then result=done
    else result=exited; fi
    break
  fi
  el=$(since "$tq")
  if [ "${el%.*}" -ge "$timeout" ]; then result=timeout; break; fi
  if [ "$shown" = 0 ] && [ $(( ${el%.*} - last_note )) -ge 15 ]; then
    say "booting… ${el%.*}s"; last_note=${el%.*}
  fi
  sleep 0.5
done
t_run=$(since "$tq")
for _ in $(seq 50); do peak_rss; kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
t_exit=$(since "$tq")

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
n_units=$( (grep -o 'lvm-activate-[^ :\[]*' "$out/activation-journal.txt" || true) | sort -u | wc -l)
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
  echo "guest lvm2: ${lvm_version:-unknown}"
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
  J_ANALYZE="$(cat "$out/analyze.txt")" J_CONF=$lvmconf python3 -c '
import json, os, sys
e = os.environ
def f(k):
    try: return float(e.get(k, ""))
    except ValueError: return None
d = {"boot": "systemd", "spec": e["J_SPEC"], "disks": int(e["J_DISKS"]),
     "lvs": int(e["J_LVS"]), "accelerator": e["J_ACCEL"],
     "lvm_version": e["J_LVM"], "lvm_conf": e["J_CONF"] or None,
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
