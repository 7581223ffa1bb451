#!/usr/bin/env bash
# The I/O profile through the nbdkit plugin, judged by the decisions the
# I/O model made (the plugin's request trace, trace=, docs/stats.md) and
# by lower bounds on what a libnbd client times
# (tests/lib/nbd-timed-reads.py, tests/lib/trace-check.py), with nbdkit
# daemonized (the plugin's watcher and stats threads start after the
# fork):
#   - lognormal, median 5 ms, p99 20 ms, seeded: the decided latencies'
#     median and p99 are the profile's within a binomial bound; no reply
#     before its done time; every read the client timed took at least its
#     decided time; the stats file counted every read, its percentiles at
#     least the decided ones;
#   - the watched profile file, edited in place, switches live (every
#     decision then exactly 30 ms); a broken new version is reported with
#     its file and line and the old profile stays (still 30 ms); a
#     retargeted symlink switches again (1 ms).  A switch is the plugin's
#     log line "now 'NAME'" (an event), then the decisions say the rest;
#   - contention: ten reads released at once through one queue of depth
#     1: each done exactly 20 ms after the later of its arrival and the
#     one before; with depth 64 each exactly 20 ms after its arrival;
#   - faults: eio_ranges fail exactly the reads in range, counted as
#     injected; a device before its appear_at is neither listed nor
#     opened; rotational = true reaches new clients;
#   - a trace= path that cannot be created is refused before listening;
#   - a request sleeping for a 10-minute latency does not hold up the
#     server's exit: nbdkit_nanosleep ends it (the trace shows it answered
#     with ESHUTDOWN long before its done time).
# No wall-clock upper bound is judged (bench/run measures fidelity); the
# waits are for events, with generous give-up limits for a hung server.
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
check=$here/../lib/trace-check.py
ff_require nbdkit nbdinfo
"$py" -c 'import nbd' 2>/dev/null ||
  ff_die "$py cannot import nbd: install python3-libnbd (scripts/deps.sh)"
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
ff_env_init # scratch dir and cleanup trap only
s=$FF_SCRATCH
sock=$s/nbd.sock
trace=$s/trace

cat >"$s/farm.conf" <<'CONF'
seed = 9; device_size = "1G";
vgs = ({ count = 32; lvs = ({ fill = 0.5; }); });
CONF
cat >"$s/lognormal.conf" <<'CONF'
name = "lognormal-5ms"; seed = 11;
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

# A trace file that cannot be created: refused before listening, naming
# the key.  Not in a sanitizer build: there nbdkit deadlocks in its exit
# handlers after a message that went through strerror (test-nbd-exports.sh
# says why).
if [[ -z $("$nbdkit" --ff-asan) ]]; then
  if "$nbdkit" -U - "$plugin" spec="$s/farm.conf" trace="$s/nodir/trace" --run true 2>"$s/trace.err"; then
    ff_die "nbdkit accepted trace=$s/nodir/trace"
  fi
  grep -qF "trace: $s/nodir/trace: No such file or directory" "$s/trace.err" ||
    ff_die "unclear refusal of a bad trace=: $(cat "$s/trace.err")"
fi

# nbdkit daemonizes (no -f): the plugin's threads must start after the fork.
pid=
gone() { ! kill -0 "$1" 2>/dev/null; }
stop_server() {
  [[ -n $pid ]] || return 0
  kill "$pid" 2>/dev/null || true
  ff_wait_until 60 gone "$pid" || kill -9 "$pid" 2>/dev/null || true
  pid=
}
ff_on_cleanup stop_server
# -v: a daemonized nbdkit keeps stderr (our log) only when verbose; no
# debug line per request, though (it would cost time on the data path).
"$nbdkit" -v -D nbdkit.backend.datapath=0 -U "$sock" -P "$s/nbdkit.pid" --log=stderr "$plugin" \
  spec="$s/farm.conf" profile="$s/current.conf" stats="$s/stats.json" \
  stats-interval=0.5 trace="$trace" 2>>"$s/nbdkit.log" || ff_die "nbdkit did not start: $(cat "$s/nbdkit.log")"
