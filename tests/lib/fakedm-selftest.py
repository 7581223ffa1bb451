#!/usr/bin/env python3
"""fakedm-selftest.py: drive the fake device-mapper (tests/lib/fakedm.c)
through libc the way libdm and lvm do, and check where the writes land.

Usage (run with the shim preloaded in its private /dev, as ff_fakedm_run
in tests/lib/fakedm.sh does):
    fakedm-selftest.py LOOP LOG

LOOP is a zeroed loop device of at least 1 MiB, LOG the shim's log
(FF_FAKEDM_LOG).  The paths lvm's scenarios do not reach:
  A (252:0)  two linear targets on LOOP: sectors 0-7 at LOOP sector 100,
             8-15 at LOOP sector 300
  B (252:1)  one linear target on A (a chain)
  C (252:2)  a zero target (not linear: its writes stay in the scratch
             file)
and checks: a pwrite to B that spans both of A's targets, a write() to
A at its file position, BLKZEROOUT on B, all land on LOOP where the
tables say (every other LOOP byte stays zero); a write to C does not; a
fresh open of B reads back what is on LOOP; fstat of B says block device
252:1, BLKGETSIZE64 its table's size.  Prints "ok:" lines; exit 1 with
"FAIL:" lines.
"""

import fcntl
import os
import stat
import struct
import sys

DM_IOCTL = 0xFD
DM_STRUCT = 312  # sizeof(struct dm_ioctl)
SPEC = 40  # sizeof(struct dm_target_spec)
DEV_CREATE, DEV_REMOVE, DEV_SUSPEND, TABLE_LOAD = 3, 4, 6, 9
BLKGETSIZE64 = 0x80081272
BLKZEROOUT = 0x127F

errors = []


def fail(msg):
    errors.append(msg)
    sys.stderr.write("FAIL: fakedm self-test: %s\n" % msg)


def req(nr):
    """_IOWR(DM_IOCTL, nr, struct dm_ioctl)"""
    return (3 << 30) | (DM_STRUCT << 16) | (DM_IOCTL << 8) | nr


def dm(ctl, nr, name, targets=()):
    """One dm ioctl for device NAME; TARGETS: (start, len, type, params)."""
    data = b""
    for i, (start, length, ttype, params) in enumerate(targets):
        p = params.encode() + b"\0"
        p += b"\0" * (-(SPEC + len(p)) % 8)
        nxt = SPEC + len(p) if i + 1 < len(targets) else 0  # from this spec
        data += struct.pack("<QQiI16s", start, length, 0, nxt, ttype.encode()) + p
    size = DM_STRUCT + len(data) + 4096
    buf = bytearray(size)
    struct.pack_into("<3IIIIiIII", buf, 0, 4, 0, 0, size, DM_STRUCT, len(targets), 0, 0, 0, 0)
    struct.pack_into("128s", buf, 48, name.encode())
    buf[DM_STRUCT:DM_STRUCT + len(data)] = data
    fcntl.ioctl(ctl, req(nr), buf, True)
    (dev,) = struct.unpack_from("<Q", buf, 40)
    return dev


def main(argv):
    loop, log = argv
    st = os.stat(loop)
    lmm = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    ctl = os.open("/dev/mapper/control", os.O_RDWR)
    tables = {
        "ff-a": [(0, 8, "linear", "%s 100" % lmm), (8, 8, "linear", "%s 300" % lmm)],
        "ff-b": [(0, 16, "linear", "252:0 0")],
        "ff-c": [(0, 16, "zero", "")],
    }
    for minor, (name, t) in enumerate(tables.items()):
        dev = dm(ctl, DEV_CREATE, name)
        if dev & 0xFF != minor:
            fail("%s created as minor %d, expected %d" % (name, dev & 0xFF, minor))
        dm(ctl, TABLE_LOAD, name, t)
        dm(ctl, DEV_SUSPEND, name)  # no suspend flag: resume
        os.mknod("/dev/mapper/" + name, 0o600 | stat.S_IFBLK, os.makedev(252, minor))

    pattern = bytes((i * 7 + 1) % 251 + 1 for i in range(6144))
    b = os.open("/dev/mapper/ff-b", os.O_RDWR)
    bst = os.fstat(b)
    if not stat.S_ISBLK(bst.st_mode) or bst.st_rdev != os.makedev(252, 1):
        fail("fstat of ff-b: mode %o rdev %x, expected a block device 252:1" % (bst.st_mode, bst.st_rdev))
    sz = bytearray(8)
    fcntl.ioctl(b, BLKGETSIZE64, sz, True)
    if struct.unpack("<Q", sz)[0] != 8192:
        fail("BLKGETSIZE64 of ff-b is %d, expected 8192" % struct.unpack("<Q", sz)[0])
    os.pwrite(b, pattern, 1024)  # B 1024..7168 = A's two targets
    a = os.open("/dev/mapper/ff-a", os.O_RDWR)
    os.lseek(a, 0, os.SEEK_SET)
    os.write(a, b"\xab" * 512)
    fcntl.ioctl(b, BLKZEROOUT, struct.pack("<QQ", 4096, 512))
    c = os.open("/dev/mapper/ff-c", os.O_RDWR)
    os.pwrite(c, b"\xcd" * 512, 0)
    for fd in (a, b, c):
        os.close(fd)

    want = bytearray(1 << 20)
    want[100 * 512:100 * 512 + 512] = b"\xab" * 512
    want[100 * 512 + 1024:100 * 512 + 4096] = pattern[:3072]
    want[300 * 512:300 * 512 + 3072] = b"\0" * 512 + pattern[3584:6144]
    with open(loop, "rb") as f:
        got = f.read(len(want))
    if got != bytes(want):
        bad = next(i for i in range(len(want)) if got[i] != want[i])
        fail("%s byte %d is 0x%02x, expected 0x%02x" % (loop, bad, got[bad], want[bad]))
    else:
        print("ok: fakedm self-test: writes to a two-target linear device and to a linear "
              "device on it (pwrite, write, BLKZEROOUT) landed on %s where the tables say, "
              "the zero target's did not" % loop)

    b = os.open("/dev/mapper/ff-b", os.O_RDONLY)
    back = os.pread(b, 8192, 0)
    os.close(b)
    if back != bytes(want[100 * 512:100 * 512 + 4096]) + bytes(want[300 * 512:300 * 512 + 4096]):
        fail("ff-b reads back other bytes than its table maps from %s" % loop)
    else:
        print("ok: fakedm self-test: a fresh open of the chained device reads %s's bytes" % loop)

    lines = open(log).read().splitlines()
    if not any(l.startswith("SCRATCH ff-c 0 512 data all=0xcd") for l in lines):
        fail("no SCRATCH line for the write to the zero target in %s" % log)
    fwd = [l for l in lines if l.startswith("FWD ff-b ")]
    if len(fwd) != 3:  # the pwrite split in two, the zeroout
        fail("%d FWD lines for ff-b, expected 3: %s" % (len(fwd), fwd))
    for name in tables:
        dm(ctl, DEV_REMOVE, name)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
