#!/usr/bin/env bash
# The FUSE daemon or a loop device fails under lvm (docs/fuse.md, "Faults"):
#   1. kill -9 of the daemon in the middle of `pvs` over 200 loops: lvm
#      gets I/O errors and exits; `fusefarm detach` frees every loop and
#      unmounts the dead mount;
#   2. SIGTERM in the middle of `pvs`, after writes, with --save-overlay:
#      the daemon exits, leaves the busy mount dead rather than lazily
#      unmounted, and saves the overlay whole: a new mount with --overlay
#      reads the written bytes;
#   3. `losetup -d` of one of our loops during a scan, and one loop reused
#      by a foreign file: lvm reports the missing PV; `fusefarm attach`
#      names both and attaches them again; `fusefarm detach` ends cleanly,
#      naming the loop it could not find, and never touches the foreign one.
# "In the middle of a scan" is an event (the daemon's stats count the
# scan's reads); every wait is for an event, with $bound_s as the give-up
# limit for a hang; times are reported, never judged.
# usage: test-faults-fuse.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-faults-fuse.sh FUSEFARM}
ff_require python3 fusermount3 losetup timeout dd cmp awk
ff_env_init
s=$FF_SCRATCH

# The give-up limit of every wait below: a hang fails the test instead of
# stalling it.  Never a measurement: generous for a loaded machine.
bound_s=60

cat >"$s/farm.conf" <<'CONF'
seed = 7; device_size = "16M";
vgs = ({ count = 100; name = "fvg%03u"; pvs = 2; lvs = ({ fill = 0.5; }); });
CONF
# 50 ms per read: a scan of the 200 devices takes about 10 s (3.5 s at
# 10 ms), so the faults below land in the middle of it.
for ms in 50 10; do
  printf 'name = "slow-%s";\ngroups = ({ devices = "all"; read = { dist = "fixed"; value = "%sms"; }; });\n' \
    "$ms" "$ms" >"$s/slow$ms.conf"
done

# expect_scan_failed RC ERR OUT WHAT: lvm ended (any status: lvm 2.03.16
# exits 0 from a scan that lost devices) reporting read errors on our loops,
# and listed fewer than the farm's 200 PVs.
expect_scan_failed() {
  local n
  grep -qE "Error reading device /dev/loop[0-9]+|Input/output error" "$2" ||
    ff_die "$4: lvm (exit $1) reported no read error: $(head -5 "$2")"
  n=$(grep -c ' fvg[0-9]' "$3" || true)
  ((n < 200)) || ff_die "$4: pvs listed all $n PVs: the fault came after the scan"
  ff_log "$4: pvs exit $1, $n of 200 PVs listed, $(grep -c 'Error reading device' "$2" || true) read errors reported"
}

# ---- 1. kill -9 in the middle of a scan -----------------------------------------
ff_fuse_mount "$bin" "$s/farm.conf" "$s/mnt" --profile "$s/slow50.conf"
ff_fuse_attach
cp "$FF_STATE/loops" "$s/loops.1"
(($(wc -l <"$s/loops.1") == 200)) || ff_die "attach recorded $(wc -l <"$s/loops.1") loops"
ff_lvm pvs --noheadings -o pv_name,vg_name >"$s/pvs1.out" 2>"$s/pvs1.err" &
lvm_pid=$!
ff_wait_reads 40 "$bound_s"
kill -9 "$FF_DAEMON_PID"
t0=$EPOCHREALTIME
rc=0
ff_wait_exit "$lvm_pid" "$bound_s" || ff_die "pvs still running ${bound_s}s after kill -9"
wait "$lvm_pid" || rc=$?
ms=$(ff_ms_since "$t0")
expect_scan_failed "$rc" "$s/pvs1.err" "$s/pvs1.out" "kill -9 mid-scan"
ff_log "kill -9 mid-scan: pvs ended $ms ms after the kill"
ff_wait_exit "$FF_DAEMON_PID" "$bound_s" || ff_die "the killed daemon is still there"
ff_is_mounted "$FF_MNT" || ff_die "after kill -9 the mount is gone already (expected a dead mount)"
if stat -f "$FF_MNT" >/dev/null 2>"$s/stat.err"; then
  ff_die "the mount point of a killed daemon still answers"
