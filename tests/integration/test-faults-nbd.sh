#!/usr/bin/env bash
# nbdkit with the fusefarm plugin dies or cannot save (docs/nbd.md,
# "Faults"):
#   - kill -9 in the middle of `nbdcopy` and of `qemu-img convert` of an
#     export: the client fails with an error, no nbdkit is left, and
#     save-overlay= wrote nothing (no file, no torn file);
#   - SIGTERM in the middle of a copy: the client fails, nbdkit exits and
#     saves the overlay whole (a new server with overlay= serves the
#     written bytes);
#   - kill -9 in the middle of that save: the previous overlay file stays
#     as it was (or the new one is whole); what is left at FILE.tmp is
#     refused by overlay= as truncated;
#   - torn or corrupted overlay files: overlay= refuses them, naming the
#     file and what is wrong, and nbdkit does not start;
#   - save-overlay= on a full file system: nbdkit's log says why the save
#     failed, naming the file; the previous file is intact;
#   - ulimit -n below what the exports need: refused before listening;
#   - save-overlay= on a read-only file system: refused before listening.
# "In the middle of a copy" is an event: the server's stats file shows
# the copy's first read answered.  Nothing waits a fixed time; $bound_s
# is only the give-up limit for a hang (times are reported, not judged).
# usage: test-faults-nbd.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-faults-nbd.sh FUSEFARM}
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
ff_require nbdkit nbdcopy qemu-img cmp mount umount timeout
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
ff_env_init # scratch dir and cleanup trap only
s=$FF_SCRATCH
bound_s=60 # give-up limit for a hang, never a measurement
asan=$("$nbdkit" --ff-asan) # the preloaded ASan runtime, "" in other builds
[[ -n $bin ]] # the farm is served by the plugin; fusefarm itself is not needed

cat >"$s/farm.conf" <<'CONF'
seed = 5; device_size = "1G";
vgs = ({ name = "w"; pvs = 2; lvs = ({ fill = 0.5; }); });
CONF
# Reads take 300 ms: a copy of a dense export takes many seconds.
cat >"$s/slow.conf" <<'CONF'
name = "slow-reads";
groups = ({ devices = "all"; read = { dist = "fixed"; value = "300ms"; }; });
CONF

# Every nbdkit this test started, killed at exit whatever happened.
pids=()
# nbdkit_exits PID ERRFILE TEXT WHAT: nbdkit PID (told to stop, or
# refusing to start) exits in bounded time.  In a sanitizer build nbdkit
# (not instrumented) gets ASan by LD_PRELOAD, and ASan initializes late,
# inside libp11-kit's constructor, while newlocale holds glibc's
# __libc_setlocale_lock: the lock's count is left corrupted, and once
# anything has formatted a strerror() message, libp11-kit's destructor
# deadlocks in freelocale at exit, after .cleanup has finished.  Not the
# plugin's doing (the plain build exits at once).  So there: wait for TEXT
# in ERRFILE (the message that ends nbdkit's work), then a stuck exit is
# that deadlock and is killed; everything else is still checked.
nbdkit_exits() {
  local pid=$1 err=$2 text=$3 what=$4
  if [[ -z $asan ]]; then
    ff_wait_exit "$pid" "$bound_s" || ff_die "$what: nbdkit still running after ${bound_s}s"
    return 0
  fi
  ff_wait_until "$bound_s" grep -qF -- "$text" "$err" ||
    ff_die "$what: no '$text' after ${bound_s}s: $(cat "$err")"
  if ! ff_wait_exit "$pid" 5; then
    ff_log "note: ASan-preloaded nbdkit stuck in exit (libp11-kit destructor): killed"
    kill -9 "$pid"
  fi
}

kill_ours() {
  local p
  for p in "${pids[@]}"; do
    kill -9 "$p" 2>/dev/null || true
  done
}
ff_on_cleanup kill_ours

# listening NAME WRAPPER: nbdkit NAME wrote its pidfile (it listens);
# fails the test if it died first.
listening() {
  [[ -s $s/$1.pid ]] && return 0
  ff_alive "$2" || ff_die "nbdkit ($1) did not start: $(cat "$s/$1.err")"
  return 1
}

