#!/usr/bin/python3
"""Writers hammering one overlay through two paths at once, then a check.

usage: load-writes.py write --socket SOCK --devices NAME,... --loops DEV,...
                      --log LOG [--loop-writers N] [--nbd-writers N]
                      [--writes K] [--stripes S] [--stripe-size T]
                      [--base OFF] [--seed N]
       load-writes.py verify --log LOG [--socket SOCK] [--loops DEV,...]
                      [--files PATH,...]

Every device of --devices is reached two ways: through --loops (its loop
device, in the same order, read and written with O_DIRECT: loop ->
FUSE file -> daemon) and through NBD export NAME on SOCK (nbdkit's file
plugin over the same FUSE files -> daemon).  Both land in the FUSE
daemon's one overlay.

The region [BASE, BASE + S*T) of each device is cut into S stripes of T
bytes; stripe i belongs to writer i % W (W = loop writers + NBD writers,
loop writers first), so the writers' regions interleave.  T is not a
multiple of the overlay's 4 KiB block: neighbouring stripes, owned by
different writers (often on different paths), share overlay blocks, so
the overlay's read-modify-write of a partial block races between them.

write: each writer (a thread, one libnbd handle per device for NBD
writers) makes K writes of one whole stripe, at a random stripe it owns
on a random device.  A stripe record is
  magic "FFLOADW1", device index u32, writer u32, seq u64, offset u64,
  length u32, payload (random bytes seeded by writer and seq), and the
  SHA-256 of everything before it in its last 32 bytes,
so a record that is torn (mixed with another), misplaced (another
device's or offset's), stale (an older seq than the writer's last) or
lost (zeros) is told apart.  LOG (JSON) gets the layout and, per writer,
the last seq written to every stripe it wrote.

verify: read every stripe of every device back through each path given
(--loops, --socket, --files: the FUSE files themselves) and check: a
stripe that was written holds exactly its owner's last record, intact;
one that was never written reads as zeros.  Prints a line per path;
exits 1 on the first path with a bad stripe (listing up to 10).

Needs Debian's /usr/bin/python3 (python3-libnbd).
"""
import argparse
import hashlib
import json
import mmap
import os
import random
import struct
import sys
import threading
import time

MAGIC = b"FFLOADW1"
HDR = struct.Struct("<8sIIQQI")
SECTOR = 512


def record(dev, writer, seq, off, length):
    head = HDR.pack(MAGIC, dev, writer, seq, off, length)
    body = random.Random(writer << 40 | seq).randbytes(length - len(head) - 32)
    data = head + body
    return data + hashlib.sha256(data).digest()


def stripe_off(lay, i):
    return lay["base"] + i * lay["stripe_size"]


def connect(sock, name):
    import nbd

    h = nbd.NBD()
    h.set_export_name(name)
    h.connect_unix(sock)
    return h


def writer_main(w, path, lay, a, last, errs):
    try:
        rnd = random.Random(a.seed * 1000 + w)
        ndev = len(lay["devices"])
        nw = lay["writers"]
        owned = list(range(w, lay["stripes"], nw))
        size = lay["stripe_size"]
        if path == "loop":
            fds = [os.open(d, os.O_RDWR | os.O_DIRECT) for d in a.loops]
            buf = mmap.mmap(-1, size)
        else:
            hs = [connect(a.socket, n) for n in lay["devices"]]
        for seq in range(1, a.writes + 1):
            d = rnd.randrange(ndev)
            i = rnd.choice(owned)
            off = stripe_off(lay, i)
            rec = record(d, w, seq, off, size)
            if path == "loop":
                buf[:] = rec
                n = os.pwrite(fds[d], buf, off)
                if n != size:
                    raise OSError(f"short write {n} at {off}")
            else:
                hs[d].pwrite(rec, off)
            last[f"{d}:{i}"] = seq
        if path == "loop":
            for fd in fds:
                os.close(fd)
        else:
            for h in hs:
                h.flush()
                h.shutdown()
    except Exception as e:  # noqa: BLE001: any failure fails the run
        errs.append(f"writer {w} ({path}): {e!r}")


