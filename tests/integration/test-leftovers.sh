#!/usr/bin/env bash
# tests/check-leftovers.sh fails on the tests' own leftovers only
# (docs/testing.md "Own world"), whatever else the machine runs.  Inside
# this test's scratch dir, "scope" plays the tests' TMPDIR and "other"
# someone else's files; after a snapshot:
#   - someone else's new loop device and mount (outside the scope): listed
#     as not the tests', exit 0;
#   - a loop backed by a file under the scope: exit 1, named with its
#     losetup -d; the same for a mount under the scope (its umount), a
#     process carrying the tag (its kill), a process whose command line
#     names the scope, and an attach state dir under the scope that was
#     never detached;
#   - each gone again: exit 0;
#   - no FF_LEFTOVER_SCOPE: exit 2 with a message naming it.
# usage: test-leftovers.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
check=$here/../check-leftovers.sh
ff_require python3 losetup mount umount truncate
ff_env_init # scratch dir, the loops' cleanup
s=$FF_SCRATCH
mkdir -p "$s/scope" "$s/other/mnt" "$s/scope/mnt"
# FF_LEFTOVER_SHOW=0: every new item of others is listed, so "theirs" is
# found however many loops other users' farms attach meanwhile.
export FF_LEFTOVER_SCOPE=$s/scope FF_LEFTOVER_TAG=ff-leftover-test-$$ FF_LEFTOVER_WAIT=0 FF_LEFTOVER_SHOW=0
truncate -s 1M "$s/scope/ours.img" "$s/other/theirs.img"
pids=()
ff_on_cleanup 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done'
ff_on_cleanup "umount '$s/other/mnt' 2>/dev/null; umount '$s/scope/mnt' 2>/dev/null"

"$check" snapshot "$s/snap" >/dev/null || ff_die "snapshot failed"

# compare WANT-RC PATTERN...: compare exits WANT-RC and says each PATTERN.
compare() {
  local want=$1 rc=0 p
  shift
  "$check" compare "$s/snap" >"$s/out" 2>&1 || rc=$?
  ((rc == want)) || { cat "$s/out" >&2; ff_die "compare: exit $rc, expected $want"; }
  for p in "$@"; do
    grep -qF -- "$p" "$s/out" || { cat "$s/out" >&2; ff_die "compare did not say: $p"; }
  done
}

# Someone else's loop and mount appear: listed, never a failure.
theirs=$(ff_loop_attach "$s/other/theirs.img")
mount -t tmpfs -o size=1m ff-other "$s/other/mnt"
compare 0 "(not the tests', ignored) new loop: $theirs -> $s/other/theirs.img" \
  "(not the tests', ignored) new mount: $s/other/mnt (tmpfs" "nothing of the tests' left behind"
ff_log "someone else's loop and mount: ignored"

# The tests' own, one kind at a time: each fails the check, with its undo.
ours=$(ff_loop_attach "$s/scope/ours.img")
compare 1 "new loop: $ours -> $s/scope/ours.img" "losetup -d $ours"
losetup -d "$ours"
compare 0
mount -t tmpfs -o size=1m ff-ours "$s/scope/mnt"
compare 1 "new mount: $s/scope/mnt (tmpfs" "umount $s/scope/mnt"
umount "$s/scope/mnt"
# stop PID: end a process this test started and reap it.
stop() {
  kill "$1"
  wait "$1" 2>/dev/null || true
}
(cd / && exec sleep 600) & # inherits FF_LEFTOVER_TAG
pids+=($!)
compare 1 "new proc: pid $! (sleep)" "kill $!"
stop "$!"
compare 0
# The interpreter itself, not a wrapper (pyenv's shim is a bash script
# that runs it later): the process is "python3" from its start.
py=$(python3 -c 'import sys; print(sys.executable)')
(cd / && exec env -u FF_LEFTOVER_TAG "$py" -c 'import time; time.sleep(600)' "$s/scope/x") &
pids+=($!)
compare 1 "new proc: pid $! (python3)"
stop "$!"
compare 0
mkdir -p "$s/scope/t/state/lvm"
: >"$s/scope/t/state/loops"
compare 1 "new state: $s/scope/t/state (attach state, not detached)"
rm -r "$s/scope/t"
compare 0 "(not the tests', ignored) new loop: $theirs"
ff_log "the tests' loop, mount, tagged process, process naming the scope, state dir: each failed the check"

rc=0
FF_LEFTOVER_SCOPE='' "$check" compare "$s/snap" 2>"$s/err" || rc=$?
((rc == 2)) && grep -q FF_LEFTOVER_SCOPE "$s/err" ||
  ff_die "no scope: exit $rc, $(cat "$s/err")"
echo "PASS: check-leftovers fails on the tests' own items only"
