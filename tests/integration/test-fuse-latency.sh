#!/usr/bin/env bash
# Injected latency and contention: the decisions the I/O model made, read
# from the daemon's request trace (--trace, docs/stats.md), and O_DIRECT
# reads of the loop devices timed from outside (tests/lib/timed-reads.py)
# that are never faster than those decisions (tests/lib/trace-check.py):
#   - a --trace path that cannot be created: exit 1 (an output file),
#     nothing mounted; a bad --cpu-latency: exit 2; --cpu-latency off
#     holds nothing, auto held the CPUs while the reads below waited;
#   - a seeded lognormal profile (median 5 ms, p99 20 ms): the median and
#     p99 of the decided latencies (done - arrival) are the profile's
#     within a binomial bound; every reply went out at or after its done
#     time; every read timed from outside took at least its decided time;
#     stats.json's reply_late counts every reply and has the trace's
#     largest end - done;
#   - configs/profiles/slow-tail.conf, switched live: the devices with
#     the largest decided latencies are exactly the 1% the profile made
#     100x slower, and exactly those are "slow" in profile.json;
#   - a queue of depth 1 with a 20 ms service time, 10 reads released
#     together: each is done exactly 20 ms after the later of its arrival
#     and the previous one's done time (one at a time); with depth 64
#     each is done exactly 20 ms after its arrival;
#   - eight reads of one loop at once are all in the daemon together (the
#     loop is in direct I/O: a buffered loop sends one at a time);
#   - the transport share: a bad --transport-share exits 2; a duration is
#     info.json's, the control file sets another and refuses a bad one;
#     with auto, attach measured one through the probe file, and every
#     reply of the lognormal run was due exactly that much before the
#     model's time (or at arrival).
# Only decisions and lower bounds are judged: nothing here depends on how
# busy the machine is (bench/run measures the wall-clock fidelity).
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
check=$here/../lib/trace-check.py
trace=$s/trace

cat >"$s/farm.conf" <<'CONF'
seed = 7; device_size = "1G";
vgs = ({ count = 200; lvs = ({ fill = 0.5; }); });
CONF
cat >"$s/lognormal.conf" <<'CONF'
name = "lognormal-5ms"; seed = 11;
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

# checked NAME READS.json CHECK...: wait until the daemon has traced every
# read of the run (it writes a line as the reply goes out, so the client
# may see its reply first), then run the check.
checked() {
  local what=$1 r=$2
  shift 2
  ff_wait_until 60 python3 "$check" "$trace" "$r" --map "$FF_SCRATCH/map" ready ||
    ff_log "not every read of $what is in the trace after 60 s"
  python3 "$check" "$trace" "$r" --map "$FF_SCRATCH/map" "$@" ||
    ff_die "$what: the trace does not show what the profile says"
}

# 0. A trace file that cannot be created: exit 1 naming the option, and
# nothing mounted.
mkdir -p "$s/bad"
ff_on_cleanup "if ff_is_mounted '$s/bad'; then fusermount3 -u '$s/bad'; fi"
rc=0
"$bin" mount "$s/farm.conf" "$s/bad" --trace "$s/nodir/trace" 2>"$s/bad.err" || rc=$?
((rc == 1)) || ff_die "mount --trace into a missing directory: exit $rc, expected 1"
grep -qF -- "--trace: $s/nodir/trace: No such file or directory" "$s/bad.err" ||
  ff_die "unclear refusal of a bad --trace: $(cat "$s/bad.err")"
! ff_is_mounted "$s/bad" || ff_die "mounted despite a bad --trace"

# --cpu-latency: a bad mode is refused (exit 2, nothing mounted); off
# holds nothing even while a read waits.
rc=0
"$bin" mount "$s/farm.conf" "$s/bad" --cpu-latency sometimes 2>"$s/bad.err" || rc=$?
if ((rc != 2)) || ! grep -qF -- "--cpu-latency 'sometimes': expected auto or off" "$s/bad.err"; then
  ff_die "mount --cpu-latency sometimes: exit $rc: $(cat "$s/bad.err")"
