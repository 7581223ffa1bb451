#!/bin/bash
# build-fio-layer.sh [CACHE_DIR]: the guest tier's optional fio layer.
#
# fio for the io and fs workloads (docs/scenario-format.md), and the fs
# workloads' mkfs.ext4 (mke2fs) and mkfs.xfs, as a second cpio archive
# that run-initramfs.sh --fio appends after the base image (the kernel
# unpacks concatenated archives in order), so boots without an io or fs
# workload stay as small and fast as before.  Built in
# CACHE_DIR/fio-<version>-<hash>/:
#   fio.cpio.gz   /usr/bin/fio, /usr/sbin/mke2fs (mkfs.ext4 a link to it),
#                 /usr/sbin/mkfs.xfs, every library `ldd` lists for them,
#                 /etc/mke2fs.conf
#   versions      fio's, e2fsprogs' and xfsprogs' versions
#   download      "0 0": nothing downloaded (the host's binaries are copied)
# <hash> hashes fio's version, the three binaries and this script, so a
# second run does nothing.  A new build keeps the newest older layer and removes the
# rest (FF_GUEST_KEEP_OLD=1 keeps all).
#
# fio is the host's (the same Debian 12 the guest's libraries come from;
# apt-get install fio).  Debian's fio links its optional engines' libraries
# (rbd, rados, gfapi, rdma, pmem, nbd: 64 libraries, ~80 MiB) as NEEDED
# entries of the binary, bound at load time (BIND_NOW), so none can be
# left out: the loader refuses to start fio without each of them.
#
# Prints the directory on stdout; its size and the time taken on stderr.
set -euo pipefail

CACHE_DIR=${1:-/var/cache/fusefarm/guest}
say() { printf 'build-fio-layer: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" # guest_mib, guest_disk_usage, guest_prune, guest_copy_libs
t0=$(date +%s)

for t in cpio gzip ldd sha256sum dpkg-query; do
  command -v "$t" >/dev/null || die "$t not found (install: apt-get install cpio gzip libc-bin coreutils dpkg)"
done
FIO=$(command -v fio) || die "fio not found on the host (apt-get install fio): the guest's io workloads run the host's fio"
# the fs workloads' mkfs (the host's, found where Debian puts them even
# when sbin is not on PATH)
host_bin() { local b; b=$(PATH=$PATH:/usr/sbin:/sbin command -v "$1") ||
               die "$1 not found on the host (apt-get install $2): the guest's fs workloads run the host's"
             echo "$b"; }
MKE2FS=$(host_bin mke2fs e2fsprogs)
MKXFS=$(host_bin mkfs.xfs xfsprogs)
[ -f /etc/mke2fs.conf ] || die "/etc/mke2fs.conf not found on the host (e2fsprogs)"
FVER=$(dpkg-query -W -f '${Version}' fio 2>/dev/null || true)
[ -n "$FVER" ] || FVER=$("$FIO" --version 2>/dev/null | sed 's/^fio-//')
[ -n "$FVER" ] || die "$FIO: cannot tell its version"
pkgver() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null || echo unknown; }
key_hash=$( { cat "$0" "$FIO" "$MKE2FS" "$MKXFS" /etc/mke2fs.conf; declare -f guest_copy_libs; } |
  sha256sum | cut -c1-8)
KEY="fio-${FVER//[:\/+~]/_}-$key_hash"
OUT="$CACHE_DIR/$KEY"

if [ -f "$OUT/fio.cpio.gz" ]; then
  say "cached: $OUT ($(guest_disk_usage "$OUT"))"
  echo "$OUT"
  exit 0
fi

for b in "$FIO" "$MKE2FS" "$MKXFS"; do
  missing=$(ldd "$b" | awk '/not found/ { print $1 }')
  [ -z "$missing" ] || die "$b needs ${missing//$'\n'/ }, which the host lacks"
done
mkdir -p "$CACHE_DIR"
WORK=$(mktemp -d "$CACHE_DIR/.build-fio.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
R=$WORK/root
mkdir -p "$R/usr/bin" "$R/usr/sbin" "$R/etc"
cp "$FIO" "$R/usr/bin/fio"
# mkfs.ext4 is mke2fs by another name (argv[0] picks the type); mke2fs
# takes each type's features from /etc/mke2fs.conf: the host's, so the
# guest makes the filesystem the host's `fusefarm run` makes
cp "$MKE2FS" "$R/usr/sbin/mke2fs"
ln -s mke2fs "$R/usr/sbin/mkfs.ext4"
cp "$MKXFS" "$R/usr/sbin/mkfs.xfs"
cp /etc/mke2fs.conf "$R/etc/mke2fs.conf"
# Each library at its own path, under usr/ (the base image is merged-/usr:
# its /lib is a link to usr/lib, which an archive entry must not replace);
# the loader is already in the base.
nlibs=$(guest_copy_libs "$R" "$FIO" "$MKE2FS" "$MKXFS")
# ldconfig's cache is not in the guest: libraries outside the default
# directories (libceph-common in .../ceph) are found by their users'
# RUNPATH, which names the same path here.
say "packing fio $FVER, mke2fs, mkfs.xfs and $nlibs libraries ($(guest_disk_usage "$R"))"
(cd "$R" && find . ! -name . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -6 >"$WORK/fio.cpio.gz"
mkdir -p "$OUT.tmp"
mv "$WORK/fio.cpio.gz" "$OUT.tmp/"
printf 'fio=%s\ne2fsprogs=%s\nxfsprogs=%s\n' "$FVER" "$(pkgver e2fsprogs)" "$(pkgver xfsprogs)" >"$OUT.tmp/versions"
echo "0 0" >"$OUT.tmp/download"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
guest_prune "$CACHE_DIR" fio- "$OUT" fio.cpio.gz
say "built $OUT in $(($(date +%s) - t0))s: fio layer $(guest_disk_usage "$OUT/fio.cpio.gz")"
echo "$OUT"
