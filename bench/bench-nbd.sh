#!/usr/bin/env bash
# bench-nbd: the nbdkit plugin's cost, measured side by side in one run.
#   1. nbdcopy of N exports (one nbdcopy per export, to null:) from one
#      nbdkit serving the farm (ideal profile) against the same bytes from
#      nbdkit's own memory plugin (one server per image, filled from the
#      `fusefarm gen` image before the clock starts): ratio.  Twice: a
#      sparse copy (nbdcopy follows block status: only the layout's few
#      KiB are read) and a full copy (--no-extents: every byte is read).
#   2. The same copies through the plugin with a fixed 1 ms read latency
#      against the ideal profile: ratio, and the reads per export the
#      stats file counted (each costs 1 ms, up to nbdcopy's parallelism).
# usage: bench/bench-nbd.sh BUILD_DIR [N [SIZE]]   (N default 100 exports
#        of SIZE default 64M)
# Not a test: it prints figures and asserts nothing about speed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: bench-nbd.sh BUILD_DIR [N [SIZE]]}" && pwd)
n=${2:-100}
size=${3:-64M}
bin=$build/fusefarm/fusefarm
plugin=$build/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$build/nbd-plugin/ff-nbdkit
py=/usr/bin/python3
# shellcheck source=../tests/lib/lvm-env.sh
. "$top/tests/lib/lvm-env.sh"
ff_require nbdkit nbdcopy
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin: not built"
ff_env_init # scratch dir and cleanup trap
s=$FF_SCRATCH

cat >"$s/farm.conf" <<CONF
seed = 4; device_size = "$size";
vgs = ({ count = $n; lvs = ({ fill = 0.5; }); });
CONF
cat >"$s/1ms.conf" <<'CONF'
name = "fixed-1ms";
groups = ({ devices = "all"; read = { dist = "fixed"; value = "1ms"; }; });
CONF
"$bin" gen -q "$s/farm.conf" -o "$s/img"
mapfile -t names < <(cd "$s/img" && ls)

pids=()
stop_all() {
  local p i
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    for ((i = 0; i < 50; i++)); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$p" 2>/dev/null || true
  done
  pids=()
}
ff_on_cleanup stop_all

# serve SOCKET PIDFILE ARGS...: a daemonized nbdkit; its pid in pids.
serve() {
  local sock=$1 pidf=$2
  shift 2
  ulimit -n 4096
  "$nbdkit" -U "$sock" -P "$pidf" "$@" || ff_die "nbdkit $* did not start"
  pids+=("$(cat "$pidf")")
}

# copy_all URI-FORMAT [NBDCOPY-ARGS]: seconds to nbdcopy every export to
# null:, one after the other (URI-FORMAT has %s for the export name).
copy_all() {
  local fmt=$1 t0 t1 x
  shift
  t0=$(date +%s%N)
  for x in "${names[@]}"; do
    # shellcheck disable=SC2059  # the format is ours
    nbdcopy "$@" "$(printf "$fmt" "$x")" null: || ff_die "nbdcopy $x failed"
  done
  t1=$(date +%s%N)
  "$py" -c "print(f'{($t1 - $t0) / 1e9:.3f}')"
}

echo "== $n exports of $size: nbdkit's memory plugin, one server per image"
mkdir -p "$s/mem"
for x in "${names[@]}"; do
  serve "$s/mem/$x.sock" "$s/mem/$x.pid" memory "$size"
  nbdcopy --destination-is-zero "$s/img/$x" "nbd+unix:///?socket=$s/mem/$x.sock" ||
    ff_die "filling the memory plugin with $x failed"
done
mem_sparse=$(copy_all "nbd+unix:///?socket=$s/mem/%s.sock")
mem_full=$(copy_all "nbd+unix:///?socket=$s/mem/%s.sock" --no-extents)
stop_all

echo "== $n exports of $size: the fusefarm plugin, one server, ideal profile"
serve "$s/ff.sock" "$s/ff.pid" "$plugin" spec="$s/farm.conf" stats="$s/ideal.json"
ff_sparse=$(copy_all "nbd+unix:///%s?socket=$s/ff.sock")
ff_full=$(copy_all "nbd+unix:///%s?socket=$s/ff.sock" --no-extents)
stop_all

echo "== the same with 1 ms per read"
serve "$s/ff1.sock" "$s/ff1.pid" "$plugin" spec="$s/farm.conf" profile="$s/1ms.conf" \
  stats="$s/1ms.json"
ms_sparse=$(copy_all "nbd+unix:///%s?socket=$s/ff1.sock")
sleep 1.2 # a stats write after the sparse copies
reads_sparse=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["reads"])' "$s/1ms.json")
ms_full=$(copy_all "nbd+unix:///%s?socket=$s/ff1.sock" --no-extents)
stop_all
reads_full=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["reads"])' "$s/1ms.json")
reads_full=$((reads_full - reads_sparse))

"$py" - "$n" "$size" "$mem_sparse" "$ff_sparse" "$mem_full" "$ff_full" \
  "$ms_sparse" "$ms_full" "$reads_sparse" "$reads_full" "$(uname -r)" <<'PY'
import sys, datetime
n, size = int(sys.argv[1]), sys.argv[2]
mem_s, ff_s, mem_f, ff_f, ms_s, ms_f = map(float, sys.argv[3:9])
rs, rf = int(sys.argv[9]), int(sys.argv[10])
print()
print(f"fusefarm nbdkit plugin benchmark, {datetime.date.today()}, {n} exports of {size} ({sys.argv[11]})")
print(f"{'nbdcopy of every export':42} {'memory':>9} {'fusefarm':>9} {'ratio':>7}")
print(f"{'  sparse (block status, layout only)':42} {mem_s:8.2f}s {ff_s:8.2f}s {ff_s / mem_s:6.2f}x")
print(f"{'  full (--no-extents, every byte)':42} {mem_f:8.2f}s {ff_f:8.2f}s {ff_f / mem_f:6.2f}x")
print(f"{'fusefarm, 1 ms per read vs ideal':42} {'ideal':>9} {'1 ms':>9} {'ratio':>7}")
print(f"{'  sparse':42} {ff_s:8.2f}s {ms_s:8.2f}s {ms_s / ff_s:6.2f}x   ({rs / n:.1f} reads/export)")
print(f"{'  full':42} {ff_f:8.2f}s {ms_f:8.2f}s {ms_f / ff_f:6.2f}x   ({rf / n:.1f} reads/export)")
PY
