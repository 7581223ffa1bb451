#!/bin/bash
# build-rootfs.sh [CACHE_DIR]: the guest tier's systemd root filesystem.
#
# Builds with mmdebstrap a minimal Debian 12 (--variant=minbase) with
# systemd-sysv, udev, lvm2, dmsetup, kmod, the cloud kernel and
# initramfs-tools (the cloud kernel has virtio_pci/virtio_blk as modules,
# so the root disk needs the kernel's own initramfs; lvm2's initramfs hook
# is removed, else udev in the initramfs would activate the farm's VGs
# before systemd starts), adds the guest's
# report service (guest/ff-report.sh, guest/ff-report.service), and packs
# it with mkfs.ext4 -d into CACHE_DIR/rootfs-<key>/:
#   root.img     ext4, 1 GiB sparse (run-systemd.sh boots a copy of it)
#   vmlinuz      the kernel inside the image
#   initrd.img   its initramfs (initramfs-tools)
#   versions     the packages and versions it was built from
# <key> names the kernel, systemd and lvm2 versions plus a hash of this
# script and the files it adds, so a second run with the same versions
# does nothing but ask apt-cache.  Building a new one removes the other
# rootfs-* directories of CACHE_DIR (FF_GUEST_KEEP_OLD=1 keeps them).
#
# Prints the directory on stdout; progress goes to stderr.
# Needs: mmdebstrap, mkfs.ext4 (e2fsprogs), apt-cache; runs as root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE_DIR=${1:-/var/cache/fusefarm/guest}
MIRROR=${FF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${FF_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
say() { printf 'build-rootfs: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

for t in apt-cache mkfs.ext4 sha256sum; do
  command -v "$t" >/dev/null || die "$t not found (apt-get install apt e2fsprogs coreutils)"
done
if ! command -v mmdebstrap >/dev/null; then
  say "mmdebstrap not found: apt-get install mmdebstrap"
  apt-get install -y mmdebstrap >&2 || die "apt-get install mmdebstrap failed"
fi

kernel_pkg() { apt-cache depends linux-image-cloud-amd64 2>/dev/null |
               awk '/Depends: linux-image-[0-9]/ { print $2; exit }'; }
KPKG=$(kernel_pkg)
if [ -z "$KPKG" ]; then
  say "linux-image-cloud-amd64 unknown to apt-cache: running apt-get update"
  apt-get update >&2 || die "apt-get update failed"
  KPKG=$(kernel_pkg)
  [ -n "$KPKG" ] || die "apt-cache knows no linux-image-cloud-amd64"
fi
KVER=${KPKG#linux-image-}
INCLUDE="systemd-sysv udev lvm2 dmsetup kmod $KPKG initramfs-tools"

declare -A VER
while read -r p v; do VER[$p]=$v; done < <(apt-cache policy $INCLUDE 2>/dev/null |
  awk '/^[^ ].*:$/ { sub(":$", ""); p = $1 } /Candidate:/ { print p, $2 }')
VERSIONS=""
for p in $INCLUDE; do
  v=${VER[$p]:-}
  [ -n "$v" ] && [ "$v" != "(none)" ] || die "no candidate version for package $p"
  VERSIONS+="$p=$v"$'\n'
done
h=$(cat "$0" "$here/ff-report.sh" "$here/ff-report.service" | sha256sum | cut -c1-8)
key_hash=$(printf '%s%s' "$VERSIONS" "$h" | sha256sum | cut -c1-8)
KEY="rootfs-$KVER-systemd_${VER[systemd-sysv]}-lvm2_${VER[lvm2]}-$key_hash"
KEY=${KEY//[:\/+~]/_}
OUT="$CACHE_DIR/$KEY"
if [ -f "$OUT/root.img" ] && [ -f "$OUT/vmlinuz" ] && [ -f "$OUT/initrd.img" ]; then
  say "cached: $OUT"
  echo "$OUT"
  exit 0
fi

mkdir -p "$CACHE_DIR"
work=$(mktemp -d "$CACHE_DIR/.rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "fetching Debian bookworm (minbase) from $MIRROR (+ updates, $SECURITY) with mmdebstrap:"
say "  + $(echo $INCLUDE) and their dependencies (~110 MB download)"
t0=$(date +%s)
mmdebstrap --variant=minbase --include="${INCLUDE// /,}" \
  --customize-hook='echo ff-guest >"$1/etc/hostname"' \
  --customize-hook='chroot "$1" passwd -d root' \
  --customize-hook='rm -f "$1"/usr/share/initramfs-tools/hooks/lvm2 "$1"/usr/share/initramfs-tools/scripts/local-top/lvm2' \
  --customize-hook='chroot "$1" update-initramfs -u -k all' \
  bookworm "$work/root" "deb $MIRROR bookworm main" \
  "deb $MIRROR bookworm-updates main" \
  "deb $SECURITY bookworm-security main" >&2 || die "mmdebstrap failed"
say "mmdebstrap done in $(( $(date +%s) - t0 ))s"

r=$work/root
install -m 755 "$here/ff-report.sh" "$r/usr/local/sbin/ff-report"
install -m 644 "$here/ff-report.service" "$r/etc/systemd/system/ff-report.service"
mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/ff-report.service \
  "$r/etc/systemd/system/multi-user.target.wants/ff-report.service"
mkdir -p "$r/etc/ff"
# the console stays quiet: no login prompt on it
ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"
printf '/dev/vda / ext4 defaults 0 1\n' >"$r/etc/fstab"
# The unmodified lvm.conf, so a run can restore it before applying its own.
cp "$r/etc/lvm/lvm.conf" "$r/etc/ff/lvm.conf.debian"
printf '%s' "$VERSIONS" >"$r/etc/ff/versions"

mkdir -p "$work/out"
cp -L "$r/boot/vmlinuz-$KVER" "$work/out/vmlinuz"
cp -L "$r/boot/initrd.img-$KVER" "$work/out/initrd.img"
printf '%s' "$VERSIONS" >"$work/out/versions"
mkfs.ext4 -q -F -L ffroot -d "$r" "$work/out/root.img" 1G >&2 ||
  die "mkfs.ext4 -d failed"
rm -rf "$OUT"
mv "$work/out" "$OUT"
# one root image is kept (425 MB each): drop those of older versions
for old in "$CACHE_DIR"/rootfs-*; do
  [ "$old" = "$OUT" ] || [ ! -d "$old" ] || [ "${FF_GUEST_KEEP_OLD:-0}" = 1 ] || { say "removing the old $old"; rm -rf "$old"; }
done
say "built $OUT ($(du -sh "$OUT" | cut -f1) on disk) in $(( $(date +%s) - t0 ))s"
echo "$OUT"
