#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the
# main job: `fusefarm run` on its built-in default scenario (160 virtual
# PVs in 136 VGs served over FUSE and loop devices; pvs, pvscan --cache,
# event-style vs direct activation and 5 x lvchange, each 3 times, with
# use_aio on and off, on an ideal farm and under 1 ms of latency), then
# print the table and its verdict.  The run takes about 2.5 minutes on an idle
# 2-core machine (the first build adds 2-4 minutes; deps.sh, on a fresh
# machine, the time apt-get takes).  The host's own disks are never
# scanned.  Run as root.
#
# Every output of the run goes into one new run directory, never into this
# source tree: ./fusefarm-run-NAME-YYYYmmdd-HHMMSS/ when the current
# directory is outside the tree, else the same name under ${TMPDIR:-/tmp}.
# An --out DIR of your own wins.  At the end it says where the run
# directory and the binary are, and how to put `fusefarm` on PATH.
#
# usage: scripts/quickstart.sh [SCENARIO] [fusefarm run options...]
#   e.g. scripts/quickstart.sh configs/scenarios/ci-small.conf --top 5
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"
"$top/scripts/build.sh"
bin=$top/build/fusefarm/fusefarm

# Where the run directory goes: here, unless here is the source tree.
here=$(pwd -P)
case $here/ in
"$top"/*)
  base=${TMPDIR:-/tmp}
  echo "quickstart: the current directory is in the source tree; the run directory goes under $base"
  ;;
*) base=$here ;;
esac
name=default
if (($#)) && [[ $1 != -* ]]; then
  name=$(basename "$1" .conf)
fi
out=$base/fusefarm-run-$name-$(date +%Y%m%d-%H%M%S)
args=(--out "$out")
prev=
for a in "$@"; do
  case $prev:$a in
  --out:*) out=$a args=() ;;
  *:--out=*) out=${a#--out=} args=() ;;
  esac
  prev=$a
done

rc=0
"$bin" run "${args[@]}" "$@" || rc=$?
echo
if [[ -d $out ]]; then
  echo "quickstart: the run directory: $out"
  echo "  (run.json: the run document; \`fusefarm report $out/run.json\` prints the report again)"
fi
echo "quickstart: the binary is $bin; to run it as \`fusefarm\`:"
echo "  export PATH=$top/build/fusefarm:\$PATH"
echo "  or install it: cmake --install $top/build   (under CMAKE_INSTALL_PREFIX, /usr/local by default; README, Install)"
exit "$rc"