def do_write(a):
    devs = a.devices.split(",")
    loops = a.loops.split(",")
    if len(devs) != len(loops):
        sys.exit("load-writes.py: --devices and --loops differ in length")
    a.loops = loops
    nw = a.loop_writers + a.nbd_writers
    if a.stripe_size % SECTOR or a.stripe_size % 4096 == 0 or nw < 2:
        sys.exit("load-writes.py: the stripe size must be a multiple of 512 "
                 "but not of 4096, and there must be 2 writers or more")
    lay = {"devices": devs, "base": a.base, "stripes": a.stripes,
           "stripe_size": a.stripe_size, "writers": nw,
           "paths": ["loop"] * a.loop_writers + ["nbd"] * a.nbd_writers}
    last = [dict() for _ in range(nw)]
    errs = []
    ts = [threading.Thread(target=writer_main,
                           args=(w, lay["paths"][w], lay, a, last[w], errs))
          for w in range(nw)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    if errs:
        print("\n".join(errs), file=sys.stderr)
        sys.exit(1)
    lay["last"] = last
    with open(a.log, "w") as f:
        json.dump(lay, f)
    total = nw * a.writes
    stripes = sum(len(x) for x in last)
    print(f"{a.loop_writers} loop + {a.nbd_writers} NBD writers: {total} "
          f"writes of {a.stripe_size} B in {wall:.1f} s "
          f"({total / wall:.0f}/s) to {stripes} stripes on {len(devs)} devices")


def check_region(lay, di, region):
    """Bad-stripe descriptions for device index di's region bytes."""
    bad = []
    nw = lay["writers"]
    size = lay["stripe_size"]
    zero = bytes(size)
    for i in range(lay["stripes"]):
        got = region[i * size:(i + 1) * size]
        owner = i % nw
        want_seq = lay["last"][owner].get(f"{di}:{i}")
        if want_seq is None:
            if got != zero:
                bad.append(f"stripe {i}: never written, not zero")
            continue
        if got == zero:
            bad.append(f"stripe {i}: lost (writer {owner} seq {want_seq})")
            continue
        if hashlib.sha256(got[:-32]).digest() != got[-32:]:
            bad.append(f"stripe {i}: torn (checksum wrong; writer {owner} "
                       f"seq {want_seq} expected)")
            continue
        magic, dev, w, seq, off, length = HDR.unpack_from(got)
        want = (MAGIC, di, owner, want_seq, stripe_off(lay, i), size)
        if (magic, dev, w, seq, off, length) != want:
            bad.append(f"stripe {i}: holds dev {dev} writer {w} seq {seq} "
                       f"offset {off}, expected dev {di} writer {owner} "
                       f"seq {want_seq} offset {want[4]}")
    return bad


def read_region_fd(path, lay):
    length = lay["stripes"] * lay["stripe_size"]
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, length)
    try:
        n = os.preadv(fd, [buf], lay["base"])
    finally:
        os.close(fd)
    if n != length:
        raise OSError(f"{path}: short read {n}")
    return bytes(buf)


def do_verify(a):
    lay = json.load(open(a.log))
    devs = lay["devices"]
    length = lay["stripes"] * lay["stripe_size"]
    paths = []
    if a.loops:
        paths.append(("loop", a.loops.split(",")))
    if a.socket:
        paths.append(("nbd", None))
    if a.files:
        paths.append(("fuse file", a.files.split(",")))
    written = sum(len(x) for x in lay["last"])
    failed = False
    for kind, targets in paths:
        bad = []
        t0 = time.perf_counter()
        for di, name in enumerate(devs):
            if kind == "nbd":
                h = connect(a.socket, name)
                region = h.pread(length, lay["base"])
                h.shutdown()
            else:
                region = read_region_fd(targets[di], lay)
            bad += [f"{name} {b}" for b in check_region(lay, di, region)]
        dt = time.perf_counter() - t0
        if bad:
            print("\n".join(bad[:10]), file=sys.stderr)
            print(f"through {kind}: {len(bad)} bad stripes of "
                  f"{lay['stripes'] * len(devs)}", file=sys.stderr)
            failed = True
        else:
            print(f"through {kind}: all {written} written stripes intact "
                  f"and last, {lay['stripes'] * len(devs) - written} "
                  f"others zero ({dt:.1f} s)")
    sys.exit(1 if failed else 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["write", "verify"])
    ap.add_argument("--socket")
    ap.add_argument("--devices")
    ap.add_argument("--loops")
    ap.add_argument("--files")
    ap.add_argument("--log", required=True)
    ap.add_argument("--loop-writers", type=int, default=4)
    ap.add_argument("--nbd-writers", type=int, default=4)
    ap.add_argument("--writes", type=int, default=2000)
    ap.add_argument("--stripes", type=int, default=512)
    ap.add_argument("--stripe-size", type=int, default=6144)
    ap.add_argument("--base", type=int, default=64 << 20)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.mode == "write":
        if not (a.socket and a.devices and a.loops):
            sys.exit("load-writes.py write: --socket, --devices and --loops "
                     "are required")
        do_write(a)
    else:
        do_verify(a)


if __name__ == "__main__":
    main()
