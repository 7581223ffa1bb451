#!/usr/bin/env bash
# latency-breakdown: where a read's time goes between a reader and the
# farm's I/O model, under a fixed latency profile (docs/benchmarks.md,
# "Where the time goes").
#
# One farm of F devices of 1 GiB (fusefarm mount --trace, fusefarm
# attach), a fixed LAT profile; for each thread count T, readrate reads
# R random 4 KiB blocks of each device with O_DIRECT on T threads and
# logs every read's start and end (readrate -l); the daemon's trace gives
# each read's arrival at the engine, the model's decided time and the
# reply.  bench/latency-breakdown.py matches the two and splits every
# read into:
#   in     start -> arrival: the loop driver, the FUSE queue, a worker
#          picking the request up (what the farm cannot see)
#   model  arrival -> done: what the profile decided (LAT, exactly)
#   late   done -> end: the timer and the reply thread being late
#   out    end -> the reader's return: the reply through FUSE and the loop
# and samples /sys/fs/fuse/connections/N/waiting (requests the kernel
# holds for the daemon) while the reads run.
#
# usage: bench/latency-breakdown.sh BUILD_DIR [LAT [READS [THREADS...]]]
#        (root; defaults: 1ms, 500 reads per device, threads 1 16)
# Not a test: it prints figures and asserts nothing about speed.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$top/bench/lib.sh"
bl_init "${1:?usage: latency-breakdown.sh BUILD_DIR [LAT [READS [THREADS...]]]}"
lat=${2:-1ms}
reads=${3:-500}
shift $(($# < 3 ? $# : 3))
threads=("$@")
((${#threads[@]})) || threads=(1 16)
files=16

s=$BL_S
# the FUSE control filesystem (systemd mounts it; minimal systems do
# not): mounted for the run when absent, unmounted after it
if ! mountpoint -q /sys/fs/fuse/connections; then
  mount -t fusectl fusectl /sys/fs/fuse/connections ||
    ff_die "cannot mount fusectl on /sys/fs/fuse/connections"
  ff_on_cleanup "umount /sys/fs/fuse/connections"
fi
cat >"$s/farm.conf" <<CONF
seed = 2; device_size = "1G";
vgs = ({ count = $files; lvs = ({ fill = 0.5; }); });
CONF
bl_profile_fixed "$s/lat.conf" "$lat"
bl_fuse_mount "$s/farm.conf" "$s/mnt" --trace "$s/trace"
bl_fuse_attach
fl=()
mapfile -t names < <(ls "$BL_MNT" | grep -v '^\.')
for name in "${names[@]:0:files}"; do
  fl+=("${BL_FARM_LOOP[$name]}")
  printf '%s %s\n' "${BL_FARM_LOOP[$name]}" "$name"
done >"$s/loops"
"$BL_BIN" profile "$BL_MNT" "$s/lat.conf" >/dev/null

for t in "${threads[@]}"; do
  bl_log "latency-breakdown: $lat, $t threads, $reads reads per device"
  "$BL_PY" "$top/bench/latency-breakdown.py" sample "$BL_MNT" "$s/waiting-$t" &
  sampler=$!
  "$BL_READRATE" -r -n "$reads" -t "$t" -l "$s/reads-$t" "${fl[@]}" >"$s/rr-$t.json"
  kill "$sampler"
  wait "$sampler" 2>/dev/null || true
  "$BL_PY" "$top/bench/latency-breakdown.py" join "$s/loops" "$s/trace" \
    "$s/reads-$t" "$s/waiting-$t" "$t" "$lat"
done
[[ -z ${FF_KEEP:-} ]] || cp -r "$s" "$FF_KEEP"
