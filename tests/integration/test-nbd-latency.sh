#!/usr/bin/env bash
# The I/O profile through the nbdkit plugin, observed from a libnbd client
# (tests/lib/nbd-timed-reads.py times every request), with nbdkit
# daemonized (the plugin's watcher and stats threads start after the fork):
#   - lognormal, median 5 ms, p99 20 ms: the client's per-request median
#     and p99 are within 10% of the profile's, and the stats file's too
#     (give or take its histogram's 1/16 resolution);
#   - the watched profile file, edited in place, switches live (fixed
#     30 ms); a broken new version is reported with its file and line and
#     the old profile stays; a retargeted symlink switches again (1 ms);
#   - contention: ten reads at once through one queue of depth 1 take
#     ~10 x 20 ms, with depth 64 ~20 ms;
#   - faults: eio_ranges fail exactly the reads in range, counted as
#     injected; a device before its appear_at is neither listed nor
#     opened; rotational = true reaches new clients;
#   - a request sleeping for a 10-minute latency does not hold up the
#     server's exit: nbdkit_nanosleep ends it.
# usage: test-nbd-latency.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"

: "${1:?usage: test-nbd-latency.sh FUSEFARM}" # (the plugin alone is tested here)
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
py=/usr/bin/python3 # Debian's: python3-libnbd is not on other pythons' path
reads=$here/../lib/nbd-timed-reads.py
ff_require nbdkit nbdinfo
"$py" -c 'import nbd' 2>/dev/null ||
  ff_die "$py cannot import nbd: install python3-libnbd (scripts/deps.sh)"
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
ff_env_init # scratch dir and cleanup trap only
s=$FF_SCRATCH
sock=$s/nbd.sock

cat >"$s/farm.conf" <<'CONF'
seed = 9; device_size = "1G";
vgs = ({ count = 32; lvs = ({ fill = 0.5; }); });
CONF
cat >"$s/lognormal.conf" <<'CONF'
name = "lognormal-5ms";
groups = ({ devices = "all";
            read = { dist = "lognormal"; median = "5ms"; p99 = "20ms"; }; });
CONF
cat >"$s/fast.conf" <<'CONF'
name = "fixed-1ms";
groups = ({ devices = "all"; read = { dist = "fixed"; value = "1ms"; }; });
CONF
cat >"$s/faults.conf" <<'CONF'
name = "faults";
rotational = true;
groups = ({ devices = "pv0001"; faults = { eio_ranges = ( ["0", "1M"] ); }; },
          { devices = "pv0031"; faults = { appear_at = "60m"; }; });
CONF
cat >"$s/forever.conf" <<'CONF'
name = "forever";
groups = ({ devices = "all"; read = { dist = "fixed"; value = "10m"; }; });
CONF
for depth in 1 64; do
  cat >"$s/queue$depth.conf" <<CONF
name = "queue-depth-$depth";
queue = { depth = $depth; service = "20ms"; };
groups = ({ devices = "all"; });
CONF
done
cp "$s/lognormal.conf" "$s/current-target.conf"
ln -s "$s/current-target.conf" "$s/current.conf"

# nbdkit daemonizes (no -f): the plugin's threads must start after the fork.
pid=
stop_server() {
  local i
  [[ -n $pid ]] || return 0
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  pid=
}
ff_on_cleanup stop_server
# -v: a daemonized nbdkit keeps stderr (our log) only when verbose; no
# debug line per request, though (it would cost time on the data path).
"$nbdkit" -v -D nbdkit.backend.datapath=0 -U "$sock" -P "$s/nbdkit.pid" --log=stderr "$plugin" \
  spec="$s/farm.conf" profile="$s/current.conf" stats="$s/stats.json" \
  stats-interval=0.5 2>>"$s/nbdkit.log" || ff_die "nbdkit did not start: $(cat "$s/nbdkit.log")"
pid=$(cat "$s/nbdkit.pid")
exports=()
for i in $(seq 0 15); do exports+=("$(printf 'pv%04d' "$i")"); done

# median READS EXPORT...: print the client's median read time in ms.
median() {
  local n=$1
  shift
  "$py" "$reads" "$sock" --threads 8 --reads "$n" "$@" | "$py" -c '
import json, statistics, sys
lat = [x for v in json.load(sys.stdin)["latencies"].values() for x in v]
print(f"{statistics.median(lat) * 1e3:.3f}")'
}

