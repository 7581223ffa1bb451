#!/usr/bin/python3
"""Time reads of nbdkit exports from a libnbd client, request by request.

usage: nbd-timed-reads.py SOCKET [--threads N] [--reads R] [--size B]
                          [--span S] [--offset O] EXPORT...

Each of N threads takes the exports round robin, opens one connection per
export and issues R reads of B bytes per export, one at a time, at
random B-aligned offsets in [O, O + S).  Prints JSON:
  {"latencies": {export: [seconds, ...]}, "errors": {export: [errno name,
   ...]}, "wall": seconds}
A read that fails is timed too, and its errno name listed.
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
    failures = []

    def worker(k):
        try:
            rnd = random.Random(k)
            for e in a.exports[k::a.threads]:
                h = nbd.NBD()
                h.set_export_name(e)
                h.connect_unix(a.socket)
                for _ in range(a.reads):
                    off = a.offset + rnd.randrange(0, a.span // a.size) * a.size
                    t = time.perf_counter()
                    try:
                        h.pread(a.size, off)
                    except nbd.Error as ex:
                        errs[e].append(errno.errorcode.get(ex.errnum, str(ex.errnum)))
                    lat[e].append(time.perf_counter() - t)
                h.shutdown()
        except Exception as ex:  # reported by the main thread
            failures.append(f"thread {k}: {ex}")

    t0 = time.perf_counter()
    ts = [threading.Thread(target=worker, args=(k,))
          for k in range(min(a.threads, len(a.exports)))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    if failures:
        raise SystemExit("\n".join(failures))
    print(json.dumps({"latencies": lat, "errors": errs, "wall": wall}))


if __name__ == "__main__":
    main()