# serve NAME KEY=VALUE...: start nbdkit in the background on $s/NAME.sock
# and wait until it listens; sets $pid (nbdkit's) and $wrapper (the
# process whose exit status is nbdkit's: a bash waiting for it, so that
# killing nbdkit prints no "Killed" job notice here).  Its stats file,
# $s/NAME.stats, is rewritten every 20 ms.
serve() {
  local name=$1
  shift
  rm -f "$s/$name.pid"
  # shellcheck disable=SC2016  # $0, $@ belong to the inner bash
  bash -c '"$@" </dev/null >/dev/null 2>"$0" & wait $!' "$s/$name.err" \
    "$nbdkit" -f -U "$s/$name.sock" -P "$s/$name.pid" "$plugin" spec="$s/farm.conf" \
    stats="$s/$name.stats" stats-interval=20ms "$@" 2>/dev/null &
  wrapper=$!
  ff_wait_until "$bound_s" listening "$name" "$wrapper" ||
    ff_die "nbdkit ($name): no pidfile after ${bound_s}s"
  pid=$(cat "$s/$name.pid")
  pids+=("$pid")
}

# stat_of NAME DEV KEY: DEV's KEY (reads, bytes_written, ...) in nbdkit
# NAME's latest stats file (written whole: FILE.tmp, then a rename).
stat_of() {
  python3 - "$s/$1.stats" "$2" "$3" <<'PY'
import json, sys
d = [d for d in json.load(open(sys.argv[1]))["devices"] if d["name"] == sys.argv[2]]
print(d[0][sys.argv[3]] if d else 0)
PY
}
stat_at_least() { # NAME DEV KEY N
  (($(stat_of "$1" "$2" "$3") >= $4))
}
uri() { # NAME EXPORT
  printf 'nbd+unix:///%s?socket=%s' "$2" "$s/$1.sock"
}

# client_dies_with NAME CLIENT-PID SIGNAL WHAT: kill nbdkit NAME with SIGNAL
# while CLIENT-PID copies; the client must fail within the bound, nbdkit
# must be gone within the bound too.
client_dies_with() {
  local cpid=$2 sig=$3 what=$4 t0 rc=0
  kill "-$sig" "$pid"
  t0=$EPOCHREALTIME
  ff_wait_exit "$cpid" "$bound_s" || ff_die "$what: the client still runs ${bound_s}s after kill -$sig"
  wait "$cpid" || rc=$?
  ((rc != 0)) || ff_die "$what: the client exited 0 although the server died mid-copy"
  ff_wait_exit "$pid" "$bound_s" || ff_die "$what: nbdkit still runs ${bound_s}s after kill -$sig"
  wait "$wrapper" || true
  ff_log "$what: client exit $rc after $(ff_ms_since "$t0") ms: $(tr '\r' '\n' <"$s/client.err" | grep -v '^ *$' | tail -1)"
}

# written NAME DEV BYTES: wait until NAME's stats hold BYTES written to
# DEV (a snapshot taken after the write), and print DEV's reads in it.
written() {
  ff_wait_until "$bound_s" stat_at_least "$1" "$2" bytes_written "$3" ||
    ff_die "nbdkit ($1): $2 shows $(stat_of "$1" "$2" bytes_written) bytes written, expected $3"
  stat_of "$1" "$2" reads
}

# copying NAME DEV CLIENT-PID READS0: DEV has answered a read since READS0
# while the client still runs; fails the test if the client or nbdkit
# ended first.
copying() {
  stat_at_least "$1" "$2" reads $(($4 + 1)) && return 0
  ff_alive "$3" || ff_die "the client ended before its first read was answered: $(cat "$s/client.err")"
  ff_alive "$pid" || ff_die "nbdkit died by itself: $(cat "$s/$1.err")"
  return 1
}

# mid_copy NAME DEV CLIENT-PID READS0: wait until the copy is under way:
# nbdkit answered its first read of DEV (300 ms each: more are to come).
mid_copy() {
  ff_wait_until "$bound_s" copying "$@" ||
    ff_die "nbdkit ($1): no read of $2 answered in ${bound_s}s"
}

