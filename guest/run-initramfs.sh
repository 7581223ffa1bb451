#!/bin/bash
# run-initramfs.sh [options] SPEC: boot the guest tier's initramfs over a
# farm and check real device-mapper activation (prototype of `fusefarm vm
# --boot initramfs`, docs/guest.md).
#
#   --nbd-client K   also attach the first K PVs with the guest's kernel nbd
#                    client (over slirp to a loopback-only nbdkit) and pvs them
#   --timeout S      kill the guest after S seconds (default 300)
#   --cache DIR      base image cache (default $FF_GUEST_CACHE, else
#                    /var/cache/fusefarm/guest)
#   --build DIR      fusefarm build directory (default ../build): the
#                    default of the next options
#   --fusefarm FILE  the fusefarm program (BUILD/fusefarm/fusefarm)
#   --plugin FILE    the nbd plugin (BUILD/nbd-plugin/*.so)
#   --guest-bin DIR  where ff-dmcheck and ff-guestrun are (BUILD/guest)
#   --keep           keep the run directory (serial log, initrd, manifest)
#   --manifest FILE  give the guest's checker FILE instead of the spec's
#                    manifest (tests: a wrong manifest must fail)
#   --append ARGS    extra kernel command line (later rdinit= wins; also
#                    $FF_APPEND)
#   --disks N        attach only the farm's first N devices; VGs with a PV
#                    beyond them are left out of the check (farm-subset.py)
#   --profile FILE   I/O profile for the plugin (latency, contention)
#   --lvm-conf FILE  the guest's /etc/lvm/lvm.conf
#   --json FILE      also write the timings and verdict there as JSON
#   --devices N      scale the farm to about N devices (the plugin's
#                    devices=N, `fusefarm manifest --devices N`)
#   --plan DIR       run a scenario's workloads in the guest after the
#                    checks: DIR has plan.json and the lvm.conf files it
#                    names (fusefarm vm writes it; guest/ff-guestrun.c)
#   --result FILE    where the workloads' result JSON goes (with --plan)
#   --lvm PATH       the lvm binary the workloads run: copied into the
#                    guest with the libraries it needs (default: the
#                    guest's Debian lvm2)
#   --transport T    how the guest reaches the farm: scsi (default: one
#                    scsi-hd per device on virtio-scsi) or nbd (every
#                    device attached with the guest's kernel nbd client
#                    over slirp to a loopback-only nbdkit; qemu gets no
#                    farm disks; --nbd-client is then moot)
#   --fio            append the fio layer (build-fio-layer.sh, cached
#                    beside the base: fio, mkfs.ext4, mkfs.xfs) for io
#                    and fs workloads, and give the
#                    workloads the farm's counters (a snapshot channel on
#                    ttyS2, guest/ff-snap.py)
#
# Serves every farm device from one nbdkit (unix socket, --threads 1 or
# $FF_NBD_THREADS),
# attaches each as a scsi-hd (serial=device name) on virtio-scsi-pci
# controllers of 256 targets (--transport nbd: the nbdkit listens on a
# loopback TCP port instead and the guest's nbd-client attaches each), boots with TCG (KVM when a real one is
# present), and prints the guest's timings and ff-dmcheck's verdict.
# Exit 0 when the checker passed (and the nbd-client check, if asked).
# Every process it starts is killed on exit, whatever happened.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
ff=""
plugin=""
gbin=""
cache=${FF_GUEST_CACHE:-/var/cache/fusefarm/guest}
qemu=${FF_QEMU:-qemu-system-x86_64}
timeout=300
nbd_n=0
keep=0
spec=""
manifest=""
append=${FF_APPEND:-}
disks=0
profile=""
lvmconf=""
json=""
fdevices=0
plan=""
result_file=""
lvm=""
fio=0
transport=scsi

