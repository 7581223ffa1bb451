#!/bin/sh
# /init of the guest tier's initramfs (busybox sh).  run-initramfs.sh puts
# it, ff-dmcheck, the manifest and /etc/ff/run.conf in the per-run cpio.
#
# Everything the host parses is a line starting "FF-": FF-MARK NAME UPTIME
# for each step, FF-BEGIN/FF-END NAME around captured output, FF-RC NAME RC,
# FF-DONE last.  The guest always powers off, whatever failed.
export PATH=/usr/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /run/lvm /run/lock/lvm /tmp
. /etc/ff/run.conf   # FF_DISKS FF_NBD_EXPORTS FF_NBD_PORT FF_DISK_WAIT FF_LVM FF_SNAP
                     # FF_TRANSPORT FF_FARM_EXPORTS FF_NBD_MAX

mark() { read -r up _ </proc/uptime; echo "FF-MARK $1 $up"; }
section() { # section NAME CMD...: run CMD, its output between markers
  name=$1; shift
  echo "FF-BEGIN $name"
  "$@" 2>&1
  rc=$?
  echo "FF-END $name"
  echo "FF-RC $name $rc"
  return $rc
}
finish() { echo "FF-DONE"; sync; poweroff -f; sleep 5; }

mark init
while read -r ko; do
  # nbd makes nbds_max devices (default 16): one per farm device over nbd
  case $ko in
    */nbd.ko*) insmod "$ko" nbds_max="${FF_NBD_MAX:-16}" || echo "FF-ERROR insmod $ko failed" ;;
    *) insmod "$ko" || echo "FF-ERROR insmod $ko failed" ;;
  esac
done </etc/modules.order
mark modules

net_up() {
  [ -z "$net" ] || return 0
  ip link set lo up
  ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up
  net=1
}
net=""

if [ "${FF_TRANSPORT:-scsi}" = nbd ]; then
  # The farm over the kernel's nbd client: every device is an export of
  # the host's nbdkit (10.0.2.2 over slirp), attached in farm order as
  # /dev/nbdI; /tmp/ff-devmap ("NAME /dev/nbdI" per attached device) tells
  # ff-guestrun which is which.  qemu has no SCSI disks for the farm.
  net_up
  i=0 n=0
  : >/tmp/ff-devmap
  for e in $FF_FARM_EXPORTS; do
    if out=$(nbd-client 10.0.2.2 "$FF_NBD_PORT" "/dev/nbd$i" -N "$e" 2>&1) &&
       [ "$(cat /sys/block/nbd$i/size 2>/dev/null)" != 0 ]; then
      echo "$e /dev/nbd$i" >>/tmp/ff-devmap
      n=$((n + 1))
    else
      echo "FF-ERROR nbd-client $e /dev/nbd$i: $(echo "$out" | tail -n 1)"
    fi
    i=$((i + 1))
    [ $((i % 50)) != 0 ] || echo "FF-PROGRESS nbd $i/$FF_DISKS"
  done
  echo "FF-DISKS $n"
  mark disks
else
# Wait for the SCSI disks; lvm must not scan before they are all there.
waited=0 last=-1
while :; do
  n=$(ls /sys/class/scsi_disk 2>/dev/null | wc -l)
  [ "$n" -ge "$FF_DISKS" ] && break
  if [ $((waited % 50)) = 0 ] && [ "$n" != "$last" ]; then
    echo "FF-PROGRESS disks $n/$FF_DISKS"; last=$n
  fi
  waited=$((waited + 1))
  if [ "$waited" -ge $((FF_DISK_WAIT * 10)) ]; then
    echo "FF-ERROR only $n of $FF_DISKS disks after ${FF_DISK_WAIT}s"
    break
  fi
  usleep 100000
done
# sd nodes appear in devtmpfs once sd_mod has read each disk's capacity
while [ "$(ls /sys/block | grep -c '^sd')" -lt "$n" ] && [ "$waited" -lt $((FF_DISK_WAIT * 10)) ]; do
  usleep 100000; waited=$((waited + 1))
done
echo "FF-DISKS $(ls /sys/block | grep -c '^sd')"
mark disks
fi

section lvm-version lvm version
section pvscan sh -c 'lvm pvscan >/tmp/pvscan.out 2>&1; rc=$?; tail -n 1 /tmp/pvscan.out; exit $rc'
mark pvscan
# --poll n: an interrupted pvmove of the farm (pvmove0) stays as its
# metadata has it while ff-dmcheck looks (no move resumed under it)
section vgchange sh -c 'lvm vgchange -aay --poll n >/tmp/vgchange.out 2>&1; rc=$?; grep -c "now active" /tmp/vgchange.out; grep -v "now active" /tmp/vgchange.out | head -20; exit $rc'
echo "FF-DM $(ls /sys/block | grep -c '^dm-')"
mark activated
section dmcheck ff-dmcheck /etc/ff/manifest.json
mark dmcheck
# over nbd: which nodes lvm took the PVs from (run-initramfs.sh checks nbd)
[ "${FF_TRANSPORT:-scsi}" != nbd ] || section pv-names lvm pvs --noheadings -o pv_name

if [ -n "$FF_NBD_EXPORTS" ]; then
  net_up
  i=0 devs=""
  for e in $FF_NBD_EXPORTS; do
    section "nbd-client-$e" nbd-client 10.0.2.2 "$FF_NBD_PORT" "/dev/nbd$i" -N "$e"
    devs="$devs${devs:+,}/dev/nbd$i"
    i=$((i + 1))
  done
  # --devices: the same PVs are also sdX; look at the nbd paths only
  section nbd-pvs lvm pvs --devices "$devs" -o pv_name,pv_uuid,vg_name,pv_size
  mark nbd
  i=0
  for e in $FF_NBD_EXPORTS; do
    nbd-client -d "/dev/nbd$i" >/dev/null 2>&1
    i=$((i + 1))
  done
fi
if [ -f /etc/ff/plan/plan.json ]; then
  # the scenario's workloads (ff-guestrun); the result goes to the report
  # channel, ttyS1
  mark workloads-start
  devmap=""
  [ "${FF_TRANSPORT:-scsi}" != nbd ] || devmap=/tmp/ff-devmap
  FF_LVM=$FF_LVM FF_SNAP=$FF_SNAP FF_DEVMAP=$devmap ff-guestrun /etc/ff/plan/plan.json /etc/ff/manifest.json /dev/ttyS1
  echo "FF-RC workloads $?"
  mark workloads
fi
mark done
finish