# The daemonized child writes the pid file after the parent has exited.
ff_wait_until 60 test -s "$s/nbdkit.pid" || ff_die "nbdkit wrote no pid file: $(tail -3 "$s/nbdkit.log")"
pid=$(cat "$s/nbdkit.pid")
exports=()
for i in $(seq 0 15); do exports+=("$(printf 'pv%04d' "$i")"); done

# checked WHAT READS.json CHECK...: wait until the plugin has traced every
# read of the run (the line is written as the request ends, so the client
# may see its reply first), then run trace-check.py's CHECK.
checked() {
  local what=$1 r=$2
  shift 2
  ff_wait_until 60 "$py" "$check" "$trace" "$r" ready ||
    ff_log "not every read of $what is in the trace after 60 s"
  "$py" "$check" "$trace" "$r" "$@" ||
    ff_die "$what: the trace does not show what the profile says"
}

# timed OUT ARGS...: nbd-timed-reads.py ARGS > OUT, failing the test if
# the client does.
timed() {
  local out=$1
  shift
  "$py" "$reads" "$sock" "$@" >"$out" || ff_die "timed reads failed: $(tail -5 "$s/nbdkit.log")"
}

# switches NAME: how many times the plugin has said it switched to
# profile NAME (its debug line "profile=...: now 'NAME'").
switches() { grep -c -- ": now '$1'" "$s/nbdkit.log" || true; }
switched() { (($(switches "$1") > $2)); }

# wait_profile NAME BEFORE MS: wait until the plugin says it switched to
# NAME (more than BEFORE times: an event, not a time), then check that
# reads are decided exactly MS (no contention: one read at a time).
wait_profile() {
  ff_wait_until 60 switched "$1" "$2" ||
    ff_die "the plugin never switched to profile $1: $(tail -3 "$s/nbdkit.log")"
  timed "$s/switch.json" --threads 1 --reads 3 pv0020
  checked "after the switch to $1" "$s/switch.json" fixed "$3"
}

# stats_has PYEXPR: the stats file (st) satisfies PYEXPR.
stats_has() {
  "$py" -c "import json, sys; st = json.load(open(sys.argv[1])); sys.exit(0 if $1 else 1)" \
    "$s/stats.json" 2>/dev/null
}

# 1. 4000 reads on 16 exports: the decisions against the profile.
timed "$s/lat.json" --threads 8 --reads 250 "${exports[@]}"
checked "lognormal 5/20 ms" "$s/lat.json" lognormal 5 20
ff_wait_until 60 stats_has 'st["totals"]["latency"]["read"]["count"] >= 4000' ||
  ff_die "the stats file never counted the 4000 reads"
checked "the stats file" "$s/lat.json" stats "$s/stats.json"
t1=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["time"])' "$s/stats.json")

# 2. Edit the file in place: fixed 30 ms.  (Count the switches before
# the edit: the plugin may see it at once.)
n=$(switches fixed-30ms)
sed -i 's/dist = "lognormal"; median = "5ms"; p99 = "20ms";/dist = "fixed"; value = "30ms";/;
        s/lognormal-5ms/fixed-30ms/' "$s/current-target.conf"
wait_profile fixed-30ms "$n" 30
timed "$s/30ms.json" --threads 8 --reads 10 "${exports[@]:0:8}"
checked "after editing the profile" "$s/30ms.json" fixed 30

# 3. A broken version: reported, the 30 ms profile stays.
printf 'name = "broken";\ngroups = ({ read = { dist = "fixed"; value = 3; }; });\n' \
  >"$s/current-target.conf"
ff_wait_until 60 grep -q "profile=$s/current.conf: $s/current.conf:2: groups.\[0\].read.value.*(keeping profile 'fixed-30ms')" \
  "$s/nbdkit.log" || ff_die "a broken profile was not reported: $(tail -3 "$s/nbdkit.log")"
