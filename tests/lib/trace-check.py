#!/usr/bin/env python3
"""Check a run of timed reads against the server's request trace.

usage: trace-check.py TRACE READS.json [--map MAP] CHECK [ARGS...]

TRACE is the file of `fusefarm mount --trace` or the plugin's trace=
(docs/stats.md); READS.json is what tests/lib/timed-reads.py or
nbd-timed-reads.py printed.  MAP ("<loop> <name>" lines) names the
devices when the reads went through loop devices.  The lines checked are
those whose arrival lies in the run's window [t0_ns, t1_ns]: the run's
reads, and anything else that reached the same server meanwhile.

A line's decided time is its model_ns (the last column; done_ns in a
trace older than it): what the profile said.  done_ns is when the reply
was due: the decided time less the daemon's transport share (fusefarm
mount --transport-share), never before arrival.

Every check but `ready` also checks, for every line of the window,
arrival <= done <= decided and (unless the request failed) done <= end: a
reply never goes out before it is due; and for every read the client timed,
that a line of the same device and offset has start_ns <= arrival_ns and
done_ns <= end_ns: the time seen from outside is at least the time the
model decided (a lower bound, never an upper one).

CHECK:
  ready                  exit 0 once every read has its line (lines are
                         written as replies go out, so a client can see
                         its reply first: a condition for ff_wait_until)
  lognormal MED P99      decided latencies (decided - arrival, ms) have the
                         profile's median and p99 within a binomial bound
  fixed MS               every decided latency is exactly MS
  queue DEPTH SERVICE    a shared queue of DEPTH (1, or at least as many
                         as the window's requests) and SERVICE ms, no
                         other latency: the exact completions of the model
  slowest PROFILE.json   the devices with the largest median decided
                         latency are exactly those the profile (the
                         control file profile.json) made slowest
  stats STATS.json       the plugin's stats file counted every read of
                         the window, and its read p50 and p99 (of end -
                         arrival) are at least those of done - arrival,
                         give or take the histogram's 1/16
  share NS               every reply was due exactly NS before its decided
                         time, or at its arrival when the decided latency
                         was NS or less; and NS > 0 brought some forward
Exit status: 0 the check holds, 1 it does not (why on stdout), 2 usage.
"""
import json
import math
import statistics
import sys

MS = 1_000_000


def load(trace, reads_file, map_file):
    r = json.load(open(reads_file))
    names = {}
    if map_file:
        names = dict(line.split()[:2] for line in open(map_file) if line.strip())
    reads = [(names.get(d, d), off, s, e) for d, off, s, e in r["reads"]]
    t0, t1 = r["t0_ns"], r["t1_ns"]
    lines = []
    for text in open(trace):
        if text.startswith("#") or not text.endswith("\n"):
            continue
        f = text.split()
        ln = {"seq": int(f[0]), "dev": int(f[1]), "name": f[2], "kind": f[3],
              "off": int(f[4]), "len": int(f[5]), "arrival": int(f[6]),
              "done": int(f[7]), "end": int(f[8]), "error": int(f[9]),
              "injected": int(f[10]),
              "model": int(f[11]) if len(f) > 11 else int(f[7])}
        if t0 <= ln["arrival"] <= t1:
            lines.append(ln)
    return reads, lines


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def quantile(v, q):
    """Nearest rank: the smallest sample with at least q of them <= it."""
    v = sorted(v)
    return v[max(0, math.ceil(q * len(v)) - 1)]


def by_place(lines):
    by = {}
    for ln in lines:
        by.setdefault((ln["name"], ln["off"]), []).append(ln)
    return by


def inside(read, by):
    """A line of read's device and offset within the time read took."""
    d, off, s, e = read
    return any(s <= ln["arrival"] and ln["done"] <= e
               for ln in by.get((d, off), []))