fi
! ff_is_mounted "$s/bad" || ff_die "mounted despite a bad --cpu-latency"
"$bin" mount "$s/farm.conf" "$s/bad" --cpu-latency off --profile "$s/lognormal.conf" ||
  ff_die "mount --cpu-latency off failed"
dd if="$s/bad/$(head -n1 "$s/bad/.fusefarm/devices" | cut -d' ' -f1)" of=/dev/null bs=4k count=4 iflag=direct status=none ||
  ff_die "reads of a --cpu-latency off mount failed"
python3 - "$s/bad/.fusefarm/info.json" <<'PY' || ff_die "info.json cpu_latency with --cpu-latency off (above)"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cpu_latency"]
print("--cpu-latency off: %s, %d delayed at most" % (c, d["delayed_max"]))
sys.exit(not (c["mode"] == "off" and not c["on"] and c["holds"] == 0
              and c["error"] is None and d["delayed_max"] >= 1))
PY
fusermount3 -u "$s/bad"

# --transport-share: a bad value is refused (exit 2, nothing mounted); a
# duration is what info.json says, and nobody measures over it; the
# control file sets another, and refuses a bad one (EINVAL, last-error).
share() { # share MNT: info.json's transport_share as "MODE NS BY"
  python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["transport_share"]; print(t["mode"], t["ns"], t["by"])' \
    "$1/.fusefarm/info.json"
}
rc=0
"$bin" mount "$s/farm.conf" "$s/bad" --transport-share 2 2>"$s/bad.err" || rc=$?
if ((rc != 2)) || ! grep -qF -- "--transport-share '2': expected auto, off or a duration" "$s/bad.err"; then
  ff_die "mount --transport-share 2: exit $rc: $(cat "$s/bad.err")"
fi
! ff_is_mounted "$s/bad" || ff_die "mounted despite a bad --transport-share"
"$bin" mount "$s/farm.conf" "$s/bad" --transport-share 1.5ms ||
  ff_die "mount --transport-share 1.5ms failed"
got=$(share "$s/bad")
[[ $got == "fixed 1500000 --transport-share" ]] ||
  ff_die "info.json transport_share with --transport-share 1.5ms: '$got'"
echo "transport-share 20us by hand" >"$s/bad/.fusefarm/control" ||
  ff_die "the control file refused transport-share 20us"
got=$(share "$s/bad")
[[ $got == "fixed 20000 by hand" ]] ||
  ff_die "info.json transport_share after the control file's 20us: '$got'"
if echo "transport-share 2s" >"$s/bad/.fusefarm/control" 2>/dev/null; then
  ff_die "the control file took a transport share of 2 s"
fi
grep -qF "transport-share '2s': expected a duration of at most 1s" "$s/bad/.fusefarm/last-error" ||
  ff_die "last-error after a bad transport-share: $(cat "$s/bad/.fusefarm/last-error")"
[[ $(share "$s/bad") == "fixed 20000 by hand" ]] ||
  ff_die "a refused transport-share changed the share: $(share "$s/bad")"
fusermount3 -u "$s/bad"

ff_fuse_mount "$bin" "$s/farm.conf" "$s/mnt" --profile "$s/lognormal.conf" --trace "$trace"
ff_fuse_attach
mapfile -t loops < <(cut -d' ' -f1 "$FF_SCRATCH/map")

# 1. 8000 reads on 16 devices: the decided latencies against the profile.
python3 "$reads" --threads 16 --reads 500 "${loops[@]:0:16}" >"$s/lat.json"
checked "lognormal 5/20 ms" "$s/lat.json" lognormal 5 20
# stats.json's reply_late counts every reply the trace has (none was
# interrupted here), and none went out before its decided time: its
# minimum is not below 0 by construction, so check the count and that the
# maximum is what the trace says (end - done), to the histogram's exactness
lates() {
  python3 - "$trace" "$FF_MNT/.fusefarm/stats.json" <<'PY'
import json, sys
lines = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
late = json.load(open(sys.argv[2]))["reply_late"]
mx = max(int(w[8]) - int(w[7]) for w in lines)
sys.exit(not (late["count"] == len(lines) and late["max_ns"] == mx))
PY
}
ff_wait_until 60 lates ||
  ff_die "stats.json reply_late does not count the trace's replies or their largest lateness"