# timing_check PYEXPR MESSAGE: a wall-clock bound.  It holds on an idle
# machine with a normal build; under a sanitizer (FF_TIMING_CHECKS=0,
# tests/run.sh's ASan pass) the figures are printed and not judged: that
# pass is for memory errors, and bench/run measures fidelity.
timing_check() {
  if "$py" -c "import sys; sys.exit(0 if $1 else 1)"; then
    return 0
  fi
  if [[ ${FF_TIMING_CHECKS:-1} == 0 ]]; then
    ff_log "not judged (FF_TIMING_CHECKS=0): $2"
    return 0
  fi
  ff_die "$2"
}

# switches NAME: how many times the plugin has said it switched to
# profile NAME (its debug line "profile=...: now 'NAME'").
switches() { grep -c -- ": now '$1'" "$s/nbdkit.log" || true; }

# wait_profile NAME BEFORE LO HI: wait until the plugin says it switched
# to NAME (more than BEFORE times: an event, not a time), then check that
# reads take LO..HI ms (a wall-clock check: see timing_check).
wait_profile() {
  local i m
  for ((i = 0; i < 300; i++)); do
    (($(switches "$1") > $2)) && break
    sleep 0.1
  done
  (($(switches "$1") > $2)) || ff_die "the plugin never switched to profile $1: $(tail -3 "$s/nbdkit.log")"
  m=$(median 3 pv0020)
  timing_check "$3 <= $m <= $4" "reads take $m ms after the switch to $1, expected $3..$4"
}
# 1. Median and p99 of 4000 reads on 16 exports.
"$py" "$reads" "$sock" --threads 8 --reads 250 "${exports[@]}" >"$s/lat.json" ||
  ff_die "timed reads failed: $(tail -5 "$s/nbdkit.log")"
sleep 1.2 # a stats write after the reads
"$py" - "$s/lat.json" "$s/stats.json" <<'PY' || ff_die "measured latency does not match the profile"
import json, os, sys
lat = sorted(x for v in json.load(open(sys.argv[1]))["latencies"].values() for x in v)
med, p99 = lat[len(lat) // 2] * 1e3, lat[int(len(lat) * 0.99)] * 1e3
tot = json.load(open(sys.argv[2]))["totals"]["latency"]["read"]
smed, sp99 = tot["p50_ns"] / 1e6, tot["p99_ns"] / 1e6
print(f"client: {len(lat)} reads, median {med:.2f} ms (profile 5), p99 {p99:.2f} ms (profile 20); "
      f"stats file: {tot['count']} reads, p50 {smed:.2f} ms, p99 {sp99:.2f} ms")
# The client's times within 10%; the stats file's too, give or take its
# histogram's resolution (a percentile is a bucket's middle, within 1/16).
tol = 0.10 + 1 / 16
ok = (abs(med - 5) <= 0.5 and abs(p99 - 20) <= 2 and
      abs(smed - 5) <= 5 * tol and abs(sp99 - 20) <= 20 * tol)
if not ok and os.environ.get("FF_TIMING_CHECKS", "1") == "0":
    print("not judged (FF_TIMING_CHECKS=0)")
    ok = True
sys.exit(0 if ok and tot["count"] >= len(lat) else 1)
PY
t1=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["time"])' "$s/stats.json")

# 2. Edit the file in place: fixed 30 ms.
sed -i 's/dist = "lognormal"; median = "5ms"; p99 = "20ms";/dist = "fixed"; value = "30ms";/;
        s/lognormal-5ms/fixed-30ms/' "$s/current-target.conf"
wait_profile fixed-30ms "$(switches fixed-30ms)" 29 33
m=$(median 10 "${exports[@]:0:8}")
ff_log "after editing the profile: median $m ms (profile 30)"
timing_check "27 <= $m <= 33" "median $m ms, expected 30"

# 3. A broken version: reported, the 30 ms profile stays.
printf 'name = "broken";\ngroups = ({ read = { dist = "fixed"; value = 3; }; });\n' \
  >"$s/current-target.conf"
sleep 2.5
grep -q "profile=$s/current.conf: $s/current.conf:2: groups.\[0\].read.value.*(keeping profile 'fixed-30ms')" \
  "$s/nbdkit.log" || ff_die "a broken profile was not reported: $(tail -3 "$s/nbdkit.log")"
m=$(median 5 pv0001)
timing_check "27 <= $m <= 33" "after a broken profile reads take $m ms, expected the old 30"

# 4. Retarget the symlink: 1 ms.
n=$(switches fixed-1ms)
ln -sfn "$s/fast.conf" "$s/current.conf"
wait_profile fixed-1ms "$n" 0.9 1.6
ff_log "after retargeting the symlink: median $(median 20 pv0001 pv0002) ms (profile 1)"