# ---- kill -9 in the middle of nbdcopy and of qemu-img convert -------------------
head -c 64M /dev/urandom >"$s/data"
serve k1 profile="$s/slow.conf" save-overlay="$s/k1.ovl"
nbdcopy "$s/data" "$(uri k1 pv0001)" || ff_die "writing 64 MiB to pv0001 failed: $(cat "$s/k1.err")"
nbdcopy --no-extents "$(uri k1 pv0000)" "$s/copy.img" 2>"$s/client.err" &
cpid=$!
mid_copy k1 pv0000 "$cpid" 0
client_dies_with k1 "$cpid" KILL "kill -9 mid-nbdcopy"
grep -qiE "failed|error" "$s/client.err" || ff_die "nbdcopy printed no error: $(cat "$s/client.err")"
[[ ! -e $s/k1.ovl && ! -e $s/k1.ovl.tmp ]] || ff_die "kill -9 left an overlay file: $(ls "$s"/k1.ovl*)"

serve k2 profile="$s/slow.conf"
nbdcopy "$s/data" "$(uri k2 pv0001)" || ff_die "writing 64 MiB to pv0001 failed: $(cat "$s/k2.err")"
# One request at a time: 32 reads of 2 MiB at 300 ms each.
reads0=$(written k2 pv0001 $((64 << 20)))
qemu-img convert -m 1 -f raw -O raw "$(uri k2 pv0001)" "$s/convert.img" 2>"$s/client.err" &
cpid=$!
mid_copy k2 pv0001 "$cpid" "$reads0"
client_dies_with k2 "$cpid" KILL "kill -9 mid-qemu-img-convert"
grep -qiE "error|failed" "$s/client.err" || ff_die "qemu-img printed no error: $(cat "$s/client.err")"

# ---- SIGTERM in the middle of a copy: the overlay saved whole --------------------
serve t1 profile="$s/slow.conf" save-overlay="$s/t1.ovl"
nbdcopy "$s/data" "$(uri t1 pv0001)" || ff_die "writing 64 MiB to pv0001 failed: $(cat "$s/t1.err")"
reads0=$(written t1 pv0001 $((64 << 20)))
qemu-img convert -m 1 -f raw -O raw "$(uri t1 pv0001)" "$s/convert.img" 2>"$s/client.err" &
cpid=$!
mid_copy t1 pv0001 "$cpid" "$reads0"
client_dies_with t1 "$cpid" TERM "SIGTERM mid-qemu-img-convert"
[[ -s $s/t1.ovl && ! -e $s/t1.ovl.tmp ]] || ff_die "SIGTERM: no overlay saved: $(cat "$s/t1.err")"
serve r1 overlay="$s/t1.ovl"
nbdcopy "$(uri r1 pv0001)" "$s/pv0001.copy" || ff_die "serving the saved overlay failed: $(cat "$s/r1.err")"
cmp -n $((64 << 20)) "$s/pv0001.copy" "$s/data" || ff_die "the overlay saved at SIGTERM lacks the written bytes"
kill -TERM "$pid"
ff_wait_exit "$pid" "$bound_s" || ff_die "nbdkit did not exit on SIGTERM"
ff_log "SIGTERM mid-copy: overlay saved whole ($(stat -c %s "$s/t1.ovl") bytes), served again"

