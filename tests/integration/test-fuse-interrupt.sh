#!/usr/bin/env bash
# A killed reader is answered at once, not after its delay:
#   - with a 600 s read latency on pv0001, two O_DIRECT reads of it are
#     in flight (the daemon's stats say so: the trigger is that event,
#     never a clock); kill -9 of one reader ends it at once (the daemon
#     answers its request EINTR on the kernel's FUSE_INTERRUPT), while
#     the other still waits; then the second is killed too;
#   - the stats count both as interrupted (and as failed reads), nothing
#     is in flight and the scheduler holds nothing (info.json
#     delayed_pending 0): the cancelled requests left the timer heap;
#   - the daemon still serves: a read of pv0000 (no latency) and the
#     control files; it unmounts and exits cleanly.
# Before interrupts were handled a killed reader stayed in D state for
# the whole 600 s: the 60 s give-up limits below are far below that and
# far above the moment it takes on any machine.
# usage: test-fuse-interrupt.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-fuse-interrupt.sh FUSEFARM}
spec=$here/../../configs/smoke.conf
ff_require python3 fusermount3 dd
ff_env_init
s=$FF_SCRATCH

cat >"$s/slow.conf" <<'CONF'
name = "test-interrupt";
groups = ({ devices = "pv0001"; read = { dist = "fixed"; value = "600s"; }; });
CONF

# A reader still blocked at exit (a daemon that ignores interrupts) would
# hold the mount busy for 600 s: abort this test's own FUSE connection
# first, which ends the readers and lets ff_fuse_cleanup unmount.  Runs
# before ff_fuse_mount's hook (hooks run in order).  Without fusectl at
# /sys/fs/fuse/connections, a mount of it in the scratch dir, for the
# moment of the abort.
readers=()
conn=
reader_cleanup() {
  local p alive=0 ctl=/sys/fs/fuse/connections
  for p in "${readers[@]}"; do
    ff_alive "$p" && alive=1
  done
  if ((alive)) && [[ -n $conn ]]; then
    if [[ ! -e $ctl/$conn/abort ]]; then
      mkdir -p "$s/fusectl"
      mount -t fusectl fusectl "$s/fusectl" && ctl=$s/fusectl
    fi
    ff_log "cleanup: a reader is still blocked: aborting FUSE connection $conn"
    echo 1 >"$ctl/$conn/abort"
    [[ $ctl == "$s/fusectl" ]] && umount "$s/fusectl"
  fi
  for p in "${readers[@]}"; do
    kill -9 "$p" 2>/dev/null
    ff_wait_exit "$p" 30 && wait "$p" 2>/dev/null
  done
}
ff_on_cleanup reader_cleanup

ff_fuse_mount "$bin" "$spec" "$s/mnt" --profile "$s/slow.conf"
# The connection's number in /sys/fs/fuse/connections is the mount's
# device minor (an anonymous device, major 0).
conn=$(awk -v d="$(realpath "$FF_MNT")" '$5 == d { split($3, m, ":"); print m[2] }' \
  /proc/self/mountinfo)

# st_num KEY [DEV]: a number from stats.json (top level, or device DEV's).
st_num() {
  python3 - "$FF_MNT/.fusefarm/stats.json" "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
key = sys.argv[2]
if len(sys.argv) > 3:
    d = [d for d in j["devices"] if d["name"] == sys.argv[3]]
    print(d[0][key] if d else 0)
else:
    print(j[key])
PY
}
stat_is() { # KEY WANT [DEV]
  [[ $(st_num "$1" "${@:3}") == "$2" ]]
}

reader() {
  dd if="$FF_MNT/pv0001" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null &
  readers+=($!)
}

# 1. Two delayed reads in flight.
reader
reader
a=${readers[0]} b=${readers[1]}
ff_wait_until 60 stat_is inflight 2 ||
  ff_die "the daemon has $(st_num inflight) requests in flight after 60 s, expected the 2 reads"
ff_alive "$a" && ff_alive "$b" || ff_die "a reader of pv0001 ended early (600 s latency)"

# 2. kill -9 of one: it goes at once, the other still waits.
kill -9 "$a"
t0=$EPOCHREALTIME
if ! ff_wait_until 60 ff_gone "$a"; then
  ff_log "reader $a: $(grep -E '^(State|Name)' "/proc/$a/status" | tr '\n' ' ')"
  ff_die "reader $a killed with SIGKILL still blocked after 60 s: the daemon ignored the interrupt"
fi
ff_log "killed reader gone after $(ff_ms_since "$t0") ms"
wait "$a" 2>/dev/null || true
ff_wait_until 60 stat_is interrupted 1 pv0001 ||
  ff_die "pv0001's interrupted count is $(st_num interrupted pv0001) after 60 s, expected 1"
ff_alive "$b" || ff_die "the other reader of pv0001 was answered too"
stat_is inflight 1 || ff_die "in flight: $(st_num inflight), expected 1 (the other reader)"

# 3. The second one too.
kill -9 "$b"
ff_wait_until 60 ff_gone "$b" ||
  ff_die "reader $b killed with SIGKILL still blocked after 60 s"
wait "$b" 2>/dev/null || true
ff_wait_until 60 stat_is interrupted 2 pv0001 ||
  ff_die "pv0001's interrupted count is $(st_num interrupted pv0001) after 60 s, expected 2"
read -r reads errors injected <<<"$(python3 - "$FF_MNT/.fusefarm/stats.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
d = [d for d in j["devices"] if d["name"] == "pv0001"][0]
print(d["reads"], d["errors"], d["errors_injected"])
PY
)"
((reads == 2 && errors == 2 && injected == 0)) ||
  ff_die "pv0001: reads $reads errors $errors injected $injected, expected 2 2 0"
stat_is inflight 0 || ff_die "in flight: $(st_num inflight), expected 0"
pending=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["delayed_pending"])' \
  "$FF_MNT/.fusefarm/info.json")
((pending == 0)) || ff_die "the scheduler still holds $pending delayed replies"
"$bin" stats "$FF_MNT" >"$s/table" || ff_die "fusefarm stats failed"
head -1 "$s/table" | grep -qw interrupted || ff_die "no interrupted column: $(head -1 "$s/table")"
ff_log "both readers answered EINTR and counted: interrupted 2, in flight 0, nothing scheduled"

# 4. The daemon still serves, and unmounts cleanly.
dd if="$FF_MNT/pv0000" of=/dev/null bs=4k count=1 iflag=direct 2>"$s/dd.err" ||
  ff_die "a read of pv0000 after the interrupts failed: $(cat "$s/dd.err")"
ff_wait_until 60 stat_is reads 1 pv0000 || ff_die "pv0000's read not counted"
fusermount3 -u "$FF_MNT" || ff_die "unmount failed"
ff_wait_exit "$FF_DAEMON_PID" 60 || ff_die "the daemon did not exit within 60 s of the unmount"
if grep -E 'ERROR|AddressSanitizer|runtime error' "$s/daemon.log"; then
  ff_die "the daemon's log has errors (above)"
fi
echo "PASS: a killed reader of a delayed read is answered EINTR at once and counted"