# 5. Contention: one queue for all devices, depth 1 then 64, 20 ms each;
# ten reads on ten exports at once.
for depth in 1 64; do
  n=$(switches "queue-depth-$depth")
  ln -sfn "$s/queue$depth.conf" "$s/current.conf"
  wait_profile "queue-depth-$depth" "$n" 0 100000
  "$py" "$reads" "$sock" --threads 10 --reads 1 "${exports[@]:0:10}" >"$s/q$depth.json"
done
"$py" - "$s/q1.json" "$s/q64.json" <<'PY' || ff_die "the shared queue does not behave"
import json, os, sys
l1 = sorted(x for v in json.load(open(sys.argv[1]))["latencies"].values() for x in v)
l64 = sorted(x for v in json.load(open(sys.argv[2]))["latencies"].values() for x in v)
print(f"10 reads at once: depth 1 slowest {l1[-1] * 1e3:.0f} ms (expect ~200), "
      f"depth 64 slowest {l64[-1] * 1e3:.0f} ms (expect ~20)")
ok = 170 <= l1[-1] * 1e3 <= 320 and 18 <= l64[-1] * 1e3 <= 80
if not ok and os.environ.get("FF_TIMING_CHECKS", "1") == "0":
    print("not judged (FF_TIMING_CHECKS=0)")
    ok = True
sys.exit(0 if ok else 1)
PY

# 6. Faults and rotational.
n=$(switches faults)
ln -sfn "$s/faults.conf" "$s/current.conf"
wait_profile faults "$n" 0 0.9
"$py" "$reads" "$sock" --threads 1 --reads 20 --span $((1 << 20)) pv0001 >"$s/in.json"
"$py" "$reads" "$sock" --threads 1 --reads 20 --offset $((2 << 20)) --span $((1 << 20)) \
  pv0001 >"$s/out.json"
"$py" - "$s/in.json" "$s/out.json" <<'PY' || ff_die "eio_ranges did not fail exactly the reads in range"
import json, sys
i = json.load(open(sys.argv[1]))["errors"]["pv0001"]
o = json.load(open(sys.argv[2]))["errors"]["pv0001"]
print(f"pv0001: {len(i)}/20 reads in [0, 1M) failed ({set(i)}), {len(o)}/20 outside")
sys.exit(0 if i == ["EIO"] * 20 and o == [] else 1)
PY
nbdinfo --json "nbd+unix:///pv0002?socket=$sock" >"$s/info.json"
"$py" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["exports"][0]["is_rotational"] else 1)' \
  "$s/info.json" || ff_die "rotational = true did not reach a new client"
nbdinfo --list --json "nbd+unix:///?socket=$sock" >"$s/list.json"
"$py" -c 'import json,sys; e=[x["export-name"] for x in json.load(open(sys.argv[1]))["exports"]]; sys.exit(0 if len(e) == 31 and "pv0031" not in e else 1)' \
  "$s/list.json" || ff_die "a device that appears in an hour is listed"
if nbdinfo "nbd+unix:///pv0031?socket=$sock" >/dev/null 2>&1; then
  ff_die "a device that appears in an hour can be opened"
fi
grep -q "export 'pv0031' is not present yet (the profile's appear_at)" "$s/nbdkit.log" ||
  ff_die "unclear refusal of a device not present yet"
sleep 1.2
"$py" - "$s/stats.json" "$t1" <<'PY' || ff_die "the stats file was not kept up to date after the fork"
import json, sys
st = json.load(open(sys.argv[1]))
d = {x["name"]: x for x in st["devices"]}["pv0001"]
print(f"stats: pv0001 errors {d['errors']}, injected {d['errors_injected']}; "
      f"file rewritten {st['time'] - float(sys.argv[2]):.1f} s later")
sys.exit(0 if d["errors_injected"] == 20 and st["time"] > float(sys.argv[2]) + 3 else 1)
PY

# 7. A 10-minute read is interrupted when the server stops.
ln -sfn "$s/forever.conf" "$s/current.conf"
sleep 2.2
"$py" "$reads" "$sock" --threads 1 --reads 1 pv0003 >"$s/forever.json" 2>&1 &
reader=$!
sleep 1
start=$(date +%s.%N)
stop_server
wait "$reader" || true
took=$("$py" -c "print(f'{$(date +%s.%N) - $start:.1f}')")
"$py" -c "import sys; sys.exit(0 if $took < 5 else 1)" ||
  ff_die "nbdkit took $took s to stop with a request sleeping"
grep -q "aborting sleep" "$s/nbdkit.log" || ff_die "the sleeping request was not interrupted: $(tail -3 "$s/nbdkit.log")"
ff_log "a read sleeping for 10 minutes: nbdkit stopped in $took s"
echo "PASS: the profile's latency, live switches and faults as a libnbd client sees them"
