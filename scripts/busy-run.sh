#!/usr/bin/env bash
# The README's two commands on a busy machine, as a newcomer meets them
# (docs/testing.md, "A first run on a fresh, busy machine"): a fresh
# clone of this tree's HEAD, then `scripts/quickstart.sh` and
# `tests/run.sh` in it, with beside them
#   - `stress --cpu N` (default 8; installed with apt-get when missing),
#   - a second farm mounted and attached by hand, as another user's
#     (`fusefarm mount configs/mixed-1000.conf --devices 200` and
#     `fusefarm attach --state`), from a copy of the clone's binary, as
#     soon as quickstart has built it,
#   - a sampler writing the load average once a minute.
# At the end it prints both commands' exit status and wall time and the
# load's minimum, median and maximum, then stops stress and takes the
# second farm down.  Run as root; it needs 3-4 hours at --stress 8 on
# 2 cores (tests/run.sh runs every pass).
#
# usage: scripts/busy-run.sh [--stress N] [--out DIR]
#   --out DIR   where the clone, the logs and the other farm go
#               (default: /var/tmp/fusefarm-busy-run-YYYYmmdd-HHMMSS)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ncpu=8
out=/var/tmp/fusefarm-busy-run-$(date +%Y%m%d-%H%M%S)
while (($#)); do
  case $1 in
  --stress) ncpu=${2:?--stress needs a number}; shift 2 ;;
  --out) out=${2:?--out needs a directory}; shift 2 ;;
  -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
  *) echo "busy-run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ $ncpu =~ ^[0-9]+$ ]] || { echo "busy-run.sh: --stress: '$ncpu' is not a number" >&2; exit 2; }
((EUID == 0)) || { echo "busy-run.sh: run me as root (the tests attach loop devices)" >&2; exit 2; }
[[ ! -e $out ]] || { echo "busy-run.sh: $out exists: give another --out" >&2; exit 2; }
mkdir -p "$out" || exit 1
command -v stress >/dev/null || { apt-get update -qq && apt-get install -y -qq stress; } >"$out/apt.log" 2>&1 ||
  { echo "busy-run.sh: cannot install stress (see $out/apt.log)" >&2; exit 1; }

git clone -q "$top" "$out/clone" || exit 1
echo "busy-run.sh: $(git -C "$out/clone" log --oneline -1); logs in $out"
pids=()
other=$out/other
cleanup() {
  kill "${pids[@]}" 2>/dev/null
  if [[ -x $other/fusefarm ]]; then
    "$other/fusefarm" detach "$other/mnt" --state "$other/state" --quiet 2>/dev/null
    fusermount3 -u "$other/mnt" 2>/dev/null
  fi
}
trap cleanup EXIT
(while :; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 60; done) >"$out/load.log" &
pids+=($!)
stress --cpu "$ncpu" >/dev/null 2>&1 &
pids+=($!)
# The second farm, once quickstart has built the binary (its run has
# started: the build is done).
(
  while ! grep -q '^run directory:' "$out/quickstart.log" 2>/dev/null; do sleep 5; done
  mkdir -p "$other/mnt"
  cp "$out/clone/build/fusefarm/fusefarm" "$other/fusefarm"
  "$other/fusefarm" mount "$out/clone/configs/mixed-1000.conf" "$other/mnt" --devices 200 &&
    "$other/fusefarm" attach "$other/mnt" --state "$other/state" >/dev/null &&
    echo "$(date +%T) the second farm: $(losetup -a | grep -c "$other/mnt/") loops attached"
) >"$out/other.log" 2>&1 &
pids+=($!)

cd "$out/clone" || exit 1
t0=$(date +%s)
bash scripts/quickstart.sh >"$out/quickstart.log" 2>&1
rc_q=$?
t1=$(date +%s)
bash tests/run.sh >"$out/run.log" 2>&1
rc_t=$?
t2=$(date +%s)
cat "$out/other.log"
printf 'scripts/quickstart.sh: exit %d, %d s\n' "$rc_q" $((t1 - t0))
printf 'tests/run.sh:          exit %d, %d s\n' "$rc_t" $((t2 - t1))
sed -n '/^== summary/,$p' "$out/run.log"
awk '{print $2}' "$out/load.log" | sort -n |
  awk '{a[NR] = $1} END { if (NR) printf "load (1-min average, %d samples): min %s, median %s, max %s\n", NR, a[1], a[int((NR + 1) / 2)], a[NR] }'
((rc_q == 0 && rc_t == 0))