def common(reads, lines):
    devs = {d for d, _, _, _ in reads}
    mine = [ln for ln in lines if ln["name"] in devs]
    if len(mine) < len(reads):
        fail(f"{len(reads)} reads timed but only {len(mine)} trace lines")
    for ln in lines:
        if ln["done"] < ln["arrival"] or ln["model"] < ln["arrival"]:
            fail(f"decided before arrival: {ln}")
        if ln["done"] > ln["model"]:
            fail(f"due after the decided time: {ln}")
        if not ln["error"] and ln["end"] < ln["done"]:
            fail(f"answered before the model's time: {ln}")
    by = by_place(mine)
    for d, off, s, e in reads:
        if not inside((d, off, s, e), by):
            fail(f"read of {d} at {off} timed {(e - s) / MS:.3f} ms from "
                 f"outside: no trace line inside it "
                 f"({by.get((d, off), [])})")
    return mine


def decided(ln):
    return ln["model"] - ln["arrival"]


def check_lognormal(reads, lines, med, p99):
    mine = common(reads, lines)
    dec = [decided(ln) / MS for ln in mine]
    n = len(dec)
    # The model draws the k-th request of device d from
    # quantile(u(hash(seed, d, k, op))): the set of decisions depends on
    # how many requests each device got, not on when they came, so it
    # repeats run after run.  Treating the hash as uniform, the fraction
    # of n draws at or below the profile's q-quantile is binomial with
    # standard deviation sqrt(q(1 - q) / n); 4.5 of them (a chance of
    # about 7e-6 per check for an arbitrary seed) bound the sample's
    # quantile between the profile's quantiles q -/+ 4.5 sd.
    sigma = math.log(p99 / med) / statistics.NormalDist().inv_cdf(0.99)

    def prof_q(q):
        return med * math.exp(sigma * statistics.NormalDist().inv_cdf(q))

    out = []
    ok = True
    for q, want in ((0.5, med), (0.99, p99)):
        tol = 4.5 * math.sqrt(q * (1 - q) / n)
        lo, hi = prof_q(q - tol), prof_q(q + tol)
        got = quantile(dec, q)
        ok &= lo <= got <= hi
        out.append(f"p{round(q * 100)} {got:.3f} ms (profile {want:g}, "
                   f"bound {lo:.2f}..{hi:.2f})")
    obs = statistics.median((ln["end"] - ln["arrival"]) / MS for ln in mine)
    outside = statistics.median((e - s) / MS for _, _, s, e in reads)
    print(f"{n} decided latencies: {', '.join(out)}; observed in the "
          f"server median {obs:.3f} ms, from outside {outside:.3f} ms "
          f"(both >= decided: lower bounds only)")
    if not ok:
        fail("decided latencies do not match the profile")


def check_fixed(reads, lines, ms):
    mine = common(reads, lines)
    want = round(ms * MS)
    bad = [ln for ln in mine if decided(ln) != want]
    print(f"{len(mine)} requests: decided latency exactly {ms:g} ms: "
          f"{len(mine) - len(bad)} of them")
    if bad:
        fail(f"decided latency is not {ms} ms: {bad[:3]}")


def check_queue(reads, lines, depth, service_ms):
    common(reads, lines)
    svc = round(service_ms * MS)
    q = sorted(lines, key=lambda ln: ln["model"])
    if depth == 1:
        # One slot: each request leaves service after the later of its
        # arrival and the previous one's leaving, in the order they took
        # the queue (done order).  That is arrival order but for requests
        # arriving within a thread switch of each other: arrival_ns is
        # read before the queue is taken, so a preempted thread can take
        # it after a later arrival (counted, not judged).
        prev, waited = 0, 0
        for ln in q:
            want = max(ln["arrival"], prev) + svc
            if ln["model"] != want:
                fail(f"depth 1: decided {ln['model']} != max(arrival "
                     f"{ln['arrival']}, previous decided {prev}) + {svc}: "
                     f"{ln}")
            waited += prev > ln["arrival"]
            prev = ln["model"]
        span = (q[-1]["model"] - q[0]["arrival"]) / MS
        inv = sum(a["arrival"] > b["arrival"] for a, b in zip(q, q[1:]))
        print(f"depth 1: {len(q)} requests served one at a time, each "
              f"exactly {service_ms:g} ms after the later of its arrival and "
              f"the one before; {waited} waited; {inv} served before an "
              f"earlier arrival; first arrival to last done {span:.1f} ms "
              f"(>= {len(q) * service_ms:g})")
    elif depth >= len(q):
        bad = [ln for ln in q if decided(ln) != svc]
        if bad:
            fail(f"depth {depth}: not served at once: {bad[:3]}")
        span = (q[-1]["model"] - q[0]["arrival"]) / MS
        print(f"depth {depth}: {len(q)} requests each done exactly "
              f"{service_ms:g} ms after its arrival (none waited); first "
              f"arrival to last done {span:.1f} ms")
    else:
        fail(f"depth {depth} with {len(q)} requests: not checked here")