timed "$s/broken.json" --threads 1 --reads 5 pv0001
checked "after a broken profile" "$s/broken.json" fixed 30

# 4. Retarget the symlink: 1 ms.
n=$(switches fixed-1ms)
ln -sfn "$s/fast.conf" "$s/current.conf"
wait_profile fixed-1ms "$n" 1

# 5. Contention: one queue for all devices, depth 1 then 64, 20 ms each;
# ten reads on ten exports, connected first, then released at once.
for depth in 1 64; do
  n=$(switches "queue-depth-$depth")
  ln -sfn "$s/queue$depth.conf" "$s/current.conf"
  wait_profile "queue-depth-$depth" "$n" 20
  timed "$s/q$depth.json" --threads 10 --reads 1 "${exports[@]:0:10}"
  checked "queue depth $depth" "$s/q$depth.json" queue "$depth" 20
done

# 6. Faults and rotational.
n=$(switches faults)
ln -sfn "$s/faults.conf" "$s/current.conf"
wait_profile faults "$n" 0
timed "$s/in.json" --threads 1 --reads 20 --span $((1 << 20)) pv0001
timed "$s/out.json" --threads 1 --reads 20 --offset $((2 << 20)) --span $((1 << 20)) pv0001
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
ff_wait_until 60 stats_has "st['time'] > $t1 + 3 and {x['name']: x for x in st['devices']}['pv0001']['errors_injected'] >= 20" ||
  ff_log "the stats file has not counted the injected errors after 60 s"
"$py" - "$s/stats.json" "$t1" <<'PY' || ff_die "the stats file was not kept up to date after the fork"
import json, sys
st = json.load(open(sys.argv[1]))
d = {x["name"]: x for x in st["devices"]}["pv0001"]
print(f"stats: pv0001 errors {d['errors']}, injected {d['errors_injected']}; "
      f"file rewritten {st['time'] - float(sys.argv[2]):.1f} s later")
sys.exit(0 if d["errors_injected"] == 20 and st["time"] > float(sys.argv[2]) + 3 else 1)
PY

# 7. A 10-minute read is interrupted when the server stops.
n=$(switches forever)
ln -sfn "$s/forever.conf" "$s/current.conf"
ff_wait_until 60 switched forever "$n" ||
  ff_die "the plugin never switched to profile forever: $(tail -3 "$s/nbdkit.log")"
"$py" "$reads" "$sock" --threads 1 --reads 1 pv0003 >"$s/forever.json" 2>&1 &
reader=$!
ff_wait_until 60 stats_has 'st["inflight"] >= 1' ||
  ff_die "the 10-minute read never reached the plugin"
start=$EPOCHREALTIME
kill "$pid"
# A hang detector, not a measurement: nbdkit_nanosleep ends at once.
ff_wait_until 60 gone "$pid" || ff_die "nbdkit did not stop within 60 s with a request sleeping"
pid=
wait "$reader" || true
took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
grep -q "aborting sleep" "$s/nbdkit.log" || ff_die "the sleeping request was not interrupted: $(tail -3 "$s/nbdkit.log")"
"$py" - "$trace" <<'PY' || ff_die "the trace does not show the sleeping read interrupted"
import errno, sys
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] != "#" and f[2] == "pv0003" and int(f[7]) - int(f[6]) == 600 * 10**9:
        arrival, done, end, err = int(f[6]), int(f[7]), int(f[8]), int(f[9])
        print(f"pv0003: decided 600 s, answered after {(end - arrival) / 1e9:.1f} s "
              f"with {errno.errorcode.get(err, err)}")
        sys.exit(0 if err == errno.ESHUTDOWN and end < done else 1)
print("no line for the 10-minute read")
sys.exit(1)
PY
ff_log "a read sleeping for 10 minutes: nbdkit stopped in $took s"
echo "PASS: the profile's decisions, live switches and faults as a libnbd client sees them"