# The share attach measured through the probe file (the mount's default,
# --transport-share auto): every reply of the run was due exactly that
# much before the model's time, or at arrival when the model's was sooner.
read -r mode share_ns by < <(share "$FF_MNT")
[[ $mode == auto && $share_ns -gt 0 && $by == "fusefarm attach:"* ]] ||
  ff_die "attach measured no transport share: '$mode $share_ns $by'"
ff_log "transport share measured by attach: $share_ns ns"
checked "transport share" "$s/lat.json" share "$share_ns"

# The CPUs were held awake while the reads waited (--cpu-latency auto,
# docs/fuse.md): at least once, for some time, and the hold works.
python3 - "$FF_MNT/.fusefarm/info.json" <<'PY' || ff_die "info.json cpu_latency: no hold while reads were delayed (above)"
import json, os, sys
c = json.load(open(sys.argv[1]))["cpu_latency"]
print("info.json cpu_latency: %s" % c)
if os.path.exists("/dev/cpu_dma_latency"):
    ok = (c["mode"] == "auto" and c["on"] and c["error"] is None
          and c["holds"] >= 1 and c["held_s"] > 0)
else:
    ok = c["mode"] == "auto" and not c["on"] and c["error"]
sys.exit(not ok)
PY

# 2. slow-tail: the slowest decisions are on the devices the profile chose.
"$bin" profile "$FF_MNT" "$here/../../configs/profiles/slow-tail.conf" >/dev/null
cp "$FF_MNT/.fusefarm/profile.json" "$s/profile.json"
# profile.json's "slow" (what fusefarm run records, docs/run-json.md):
# exactly the 2 of 200 devices the fraction group made 100x slower
python3 - "$s/profile.json" <<'PY' || ff_die "profile.json: slow is not slow-tail's 1%"
import json, sys
devs = json.load(open(sys.argv[1]))["devices"]
slow = {d["name"] for d in devs if d["slow"]}
tail = {d["name"] for d in devs if d["read_p50_ns"] >= 10_000_000}
print("profile.json: slow devices %s" % sorted(slow))
sys.exit(not (len(tail) == 2 and slow == tail))
PY
python3 "$reads" --threads 16 --reads 5 "${loops[@]}" >"$s/tail.json"
checked slow-tail "$s/tail.json" slowest "$s/profile.json"

# 3. Contention: a shared queue of depth 1, then 64, service 20 ms.
for depth in 1 64; do
  "$bin" profile "$FF_MNT" "$s/queue$depth.conf" >/dev/null
  python3 "$reads" --parallel "${loops[@]:0:10}" >"$s/q$depth.json"
  checked "queue depth $depth" "$s/q$depth.json" queue "$depth" 20
done
# 4. Eight reads of one loop at once: the loop reads its file with direct
# I/O (attach's default, docs/fuse.md), so all eight wait in the daemon
# together (delayed_pending reaches 8); a buffered loop's worker would
# send them one at a time.
cat >"$s/hold.conf" <<'CONF'
name = "fixed-2s";
groups = ({ devices = "all"; read = { dist = "fixed"; value = "2s"; }; });
CONF
"$bin" profile "$FF_MNT" "$s/hold.conf" >/dev/null
python3 - "${loops[0]}" <<'PY' &
import mmap, os, sys, threading
def read(i):
    fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
    os.preadv(fd, [mmap.mmap(-1, 4096)], i << 20)
    os.close(fd)
th = [threading.Thread(target=read, args=(i,)) for i in range(8)]
for t in th:
    t.start()
for t in th:
    t.join()
PY
readers=$!
pending_8() {
  python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["delayed_pending"] < 8)' \
    "$FF_MNT/.fusefarm/info.json"
}
ff_wait_until 60 pending_8 ||
  ff_die "8 reads of ${loops[0]} at once never were all in the daemon together (a buffered loop?)"
wait "$readers" || ff_die "the 8 reads of ${loops[0]} failed"
ff_log "8 reads of one loop at once: all 8 delayed in the daemon together"

echo "PASS: the model's decisions match the profiles; nothing answered early"
