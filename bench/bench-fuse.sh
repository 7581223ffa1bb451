#!/usr/bin/env bash
# bench-fuse: the FUSE daemon's cost, measured side by side in one run.
#   1. `pvs` over N farm loop devices (fusefarm mount + attach, ideal
#      profile) against `pvs` over loop devices of the same images as plain
#      sparse files on tmpfs: ratio (latency 0).
#   2. `pvs` over the farm with 1 ms injected per read against the ideal
#      that lvm's own read schedule gives (the daemon's stats of the
#      0-latency run: its first read of every device is parallel, 64 at a
#      time, the rest are serial): ratio.
#   3. Delayed reads in flight: aio-flood puts 5 reads on each of 2000
#      files at once under a fixed 2 s latency; the daemon's delayed_max
#      and thread count.
#   4. Daemon RSS for 10,000 devices of 1 TiB, idle and after reading the
#      first 128 KiB of every device.
# usage: bench/bench-fuse.sh BUILD_DIR [N]     (root; N default 2000)
# Not a test: it prints figures and asserts nothing about speed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: bench-fuse.sh BUILD_DIR [N]}" && pwd)
n=${2:-2000}
bin=$build/fusefarm/fusefarm
# shellcheck source=../tests/lib/lvm-env.sh
. "$top/tests/lib/lvm-env.sh"
# shellcheck source=../tests/lib/farm.sh
. "$top/tests/lib/farm.sh"
ff_require python3 fusermount3 mountpoint
ff_env_init
s=$FF_SCRATCH

cat >"$s/farm.conf" <<CONF
seed = 2; device_size = "1G";
vgs = ({ count = $((n * 9 / 10)); lvs = ({ fill = 0.5; }); },
       { count = $((n / 20)); pvs = 2; lvs = ({ type = "striped"; fill = 0.5; }); });
CONF
cat >"$s/1ms.conf" <<'CONF'
name = "fixed-1ms";
groups = ({ devices = "all"; read = { dist = "fixed"; value = "1ms"; }; });
CONF
cat >"$s/2s.conf" <<'CONF'
name = "fixed-2s";
groups = ({ devices = "all"; read = { dist = "fixed"; value = "2s"; }; });
CONF

# median wall time of `lvm pvs` over R runs
time_pvs() {
  local r=$1 i
  for ((i = 0; i < r; i++)); do
    local t0 t1
    t0=$(date +%s%N)
    ff_lvm pvs >/dev/null 2>&1 || ff_die "pvs failed"
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000))
  done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] / 1e6 }'
}

echo "== $n devices: tmpfs sparse-file loops"
mkdir -p "$s/tmpfs"
mount -t tmpfs -o size=4G fusefarm-bench "$s/tmpfs"
ff_on_cleanup "umount '$s/tmpfs' 2>/dev/null || true"
"$bin" gen -q "$s/farm.conf" -o "$s/tmpfs/img"
ff_loop_attach "$s"/tmpfs/img/* >/dev/null
t_tmpfs=$(time_pvs 5)
ff_loop_detach_all
: >"$FF_DEVICES_FILE"

echo "== $n devices: farm loops (fusefarm mount + attach)"
ff_fuse_mount "$bin" "$s/farm.conf" "$s/mnt"
ff_fuse_attach
t_farm=$(time_pvs 5)
echo reset >"$FF_MNT/.fusefarm/control"
ff_lvm pvs >/dev/null 2>&1
sched=$(python3 - "$FF_MNT/.fusefarm/stats.json" "$n" <<'PY'
import json, math, sys
st = json.load(open(sys.argv[1]))
n = len(st["devices"])
reads = sum(d["reads"] for d in st["devices"])
# lvm's label scan reads every device once, up to 64 at a time; every
# other read waits for the one before it.
print(math.ceil(n / 64) + (reads - n), reads)
PY
)
read -r rounds reads <<<"$sched"
"$bin" profile "$FF_MNT" "$s/1ms.conf" >/dev/null
t_1ms=$(time_pvs 3)
ideal=$(python3 -c "print($t_farm + $rounds * 0.001)")

echo "== delayed reads in flight (2000 files x 5 reads, 2 s latency)"
"$bin" profile "$FF_MNT" "$s/2s.conf" >/dev/null
mapfile -t files < <(ls "$FF_MNT" | head -2000)
(cd "$FF_MNT" && "$build/bench/aio-flood" 5 "${files[@]}") >"$s/flood.txt" &
sleep 1
threads=$(awk '/^Threads:/ { print $2 }' "/proc/$FF_DAEMON_PID/status")
wait
delayed_max=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["delayed_max"])' \
  "$FF_MNT/.fusefarm/info.json")
ff_fuse_cleanup "$FF_MNT"

echo "== 10,000 devices of 1 TiB: daemon memory"
cat >"$s/10k.conf" <<'CONF'
seed = 3; device_size = "1T";
vgs = ({ count = 9000; lvs = ({ fill = 0.5; }); }, { count = 500; pvs = 2; lvs = ({ fill = 0.5; }); });
CONF
ff_fuse_mount "$bin" "$s/10k.conf" "$s/mnt10k"
rss_idle=$(awk '/^VmRSS:/ { print $2 }' "/proc/$FF_DAEMON_PID/status")
python3 - "$FF_MNT" <<'PY'
import os, sys
for name in (n for n in os.listdir(sys.argv[1]) if not n.startswith(".")):
    with open(os.path.join(sys.argv[1], name), "rb", buffering=0) as f:
        f.read(131072)
PY
rss_scan=$(awk '/^VmRSS:/ { print $2 }' "/proc/$FF_DAEMON_PID/status")
ff_fuse_cleanup "$FF_MNT"

printf '\nfusefarm FUSE benchmark, %s, %s devices (%s)\n' "$(date -u +%F)" "$n" "$(uname -r)"
printf '  pvs over tmpfs sparse-file loops     %8.3f s\n' "$t_tmpfs"
printf '  pvs over farm loops (latency 0)      %8.3f s   ratio farm/tmpfs %.2f\n' \
  "$t_farm" "$(python3 -c "print($t_farm / $t_tmpfs)")"
printf '  pvs with 1 ms per read               %8.3f s   (lvm read %s blocks)\n' "$t_1ms" "$reads"
printf '  ideal from lvm'"'"'s read schedule       %8.3f s   (%s rounds of 1 ms); ratio %.2f\n' \
  "$ideal" "$rounds" "$(python3 -c "print($t_1ms / $ideal)")"
printf '  delayed reads in flight (max)        %8s     daemon threads %s\n' "$delayed_max" "$threads"
printf '  %s\n' "$(cat "$s/flood.txt")"
printf '  daemon RSS, 10,000 x 1 TiB devices   %8.1f MiB idle, %.1f MiB after reading 128 KiB of each\n' \
  "$(python3 -c "print($rss_idle / 1024)")" "$(python3 -c "print($rss_scan / 1024)")"
