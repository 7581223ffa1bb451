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
#   3. Latency fidelity as a libnbd client sees it: p50 and p99 under a
#      lognormal 5/20 ms profile against the configured values; 10 reads
#      on 10 connections released at once through a shared queue (20 ms
#      service), wall time with depth 1 (model 200 ms) and 64 (20 ms).
# Prints its summary, then the rows as bench/run prints them.  The
# measurements are bench/lib.sh's (bl_section_nbdcopy), which bench/run
# shares.
# usage: bench/bench-nbd.sh BUILD_DIR [N [SIZE]]   (N default 100 exports
#        of SIZE default 64M)
# Not a test: it prints figures and asserts nothing about speed.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$top/bench/lib.sh"
bl_init "${1:?usage: bench-nbd.sh BUILD_DIR [N [SIZE]]}"
n=${2:-100}
size=${3:-64M}

bl_section_nbdcopy "$n" "$size"

"$BL_PY" - "$n" "$size" "$BL_NBD_MEM_SPARSE" "$BL_NBD_FF_SPARSE" "$BL_NBD_MEM_FULL" \
  "$BL_NBD_FF_FULL" "$BL_NBD_1MS_SPARSE" "$BL_NBD_1MS_FULL" "$BL_NBD_READS_SPARSE" \
  "$BL_NBD_READS_FULL" "$(uname -r)" <<'PY'
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
printf '%-42s %9s %9s %7s\n' "latency as a libnbd client sees it" measured model ratio
row() { printf '  %-40s %7.2fms %7.0fms %6.2fx\n' "$1" "$2" "$3" "$(bl_calc "$2 / $3")"; }
row "lognormal 5/20 ms: p50" "$BL_NBD_LN_P50" 5
row "lognormal 5/20 ms: p99" "$BL_NBD_LN_P99" 20
row "queue depth 1, $BL_NBD_QN reads at once" "$BL_NBD_Q1_MS" $((BL_NBD_QN * 20))
row "queue depth 64, $BL_NBD_QN reads at once" "$BL_NBD_Q64_MS" 20
printf '\n'
bl_report --meta "date=$(date -u +%FT%TZ)" --meta "kernel=$(uname -r)" --meta "cpus=$(nproc)"
