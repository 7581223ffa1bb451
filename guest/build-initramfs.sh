#!/bin/bash
# build-initramfs.sh [CACHE_DIR]: the guest tier's base image.
#
# Downloads (apt-get download) a Debian 12 cloud kernel, busybox-static,
# lvm2, dmsetup, nbd-client and the libraries they need that a minimal
# Debian host may lack, and builds in CACHE_DIR/<key>/:
#   vmlinuz        the kernel
#   base.cpio.gz   busybox, lvm, dmsetup, nbd-client, thin_check and the
#                  other thin-provisioning-tools, their libraries (the
#                  host's own for the ones every Debian 12 has), the
#                  modules the guest needs, an ordered insmod list
#   versions       the packages and versions it was built from
#   download       "PACKAGES BYTES": what building it downloaded
# <key> names the kernel and package versions (plus a hash of this script),
# so a second run with the same versions does nothing.  A new build keeps
# the newest older base and removes the rest (FF_GUEST_KEEP_OLD=1 keeps
# all).  The per-run layer
# (/init, ff-dmcheck, the manifest) is a second cpio that run-initramfs.sh
# appends: the kernel unpacks concatenated archives in order.
#
# Prints the directory on stdout; progress (each package fetched, the
# download's total, the image's size, the time taken) goes to stderr.
# Needs: apt-get, dpkg-deb, cpio, gzip, kmod (depmod, modprobe), ldd.
set -euo pipefail

