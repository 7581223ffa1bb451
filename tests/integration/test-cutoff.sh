#!/usr/bin/env bash
# A `fusefarm run` cut off in the middle leaves nothing behind:
#   hup     SIGHUP (a lost SSH session) to the runner: it exits 1 after its
#           full teardown, as on SIGTERM;
#   kill    SIGKILL to the runner: its watchdog, with no call from anyone,
#           stops the daemon and the run's lvm, detaches the loops,
#           unmounts, removes the scratch dir and the registry entry;
#   detach  SIGKILL to the watchdog and then the runner: `fusefarm detach
#           MNT` finds the run's state through the registry and detaches
#           its loops (it said "nothing is attached" before), and
#           `fusefarm cleanup --prefix SCRATCH` (after --dry-run lists it)
#           stops the daemon and the rest and removes the scratch dir.
# Each run is held inside event activation by a gated pvscan (as in
# test-run), so the signal lands with the farm mounted and attached, the
# private /dev up and an lvm command of the run running.  After each case:
# no loop still backed by a file of the run, no mount under its TMPDIR, no
# process of it (by the pids recorded, and by a command line naming its
# TMPDIR), no scratch dir, no registry entry.  Every run has a TMPDIR of
# its own under the test's scratch; other farms on the machine are never
# looked at, and cleanup is always given --prefix.
# FF_CASES="hup kill detach" runs some of them.
# usage: test-cutoff.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-cutoff.sh FUSEFARM}
top=$here/../..
ff_require losetup pgrep
ff_env_init
s=$FF_SCRATCH
reg=/run/fusefarm/farms
mkfifo "$s/release"

# What the test started, for its cleanup when it fails: runner pids (our
# unreaped children) and the TMPDIRs of the runs.
runs=()
cut_cleanup() {
  local p
  { exec 9<>"$s/release"; echo go >&9; exec 9>&-; } 2>/dev/null
  for p in "${runs[@]}"; do
    kill "$p" 2>/dev/null || true
    ff_wait_until 120 ff_gone "$p" || kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  # What a cut-off run of this test left (only under $s).
  "$bin" cleanup --prefix "$s" --quiet || true
}
ff_on_cleanup cut_cleanup

cat >"$s/gated.conf" <<SC
name = "gated-cutoff";
spec = "$top/configs/mixed-1000.conf";
devices = 20;
workloads = ( { type = "event-activation"; concurrency = 2; } );
SC

