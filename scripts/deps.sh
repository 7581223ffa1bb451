#!/usr/bin/env bash
# Install what building and testing fusefarm needs, from Debian's archive.
# Idempotent: does nothing when every package is already installed.
# Run as root (CI and the developer machines are root).
set -euo pipefail

pkgs=(
  # build
  cmake make gcc pkg-config libconfig-dev libjansson-dev libcmocka-dev
  libfuse3-dev fuse3 libdevmapper-dev libcairo2-dev
  # the farm's packed metadata texts (generators/ff-farm-pack.c)
  liblz4-dev
  # bench/fuse-uring (FUSE over io_uring, measured against /dev/fuse)
  liburing-dev
  # bench/nbd-burst (the nbd queue rows: reads sent at once from C)
  libnbd-dev
  # integration tests: real lvm2, loop devices, signature checkers
  lvm2 util-linux mount python3 gdisk xxd bc librsvg2-bin valgrind strace
  # thin_check and thin_dump judge the generated thin-pool metadata
  # (test-byte-identical; test-thinmeta uses them when present)
  thin-provisioning-tools
  # io and fs workloads (type = "io", "fs": docs/scenario-format.md),
  # test-io and test-fs: fio, and mkfs.xfs (mkfs.ext4 is e2fsprogs)
  fio xfsprogs
  # perf: run --flamegraph samples the workloads with `perf record`
  # (runner/ff-perf.c; test-flame; docs/run-json.md "flame")
  linux-perf
  # the guest tier (guest/, docs/guest.md)
  qemu-system-x86 cpio kmod busybox-static mmdebstrap e2fsprogs
  # the short fuzz run (tests/fuzz/run.sh): clang, libFuzzer, symbolizer
  clang libclang-rt-dev llvm
  # nbdkit plugin: build, man page, real NBD clients
  nbdkit nbdkit-plugin-dev perl libnbd-bin python3-libnbd qemu-utils
  # udevadm: test-udev-fence runs lvm2's and fusefarm's udev rules on a
  # farm loop with `udevadm test` in a private namespace (no udevd is
  # started: Debian's udev does not start in a container or chroot)
  udev
  # the installed tree (tests/integration/test-install.sh renders the man pages)
  man-db
  # fusefarm lvm-build (docs/lvm-builds.md): lvm2 from its git tree; the
  # configure script is in the tree, so no autoconf
  git libaio-dev libblkid-dev xz-utils
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
    missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if ((EUID != 0)); then
  echo "scripts/deps.sh: missing packages: ${missing[*]}; run me as root" >&2
  exit 1
fi
echo "scripts/deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
