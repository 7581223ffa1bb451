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
#   download     "PACKAGES BYTES": the .debs building it downloaded
# <key> names the kernel, systemd and lvm2 versions plus a hash of this
# script and the files it adds, so a second run with the same versions
# does nothing but ask apt-cache.  Building a new one keeps the newest
# older rootfs-* directory of CACHE_DIR (a run started just before may
# still be copying its root.img, and a tree with another version of this
# script uses it) and removes the rest (FF_GUEST_KEEP_OLD=1 keeps them).
#
# Prints the directory on stdout; progress (mmdebstrap's, the download's
# total, the image's size, the time taken) goes to stderr.
# Needs: mmdebstrap, mkfs.ext4 (e2fsprogs), apt-cache; runs as root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE_DIR=${1:-/var/cache/fusefarm/guest}
MIRROR=${FF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${FF_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
say() { printf 'build-rootfs: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
# shellcheck source=lib.sh
. "$here/lib.sh" # guest_mib, guest_disk_usage

for t in apt-cache mkfs.ext4 sha256sum unshare; do
  command -v "$t" >/dev/null || die "$t not found (apt-get install apt e2fsprogs coreutils util-linux)"
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
INCLUDE="systemd-sysv udev lvm2 dmsetup kmod $KPKG initramfs-tools thin-provisioning-tools"

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
  say "cached: $OUT ($(guest_disk_usage "$OUT"))"
  echo "$OUT"
  exit 0
fi

mkdir -p "$CACHE_DIR"
work=$(mktemp -d "$CACHE_DIR/.rootfs.XXXXXX")
# --one-file-system: never into a mount mmdebstrap may have left in the
# chroot (it binds the host's /dev/shm there); it runs in a mount
# namespace of its own, so its mounts go when it does, however it ends.
trap 'rm -rf --one-file-system "$work"' EXIT
say "fetching Debian bookworm (minbase) from $MIRROR (+ updates, $SECURITY) with mmdebstrap:"
say "  + $(echo $INCLUDE) and their dependencies (~125 packages, ~75 MiB)"
t0=$(date +%s)
# The essential packages' .debs stay until the customize step
# (essential/unlink skipped), so the hook sees everything that was
# downloaded; the cleanup step removes them from the image as before.
unshare --mount --propagation private \
  mmdebstrap --variant=minbase --include="${INCLUDE// /,}" --skip=essential/unlink \
  --customize-hook='echo ff-guest >"$1/etc/hostname"' \
  --customize-hook='chroot "$1" passwd -d root' \
  --customize-hook='rm -f "$1"/usr/share/initramfs-tools/hooks/lvm2 "$1"/usr/share/initramfs-tools/scripts/local-top/lvm2' \
  --customize-hook='chroot "$1" update-initramfs -u -k all' \
  --customize-hook='find "$1/var/cache/apt/archives" -maxdepth 1 -name "*.deb" -printf "%s\n" |
    awk "{ n++; b += \$1 } END { print n + 0, b + 0 }" >"$1/../download"' \
  bookworm "$work/root" "deb $MIRROR bookworm main" \
  "deb $MIRROR bookworm-updates main" \
  "deb $SECURITY bookworm-security main" >&2 || die "mmdebstrap failed"
read -r ndebs dbytes <"$work/download" || die "mmdebstrap's customize hook did not run"
say "mmdebstrap done in $(( $(date +%s) - t0 ))s: downloaded $ndebs packages, $(guest_mib "$dbytes")"

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
cp "$work/download" "$work/out/download"
mkfs.ext4 -q -F -L ffroot -d "$r" "$work/out/root.img" 1G >&2 ||
  die "mkfs.ext4 -d failed"
rm -rf "$OUT"
mv "$work/out" "$OUT"
# Besides this one, the newest older root image is kept (425 MB each);
# the rest go.
if [ "${FF_GUEST_KEEP_OLD:-0}" != 1 ]; then
  ls -1dt "$CACHE_DIR"/rootfs-*/ 2>/dev/null | sed 's|/$||' | while read -r old; do
    [ "$old" != "$OUT" ] || continue
    if [ -n "${kept:-}" ]; then say "removing the old $old"; rm -rf "$old"; fi
    kept=1
  done
fi
say "built $OUT in $(( $(date +%s) - t0 ))s: $(guest_disk_usage "$OUT") on disk (root.img $(guest_disk_usage "$OUT/root.img"), of 1 GiB sparse)"
echo "$OUT"
