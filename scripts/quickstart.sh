#!/usr/bin/env bash
# The README's first command: install what is missing, build, generate the
# built-in default farm (or SPEC), attach it to loop devices in a fenced
# lvm environment, and show what real lvm2 makes of it.  Detaches exactly
# what it attached, even on failure.  Run as root.
# usage: scripts/quickstart.sh [SPEC]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"
"$top/scripts/build.sh"
bin=$top/build/fusefarm/fusefarm
# shellcheck source=../tests/lib/lvm-env.sh
. "$top/tests/lib/lvm-env.sh"
# shellcheck source=../tests/lib/farm.sh
. "$top/tests/lib/farm.sh"

ff_env_init
"$bin" check ${1:+"$1"}
ff_farm_attach "$bin" "${1:-}"
echo "== farm devices and the loop devices carrying them"
column -t "$FF_SCRATCH/map" | head -20
for cmd in pvs vgs "lvs -o +devices"; do
  echo "== lvm $cmd"
  # shellcheck disable=SC2086
  ff_lvm $cmd 2> >(grep -Ev "$FF_NO_DM_RE" >&2)
done
echo "== done: lvm read $(wc -l <"$FF_SCRATCH/map") farm devices; detaching them"
