#!/usr/bin/env python3
"""latency-breakdown.py: the two halves of bench/latency-breakdown.sh.

  sample MNT OUT
      until killed, read /sys/fs/fuse/connections/N/waiting of the FUSE
      mount MNT (N: the mount's device number: requests the kernel has
      sent or holds for the daemon and not yet answered) every 2 ms, write
      a histogram "VALUE COUNT" lines to OUT when killed (SIGTERM).
  join LOOPS TRACE READS WAITING THREADS LAT
      match every read of readrate -l (READS: "PATH OFFSET START END") with
      its line of the farm's trace (TRACE: docs/stats.md; LOOPS: "LOOP
      NAME" lines) and print the split of its time (in, model, late, out:
      bench/latency-breakdown.sh) as percentiles in microseconds, with the
      waiting histogram.

Not a test: it measures, it asserts nothing.
"""
import os
import signal
import sys
import time


def sample(mnt, out):
    st = os.stat(mnt)
    path = "/sys/fs/fuse/connections/%d/waiting" % st.st_dev
    hist = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        with open(path) as f:
            v = int(f.read().strip() or 0)
        hist[v] = hist.get(v, 0) + 1
        time.sleep(0.002)  # (a busy loop would take a CPU from the run)
    with open(out, "w") as o:
        for v in sorted(hist):
            o.write("%d %d\n" % (v, hist[v]))


def pct(v, p):
    return v[min(len(v) - 1, int((len(v) - 1) * p))] if v else 0


def join(loops, trace, reads, waiting, threads, lat):
    name = {}
    for line in open(loops):
        loop, n = line.split()
        name[loop] = n
    # the trace: (name, offset) -> [(arrival, done, end)], in arrival order
    by = {}
    for line in open(trace):
        if line.startswith("#"):
            continue
        w = line.split()
        if w[3] != "read":
            continue
        by.setdefault((w[2], int(w[4])), []).append((int(w[6]), int(w[7]), int(w[8])))
    parts = {"in": [], "model": [], "late": [], "out": [], "total": []}
    unmatched = 0
    for line in open(reads):
        path, off, t0, t1 = line.split()
        off, t0, t1 = int(off), int(t0), int(t1)
        # (the daemon stamps end after its reply's write returned: the
        # reader may be back before that, so out can be below 0)
        cands = [c for c in by.get((name[path], off), []) if t0 <= c[0] <= t1]
        if len(cands) != 1:
            unmatched += 1
            continue
        a, d, e = cands[0]
        parts["in"].append(a - t0)
        parts["model"].append(d - a)
        parts["late"].append(e - d)
        parts["out"].append(t1 - e)
        parts["total"].append(t1 - t0)
    n = len(parts["total"])
    print("latency-breakdown: profile fixed %s, %s threads, %d reads matched (%d not)"
          % (lat, threads, n, unmatched))
    print("  %-6s %9s %9s %9s %9s   (us)" % ("part", "p50", "p90", "p99", "mean"))
    for k in ("in", "model", "late", "out", "total"):
        v = sorted(parts[k])
        mean = sum(v) / len(v) if v else 0
        print("  %-6s %9.1f %9.1f %9.1f %9.1f" % (k, pct(v, 0.5) / 1e3, pct(v, 0.9) / 1e3,
                                                 pct(v, 0.99) / 1e3, mean / 1e3))
    hist = [tuple(map(int, l.split())) for l in open(waiting)] if os.path.exists(waiting) else []
    tot = sum(c for _, c in hist)
    if tot:
        mean = sum(v * c for v, c in hist) / tot
        busy = sum(c for v, c in hist if v > 0) / tot
        top = max(v for v, _ in hist)
        print("  fuse waiting: mean %.2f, nonzero %.0f%% of %d samples, max %d"
              % (mean, 100 * busy, tot, top))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "sample":
        sample(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 8 and sys.argv[1] == "join":
        join(*sys.argv[2:])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
