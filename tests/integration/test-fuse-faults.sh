#!/usr/bin/env bash
# When things go wrong:
#   - kill -9 of the daemon: reads through its loop devices fail with EIO
#     within a second, nothing hangs, `fusefarm detach` and
#     `fusermount3 -u` clean up;
#   - a bad profile, a missing mount point, a mount point that is a file:
#     a clear message, exit status 2, nothing mounted or attached;
#   - injected faults (an EIO range, a vanished device) reach the reader
#     as EIO and are counted as injected in the stats.
# usage: test-fuse-faults.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-fuse-faults.sh FUSEFARM}
spec=$here/../../configs/smoke.conf
ff_require python3 fusermount3 mountpoint timeout dd
ff_env_init
s=$FF_SCRATCH

# ---- refused before mounting -------------------------------------------
expect_refused() { # WHAT MNT EXPECTED-TEXT -- ARGS...
  local what=$1 mnt=$2 want=$3 rc=0
  shift 4
  "$bin" mount "$@" 2>"$s/err" || rc=$?
  ((rc == 2)) || ff_die "$what: exit status $rc, expected 2"
  grep -qF -- "$want" "$s/err" || ff_die "$what: message lacks '$want': $(cat "$s/err")"
  if [[ -d $mnt ]] && mountpoint -q "$mnt"; then
    ff_die "$what: $mnt was left mounted"
  fi
  ff_log "$what: $(head -1 "$s/err")"
}
mkdir -p "$s/mnt"
printf 'groups = ({ devices = "all";\n  read = { dist = "lognormal"; median = "5"; }; });\n' \
  >"$s/bad.conf"
expect_refused "bad profile" "$s/mnt" "bad.conf:2: groups.[0].read.median" -- \
  "$spec" "$s/mnt" --profile "$s/bad.conf"
expect_refused "missing mount point" "$s/nowhere" "mount point $s/nowhere: No such file or directory" -- \
  "$spec" "$s/nowhere"
: >"$s/file"
expect_refused "mount point is a file" "$s/file" "is not a directory" -- "$spec" "$s/file"
expect_refused "a profile as the spec" "$s/mnt" "bad.conf: this is a profile, not a farm spec" -- "$s/bad.conf" "$s/mnt"
printf 'seed = 1;\ncolour = "red";\n' >"$s/badspec.conf"
expect_refused "bad spec" "$s/mnt" "badspec.conf:2: colour: unknown key" -- "$s/badspec.conf" "$s/mnt"
pgrep -f "fusefarm mount .*$s" >/dev/null && ff_die "a refused mount left a daemon running"
ff_require losetup
losetup -l -n -O BACK-FILE | grep -qF "$s/" && ff_die "a refused mount left loops attached"

# ---- injected faults -------------------------------------------------------
cat >"$s/faults.conf" <<'CONF'
name = "test-faults";
groups = ({ devices = "pv0000"; faults = { eio_ranges = ( ("1M", "64K") ); }; },
          { devices = "pv0001"; faults = { vanish_at = "1s"; }; });
CONF
ff_fuse_mount "$bin" "$spec" "$s/mnt" --profile "$s/faults.conf"
ff_fuse_attach
a=$(ff_loop_of pv0000)
b=$(ff_loop_of pv0001)
dd if="$a" of=/dev/null bs=64k count=1 iflag=direct 2>/dev/null ||
  ff_die "a read outside the EIO range failed"
if dd if="$a" of=/dev/null bs=64k skip=16 count=1 iflag=direct 2>"$s/dd.err"; then
  ff_die "a read inside the EIO range succeeded"
fi
grep -q "Input/output error" "$s/dd.err" || ff_die "not EIO: $(cat "$s/dd.err")"
dd if="$b" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null ||
  ff_die "pv0001 failed before it vanished"
sleep 1.2
if dd if="$b" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; then
  ff_die "pv0001 still reads after vanish_at"
fi
python3 - "$FF_MNT/.fusefarm/stats.json" <<'PY' || ff_die "injected errors not counted"
import json, sys
st = {d["name"]: d for d in json.load(open(sys.argv[1]))["devices"]}
a, b = st["pv0000"]["errors_injected"], st["pv0001"]["errors_injected"]
print(f"injected errors: pv0000 {a}, pv0001 {b}")
sys.exit(0 if a >= 1 and b >= 1 else 1)
PY

# ---- kill -9 -----------------------------------------------------------------
kill -9 "$FF_DAEMON_PID"
t0=$(date +%s%N)
if timeout 5 dd if="$a" of=/dev/null bs=4k count=1 iflag=direct 2>"$s/dd.err"; then
  ff_die "a read after kill -9 succeeded"
fi
ms=$((($(date +%s%N) - t0) / 1000000))
grep -q "Input/output error" "$s/dd.err" || ff_die "after kill -9: $(cat "$s/dd.err")"
((ms < 1000)) || ff_die "the read after kill -9 took $ms ms to fail"
ff_log "after kill -9 a read failed with EIO in $ms ms"
"$bin" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "detach after kill -9 failed"
losetup -l -n -O BACK-FILE | grep -qF "$FF_MNT/" && ff_die "loops left after detach"
ff_is_mounted "$FF_MNT" && ff_die "detach after kill -9 left the dead mount"
echo "PASS: refused inputs leave nothing behind; faults reach readers; kill -9 is clean"
