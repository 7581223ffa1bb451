#!/usr/bin/env python3
"""Time O_DIRECT reads of block devices or files, from outside the daemon.

usage: timed-reads.py [--threads N] [--reads R] [--size B] [--parallel] DEV...

Default: R reads of B bytes per device, each at a random 4 KiB-aligned
offset in the first 64 MiB, issued by N threads (devices shared out round
robin), one at a time per thread.  Prints JSON:
  {"latencies": {dev: [seconds, ...]}, "wall": seconds, "span": seconds,
   "reads": [[dev, offset, start_ns, end_ns], ...],
   "t0_ns": ns, "t1_ns": ns}
start_ns and end_ns are CLOCK_MONOTONIC (the daemon's clock, so a read
can be matched with its line in the daemon's --trace: start_ns <= its
arrival_ns and end_ns >= its done_ns); every read of the run started at
or after t0_ns and ended at or before t1_ns.

--parallel: one read of B bytes at offset 0 of every DEV, all released at
once behind a barrier (one thread each, every file already open); "wall"
is the batch's wall time, "span" from the first read issued to the last
one done.
"""
import argparse
import json
import mmap
import os
import random
import threading
import time


def read_once(fd, buf, off, rec):
    t = time.monotonic_ns()
    os.preadv(fd, [buf], off)
    u = time.monotonic_ns()
    rec.append((off, t, u))
    return (u - t) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--reads", type=int, default=100)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--parallel", action="store_true")
    ap.add_argument("devs", nargs="+")
    a = ap.parse_args()
    fds = {d: os.open(d, os.O_RDONLY | os.O_DIRECT) for d in a.devs}
    lat = {d: [] for d in a.devs}
    rec = {d: [] for d in a.devs}
    t0_ns = time.monotonic_ns()

    if a.parallel:
        barrier = threading.Barrier(len(a.devs) + 1)

        def one(d):
            buf = mmap.mmap(-1, a.size)
            barrier.wait()
            lat[d].append(read_once(fds[d], buf, 0, rec[d]))

        ts = [threading.Thread(target=one, args=(d,)) for d in a.devs]
        for t in ts:
            t.start()
        barrier.wait()
        t0 = time.perf_counter()
        for t in ts:
            t.join()
        wall = time.perf_counter() - t0
    else:
        def worker(k):
            buf = mmap.mmap(-1, a.size)
            rnd = random.Random(k)
            mine = a.devs[k::a.threads] or []
            for d in mine:
                for _ in range(a.reads):
                    off = rnd.randrange(0, (64 << 20) // 4096) * 4096
                    lat[d].append(read_once(fds[d], buf, off, rec[d]))

        t0 = time.perf_counter()
        ts = [threading.Thread(target=worker, args=(k,))
              for k in range(min(a.threads, len(a.devs)))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        wall = time.perf_counter() - t0
    t1_ns = time.monotonic_ns()
    reads = [[d, off, t, u] for d in a.devs for off, t, u in rec[d]]
    # from the first read issued to the last one done (the wall time
    # without the threads waking from the barrier one after the other)
    span = ((max(r[3] for r in reads) - min(r[2] for r in reads)) / 1e9
            if reads else 0.0)
    print(json.dumps({"latencies": lat, "wall": wall, "span": span,
                      "reads": reads, "t0_ns": t0_ns, "t1_ns": t1_ns}))


if __name__ == "__main__":
    main()