say() { printf 'run-initramfs: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --nbd-client) nbd_n=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --fusefarm) ff=$2; shift 2 ;;
    --plugin) plugin=$2; shift 2 ;;
    --guest-bin) gbin=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --manifest) manifest=$2; shift 2 ;;
    --append) append=$2; shift 2 ;;
    --disks) disks=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --lvm-conf) lvmconf=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    --devices) fdevices=$2; shift 2 ;;
    --plan) plan=$2; shift 2 ;;
    --result) result_file=$2; shift 2 ;;
    --lvm) lvm=$2; shift 2 ;;
    --fio) fio=1; shift ;;
    --transport) transport=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) say "unknown option $1"; usage ;;
    *) [ -z "$spec" ] || usage; spec=$1; shift ;;
  esac
done
[ -n "$spec" ] || usage
[ -f "$spec" ] || die "spec $spec: no such file"
[[ $disks =~ ^[0-9]+$ ]] || die "--disks $disks: expected a number"
[[ $timeout =~ ^[0-9]+$ ]] || die "--timeout $timeout: expected seconds"
case $transport in scsi|nbd) ;; *) die "--transport $transport: expected scsi or nbd" ;; esac
[ -z "$profile" ] || [ -f "$profile" ] || die "profile $profile: no such file"
[ -z "$lvmconf" ] || [ -f "$lvmconf" ] || die "lvm.conf $lvmconf: no such file"
[ -z "$plan" ] || [ -f "$plan/plan.json" ] || die "--plan $plan: no plan.json there"
[ -z "$plan" ] || [ -n "$result_file" ] || die "--plan needs --result FILE"
if [ -n "$lvm" ]; then
  lvm_path=$(command -v "$lvm") || die "--lvm $lvm: not found"
  lvm=$lvm_path
  file -L "$lvm" 2>/dev/null | grep -q ELF || ldd "$lvm" >/dev/null 2>&1 ||
    die "--lvm $lvm: not a dynamically linked ELF binary"
fi

ff=${ff:-$build/fusefarm/fusefarm}
plugin=${plugin:-$build/nbd-plugin/nbdkit-fusefarm-plugin.so}
gbin=${gbin:-$build/guest}
check=$gbin/ff-dmcheck
grun=$gbin/ff-guestrun
. "$here/lib.sh"
guest_require "$ff" "$plugin" "$check" "$grun" -- "$qemu:qemu-system-x86" \
  nbdkit:nbdkit cpio:cpio gzip:gzip python3:python3
guest_run_dir "${TMPDIR:-/tmp}/ff-guest.XXXXXX"

# --- prepare -----------------------------------------------------------
t0=$(now)
guest_manifest
mapfile -t devices < <("$here/farm-subset.py" "$run/manifest-full.json" "$disks" "$run/manifest.json") ||
  die "--disks $disks failed"