def check_slowest(reads, lines, profile):
    mine = common(reads, lines)
    p50 = {d["name"]: d["read_p50_ns"] for d in json.load(open(profile))["devices"]}
    top = max(p50.values())
    slow = {d for d, v in p50.items() if v == top}
    per = {}
    for ln in mine:
        per.setdefault(ln["name"], []).append(decided(ln))
    med = {d: statistics.median(v) for d, v in per.items()}
    order = sorted(med, key=med.get, reverse=True)
    got = set(order[:len(slow)])
    print(f"profile slows {sorted(slow)}; largest decided medians "
          f"{[(d, round(med[d] / MS, 3)) for d in order[:len(slow) + 1]]} ms")
    if not 0 < len(slow) < len(p50):
        fail(f"the profile slows {len(slow)} of {len(p50)} devices")
    if got != slow:
        fail(f"the slowest decided devices are {sorted(got)}")


def check_stats(reads, lines, stats_file):
    mine = common(reads, lines)
    tot = json.load(open(stats_file))["totals"]["latency"]["read"]
    dec = [ln["done"] - ln["arrival"] for ln in mine if ln["kind"] == "read"]
    out, ok = [], tot["count"] >= len(dec)
    for q, key in ((0.5, "p50_ns"), (0.99, "p99_ns")):
        d = quantile(dec, q)
        ok &= tot[key] >= d * 15 / 16
        out.append(f"{key[:3]} {tot[key] / MS:.3f} ms >= due {d / MS:.3f}")
    print(f"stats file: {tot['count']} reads (window {len(dec)}), "
          f"{', '.join(out)} (less 1/16)")
    if not ok:
        fail("the stats file does not agree with the trace")


def check_share(reads, lines, ns):
    common(reads, lines)
    bad = [ln for ln in lines
           if ln["done"] != (ln["model"] - ns if ln["model"] - ln["arrival"] > ns
                             else ln["arrival"])]
    sooner = sum(ln["done"] < ln["model"] for ln in lines)
    print(f"{len(lines)} requests due {ns / 1000:.1f} us before the decided "
          f"time (or at arrival): {len(lines) - len(bad)} of them; "
          f"{sooner} brought forward")
    if bad:
        fail(f"not due at decided - {ns} ns: {bad[:3]}")
    if ns > 0 and not sooner:
        fail("a share > 0 brought no reply forward")


def main():
    a = sys.argv[1:]
    mp = None
    if "--map" in a:
        i = a.index("--map")
        mp = a[i + 1]
        del a[i:i + 2]
    if len(a) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    reads, lines = load(a[0], a[1], mp)
    check, args = a[2], a[3:]
    if check == "ready":
        by = by_place(lines)
        sys.exit(0 if all(inside(r, by) for r in reads) else 1)
    elif check == "lognormal" and len(args) == 2:
        check_lognormal(reads, lines, float(args[0]), float(args[1]))
    elif check == "fixed" and len(args) == 1:
        check_fixed(reads, lines, float(args[0]))
    elif check == "queue" and len(args) == 2:
        check_queue(reads, lines, int(args[0]), float(args[1]))
    elif check == "slowest" and len(args) == 1:
        check_slowest(reads, lines, args[0])
    elif check == "stats" and len(args) == 1:
        check_stats(reads, lines, args[0])
    elif check == "share" and len(args) == 1:
        check_share(reads, lines, int(args[0]))
    else:
        print(f"trace-check.py: bad check {' '.join(a[2:])}\n{__doc__}",
              file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