fi
grep -q "Transport endpoint is not connected" "$s/stat.err" || ff_die "dead mount: $(cat "$s/stat.err")"

t0=$EPOCHREALTIME
timeout "$bound_s" "$bin" detach "$FF_MNT" --state "$FF_STATE" 2>"$s/detach1.err" ||
  ff_die "detach after kill -9 failed: $(cat "$s/detach1.err")"
ms=$(ff_ms_since "$t0")
grep -q "^detached 200 loop devices" "$s/detach1.err" || ff_die "detach: $(cat "$s/detach1.err")"
grep -qF "unmounted $FF_MNT (the fusefarm daemon serving it was dead)" "$s/detach1.err" ||
  ff_die "detach did not say it unmounted the dead mount: $(cat "$s/detach1.err")"
ff_is_mounted "$FF_MNT" && ff_die "detach left the dead mount at $FF_MNT"
left=$(ff_loops_still_ours "$s/loops.1")
[[ -z $left ]] || ff_die "loops still carry farm files after detach: $(head -3 <<<"$left")"
[[ ! -e $FF_STATE ]] || ff_die "detach left its state dir"
ff_log "kill -9: detach freed 200 loops and unmounted in $ms ms"

# ---- 2. SIGTERM in the middle of a scan, after writes, --save-overlay -----------
ff_fuse_mount "$bin" "$s/farm.conf" "$s/mnt" --profile "$s/slow50.conf" \
  --save-overlay "$s/exit.ovl"
ff_fuse_attach
cp "$FF_STATE/loops" "$s/loops.2"
head -c 1M /dev/urandom >"$s/data1"
head -c 8K /dev/urandom >"$s/data2"
dd if="$s/data1" of="$(ff_loop_of pv0005)" bs=1M seek=2 oflag=direct conv=fsync status=none ||
  ff_die "write through the loop of pv0005 failed"
dd if="$s/data2" of="$FF_MNT/pv0007" bs=8K seek=512 conv=notrunc,fsync status=none ||
  ff_die "write to $FF_MNT/pv0007 failed"
reads0=$(ff_fuse_reads)
ff_lvm pvs --noheadings -o pv_name,vg_name >"$s/pvs2.out" 2>"$s/pvs2.err" &
lvm_pid=$!
ff_wait_reads $((reads0 + 40)) "$bound_s"
kill -TERM "$FF_DAEMON_PID"
t0=$EPOCHREALTIME
rc=0
ff_wait_exit "$lvm_pid" "$bound_s" || ff_die "pvs still running ${bound_s}s after SIGTERM"
wait "$lvm_pid" || rc=$?
expect_scan_failed "$rc" "$s/pvs2.err" "$s/pvs2.out" "SIGTERM mid-scan"
ff_wait_exit "$FF_DAEMON_PID" "$bound_s" || ff_die "the daemon is still there ${bound_s}s after SIGTERM"
ff_log "SIGTERM mid-scan: the daemon exited within $(ff_ms_since "$t0") ms"
grep -q "is busy (loop devices or open files hold it): left mounted without a daemon" "$s/daemon.log" ||
  ff_die "the daemon did not say it left the busy mount: $(cat "$s/daemon.log")"
grep -q "NOT saved" "$s/daemon.log" && ff_die "the overlay was not saved: $(cat "$s/daemon.log")"
[[ -s $s/exit.ovl && ! -e $s/exit.ovl.tmp ]] || ff_die "no overlay saved at exit (or a .tmp left)"
# Not lazily unmounted: the loops still show the full path, so detach
# can verify each one (a lazy unmount would leave "/pv0005").
[[ $(cat "/sys/block/$(basename "$(ff_loop_of pv0005)")/loop/backing_file") == "$(realpath -m "$FF_MNT")/pv0005" ]] ||
  ff_die "pv0005's loop shows $(cat "/sys/block/$(basename "$(ff_loop_of pv0005)")/loop/backing_file")"
ff_is_mounted "$FF_MNT" || ff_die "the busy mount was unmounted (lazily?) at SIGTERM"
timeout "$bound_s" "$bin" detach "$FF_MNT" --state "$FF_STATE" 2>"$s/detach2.err" ||
  ff_die "detach after SIGTERM failed: $(cat "$s/detach2.err")"