# start_run N: run N in the background with TMPDIR $s/tN, held by its
# gate (ff_gate_lvm); sets pid, tmp, scratch, entry (the registry file, "" if none),
# daemon, watchdog, gate; keeps its loops file in $s/loopsN.
start_run() {
  local n=$1
  tmp=$s/t$n
  mkdir "$tmp"
  ff_gate_lvm "$s/gate$n" "$s/gate$n" "$s/release"
  TMPDIR=$tmp "$bin" run "$s/gated.conf" --lvm "$s/gate$n" --quiet --no-svg \
    --out "$s/out$n" >/dev/null 2>"$s/run$n.err" &
  pid=$!
  runs+=("$pid")
  gate_or_end() { [[ -s $s/gate$n.pid ]] || ff_gone "$pid"; }
  ff_wait_until 600 gate_or_end ||
    ff_die "run $n: no event-activation pvscan in 600 s: $(cat "$s/run$n.err")"
  [[ -s $s/gate$n.pid ]] || ff_die "run $n ended before event activation: $(cat "$s/run$n.err")"
  gate=$(cat "$s/gate$n.pid")
  scratch=$(echo "$tmp"/fusefarm-run.*)
  [[ -d $scratch ]] || ff_die "run $n: no scratch dir in $tmp"
  cp "$scratch/state/loops" "$s/loops$n" || ff_die "run $n: no loops file in $scratch/state"
  [[ -n $(ff_loops_still_ours "$s/loops$n") ]] || ff_die "run $n: no loop attached"
  entry=$reg/$pid-${scratch##*/}
  [[ -f $entry ]] || entry=
  daemon=$(awk '$1 == "daemon" { print $2 }' "$entry" 2>/dev/null || true)
  watchdog=$(awk '$1 == "watchdog" { print $2 }' "$entry" 2>/dev/null || true)
  [[ -n $daemon ]] || daemon=$(pgrep -f -- "mount .*$scratch/mnt" | head -1 || true)
  ff_log "run $n: runner $pid, daemon ${daemon:-?}, watchdog ${watchdog:-none}, pvscan $gate held; $(wc -l <"$s/loops$n") loops; entry ${entry:-none}"
}

# left N: what run N left, one line each (nothing: all gone).
left() {
  local n=$1 p
  ff_loops_still_ours "$s/loops$n" | sed 's/^/loop /'
  awk -v d="$tmp/" '{ gsub(/\\040/, " ", $5) } index($5, d) == 1 { print "mount " $5 }' \
    /proc/self/mountinfo
  for p in "$pid" "$daemon" "$watchdog" "$gate"; do
    [[ -n $p ]] && ff_alive "$p" && echo "process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
  done
  pgrep -af -- "$tmp/" | sed 's/^/process naming the TMPDIR /' || true
  compgen -G "$tmp/fusefarm-run.*" | sed 's/^/scratch dir /' || true
  grep -lsF "scratch $tmp/" "$reg"/* 2>/dev/null | sed 's/^/registry entry /' || true
}
nothing_left() { [[ -z $(left "$1") ]]; }

case_on() { [[ " ${FF_CASES:-hup kill detach} " == *" $1 "* ]]; }

# ---- hup: handled as SIGTERM ---------------------------------------------------
if case_on hup; then
  start_run 1
  kill -HUP "$pid"
  ff_wait_exit "$pid" 300 || ff_die "run 1 still runs 300 s after SIGHUP"
  rc=0
  wait "$pid" || rc=$?
  ((rc == 1)) || ff_die "a run stopped by SIGHUP exited $rc, expected 1 (teardown, then 1): $(cat "$s/run1.err")"
  grep -q interrupted "$s/run1.err" || ff_die "no 'interrupted' in: $(cat "$s/run1.err")"
  [[ -z $(left 1) ]] || ff_die "run 1 (SIGHUP) left: $(left 1)"
  ff_log "hup: the run exited 1 after its teardown; nothing left"
fi

# ---- kill: the watchdog tears the farm down ----------------------------------
if case_on kill; then
  start_run 2
  [[ -n $watchdog ]] || ff_die "run 2: no watchdog recorded in ${entry:-the registry (no entry)}"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  ff_wait_until 300 nothing_left 2 ||
    ff_die "300 s after SIGKILL of run 2, still there: $(left 2); its stderr: $(cat "$s/run2.err")"
  grep -q "watchdog $watchdog tears the farm down" "$s/run2.err" ||
    ff_die "the watchdog did not say what it did: $(cat "$s/run2.err")"
  ff_log "kill: the watchdog tore the farm down: $(grep -c . "$s/run2.err") lines on stderr"
fi

# ---- detach: runner and watchdog killed; detach and cleanup find the farm -----
if case_on detach; then
  start_run 3
  if [[ -n $watchdog ]]; then
    kill -KILL "$watchdog"
    ff_wait_exit "$watchdog" 60 || ff_die "watchdog $watchdog still there after SIGKILL"
  fi
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  rc=0
  "$bin" detach "$scratch/mnt" 2>"$s/detach3.err" || rc=$?
  cat "$s/detach3.err" >&2
  ! grep -q "nothing is attached" "$s/detach3.err" ||
    ff_die "detach of the cut-off run's mount did not find its state"
  ((rc == 0)) || ff_die "detach $scratch/mnt exited $rc"
  [[ -z $(ff_loops_still_ours "$s/loops3") ]] ||
    ff_die "detach left loops of the run: $(ff_loops_still_ours "$s/loops3")"
  "$bin" cleanup --prefix "$s" --dry-run >"$s/dry.out" 2>&1 ||
    ff_die "cleanup --dry-run failed: $(cat "$s/dry.out")"
  cat "$s/dry.out" >&2
  grep -qF "would remove $scratch" "$s/dry.out" || ff_die "cleanup --dry-run does not list $scratch"
  grep -qF "would stop daemon $daemon" "$s/dry.out" || ff_die "cleanup --dry-run does not list daemon $daemon"
  [[ -d $scratch ]] || ff_die "cleanup --dry-run removed $scratch"
  ff_alive "$daemon" || ff_die "cleanup --dry-run stopped daemon $daemon"
  "$bin" cleanup --prefix "$s" >"$s/cleanup.out" 2>&1 ||
    ff_die "cleanup failed: $(cat "$s/cleanup.out")"
  cat "$s/cleanup.out" >&2
  ff_wait_until 60 nothing_left 3 || ff_die "after cleanup, still there: $(left 3)"
  "$bin" cleanup --prefix "$s" >"$s/again.out" 2>&1 || ff_die "a second cleanup failed: $(cat "$s/again.out")"
  [[ ! -s $s/again.out ]] || grep -q "no farms registered" "$s/again.out" ||
    ff_die "a second cleanup found something: $(cat "$s/again.out")"
  ff_log "detach: detach found the state, cleanup the rest"
fi
echo "PASS: a cut-off fusefarm run leaves nothing behind"