# ---- kill -9 in the middle of the save ---------------------------------------------
# An old overlay (4 KiB written), then a server that loads it, takes
# 192 MiB more and is killed while saving over it.
head -c 4K /dev/urandom >"$s/small"
serve o1 save-overlay="$s/torn.ovl"
nbdcopy "$s/small" "$(uri o1 pv0000)" || ff_die "small write failed"
kill -TERM "$pid"
ff_wait_exit "$pid" "$bound_s" || ff_die "nbdkit did not exit on SIGTERM"
cp "$s/torn.ovl" "$s/old.ovl"
head -c 192M /dev/urandom >"$s/big"
serve o2 overlay="$s/torn.ovl" save-overlay="$s/torn.ovl"
nbdcopy "$s/big" "$(uri o2 pv0001)" || ff_die "big write failed"
# saving: 1 MiB of the new file is written, wherever the save writes it
# (or nbdkit is gone: the save ended before we saw it).
saving() {
  (($(stat -c %s "$s/torn.ovl.tmp" 2>/dev/null || echo 0) > (1 << 20))) ||
    (($(stat -c %s "$s/torn.ovl" 2>/dev/null || echo 0) > (1 << 20))) ||
    ! ff_alive "$pid"
}
kill -TERM "$pid"
ff_wait_until "$bound_s" saving || ff_die "no save under way ${bound_s}s after SIGTERM"
kill -9 "$pid" 2>/dev/null || true
ff_wait_exit "$pid" "$bound_s" || ff_die "nbdkit survived kill -9"
wait "$wrapper" || true
if cmp -s "$s/torn.ovl" "$s/old.ovl"; then
  ff_log "kill -9 mid-save: the previous overlay file is intact ($(stat -c %s "$s/torn.ovl") bytes)"
else # the save had finished: then it must be whole
  "$nbdkit" -U - "$plugin" spec="$s/farm.conf" overlay="$s/torn.ovl" --run true 2>"$s/r2.err" ||
    ff_die "kill -9 mid-save left a torn overlay file: $(cat "$s/r2.err")"
  serve r2 overlay="$s/torn.ovl"
  nbdcopy "$(uri r2 pv0001)" "$s/pv0001.copy" ||
    ff_die "the overlay file after kill -9 mid-save does not load: $(cat "$s/r2.err")"
  cmp -n $((192 << 20)) "$s/pv0001.copy" "$s/big" || ff_die "the overlay file after kill -9 mid-save is not whole"
  kill -TERM "$pid"
  ff_wait_exit "$pid" "$bound_s" || true
  ff_log "kill -9 mid-save: the save had finished; the new file is whole"
fi
if [[ -e $s/torn.ovl.tmp ]]; then
  rc=0
  "$nbdkit" -U - "$plugin" spec="$s/farm.conf" overlay="$s/torn.ovl.tmp" --run true 2>"$s/tmp.err" || rc=$?
  ((rc != 0)) || ff_die "the torn $s/torn.ovl.tmp was accepted as an overlay"
  grep -qE "overlay=$s/torn.ovl.tmp: overlay $s/torn.ovl.tmp is (truncated|corrupt)" "$s/tmp.err" ||
    ff_die "torn .tmp: unclear message: $(cat "$s/tmp.err")"
  ff_log "kill -9 mid-save left $(stat -c %s "$s/torn.ovl.tmp") bytes in torn.ovl.tmp: $(grep -o 'overlay [^:]* is .*' "$s/tmp.err" | head -1)"
fi

# ---- torn and corrupted files refused by overlay= -----------------------------------
size=$(stat -c %s "$s/t1.ovl")
head -c $((size / 2)) "$s/t1.ovl" >"$s/half.ovl"
head -c $((size - 1)) "$s/t1.ovl" >"$s/short.ovl"
cp "$s/t1.ovl" "$s/flipped.ovl"
# every bit of one byte inverted (writing a fixed value left the file as
# it was whenever the byte already held it: 1 run in 256)
old=$(od -An -tu1 -j $((size / 3)) -N1 "$s/t1.ovl" | tr -d ' ')
printf "\\$(printf '%03o' $((old ^ 255)))" |
  dd of="$s/flipped.ovl" bs=1 seek=$((size / 3)) conv=notrunc status=none
cmp -s "$s/t1.ovl" "$s/flipped.ovl" && ff_die "flipped.ovl: the flip changed nothing"
for t in half short flipped; do
  rc=0
  timeout "$bound_s" "$nbdkit" -U - "$plugin" spec="$s/farm.conf" overlay="$s/$t.ovl" --run true \
    2>"$s/torn.err" || rc=$?
  ((rc != 0 && rc != 124)) || ff_die "$t.ovl: nbdkit exit $rc (accepted, or hung)"
  grep -qE "overlay=$s/$t.ovl: overlay $s/$t.ovl is (truncated|corrupt)" "$s/torn.err" ||
    ff_die "$t.ovl: unclear message: $(cat "$s/torn.err")"
  ff_log "torn $t.ovl: $(grep -o 'overlay [^ ]* is .*' "$s/torn.err" | head -1)"
