#!/usr/bin/python3
"""Writes through the nbdkit plugin, from several libnbd connections.

usage: nbd-writes.py SOCKET PV DUPLICATE_OF_PV BIG

PV is an export to write to, DUPLICATE_OF_PV a duplicate of it (another
path to the same bytes), BIG a large (>= 8 GiB) export.  Checks:
  - a write from connection 1 and one from connection 2 (disjoint parts
    of one 4 KiB block, and whole blocks) are both visible to a third
    connection, before and after a flush;
  - the same, with two threads writing disjoint halves of one block
    many times at once (the overlay's read-modify-write is atomic);
  - zero and trim read back as zeros, also over the PV label;
  - a trim of 4 GiB of BIG is cheap and leaves zeros (the farm's sparse
    zero touches only the layout);
  - writes to PV are visible through DUPLICATE_OF_PV;
  - the server says multi-conn, and a write past the end is refused.
Prints what it did; exits 1 on the first mismatch.
Needs Debian's /usr/bin/python3 (python3-libnbd).
"""
import sys
import threading
import time

import nbd


def connect(sock, name):
    h = nbd.NBD()
    h.set_export_name(name)
    h.connect_unix(sock)
    return h


def expect(cond, what):
    if not cond:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sock, pv, dup, big = sys.argv[1:]
    h1, h2, h3 = (connect(sock, pv) for _ in range(3))
    expect(h1.can_multi_conn(), "the server does not offer multi-conn")
    size = h1.get_size()

    # Two connections, one block and whole blocks; a third reads.
    base = 8 << 20
    a, b = b"A" * 1000, b"B" * 3096
    h1.pwrite(a, base)
    h2.pwrite(b, base + 1000)
    h1.pwrite(b"1" * 8192, base + 4096)
    h2.pwrite(b"2" * 4096, base + 12288)
    want = a + b + b"1" * 8192 + b"2" * 4096
    expect(h3.pread(len(want), base) == want,
           "a third connection does not see both connections' writes")
    h1.flush()
    expect(h3.pread(len(want), base) == want, "lost after a flush")
    print("writes from two connections are both visible to a third")

    # Two threads hammering disjoint halves of one block.
    blk = base + 65536

    def hammer(h, off, ch):
        for i in range(300):
            h.pwrite(bytes([ch + i % 10]) * 2048, off)

    t1 = threading.Thread(target=hammer, args=(h1, blk, ord("a")))
    t2 = threading.Thread(target=hammer, args=(h2, blk + 2048, ord("A")))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    got = h3.pread(4096, blk)
    expect(got == bytes([ord("a") + 9]) * 2048 + bytes([ord("A") + 9]) * 2048,
           "concurrent writes to two halves of one block lost one half")
    print("600 concurrent half-block writes from two connections all kept")

    # Zero and trim, over written blocks and over the label.
    label = h3.pread(4096, 0)
    expect(label[512:520] == b"LABELONE", f"{pv}: no label at sector 1")
    h2.zero(4096, 0)
    expect(h3.pread(4096, 0) == bytes(4096), "zero over the label reads non-zero")
    h1.pwrite(label, 0)
    expect(h3.pread(4096, 0) == label, "rewriting the label failed")
    h1.trim(8192, base + 4096)
    expect(h3.pread(8192, base + 4096) == bytes(8192), "trim reads non-zero")
    h1.zero(1000, base)
    expect(h3.pread(4096, base) == bytes(1000) + b, "partial zero is wrong")
    print("zero and trim read back as zeros")

    # The duplicate is another path to the same bytes.
    d = connect(sock, dup)
    h1.pwrite(b"via-the-original" * 256, base)
    expect(d.pread(4096, base) == b"via-the-original" * 256,
           f"{dup} does not see a write to {pv}")
    d.pwrite(b"via-the-duplicate" * 16, base + 8192)
    expect(h3.pread(272, base + 8192) == b"via-the-duplicate" * 16,
           f"{pv} does not see a write to {dup}")
    print(f"{pv} and its duplicate {dup} share their writes")

    # A large trim costs what the layout costs, not what its length does.
    g = connect(sock, big)
    g.pwrite(b"x" * 4096, 1 << 30)
    t = time.perf_counter()
    g.trim((4 << 30) - 4096, 0)
    dt = time.perf_counter() - t
    expect(g.pread(4096, 1 << 30) == bytes(4096), "4 GiB trim left data")
    expect(g.pread(4096, 0) == bytes(4096), "4 GiB trim left the label")
    print(f"trim of 4 GiB on {big}: {dt * 1e6:.0f} us")

    # Past the end: refused by the server, the overlay untouched.
    try:
        h1.pwrite(b"z" * 4096, size - 2048)
        expect(False, "a write past the end was accepted")
    except nbd.Error as e:
        print(f"write past the end refused: {e.string}")
    for h in (h1, h2, h3, d, g):
        h.shutdown()


if __name__ == "__main__":
    main()
