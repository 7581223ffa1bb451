#!/usr/bin/python3
"""Time reads of nbdkit exports from a libnbd client, request by request.

usage: nbd-timed-reads.py SOCKET [--threads N] [--reads R] [--size B]
                          [--span S] [--offset O] EXPORT...

Each of N threads takes the exports round robin and opens one connection
per export; once every thread has connected all of its exports, they
start together (a barrier) and issue R reads of B bytes per export, one
at a time, at random B-aligned offsets in [O, O + S).  So with one export
per thread and R = 1, all the reads are issued at once.  Prints JSON:
  {"latencies": {export: [seconds, ...]}, "errors": {export: [errno name,
   ...]}, "wall": seconds, "span": seconds, "reads": [[export, offset,
   start_ns, end_ns], ...], "t0_ns": ns, "t1_ns": ns}
A read that fails is timed too, and its errno name listed.  start_ns and
end_ns are CLOCK_MONOTONIC, the plugin's clock (to match a read with its
line in the plugin's trace=); the reads lie within [t0_ns, t1_ns]; "wall"
is from the barrier to the last reply, "span" from the first read sent
to the last reply.
Needs Debian's /usr/bin/python3 (python3-libnbd).
"""
import argparse
import errno
import json
import random
import threading
import time

import nbd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--reads", type=int, default=100)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--span", type=int, default=64 << 20)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("exports", nargs="+")
    a = ap.parse_args()
    lat = {e: [] for e in a.exports}
    errs = {e: [] for e in a.exports}
    rec = {e: [] for e in a.exports}
    failures = []
    nthreads = min(a.threads, len(a.exports))
    barrier = threading.Barrier(nthreads + 1)

    def worker(k):
        hs = []
        try:
            for e in a.exports[k::a.threads]:
                h = nbd.NBD()
                h.set_export_name(e)
                h.connect_unix(a.socket)
                hs.append((e, h))
        except Exception as ex:  # reported by the main thread
            failures.append(f"thread {k}: {ex}")
            barrier.abort()
            return
        try:
            barrier.wait()
            rnd = random.Random(k)
            for e, h in hs:
                for _ in range(a.reads):
                    off = a.offset + rnd.randrange(0, a.span // a.size) * a.size
                    t = time.monotonic_ns()
                    try:
                        h.pread(a.size, off)
                    except nbd.Error as ex:
                        errs[e].append(errno.errorcode.get(ex.errnum, str(ex.errnum)))
                    u = time.monotonic_ns()
                    lat[e].append((u - t) / 1e9)
                    rec[e].append([e, off, t, u])
            for _, h in hs:
                h.shutdown()
        except threading.BrokenBarrierError:
            pass  # another thread could not connect: it says why
        except Exception as ex:
            failures.append(f"thread {k}: {ex}")

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(nthreads)]
    t0_ns = time.monotonic_ns()
    for t in ts:
        t.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    t1_ns = time.monotonic_ns()
    if failures:
        raise SystemExit("\n".join(failures))
    reads = [r for e in a.exports for r in rec[e]]
    # from the first request sent to the last reply: the wall time without
    # the client's threads waking from the barrier one after the other
    span = ((max(r[3] for r in reads) - min(r[2] for r in reads)) / 1e9
            if reads else 0.0)
    print(json.dumps({"latencies": lat, "errors": errs, "wall": wall,
                      "span": span, "reads": reads, "t0_ns": t0_ns,
                      "t1_ns": t1_ns}))


if __name__ == "__main__":
    main()
