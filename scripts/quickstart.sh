#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the
# main job: `fusefarm run` on its built-in default scenario (1000 virtual
# PVs served over FUSE and loop devices; pvs, pvscan --cache, event-style
# vs direct activation and repeated lvchange, with use_aio on and off, on
# an ideal farm and under 1 ms of latency; a few minutes on 2 cores).  The
# host's own disks are never scanned.  Run as root.
# usage: scripts/quickstart.sh [SCENARIO] [fusefarm run options...]
#   e.g. scripts/quickstart.sh configs/scenarios/ci-small.conf --svg /tmp/ci.svg
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"
"$top/scripts/build.sh"
exec "$top/build/fusefarm/fusefarm" run "$@"
