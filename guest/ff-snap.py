#!/usr/bin/env python3
"""ff-snap.py SOCKET STATS: the farm's counters for the guest, on request.

run-initramfs.sh --fio starts it beside qemu: SOCKET is the unix socket of
the guest's third serial port (ttyS2, a qemu chardev server), STATS the
stats file the nbdkit serving the guest's disks writes every 50 ms
(docs/stats.md).  For each line "SNAP" the guest (ff-guestrun) sends, it
waits for a snapshot taken after the request arrived, so every request
the guest saw answered before asking is in it, and answers one line:

  {"time": T, "devices": {"pv0001": [reads, bytes_read, writes,
   bytes_written, flushes], ...}, "totals": [...]}

(devices with I/O only, as the stats file lists them), or "ERR why".
The guest takes differences between two answers.  Ends when the guest's
side closes (qemu exits); exit 1 when it never could connect.
"""
import json
import os
import socket
import sys
import time

KEYS = ("reads", "bytes_read", "writes", "bytes_written", "flushes")


def counters(o):
    return [int(o.get(k, 0)) for k in KEYS]


def snapshot(stats, after, limit=30.0):
    """The first stats document taken after `after` (host clock)."""
    end = time.time() + limit
    while time.time() < end:
        try:
            with open(stats) as f:
                doc = json.load(f)
            if float(doc.get("time", 0)) > after:
                return {"time": doc["time"],
                        "devices": {d["name"]: counters(d)
                                    for d in doc.get("devices", [])},
                        "totals": counters(doc.get("totals", {}))}
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    raise TimeoutError("no stats snapshot newer than the request in %.0f s "
                       "(%s)" % (limit, stats))


def main():
    if len(sys.argv) != 3:
        print("usage: ff-snap.py SOCKET STATS", file=sys.stderr)
        return 2
    path, stats = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX)
    for _ in range(600):
        try:
            s.connect(path)
            break
        except OSError:
            time.sleep(0.1)
    else:
        print("ff-snap: cannot connect to %s" % path, file=sys.stderr)
        return 1
    buf = b""
    while True:
        data = s.recv(4096)
        if not data:
            return 0
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.strip(b"\r ") != b"SNAP":
                continue
            try:
                reply = json.dumps(snapshot(stats, time.time()),
                                   separators=(",", ":"))
            except TimeoutError as e:
                reply = "ERR %s" % e
            s.sendall(reply.encode() + b"\n")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
