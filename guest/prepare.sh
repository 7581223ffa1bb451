#!/bin/bash
# prepare.sh [--boot initramfs|systemd|all] [CACHE_DIR]: build or check the
# guest images `fusefarm vm` boots, before any boot needs them.
#
# The initramfs boot's base image (build-initramfs.sh), its optional fio
# layer (build-fio-layer.sh: fio, mke2fs, mkfs.xfs; skipped when the host
# lacks one of them) and the systemd
# boot's root image (build-rootfs.sh), in CACHE_DIR (default
# $FF_GUEST_CACHE, else /var/cache/fusefarm/guest).  `fusefarm vm
# --prepare` runs it, and so does the ctest fixture guest/images before
# test-vm and test-install (tests/CMakeLists.txt), so the downloads and
# builds count against the fixture's time limit, not the tests'.
#
# A cached image is checked before it is trusted: the initramfs must be a
# whole gzip stream, the root image an ext4 file system holding the
# report service; one that is not is removed and built again.  A build
# prints what it fetches and, at the end, one line per image: where it
# is, its size on disk, what building it downloaded and how long this
# step took.
#
# Exit: 0 both images ready, 1 a build or check failed, 2 bad usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { printf 'prepare: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
usage() {
  echo "usage: ${0##*/} [--boot initramfs|systemd|all] [CACHE_DIR]" >&2
  exit 2
}
# shellcheck source=lib.sh
. "$here/lib.sh" # guest_mib, guest_disk_usage, guest_download_text

which=all
while [ $# -gt 0 ]; do
  case $1 in
    --boot)
      [ $# -ge 2 ] || usage
      case $2 in initramfs | systemd | all) which=$2 ;;
        *) echo "${0##*/}: --boot $2: expected initramfs, systemd or all" >&2; exit 2 ;;
      esac
      shift 2 ;;
    -h | --help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "${0##*/}: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -le 1 ] || usage
cache=${1:-${FF_GUEST_CACHE:-/var/cache/fusefarm/guest}}
[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap, and apt-get update on a fresh machine)"

# check_initramfs DIR / check_rootfs DIR: is the cached image whole?  On
# stdout, what is wrong; nothing when it is.
check_initramfs() {
  [ -s "$1/vmlinuz" ] || { echo "no vmlinuz"; return; }
  gzip -t "$1/base.cpio.gz" 2>/dev/null || echo "base.cpio.gz is not a whole gzip stream"
}
check_fio() {
  gzip -t "$1/fio.cpio.gz" 2>/dev/null || echo "fio.cpio.gz is not a whole gzip stream"
}
check_rootfs() {
  local f
  for f in vmlinuz initrd.img versions; do
    [ -s "$1/$f" ] || { echo "no $f"; return; }
  done
  dumpe2fs -h "$1/root.img" >/dev/null 2>&1 || { echo "root.img is not an ext4 file system"; return; }
  debugfs -R 'stat /usr/local/sbin/ff-report' "$1/root.img" 2>/dev/null | grep -q '^Inode:' ||
    echo "root.img holds no /usr/local/sbin/ff-report"
}

# prepare NAME SCRIPT CHECK: build or reuse one image, check it (once
# more after removing a damaged one), and add its line to $report.
report=()
prepare() {
  local name=$1 script=$2 check=$3 t0 dir bad how=cached
  t0=$(date +%s)
  say "$name image: $script $cache"
  dir=$("$here/$script" "$cache") || die "$script failed (its messages above)"
  bad=$($check "$dir")
  if [ -n "$bad" ]; then
    say "$name image $dir is damaged ($bad): removing it and building it again"
    rm -rf "$dir"
    dir=$("$here/$script" "$cache") || die "$script failed (its messages above)"
    bad=$($check "$dir")
    [ -z "$bad" ] || die "$name image $dir was just built and is damaged: $bad"
  fi
  # a build in this step wrote its image after t0
  [ "$(stat -c %Y "$dir")" -lt "$t0" ] || how=built
  report+=("$(printf '%-9s %-6s %5ds  %11s on disk  download: %s\n  %s' "$name" "$how" \
    $(($(date +%s) - t0)) "$(guest_disk_usage "$dir")" "$(guest_download_text "$dir")" "$dir")")
}

t_all=$(date +%s)
mkdir -p "$cache" || die "cannot create $cache"
case $which in
  initramfs | all)
    prepare initramfs build-initramfs.sh check_initramfs
    # the optional layer io and fs workloads boot with (run-initramfs.sh
    # --fio): the host's fio, mke2fs and mkfs.xfs
    lacks=""
    for t in fio:fio mke2fs:e2fsprogs mkfs.xfs:xfsprogs; do
      PATH=$PATH:/usr/sbin:/sbin command -v "${t%%:*}" >/dev/null || lacks+=" ${t#*:}"
    done
    if [ -z "$lacks" ]; then
      prepare fio build-fio-layer.sh check_fio
    else
      report+=("fio       skipped: the host lacks$lacks (apt-get install$lacks; io and fs workloads need it)")
    fi ;;
esac
case $which in
  systemd | all)
    command -v debugfs >/dev/null || die "debugfs not found (apt-get install e2fsprogs)"
    prepare systemd build-rootfs.sh check_rootfs ;;
esac
echo "guest images in $cache (ready in $(($(date +%s) - t_all))s, cache $(guest_disk_usage "$cache")):"
printf '%s\n' "${report[@]}"