ff_is_mounted "$FF_MNT" && ff_die "detach left the dead mount after SIGTERM: $(cat "$s/detach2.err")"
left=$(ff_loops_still_ours "$s/loops.2")
[[ -z $left ]] || ff_die "loops left after SIGTERM + detach: $(head -3 <<<"$left")"

# Saved whole: a new mount from the file reads what was written.
ff_fuse_mount "$bin" "$s/farm.conf" "$s/mnt" --overlay "$s/exit.ovl"
cmp <(dd if="$FF_MNT/pv0005" bs=1M skip=2 count=1 status=none) "$s/data1" ||
  ff_die "pv0005 lost the write made through its loop before SIGTERM"
cmp <(dd if="$FF_MNT/pv0007" bs=8K skip=512 count=1 status=none) "$s/data2" ||
  ff_die "pv0007 lost the write made through the mount before SIGTERM"
ff_log "SIGTERM: overlay saved whole ($(stat -c %s "$s/exit.ovl") bytes), both writes read back"

# ---- 3. a loop detached (and one reused) under lvm -------------------------------
"$bin" profile "$FF_MNT" "$s/slow10.conf" >/dev/null
ff_fuse_attach
cp "$FF_STATE/loops" "$s/loops.3"
gone=$(ff_loop_of pv0003)
reused=$(ff_loop_of pv0010)
losetup -d "$gone"
truncate -s 16M "$s/foreign.img"
losetup -d "$reused"
ours_foreign=0
if losetup --direct-io=off "$reused" "$s/foreign.img" 2>/dev/null; then
  ours_foreign=1
  foreign_back=$(cat "/sys/block/${reused#/dev/}/loop/backing_file")
  ff_loop_adopt "$reused" "$foreign_back" "$FF_STATE/created"
else
  ff_log "$reused was taken by another process before the foreign file"
fi
rc=0
timeout "$bound_s" "$bin" detach "$FF_MNT" --state "$FF_STATE" 2>"$s/detach3.err" || rc=$?
((rc == 0)) || ff_die "detach with a lost and a reused loop: exit $rc: $(cat "$s/detach3.err")"
# Each of the two freed loops is either still free ("no longer
# attached") or carries someone's file ("now carries", left alone): the
# foreign file, or another farm's that took the number first.
for pair in "pv0003 $gone" "pv0010 $reused"; do
  grep -qE "warning: ${pair% *}: ${pair#* } (was no longer attached \(detached by someone else\): nothing to do|now carries )" "$s/detach3.err" ||
    ff_die "detach did not name ${pair#* } (${pair% *}): $(cat "$s/detach3.err")"
done
if ((ours_foreign)); then
  grep -qF "warning: pv0010: $reused now carries $foreign_back" "$s/detach3.err" ||
    ff_die "detach did not name the reused loop: $(cat "$s/detach3.err")"
  [[ $(cat "/sys/block/${reused#/dev/}/loop/backing_file") == "$foreign_back" ]] ||
    ff_die "detach touched the foreign loop $reused"
fi
grep -q "^detached 198 loop devices in " "$s/detach3.err" ||
  ff_die "detach summary: $(cat "$s/detach3.err")"
already=$(sed -n 's/.*; \([0-9]*\) w[a-z]* detached already.*/\1/p' "$s/detach3.err")
others=$(sed -n 's/.*; \([0-9]*\) reused by someone else w[a-z]* left alone.*/\1/p' "$s/detach3.err")
((${already:-0} + ${others:-0} == 2 && ${others:-0} >= ours_foreign)) ||
  ff_die "detach summary: the two freed loops are not counted as detached already or left alone: $(cat "$s/detach3.err")"
left=$(ff_loops_still_ours "$s/loops.3")
[[ -z $left ]] || ff_die "loops left after detach: $(head -3 <<<"$left")"
ff_is_mounted "$FF_MNT" || ff_die "detach unmounted a live mount"
head -c 4096 "$FF_MNT/pv0000" >/dev/null || ff_die "the daemon stopped serving after detach"
ff_log "losetup -d: detach named $gone, left the foreign $reused alone, freed 198"
echo "PASS: kill -9 and SIGTERM mid-scan end bounded and clean, the overlay saved whole; a lost loop is named, never a foreign one detached"
