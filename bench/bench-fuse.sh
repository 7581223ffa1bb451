#!/usr/bin/env bash
# bench-fuse: the FUSE daemon's cost, measured side by side in one run.
#   1. `pvs` over N farm loop devices (fusefarm mount + attach, ideal
#      profile) against `pvs` over loop devices of the same images as plain
#      sparse files on tmpfs: ratio (latency 0); the same loops read with
#      readrate (sequential 1 MiB, random 4 KiB); attach rates.
#   2. `pvs` over the farm with 1 ms injected per read against the ideal
#      that lvm's own read schedule gives (the daemon's stats of the
#      0-latency run: its first read of every device is parallel, 64 at a
#      time, the rest are serial): ratio; readrate's latencies under fixed
#      1 ms and lognormal 5/20 ms profiles against the configured values.
#      A shared queue (20 ms service): 10 reads released at once, wall
#      time with depth 1 (model: 10 x 20 ms) and depth 64 (model: 20 ms).
#   3. Delayed reads in flight: aio-flood puts 5 reads on each of
#      min(N, 2000) files at once under a fixed 2 s latency; the daemon's
#      delayed_max and thread count.
#   4. Daemon RSS for 10,000 devices of 1 TiB (bench-core's farm), idle and
#      after reading the first 128 KiB of every device.
# Prints its summary, then the rows as bench/run prints them.  The
# measurements are bench/lib.sh's (bl_section_loops, bl_section_daemon_mem),
# which bench/run shares.
# usage: bench/bench-fuse.sh BUILD_DIR [N]     (root; N default 2000)
# Not a test: it prints figures and asserts nothing about speed.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$top/bench/lib.sh"
bl_init "${1:?usage: bench-fuse.sh BUILD_DIR [N]}"
n=${2:-2000}

bl_section_loops "$n" pvs=5 flood=5 flood_files=$((n < 2000 ? n : 2000)) flood_lat=2s
bl_section_daemon_mem 10000

printf '\nfusefarm FUSE benchmark, %s, %s devices (%s)\n' "$(date -u +%F)" "$n" "$(uname -r)"
printf '  pvs over tmpfs sparse-file loops     %8.3f s\n' "$BL_T_TMPFS"
printf '  pvs over farm loops (latency 0)      %8.3f s   ratio farm/tmpfs %.2f\n' \
  "$BL_T_FARM" "$(bl_calc "$BL_T_FARM / $BL_T_TMPFS")"
printf '  pvs with 1 ms per read               %8.3f s   (lvm read %s blocks)\n' "$BL_T_1MS" "$BL_READS"
printf '  ideal from lvm'"'"'s read schedule       %8.3f s   (%s rounds of 1 ms); ratio %.2f\n' \
  "$BL_IDEAL" "$BL_ROUNDS" "$(bl_calc "$BL_T_1MS / $BL_IDEAL")"
printf '  queue 20 ms, %s reads at once        %8.1f ms depth 1 (model %d), %.1f ms depth 64 (model 20)\n' \
  "$BL_QN" "$BL_Q1_MS" $((BL_QN * 20)) "$BL_Q64_MS"
printf '  delayed reads in flight (max)        %8s     daemon threads %s\n' "$BL_DELAYED_MAX" "$BL_THREADS"
printf '  %s\n' "$BL_FLOOD_LINE"
printf '  daemon RSS, 10,000 x 1 TiB devices   %8.1f MiB idle, %.1f MiB after reading 128 KiB of each\n' \
  "$(bl_calc "$BL_RSS_IDLE_10000 / 1024")" "$(bl_calc "$BL_RSS_SCAN_10000 / 1024")"
printf '\n'
bl_report --meta "date=$(date -u +%FT%TZ)" --meta "kernel=$(uname -r)" --meta "cpus=$(nproc)"
