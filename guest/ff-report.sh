#!/bin/sh
# ff-report (guest, systemd boot): wait until every disk and every LV of
# the manifest is there, then send systemd-analyze's time, blame and plot
# to the host and power off.  run-systemd.sh writes /etc/ff/run.conf
# (FF_DISKS, FF_WAIT, FF_LVM: the lvm build the boot runs, empty for
# the image's Debian lvm2) and /etc/ff/dm-names (the dm name of every LV the
# manifest expects active, sorted) into the image copy before the boot.
#
# Everything goes to ttyS1, the report channel (the console, ttyS0, also
# carries kernel messages): FF-MARK NAME UPTIME, FF-BEGIN/FF-END NAME
# around output (the plot base64-encoded), FF-RC NAME RC, FF-DONE last.
export LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin
. /etc/ff/run.conf
LVM=${FF_LVM:-lvm}
out=/dev/ttyS1
stty -F $out raw -echo 115200 2>/dev/null
exec >$out 2>&1
up() { read -r u _ </proc/uptime; echo "$u"; }
mark() { echo "FF-MARK $1 $(up)"; }
section() {
  name=$1; shift
  echo "FF-BEGIN $name"
  "$@" 2>&1
  rc=$?
  echo "FF-END $name"
  echo "FF-RC $name $rc"
}
mark report-start
nexp=$(grep -c . /etc/ff/dm-names)
start=$(date +%s) disks_at="" last=0
while :; do
  n=$(ls /sys/class/scsi_disk 2>/dev/null | wc -l)
  if [ -z "$disks_at" ] && [ "$n" -ge "$FF_DISKS" ]; then
    disks_at=$(up); echo "FF-MARK disks $disks_at"
  fi
  cat /sys/block/dm-*/dm/name 2>/dev/null | sort >/run/ff-have
  missing=$(comm -23 /etc/ff/dm-names /run/ff-have | wc -l)
  if [ "$missing" = 0 ] && [ -n "$disks_at" ]; then
    mark lvs-active; break
  fi
  now=$(date +%s)
  if [ $((now - last)) -ge 10 ]; then
    echo "FF-PROGRESS disks $n/$FF_DISKS, LVs active $((nexp - missing))/$nexp$([ "$missing" -le 3 ] && echo ", missing:" $(comm -23 /etc/ff/dm-names /run/ff-have))"
    last=$now
  fi
  if [ $((now - start)) -ge "$FF_WAIT" ]; then
    echo "FF-ERROR not every LV became active in ${FF_WAIT}s: $missing missing"
    section missing comm -23 /etc/ff/dm-names /run/ff-have
    section lvs "$LVM" lvs -a -o vg_name,lv_name,lv_attr,devices
    section pvs "$LVM" pvs -o pv_name,vg_name,pv_uuid
    section journal-lvm sh -c 'journalctl -b --no-pager | grep -i -E "lvm|pvscan|vgchange" | tail -60'
    break
  fi
  sleep 0.5
done
echo "FF-DM $(wc -l </run/ff-have)"
# systemd-analyze needs the boot to be finished
section running systemctl is-system-running --wait
mark booted
section analyze systemd-analyze
section blame systemd-analyze blame
section critical-chain systemd-analyze critical-chain
echo "FF-BEGIN plot"
systemd-analyze plot | base64
echo "FF-END plot"
section lvm-version "$LVM" version
# who activated: lvm2's udev rule runs pvscan --cache --autoactivation
# event per disk and starts lvm-activate-VG (systemd-run) per complete VG
# (2.03.14+); before, it starts lvm2-pvscan@MAJ:MIN.service per PV, and
# lvm2-activation*.service (the generator's) activate directly when
# event activation (2.02: lvmetad) is off
section activation-journal sh -c 'journalctl -b --no-pager -o short-monotonic | grep -E "lvm-activate-|lvm2-pvscan@|lvm2-activation|now active"'
echo "FF-DONE"
sync
systemctl poweroff --force --force