done

# ---- save-overlay= on a full file system ---------------------------------------------
mkdir -p "$s/small-fs"
mount -t tmpfs -o size=64k,mode=0755 ff-faults-nbd "$s/small-fs"
ff_on_cleanup "umount '$s/small-fs' 2>/dev/null || umount -l '$s/small-fs'"
cp "$s/old.ovl" "$s/small-fs/full.ovl"
serve f1 save-overlay="$s/small-fs/full.ovl"
nbdcopy "$s/small" "$(uri f1 pv0000)" || ff_die "small write failed"
head -c 1M "$s/big" | nbdcopy - "$(uri f1 pv0001)" || ff_die "1 MiB write failed"
kill -TERM "$pid"
nbdkit_exits "$pid" "$s/f1.err" "save-overlay=$s/small-fs/full.ovl:" "SIGTERM with a failing save"
rc=0
wait "$wrapper" || rc=$?
grep -qF "save-overlay=$s/small-fs/full.ovl: save overlay $s/small-fs/full.ovl: write $s/small-fs/full.ovl.tmp: No space left on device" \
  "$s/f1.err" || ff_die "no clear message for the failed save: $(cat "$s/f1.err")"
cmp "$s/small-fs/full.ovl" "$s/old.ovl" || ff_die "a failed save changed the previous file"
[[ ! -e $s/small-fs/full.ovl.tmp ]] || ff_die "a failed save left full.ovl.tmp"
ff_log "save on a full fs (nbdkit exit $rc): $(grep 'save-overlay=' "$s/f1.err")"

# ---- ulimit -n too low for the exports ------------------------------------------------
cat >"$s/wide.conf" <<'CONF'
seed = 5; device_size = "16M";
vgs = ({ count = 100; pvs = 2; });
CONF
rc=0
(
  ulimit -n 100
  exec timeout "$bound_s" "$nbdkit" -U - "$plugin" spec="$s/wide.conf" --run true
) 2>"$s/fd.err" || rc=$?
((rc != 0 && rc != 124)) || ff_die "nbdkit with ulimit -n 100 for 200 exports: exit $rc"
grep -q "file descriptor limit too low: 200 exports need 464 .* but ulimit -n is 100" "$s/fd.err" ||
  ff_die "ulimit -n 100: unclear message: $(cat "$s/fd.err")"
ff_log "ulimit -n 100: $(grep -o 'file descriptor limit too low.*' "$s/fd.err")"

for p in "${pids[@]}"; do
  ff_alive "$p" && ff_die "nbdkit $p is still running"
done
# ---- save-overlay= that cannot be written: refused before listening ------------
mkdir -p "$s/ro-dir"
mount -t tmpfs -o ro,size=64k tmpfs "$s/ro-dir"
rc=0
"$nbdkit" -U - "$plugin" spec="$s/farm.conf" save-overlay="$s/ro-dir/x.ovl" \
  --run true 2>"$s/ro.err" &
ro_pid=$!
pids+=("$ro_pid")
nbdkit_exits "$ro_pid" "$s/ro.err" "Read-only file system" "save-overlay= on a read-only fs"
wait "$ro_pid" || rc=$?
umount "$s/ro-dir"
if [[ -z $asan ]]; then
  ((rc != 0)) || ff_die "save-overlay= on a read-only fs: nbdkit exit $rc (want a refusal)"
fi
grep -qF "save-overlay=$s/ro-dir/x.ovl:" "$s/ro.err" && grep -q "Read-only file system" "$s/ro.err" ||
  ff_die "save-overlay= on a read-only fs: no clear error: $(cat "$s/ro.err")"
ff_log "save-overlay= unwritable: $(grep -m1 'save-overlay=' "$s/ro.err")"

echo "PASS: clients fail in bounded time when nbdkit dies; overlays are saved whole or not at all; torn files are refused"
