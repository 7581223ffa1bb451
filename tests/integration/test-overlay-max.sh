#!/usr/bin/env bash
# The overlay's memory can be capped, and the farm served over NBD only
# to who holds the key:
# - `fusefarm mount --overlay-max 1M` and the plugin's overlay-max=1M:
#   writes up to 1 MiB of new blocks land, the next write to a new block
#   fails with ENOSPC ("No space left on device"), counted in stats.json's
#   overlay.full, and rewriting a held block still works;
# - nbdkit with --tls=require --tls-psk (the docs' TCP example, here on a
#   Unix socket of the test's own): a client without the key is refused,
#   the PSK client reads pv0000's LVM label.
# usage: test-overlay-max.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-overlay-max.sh FUSEFARM}
spec=$here/../../configs/smoke.conf
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
py=/usr/bin/python3 # Debian's: python3-libnbd is not on other pythons' path
ff_require nbdkit nbdinfo fusermount3 dd
"$py" -c 'import nbd' 2>/dev/null ||
  ff_die "$py cannot import nbd: install python3-libnbd (scripts/deps.sh)"
ff_env_init
s=$FF_SCRATCH
head -c $((1 << 20)) /dev/urandom >"$s/1m"
head -c 4096 /dev/urandom >"$s/4k"

# ---- FUSE ------------------------------------------------------------------
rc=0
"$bin" mount "$spec" "$s/bad" --overlay-max 0 2>"$s/bad.err" || rc=$?
((rc == 2)) && grep -q "overlay-max '0'" "$s/bad.err" ||
  ff_die "--overlay-max 0: exit $rc, $(cat "$s/bad.err")"
ff_fuse_mount "$bin" "$spec" "$s/mnt" --overlay-max 1M
dd if="$s/1m" of="$FF_MNT/pv0001" bs=1M seek=8 oflag=direct conv=notrunc status=none ||
  ff_die "1 MiB of writes under a 1 MiB cap failed"
if dd if="$s/4k" of="$FF_MNT/pv0001" bs=4k seek=$((16 << 8)) oflag=direct conv=notrunc \
  status=none 2>"$s/dd.err"; then
  ff_die "a write past overlay-max succeeded"
fi
grep -q "No space left on device" "$s/dd.err" || ff_die "past the cap: $(cat "$s/dd.err")"
dd if="$s/4k" of="$FF_MNT/pv0001" bs=4k seek=$((8 << 8)) oflag=direct conv=notrunc status=none ||
  ff_die "rewriting a held block failed under a full cap"
cmp <(dd if="$FF_MNT/pv0001" bs=4k skip=$((8 << 8)) count=1 status=none) "$s/4k" ||
  ff_die "the rewritten block does not read back"
"$py" - "$FF_MNT/.fusefarm/stats.json" <<'PY' || ff_die "stats.json's overlay"
import json, sys
o = json.load(open(sys.argv[1]))["overlay"]
print(f"FUSE: overlay {o}")
assert o == {"data_bytes": 1 << 20, "max_bytes": 1 << 20, "full": 1}, o
PY

# In a sanitizer build nbdkit, with the ASan plugin loaded, hangs at exit
# here after a client session (in libp11-kit's destructor, waiting for
# glibc's setlocale lock: seen in the ASan pass of 2026-12-04, not yet
# understood); the NBD and TLS parts run in the plain build's pass.
if grep -qx 'FF_SANITIZE:BOOL=ON' "$FF_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  echo "note: sanitizer build: the NBD and TLS parts run in the plain build only"
  echo "ok"
  exit 0
fi

# ---- NBD -----------------------------------------------------------------
cat >"$s/cap.py" <<'PY'
import errno, sys
import nbd
h = nbd.NBD()
h.set_export_name("pv0001")
h.connect_unix(sys.argv[1])
h.pwrite(open(sys.argv[2], "rb").read(), 8 << 20)
try:
    h.pwrite(b"\x5a" * 4096, 16 << 20)
    sys.exit("a write past overlay-max succeeded")
except nbd.Error as e:
    if e.errno not in (errno.ENOSPC, "ENOSPC"):
        sys.exit(f"past the cap: {e} (errno {e.errno}), expected ENOSPC")
h.pwrite(b"\xa5" * 4096, 8 << 20)
assert h.pread(4096, 8 << 20) == b"\xa5" * 4096
h.shutdown()
print("NBD: the write past the cap failed with ENOSPC")
PY
"$nbdkit" -U - "$plugin" spec="$spec" overlay-max=1M stats="$s/stats.json" \
  --run "$py $s/cap.py \"\$unixsocket\" $s/1m" >"$s/nbd.out" 2>"$s/nbdkit.err" ||
  ff_die "overlay-max over NBD: $(cat "$s/nbd.out" "$s/nbdkit.err")"
cat "$s/nbd.out"
"$py" - "$s/stats.json" <<'PY' || ff_die "the plugin's stats file: overlay"
import json, sys
o = json.load(open(sys.argv[1]))["overlay"]
assert o == {"data_bytes": 1 << 20, "max_bytes": 1 << 20, "full": 1}, o
PY
rc=0
"$nbdkit" -U - "$plugin" spec="$spec" overlay-max=lots --run true 2>"$s/bad.err" || rc=$?
((rc != 0)) && grep -q "overlay-max=lots: expected a size" "$s/bad.err" ||
  ff_die "overlay-max=lots: exit $rc, $(cat "$s/bad.err")"

# ---- TLS with a pre-shared key ------------------------------------------
# The key file as nbdkit --tls-psk reads it: USERNAME:HEXKEY per line.
printf 'alice:%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$s/keys.psk"
chmod 600 "$s/keys.psk"
cat >"$s/tls.sh" <<'SH'
set -u
sock=$1 keys=$2
if nbdinfo --size "nbd+unix:///pv0000?socket=$sock" >/dev/null 2>&1; then
  echo "a client without TLS was served"; exit 1
fi
if nbdinfo --size "nbds+unix://mallory@/pv0000?socket=$sock&tls-psk-file=$keys" >/dev/null 2>&1; then
  echo "a client with an unknown user was served"; exit 1
fi
nbdcopy "nbds+unix://alice@/pv0000?socket=$sock&tls-psk-file=$keys" - | head -c 1024 | tail -c 512 | grep -q "LABELONE" ||
  { echo "the PSK client did not read pv0000's label"; exit 1; }
echo "TLS: plain and unknown clients refused, alice read pv0000's label"
SH
"$nbdkit" -U - --tls=require --tls-psk="$s/keys.psk" "$plugin" spec="$spec" \
  --run "bash $s/tls.sh \"\$unixsocket\" $s/keys.psk" >"$s/tls.out" 2>"$s/tls.err" ||
  ff_die "TLS: $(cat "$s/tls.out" "$s/tls.err")"
cat "$s/tls.out"
echo "ok"