CACHE_DIR=${1:-/var/cache/fusefarm/guest}
say() { printf 'build-initramfs: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" # guest_mib, guest_disk_usage
t0=$(date +%s)

for t in apt-get apt-cache dpkg-deb cpio gzip depmod modprobe ldd sha256sum; do
  command -v "$t" >/dev/null || die "$t not found (install: apt-get install apt dpkg cpio gzip kmod libc-bin coreutils)"
done

# Packages whose files go into the guest.  The kernel is the version the
# linux-image-cloud-amd64 metapackage depends on today.
kernel_pkg() { apt-cache depends linux-image-cloud-amd64 2>/dev/null |
               awk '/Depends: linux-image-[0-9]/ { print $2; exit }'; }

KPKG=$(kernel_pkg)
if [ -z "$KPKG" ]; then
  say "linux-image-cloud-amd64 unknown to apt-cache: running apt-get update"
  apt-get update >&2 || die "apt-get update failed"
  KPKG=$(kernel_pkg)
  [ -n "$KPKG" ] || die "apt-cache knows no linux-image-cloud-amd64 (is this Debian 12 with main enabled?)"
fi
KVER=${KPKG#linux-image-}
PKGS="$KPKG busybox-static lvm2 dmsetup libdevmapper1.02.1
      libdevmapper-event1.02.1 libaio1 libedit2 libbsd0 libmd0
      nbd-client libnl-3-200 libnl-genl-3-200
      thin-provisioning-tools libexpat1"

# One apt-cache call for every version (each call costs ~0.4 s).
declare -A VER
while read -r p v; do VER[$p]=$v; done < <(apt-cache policy $PKGS 2>/dev/null |
  awk '/^[^ ].*:$/ { sub(":$", ""); p = $1 } /Candidate:/ { print p, $2 }')
VERSIONS=""
for p in $PKGS; do
  v=${VER[$p]:-}
  [ -n "$v" ] && [ "$v" != "(none)" ] || die "no candidate version for package $p"
  VERSIONS+="$p=$v"$'\n'
done
script_hash=$(sha256sum "$0" | cut -c1-8)
key_hash=$(printf '%s%s' "$VERSIONS" "$script_hash" | sha256sum | cut -c1-8)
KEY="$KVER-kernel_${VER[$KPKG]}-lvm2_${VER[lvm2]}-busybox_${VER[busybox-static]}-nbd_${VER[nbd-client]}-$key_hash"
KEY=${KEY//[:\/+~]/_}
OUT="$CACHE_DIR/$KEY"

if [ -f "$OUT/base.cpio.gz" ] && [ -f "$OUT/vmlinuz" ]; then
  say "cached: $OUT ($(guest_disk_usage "$OUT"))"
  echo "$OUT"
  exit 0
fi

mkdir -p "$CACHE_DIR"
WORK=$(mktemp -d "$CACHE_DIR/.build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/debs" "$WORK/x" "$WORK/root"
chmod 755 "$WORK"; chmod 777 "$WORK/debs" # apt-get download runs as _apt

say "fetching with apt-get download: $(echo $PKGS)"
download() { (cd "$WORK/debs" && apt-get download $PKGS) >&2; }
if ! download; then
  say "apt-get download failed: running apt-get update and retrying"
  apt-get update >&2 || die "apt-get update failed"
  download || die "apt-get download $PKGS failed"
fi
ndebs=0 dbytes=0
for d in "$WORK"/debs/*.deb; do
  say "fetched $(basename "$d") ($(du -h "$d" | cut -f1))"
  ndebs=$((ndebs + 1)) dbytes=$((dbytes + $(stat -c %s "$d")))
  dpkg-deb -x "$d" "$WORK/x"
done
say "downloaded $ndebs packages, $(guest_mib "$dbytes"), in $(($(date +%s) - t0))s"

X=$WORK/x R=$WORK/root
# Debian 12 is merged-/usr: put everything under usr/ and link the rest.
mkdir -p "$R"/usr/bin "$R"/usr/sbin "$R"/usr/lib/x86_64-linux-gnu "$R"/usr/lib64 \
         "$R"/dev "$R"/proc "$R"/sys "$R"/run "$R"/tmp "$R"/etc/lvm "$R"/mnt
ln -s usr/bin "$R/bin"; ln -s usr/sbin "$R/sbin"; ln -s usr/lib "$R/lib"
ln -s usr/lib64 "$R/lib64"

# busybox and its applets
cp "$X/bin/busybox" "$R/usr/bin/busybox"
for a in $("$R/usr/bin/busybox" --list); do
  [ "$a" = busybox ] || ln -sf busybox "$R/usr/bin/$a"
done

# lvm, dmsetup, nbd-client and their libraries.  ldd resolves first from
# the extracted packages, then from the host (same Debian release).
find_bin() { for d in sbin usr/sbin bin usr/bin; do
               [ -x "$X/$d/$1" ] && { echo "$X/$d/$1"; return; }; done
             die "$1 missing from the downloaded packages"; }
LIBPATH=$X/lib/x86_64-linux-gnu:$X/usr/lib/x86_64-linux-gnu
for b in lvm dmsetup nbd-client pdata_tools; do
  src=$(find_bin "$b")
  rm -f "$R/usr/sbin/$b"
  cp "$src" "$R/usr/sbin/$b"
  missing=$(LD_LIBRARY_PATH=$LIBPATH ldd "$src" | awk '/not found/ { print $1 }')
  [ -z "$missing" ] || die "$b needs $(echo $missing) which neither the downloaded packages nor the host have"
  LD_LIBRARY_PATH=$LIBPATH ldd "$src" | awk '/=> \// { print $3 } /^\t\/lib64/ { print $1 }' |
  while read -r lib; do
    cp -L -n "$lib" "$R/usr/lib/x86_64-linux-gnu/$(basename "$lib")"
  done
done
# libdevmapper for ff-dmcheck is already there (dmsetup's); the loader:
mv "$R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" "$R/usr/lib64/"
# lvm's own command names (lvm execs itself by argv[0])
for c in pvscan pvs vgs lvs vgchange lvchange vgscan lvmdevices; do
  ln -sf lvm "$R/usr/sbin/$c"
done
# thin-provisioning-tools' commands, by argv[0] too: lvm runs thin_check
# on a pool's metadata before it activates the pool (global/
# thin_check_executable), as on a real system
for c in thin_check thin_dump thin_repair thin_restore thin_ls cache_check; do
  ln -sf pdata_tools "$R/usr/sbin/$c"
done

# Modules, dependencies first.  dm-mod carries linear, striped and error;
# the targets of mirror, raid, thin, snapshot, cache and raid integrity
# LVs follow.  The
# kernel loads md personalities and cache policies on demand through
# modprobe, which this initramfs lacks: they are listed here (crc32c, for
# thin metadata, is built into Debian's cloud kernel).  The fs workloads'
# filesystems: ext4 is built in (modprobe says "builtin": nothing to
# copy), xfs is a module (its libcrc32c comes with raid456 already).
MODS="virtio_pci virtio_scsi sd_mod dm_mod dm_delay nbd virtio_net
      dm_mirror dm_log raid0 raid1 raid10 raid456 dm_raid
      dm_thin_pool dm_snapshot dm_cache dm_cache_smq dm_writecache
      dm_integrity ext4 xfs"
depmod -b "$X" "$KVER"
: >"$R/etc/modules.order"
for m in $MODS; do
  modprobe -d "$X" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }' |
  while read -r ko; do
    rel=${ko#"$X"/}
    if [ ! -f "$R/$rel" ]; then
      mkdir -p "$R/$(dirname "$rel")"
      cp "$ko" "$R/$rel"
      echo "/$rel" >>"$R/etc/modules.order"
    fi
  done
done

# Modules in the image but not loaded at boot: brd, the RAM disk of io
# target "ram" (ff-guestrun loads it when a plan names that target; its
# disks would otherwise be in every lvm scan).  No dependencies.
for m in brd; do
  modprobe -d "$X" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }' |
  while read -r ko; do
    rel=${ko#"$X"/}
    [ -f "$R/$rel" ] || { mkdir -p "$R/$(dirname "$rel")"; cp "$ko" "$R/$rel"; }
  done
done

# lvm without udev: lvm makes the /dev/mapper nodes itself.
cat >"$R/etc/lvm/lvm.conf" <<'EOF'
devices { obtain_device_list_from_udev = 0 }
activation { udev_sync = 0  udev_rules = 0  monitoring = 0 }
global { use_lvmpolld = 0 }
EOF
echo "root:x:0:0:root:/root:/bin/sh" >"$R/etc/passwd"
echo "root:x:0:" >"$R/etc/group"

say "packing the initramfs"
(cd "$R" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -6 >"$WORK/base.cpio.gz"
mkdir -p "$OUT.tmp"
cp "$X/boot/vmlinuz-$KVER" "$OUT.tmp/vmlinuz"
mv "$WORK/base.cpio.gz" "$OUT.tmp/"
printf '%s' "$VERSIONS" >"$OUT.tmp/versions"
echo "$KVER" >"$OUT.tmp/kernel-version"
echo "$ndebs $dbytes" >"$OUT.tmp/download"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
# Prune: besides this one, keep the newest older base (a run started just
# before may still be reading it); only directories that are ours
# (base.cpio.gz + kernel-version), never the systemd root images.
if [ "${FF_GUEST_KEEP_OLD:-0}" != 1 ]; then
  ls -1dt "$CACHE_DIR"/*/ 2>/dev/null | sed 's|/$||' | while read -r old; do
    [ "$old" != "$OUT" ] && [ -f "$old/base.cpio.gz" ] && [ -f "$old/kernel-version" ] || continue
    if [ -n "${kept:-}" ]; then say "removing the old $old"; rm -rf "$old"; fi
    kept=1
  done
fi
say "built $OUT in $(($(date +%s) - t0))s: initramfs $(guest_disk_usage "$OUT/base.cpio.gz"), kernel $(guest_disk_usage "$OUT/vmlinuz")"
echo "$OUT"