ndisks=${#devices[@]}
[ "$ndisks" -gt 0 ] || die "$spec has no devices"
[ "$ndisks" -le 4096 ] || die "$ndisks devices: at most 4096 (16 controllers)"
mapfile -t nbd_exports < <(python3 -c '
import json, sys
pvs = [d["name"] for d in json.load(open(sys.argv[1]))["devices"] if d["role"] == "pv"]
for name in pvs[:int(sys.argv[2])]:
    print(name)' "$run/manifest.json" "$nbd_n")
if [ "$transport" = nbd ] && [ "$nbd_n" -gt 0 ]; then
  say "note: --transport nbd attaches every device over nbd: no --nbd-client check"
  nbd_n=0 nbd_exports=()
fi
say "farm: $ndisks devices from $spec${profile:+, profile $profile}, transport $transport"

say "preparing the base image (cache $cache)"
base=$("$here/build-initramfs.sh" "$cache") || die "building the base image failed"
t_base=$(since "$t0")
fio_layer=""
if [ "$fio" = 1 ]; then
  t1=$(now)
  fio_dir=$("$here/build-fio-layer.sh" "$cache") || die "building the fio layer failed"
  fio_layer=$fio_dir/fio.cpio.gz
  say "fio layer: $(du -h "$fio_layer" | cut -f1) in $(since "$t1")s ($fio_dir)"
  # the layer unpacks to ~82 MiB of RAM beside the base's
  [ -n "${FF_GUEST_MEM:-}" ] || mem=3G
fi

# The per-run layer: /init, ff-dmcheck (+ any library the base lacks), the
# manifest and the run's settings.  Appended after the base cpio.
r=$run/layer
mkdir -p "$r/etc/ff" "$r/usr/sbin" "$r/usr/lib/x86_64-linux-gnu"
cp "$here/init.sh" "$r/init"
chmod 755 "$r/init"
cp "$check" "$r/usr/sbin/ff-dmcheck"
cp "$grun" "$r/usr/sbin/ff-guestrun"
ldd "$check" "$grun" | awk '/=> \// { print $3 }' | sort -u | while read -r lib; do
  cp -L "$lib" "$r/usr/lib/x86_64-linux-gnu/"
done
mkdir -p "$r/etc/lvm"
if [ -n "$plan" ]; then
  cp -r "$plan" "$r/etc/ff/plan"
fi
guest_lvm=""
if [ -n "$lvm" ]; then
  # Another lvm2 build: the binary keeps its name (lvm reads the command
  # from argv[0]), its libraries go beside it, a wrapper points the loader
  # there, so the guest's own lvm2 and libdevmapper stay as they are.
  mkdir -p "$r/opt/ff-lvm/bin" "$r/opt/ff-lvm/lib"
  cp -L "$lvm" "$r/opt/ff-lvm/bin/lvm"
  ldd "$lvm" | awk '/=> \// { print $3 }' | while read -r lib; do
    cp -L "$lib" "$r/opt/ff-lvm/lib/"
  done
  printf '#!/bin/sh\nLD_LIBRARY_PATH=/opt/ff-lvm/lib exec /opt/ff-lvm/bin/lvm "$@"\n' >"$r/opt/ff-lvm/lvm"
  chmod 755 "$r/opt/ff-lvm/lvm"
  guest_lvm=/opt/ff-lvm/lvm
  say "workloads run $lvm ($(du -sh "$r/opt/ff-lvm" | cut -f1) with its libraries)"
fi
cp "${manifest:-$run/manifest.json}" "$r/etc/ff/manifest.json"
if [ -n "$lvmconf" ]; then
  mkdir -p "$r/etc/lvm"
  cp "$lvmconf" "$r/etc/lvm/lvm.conf"
fi
nbd_port=""
if [ "$nbd_n" -gt 0 ] || [ "$transport" = nbd ]; then
  nbd_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
# the nbd module's nbds_max: one device per export attached (default 16)
nbd_max=16
[ "$nbd_n" -le "$nbd_max" ] || nbd_max=$nbd_n
[ "$transport" = scsi ] || [ "$ndisks" -le "$nbd_max" ] || nbd_max=$ndisks
cat >"$r/etc/ff/run.conf" <<EOF
FF_DISKS=$ndisks
FF_DISK_WAIT=$((timeout / 2))
FF_NBD_EXPORTS="${nbd_exports[*]}"
FF_NBD_PORT=$nbd_port
FF_LVM=$guest_lvm
FF_SNAP=$([ "$fio" = 0 ] || echo /dev/ttyS2)
FF_TRANSPORT=$transport
FF_FARM_EXPORTS="$([ "$transport" = scsi ] || echo "${devices[*]}")"
FF_NBD_MAX=$nbd_max
EOF
(cd "$r" && find . | cpio -o -H newc --quiet) | gzip -1 >"$run/layer.cpio.gz"
cat "$base/base.cpio.gz" $fio_layer "$run/layer.cpio.gz" >"$run/initrd"
t_prep=$(since "$t0")
say "image ready in ${t_prep}s (base ${t_base}s): $(du -h "$run/initrd" | cut -f1) initrd"

# --- serve ---------------------------------------------------------------
# nbdkit and qemu each hold one socket per disk
stats_file=""
[ "$fio" = 0 ] || stats_file=$run/stats.json
serve_port=""
[ "$transport" = scsi ] || serve_port=$nbd_port
guest_serve
if [ -n "$nbd_port" ] && [ "$transport" = scsi ]; then
  # loopback only: slirp maps the guest's 10.0.2.2 to the host's 127.0.0.1
  nbdkit -f --exit-with-parent --threads 1 -i 127.0.0.1 -p "$nbd_port" \
    "$plugin" spec="$spec" "${popt[@]}" 2>"$run/nbdkit-tcp.log" &
  pids+=($!)
fi
guest_wait_socket

# --- boot ----------------------------------------------------------------
guest_accel

args=(-nodefaults -display none -no-reboot -m "$mem" -smp 2 "${accel[@]}"
      -kernel "$base/vmlinuz" -initrd "$run/initrd"
      -append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init $append"
      -serial "file:$run/serial.log" -serial "file:$run/report.log")
[ "$transport" = nbd ] || guest_disk_args
if [ -n "$nbd_port" ]; then
  args+=(-netdev user,id=n0 -device virtio-net-pci,netdev=n0)
fi
if [ -n "$stats_file" ]; then
  # ttyS2: the workloads ask ff-snap.py for the farm's counters
  args+=(-chardev "socket,id=snap,path=$run/snap.sock,server=on,wait=off"
         -serial chardev:snap)
fi

tq=$(now) tq_s=$EPOCHSECONDS
"$qemu" "${args[@]}" 2>"$run/qemu.log" &
qpid=$!
pids=("$qpid" "${pids[@]}") # qemu first: it holds the nbd connections
if [ "$transport" = nbd ]; then
  say "qemu started (pid $qpid), $ndisks devices for the guest's nbd-client at 10.0.2.2:$nbd_port"
else
  say "qemu started (pid $qpid), $ndisks disks on $(( (ndisks + 255) / 256 )) virtio-scsi controller(s)"
fi
if [ -n "$stats_file" ]; then
  python3 "$here/ff-snap.py" "$run/snap.sock" "$stats_file" 2>"$run/ff-snap.log" &
  pids+=($!)
fi

# Follow the serial log; show each step as the guest reports it.
shown=0 result=""
while :; do
  if [ -f "$run/serial.log" ]; then
    lines=$(grep -a -c '' "$run/serial.log" || true)
    if [ "$lines" -gt "$shown" ]; then
      sed -n "$((shown + 1)),${lines}p" "$run/serial.log" | tr -d '\r' |
        grep -a -E '^FF-(MARK|PROGRESS|DISKS|DM|ERROR|RC)|Kernel panic' |
        sed 's/^/  guest: /' >&2 || true
      shown=$lines
    fi
    if grep -a -q '^FF-DONE' "$run/serial.log"; then result=done; fi
    if grep -a -q 'Kernel panic' "$run/serial.log"; then result=panic; fi
  fi
  [ -n "$result" ] && break
  peak_rss  # qemu's and nbdkit's VmHWM, while they live
  if ! kill -0 "$qpid" 2>/dev/null; then
    # qemu is gone, so its serial log is whole: read it once more (a
    # panic written just before qemu exited may have missed the check above)
    if grep -a -q 'Kernel panic' "$run/serial.log" 2>/dev/null; then result=panic
    elif grep -a -q '^FF-DONE' "$run/serial.log" 2>/dev/null; then result=done
    else result=exited; fi
    break
  fi
  # bash's own clock: this loop runs twice a second beside the guest,
  # which a python3 per round would take CPU from
  if ((EPOCHSECONDS - tq_s > timeout)); then
    result=timeout; break
  fi
  sleep 0.5
done
t_run=$(since "$tq")
# the guest powers itself off; give it a moment before the trap kills it
for _ in $(seq 50); do peak_rss; kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
t_exit=$(since "$tq")

log=$run/serial.log
guest_verdict "$result" "$log" "serial log"

# --- report --------------------------------------------------------------
glog=$log
delta() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }

m_init=$(mark init) m_mod=$(mark modules) m_disks=$(mark disks)
m_pvscan=$(mark pvscan) m_act=$(mark activated) m_check=$(mark dmcheck)
disks_seen=$(tr -d '\r' <"$log" | awk '$1 == "FF-DISKS" { print $2 }')
dm_seen=$(tr -d '\r' <"$log" | awk '$1 == "FF-DM" { print $2 }')
verdict=$(section dmcheck | tail -n 1)

echo "== guest tier, initramfs boot: $ndisks disks over $transport, $accel_name"
printf '%-28s %8s\n' "prepare image (host)" "${t_prep}s"
m_done=$(mark done)
printf '%-28s %8s\n' "qemu setup before kernel" "$(delta "$m_done" "$t_run")s"
printf '%-28s %8s\n' "kernel to /init (uptime)" "${m_init}s"
# insmod virtio_scsi/sd_mod probes the disks, so most of the SCSI scan
# is in "modules loaded"
printf '%-28s %8s\n' "modules loaded (+scan)" "+$(delta "$m_init" "$m_mod")s"
printf '%-28s %8s  (%s/%s disks)\n' "all disks present" "+$(delta "$m_mod" "$m_disks")s" "$disks_seen" "$ndisks"
printf '%-28s %8s  (rc %s)\n' "pvscan" "+$(delta "$m_disks" "$m_pvscan")s" "$(rc_of pvscan)"
printf '%-28s %8s  (%s dm devices, rc %s)\n' "vgchange -aay" "+$(delta "$m_pvscan" "$m_act")s" "$dm_seen" "$(rc_of vgchange)"
printf '%-28s %8s  (rc %s)\n' "ff-dmcheck" "+$(delta "$m_act" "$m_check")s" "$(rc_of dmcheck)"
printf '%-28s %8s\n' "qemu start to FF-DONE (host)" "${t_run}s"
printf '%-28s %8s\n' "qemu start to exit (host)" "${t_exit}s"
printf '%-28s %8s  (guest -m %s)\n' "peak RSS qemu/nbdkit MiB" "$rss_qemu/$rss_nbdkit" "$mem"
echo "-- ff-dmcheck"
section dmcheck | grep -v '^OK ' | sed 's/^/  /'
echo "  ($(section dmcheck | grep -c '^OK ') LVs OK)"
status=0
[ "$(rc_of dmcheck)" = 0 ] || status=1
[ "$disks_seen" = "$ndisks" ] || { say "error: guest saw $disks_seen of $ndisks disks"; status=1; }
if [ "$nbd_n" -gt 0 ]; then
  echo "-- nbd-client (kernel nbd over slirp, 10.0.2.2:$nbd_port -> 127.0.0.1:$nbd_port)"
  for e in "${nbd_exports[@]}"; do
    rc=$(rc_of "nbd-client-$e")
    echo "  nbd-client $e: rc $rc"
    [ "$rc" = 0 ] || status=1
  done
  section nbd-pvs | sed 's/^/  /'
  m_nbd=$(mark nbd)
  [ -n "$m_nbd" ] && printf '%-28s %8s\n' "  nbd attach + pvs" "+$(delta "$m_check" "$m_nbd")s"
  # every attached export must show up in pvs with its manifest PV UUID
  for e in "${nbd_exports[@]}"; do
    u=$(python3 -c '
import json, sys
print([d for d in json.load(open(sys.argv[1]))["devices"] if d["name"] == sys.argv[2]][0]["pv_uuid"])' "$run/manifest.json" "$e")
    section nbd-pvs | grep -q -- "$u" || { say "error: pvs over nbd does not show $e (PV $u)"; status=1; }
  done
fi
if [ -n "$plan" ]; then
  m_wl0=$(mark workloads-start) m_wl=$(mark workloads)
  rm -f "$result_file"
  tr -d '\r' <"$run/report.log" | sed -n 's/^FF-RESULT //p' | head -n 1 >"$result_file.tmp" || true
  if [ -s "$result_file.tmp" ] && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$result_file.tmp" 2>/dev/null; then
    mv "$result_file.tmp" "$result_file"
    printf '%-28s %8s  (rc %s)\n' "workloads" "+$(delta "${m_wl0:-0}" "${m_wl:-0}")s" "$(rc_of workloads)"
  else
    rm -f "$result_file.tmp"
    say "error: the guest sent no workload result (report channel: $run/report.log)"
    status=1
  fi
  [ "$(rc_of workloads)" = 0 ] || { say "error: ff-guestrun failed in the guest (rc $(rc_of workloads))"; status=1; }
fi
pv_names=""
if [ "$transport" = nbd ]; then
  # what lvm scanned: every PV on an nbd node, none on a SCSI disk
  pv_names=$(section pv-names | awk '$1 ~ /^\/dev\// { print $1 }' | tr '\n' ' ')
  echo "-- farm over nbd: lvm's PVs ${pv_names:-none}"
  for p in $pv_names; do
    [[ $p == /dev/nbd* ]] || { say "error: over nbd lvm sees PV $p"; status=1; }
  done
fi
lvm_version=$(section lvm-version | awk '/LVM version/ && !n++ { print $3 }')
echo "guest lvm2: ${lvm_version:-unknown}"
echo "verdict: $verdict"
[ "$status" = 0 ] || keep=1
if [ -n "$json" ]; then
  J_SPEC=$spec J_DISKS=$ndisks J_ACCEL=$accel_name J_LVM=$lvm_version \
  J_PREP=$t_prep J_RUN=$t_run J_EXIT=$t_exit J_INIT=$m_init J_MOD=$m_mod \
  J_DISKSAT=$m_disks J_PVSCAN=$m_pvscan J_ACT=$m_act J_CHECK=$m_check \
  J_SEEN=$disks_seen J_DM=$dm_seen J_RC=$(rc_of dmcheck) J_VERDICT=$verdict \
  J_NBD="${nbd_exports[*]}" J_TRANSPORT=$transport J_PVS="$pv_names" J_STATUS=$status J_QRSS=$rss_qemu J_NRSS=$rss_nbdkit J_MEM=$mem python3 -c '
import json, os, sys
e = os.environ
def f(k):
    try: return float(e.get(k, ""))
    except ValueError: return None
d = {"boot": "initramfs", "spec": e["J_SPEC"], "disks": int(e["J_DISKS"]),
     "accelerator": e["J_ACCEL"], "lvm_version": e["J_LVM"],
     "prepare_s": f("J_PREP"), "qemu_to_done_s": f("J_RUN"),
     "qemu_to_exit_s": f("J_EXIT"),
     "guest_uptime_s": {"init": f("J_INIT"), "modules": f("J_MOD"),
         "disks": f("J_DISKSAT"), "pvscan": f("J_PVSCAN"),
         "activated": f("J_ACT"), "dmcheck": f("J_CHECK")},
     "disks_seen": f("J_SEEN"), "dm_devices": f("J_DM"),
     "dmcheck_rc": f("J_RC"), "verdict": e["J_VERDICT"],
     "nbd_exports": e["J_NBD"].split(), "transport": e["J_TRANSPORT"],
     "pv_names": e["J_PVS"].split(),
     "status": int(e["J_STATUS"]),
     "guest_memory": e["J_MEM"],
     "peak_rss_mib": {"qemu": f("J_QRSS"), "nbdkit": f("J_NRSS")}}
json.dump(d, open(sys.argv[1], "w"), indent=2)
print(file=open(sys.argv[1], "a"))' "$json" || say "error: writing $json failed"
fi
exit $status
