#!/usr/bin/env bash
# Injected latency and contention, measured from outside the daemon with
# timed O_DIRECT reads of the loop devices (tests/lib/timed-reads.py):
#   - a lognormal profile (median 5 ms, p99 20 ms): the measured median
#     and p99 are within 10% of the profile's;
#   - configs/profiles/slow-tail.conf, switched live: the devices measured
#     slowest are exactly the 1% the profile made 100x slower;
#   - a queue of depth 1 with a 20 ms service time: 10 parallel reads take
#     about 10 x 20 ms; with depth 64 they overlap (about 20 ms).
# usage: test-fuse-latency.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-fuse-latency.sh FUSEFARM}
ff_require python3 fusermount3
ff_env_init
s=$FF_SCRATCH
reads=$here/../lib/timed-reads.py

cat >"$s/farm.conf" <<'CONF'
seed = 7; device_size = "1G";
vgs = ({ count = 200; lvs = ({ fill = 0.5; }); });
CONF
cat >"$s/lognormal.conf" <<'CONF'
name = "lognormal-5ms";
groups = ({ devices = "all";
            read = { dist = "lognormal"; median = "5ms"; p99 = "20ms"; }; });
CONF
for depth in 1 64; do
  cat >"$s/queue$depth.conf" <<CONF
name = "queue-depth-$depth";
queue = { depth = $depth; service = "20ms"; };
groups = ({ devices = "all"; });
CONF
done

ff_fuse_mount "$bin" "$s/farm.conf" "$s/mnt" --profile "$s/lognormal.conf"
ff_fuse_attach
mapfile -t loops < <(cut -d' ' -f1 "$FF_SCRATCH/map")

# 1. Median and p99 of 8000 reads on 16 devices.
python3 "$reads" --threads 16 --reads 500 "${loops[@]:0:16}" >"$s/lat.json"
python3 - "$s/lat.json" <<'PY' || ff_die "measured latency does not match the profile"
import json, os, sys
lat = sorted(x for v in json.load(open(sys.argv[1]))["latencies"].values() for x in v)
med, p99 = lat[len(lat) // 2] * 1e3, lat[int(len(lat) * 0.99)] * 1e3
print(f"{len(lat)} reads: median {med:.2f} ms (profile 5), p99 {p99:.2f} ms (profile 20)")
# A wall-clock bound: printed, not judged, under a sanitizer
# (FF_TIMING_CHECKS=0, tests/run.sh's ASan pass; bench/run measures it).
sys.exit(0 if (abs(med - 5) <= 0.5 and abs(p99 - 20) <= 2) or
         os.environ.get("FF_TIMING_CHECKS", "1") == "0" else 1)
PY

# 2. slow-tail: the slowest devices are the ones the profile chose.
"$bin" profile "$FF_MNT" "$here/../../configs/profiles/slow-tail.conf" >/dev/null
cp "$FF_MNT/.fusefarm/profile.json" "$s/profile.json"
python3 "$reads" --threads 16 --reads 5 "${loops[@]}" >"$s/tail.json"
python3 - "$s/profile.json" "$s/tail.json" "$FF_SCRATCH/map" <<'PY' || ff_die "the slow devices are not the profile's"
import json, statistics, sys
prof = json.load(open(sys.argv[1]))
lat = json.load(open(sys.argv[2]))["latencies"]
name = dict(l.split() for l in open(sys.argv[3]))
p50 = {d["name"]: d["read_p50_ns"] for d in prof["devices"]}
top = max(p50.values())
slow = {n for n, v in p50.items() if v == top}
meas = sorted(lat, key=lambda d: statistics.median(lat[d]), reverse=True)
measured = {name[d] for d in meas[:len(slow)]}
print(f"profile slows {sorted(slow)}; measured slowest {sorted(measured)}; "
      f"medians {[round(statistics.median(lat[d]) * 1e3, 2) for d in meas[:len(slow) + 1]]} ms")
sys.exit(0 if slow == measured and 0 < len(slow) < len(p50) else 1)
PY

# 3. Contention: a shared queue of depth 1, then 64, service 20 ms.
for depth in 1 64; do
  "$bin" profile "$FF_MNT" "$s/queue$depth.conf" >/dev/null
  python3 "$reads" --parallel "${loops[@]:0:10}" >"$s/q$depth.json"
done
python3 - "$s/q1.json" "$s/q64.json" <<'PY' || ff_die "the queue does not behave"
import json, os, sys
w1 = json.load(open(sys.argv[1]))["wall"] * 1e3
w64 = json.load(open(sys.argv[2]))["wall"] * 1e3
print(f"10 parallel reads: depth 1 {w1:.0f} ms (expect ~200), depth 64 {w64:.0f} ms (expect ~20)")
sys.exit(0 if (180 <= w1 <= 320 and 18 <= w64 <= 80) or
         os.environ.get("FF_TIMING_CHECKS", "1") == "0" else 1)
PY
echo "PASS: latency and contention seen from outside match the profiles"
