#!/bin/bash
# build-fusefarm-layer.sh BUILD [CACHE_DIR]: fusefarm itself, staged for
# the host tier (guest/run-hosttier.sh, docs/guest.md "The host tier"),
# which installs it into a copy of the systemd root image.
#
# Built in CACHE_DIR/fusefarm-<version>-<hash>/:
#   root/       `cmake --install BUILD --prefix /usr/local` into a DESTDIR
#               (the program finds its data and libexec dirs relative to
#               its bin dir: fusefarm/ff-paths.h), plus /usr/bin/fusermount3
#               and every library `ldd` lists for the program, the nbd
#               plugin and fusermount3, each at its own path under
#               usr/lib (the host is the same Debian 12 as the guest);
#               run-hosttier.sh writes those the image lacks
#   versions    fusefarm's version and the build tree it came from
#   download    "0 0": nothing downloaded (the build and the host's
#               libraries are copied)
# <hash> hashes every staged file and this script, so the same build
# makes the same layer and a second run only stages and hashes (~1 s).  A
# new layer keeps the newest older one and removes the rest
# (FF_GUEST_KEEP_OLD=1 keeps all).
#
# Prints the directory on stdout; its size and the time taken on stderr.
set -euo pipefail

BUILD=${1:?usage: build-fusefarm-layer.sh BUILD [CACHE_DIR]}
CACHE_DIR=${2:-/var/cache/fusefarm/guest}
say() { printf 'build-fusefarm-layer: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" # guest_mib, guest_disk_usage, guest_prune, guest_copy_libs
t0=$(date +%s)

for t in cmake ldd sha256sum; do
  command -v "$t" >/dev/null || die "$t not found (apt-get install cmake libc-bin coreutils)"
done
BUILD=$(realpath -e "$BUILD") || die "build tree $1: no such directory"
[ -f "$BUILD/CMakeCache.txt" ] || die "$BUILD: not a cmake build tree (no CMakeCache.txt)"
FUSERMOUNT=$(command -v fusermount3) || die "fusermount3 not found on the host (apt-get install fuse3)"

mkdir -p "$CACHE_DIR"
WORK=$(mktemp -d "$CACHE_DIR/.build-fusefarm.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
R=$WORK/root
DESTDIR=$R cmake --install "$BUILD" --prefix /usr/local >"$WORK/install.log" 2>&1 ||
  { cat "$WORK/install.log" >&2; die "cmake --install $BUILD failed"; }
FF=$R/usr/local/bin/fusefarm
[ -x "$FF" ] || die "cmake --install $BUILD put no usr/local/bin/fusefarm"
# the documentation is not needed in the guest
rm -rf "$R/usr/local/share/doc" "$R/usr/local/share/man"
mkdir -p "$R/usr/bin"
cp -p "$FUSERMOUNT" "$R/usr/bin/fusermount3"
VER=$("$FF" --version 2>/dev/null | awk '{ print $2; exit }')
[ -n "$VER" ] || die "$FF --version said nothing"

bins=("$FF" "$R/usr/bin/fusermount3")
while read -r so; do bins+=("$so"); done < <(find "$R" -name '*.so' -type f)
missing=$(ldd "${bins[@]}" 2>/dev/null | awk '/not found/ { print $1 }' | sort -u)
[ -z "$missing" ] || die "the build needs ${missing//$'\n'/ }, which the host lacks"
# Each library at its own path, under usr/ (the image is merged-/usr: its
# /lib is a link to usr/lib); the loader is in the image already.
nlibs=$(guest_copy_libs "$R" "${bins[@]}")

key_hash=$( { cat "$0"; (cd "$R" && find . -type f | LC_ALL=C sort | xargs sha256sum);
              (cd "$R" && find . -type l -printf '%p -> %l\n' | LC_ALL=C sort); } |
  sha256sum | cut -c1-8)
KEY="fusefarm-${VER//[:\/+~]/_}-$key_hash"
OUT="$CACHE_DIR/$KEY"
if [ -x "$OUT/root/usr/local/bin/fusefarm" ]; then
  say "cached: $OUT ($(guest_disk_usage "$OUT"))"
  echo "$OUT"
  exit 0
fi
mkdir -p "$OUT.tmp"
mv "$R" "$OUT.tmp/root"
printf 'fusefarm=%s\nbuild=%s\n' "$VER" "$BUILD" >"$OUT.tmp/versions"
echo "0 0" >"$OUT.tmp/download"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
guest_prune "$CACHE_DIR" fusefarm- "$OUT" root/usr/local/bin/fusefarm
say "built $OUT in $(($(date +%s) - t0))s: fusefarm $VER, fusermount3 and $nlibs libraries ($(guest_disk_usage "$OUT"))"
echo "$OUT"
