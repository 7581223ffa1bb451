#!/usr/bin/python3
"""One libnbd connection per farm device, all open at once.

usage: nbd-many.py SOCKET MANIFEST.json

Opens a connection to every device of the manifest (all kept open), then
reads the first 8 KiB of each from 32 threads and checks it: a PV or
orphan carries "LABELONE" in its label sector, a duplicate the same bytes
as its PV, a blank only zeros, a signature something.  Prints the counts
and the number of file descriptors the nbdkit process (an ancestor of
this one, as under nbdkit --run) held with every connection open.
Needs Debian's /usr/bin/python3 (python3-libnbd).
"""
import json
import os
import resource
import sys
import threading

import nbd


def nbdkit_fds():
    """The server of nbdkit --run is a child of the nbdkit process that
    runs the command (an ancestor of ours): find it, count its fds."""
    pid, runner = os.getpid(), None
    while pid > 1 and runner is None:
        with open(f"/proc/{pid}/stat") as f:
            comm, rest = f.read().split("(", 1)[1].rsplit(")", 1)
        if comm == "nbdkit":
            runner = pid
        pid = int(rest.split()[1])
    for p in os.listdir("/proc"):
        try:
            with open(f"/proc/{p}/stat") as f:
                comm, rest = f.read().split("(", 1)[1].rsplit(")", 1)
        except (OSError, IndexError):
            continue
        if comm == "nbdkit" and int(rest.split()[1]) == runner:
            return int(p), len(os.listdir(f"/proc/{p}/fd"))
    return None, None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sock, manifest = sys.argv[1:]
    m = json.load(open(manifest))
    devs = m["devices"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = len(devs) + 64
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))

    handles = {}
    for d in devs:
        h = nbd.NBD()
        h.set_export_name(d["name"])
        h.connect_unix(sock)
        handles[d["name"]] = h
    pid, fds = nbdkit_fds()
    print(f"{len(handles)} connections open; nbdkit (pid {pid}) holds {fds} fds")

    data, errors = {}, []

    def worker(k):
        for d in devs[k::32]:
            try:
                data[d["name"]] = handles[d["name"]].pread(8192, 0)
            except nbd.Error as e:
                errors.append(f"{d['name']}: {e}")

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(32)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        sys.exit("\n".join(errors[:20]))

    bad = []
    for d in devs:
        b = data[d["name"]]
        if d["role"] in ("pv", "orphan") and b"LABELONE" not in b[:2048]:
            bad.append(f"{d['name']}: no LABELONE")
        elif d["role"] == "duplicate" and b != data[d["duplicate_of"]]:
            bad.append(f"{d['name']}: differs from {d['duplicate_of']}")
        elif d["role"] == "blank" and any(b):
            bad.append(f"{d['name']}: blank device is not zero")
        elif d["role"] == "signature" and not any(b):
            bad.append(f"{d['name']}: signature device reads zeros")
    for h in handles.values():
        h.shutdown()
    if bad:
        sys.exit("\n".join(bad[:20]))
    print(f"read and checked 8 KiB of each of {len(devs)} exports")


if __name__ == "__main__":
    main()
