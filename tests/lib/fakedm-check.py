#!/usr/bin/env python3
"""fakedm-check.py: prove that lvm's writes through the fake device-mapper
(tests/lib/fakedm.c) reached the PV images where a kernel would have put
them.

Usage:
    fakedm-check.py SCENARIO VG DUMP_JSON FAKEDM_LOG DEVNUMS

DUMP_JSON is lvm-pv-dump.py's output for the scenario's images (in PV
order), FAKEDM_LOG the shim's log of lvm's commands, DEVNUMS one
"DEVICE MAJ:MIN" line per PV (the loop each image was attached to).

From the last metadata copy it takes every `*_rmeta_N` and `*_mlog` LV
(and what a thin pool's or snapshot's lvcreate zeroes: the new pool
metadata spare, the pool's metadata area, the first 4 KiB of a COW, of
a writecache's cachevol and of a --raidintegrity image's _imeta)
(the sub-LVs lvm activates alone and wipes between the two writes of its
lvcreate, docs/ondisk-format.md §9) with its PV
and first extent, and checks:
  - every FWD line of the log is a write into one of those LVs, landing on
    that LV's PV at pe_start + PE * extent_size + the offset in the LV (no
    other byte of any PV was written through a dm device);
  - rmeta: its first 4 KiB were written with zeros (lvm's wipe);
  - mlog: its whole extent was written (zeros, or 0xFF when the mirror is
    NOTSYNCED), then the 16-byte disk-log header at its start; and the PV
    image holds 72 52 69 4d 02 00 00 00 ff*8 there, followed by zeros or
    0xFF (nosync) to the end of the log's extents.
Prints one "ok:" line per sub-LV checked; exit 1 with "FAIL:" lines when
anything differs.
"""

import json
import re
import sys

HEADER = bytes.fromhex("7252694d02000000ffffffffffffffff")


def main(argv):
    if len(argv) != 5:
        sys.stderr.write("usage: fakedm-check.py SCENARIO VG DUMP_JSON FAKEDM_LOG DEVNUMS\n")
        return 2
    scen, vg, dump_path, log_path, devnums_path = argv
    errors = []

    def fail(msg):
        errors.append(msg)
        sys.stderr.write("FAIL: scenario %s: shim: %s\n" % (scen, msg))

    images = json.load(open(dump_path))["images"]
    cur = images[0]["mdas"][0]["copies"][-1]
    devnums = {}
    devorder = []
    for line in open(devnums_path):
        if line.strip():
            dev, mm = line.split()
            devnums[dev] = mm
            devorder.append(dev)
    ext_bytes = cur["extent_size_sectors"] * 512
    pvs = {p["name"]: p for p in cur["pvs"]}

    def dm_name(lv):
        return vg.replace("-", "--") + "-" + lv.replace("-", "--")

    lvs = {l["name"]: l for l in cur["lvs"]}
    # the sub-LVs lvm wipes, where they are
    subs = {}
    for l in cur["lvs"]:
        m = re.match(r"^(.*)_(rmeta_\d+|mlog)$", l["name"])
        if not m:
            continue
        if len(l["segments"]) != 1:
            fail("%s has %d segments, expected 1" % (l["name"], len(l["segments"])))
            continue
        seg = l["segments"][0]
        area = re.match(r'^\["(pv\d+)", (\d+)\]$', seg["stripes"])
        if not area or seg["type"] != "striped":
            fail("%s: not one linear area: %s %s" % (l["name"], seg["type"], seg["stripes"]))
            continue
        pv = pvs[area.group(1)]
        k = devorder.index(pv["device"])
        top = lvs.get(m.group(1), {})
        subs[dm_name(l["name"])] = {
            "lv": l["name"],
            "kind": "rmeta" if m.group(2).startswith("rmeta") else "mlog",
            "dev": pv["device"],
            "devnum": devnums[pv["device"]],
            "image": images[k]["path"],
            "start": pv["pe_start_sectors"] * 512 + int(area.group(2)) * ext_bytes,
            "len": seg["extent_count"] * ext_bytes,
            "nosync": "NOTSYNCED" in top.get("status", []),
            "writes": [],
        }

    # what a thin pool's or a snapshot's lvcreate zeroes through linear dm
    # devices (docs/research/thin-snapshot.md §2.4, §4): the new pool
    # metadata spare as vg-lvolN and the pool's metadata area as vg-POOL
    # (whole; a thin or cache pool), the COW as vg-SNAP (its first 4 KiB)
    def linear_area(l):
        if len(l["segments"]) != 1:
            return None
        seg = l["segments"][0]
        area = re.match(r'^\["(pv\d+)", (\d+)\]$', seg["stripes"])
        if not area or seg["type"] != "striped":
            return None
        pv = pvs[area.group(1)]
        return pv, pv["pe_start_sectors"] * 512 + int(area.group(2)) * ext_bytes, seg["extent_count"] * ext_bytes

    def add_zeroed(dmname, l, kind, want):
        a = linear_area(l)
        if not a:
            fail("%s: not one linear area" % l["name"])
            return
        pv, start, n = a
        subs[dmname] = {"lv": l["name"], "kind": kind, "dev": pv["device"],
                        "devnum": devnums[pv["device"]],
                        "image": images[devorder.index(pv["device"])]["path"],
                        "start": start, "len": n, "want": want if want else n,
                        "nosync": False, "writes": []}

    for l in cur["lvs"]:
        m = re.match(r"^(lvol\d+)_pmspare$", l["name"])
        if m:
            add_zeroed(dm_name(m.group(1)), l, "zeroed", 0)
        # --raidintegrity: each image's _imeta, its first 4 KiB zeroed
        # (dm-integrity wants the header zeroed) under its own name
        if l["name"].endswith("_imeta"):
            add_zeroed(dm_name(l["name"]), l, "zeroed", 4096)
        for seg in l["segments"]:
            if seg["type"] == "thin-pool" and seg["metadata"] in lvs:
                add_zeroed(dm_name(l["name"]), lvs[seg["metadata"]], "zeroed", 0)
            # a cache pool's metadata: wiped whole as vg-POOL by its
            # lvcreate, its first 4 KiB again by the lvcreate or
            # lvconvert that attaches it, still under that name (then it
            # is POOL_cpool; docs/research/cache.md)
            if seg["type"].startswith("cache-pool") and seg["metadata"] in lvs:
                nm = l["name"]
                if seg["type"] != "cache-pool" and nm.endswith("_cpool"):
                    nm = nm[:-len("_cpool")]
                add_zeroed(dm_name(nm), lvs[seg["metadata"]], "zeroed", 0)
            if seg["type"] == "snapshot" and seg["cow_store"] in lvs:
                add_zeroed(dm_name(seg["cow_store"]), lvs[seg["cow_store"]], "zeroed", 4096)
            # a writecache's or cache's cachevol: its first 4 KiB zeroed by
            # the lvconvert, under its name before (LV, then LV_cvol)
            cvol = seg["writecache"] or (seg["cache_pool"] if seg["type"] == "cache+CACHE_USES_CACHEVOL" else "")
            if cvol in lvs:
                nm = cvol
                if nm.endswith("_cvol"):
                    nm = nm[:-len("_cvol")]
                add_zeroed(dm_name(nm), lvs[cvol], "zeroed", 4096)

    fwd = re.compile(r"^FWD (\S+) (\d+) (\d+) (\d+:\d+) (\d+) (zero|data) (all=0x[0-9a-f]{2}|mixed head=[0-9a-f]*)$")
    for line in open(log_path):
        line = line.rstrip("\n")
        if line.startswith("FWD-FAILED"):
            fail("the shim could not forward a write: %s" % line)
            continue
        if not line.startswith("FWD "):
            continue
        m = fwd.match(line)
        if not m:
            fail("unparsed log line: %s" % line)
            continue
        name, off, n, mm, devoff, kind, fill = m.groups()
        off, n, devoff = int(off), int(n), int(devoff)
        s = subs.get(name)
        if s is None:
            fail("write forwarded from %s, which is no rmeta, mlog, pool metadata, spare or COW LV: %s"
                 % (name, line))
            continue
        if mm != s["devnum"] or devoff != s["start"] + off or off + n > s["len"]:
            fail("%s: write at LV offset %d (%d bytes) went to %s+%d, expected %s (%s)+%d within %d bytes"
                 % (s["lv"], off, n, mm, devoff, s["dev"], s["devnum"], s["start"] + off, s["len"]))
            continue
        s["writes"].append((off, n, kind, fill))

    def covered(writes, want_len, ok_fill):
        """[0, want_len) covered by writes whose fill is one of ok_fill."""
        iv = sorted((o, o + n) for o, n, _, f in writes if f in ok_fill)
        end = 0
        for a, b in iv:
            if a > end:
                break
            end = max(end, b)
        return end >= want_len

    for name, s in sorted(subs.items()):
        if s["kind"] == "zeroed":
            if not covered(s["writes"], s["want"], ("all=0x00",)):
                fail("%s: its first %d bytes were not zeroed through %s (writes: %s)"
                     % (s["lv"], s["want"], name, s["writes"]))
                continue
            print("ok: scenario %s: shim: %s zeroed (%d bytes at %s+%d)"
                  % (scen, s["lv"], s["want"], s["dev"], s["start"]))
            continue
        if s["kind"] == "rmeta":
            if not covered(s["writes"], 4096, ("all=0x00",)):
                fail("%s: its first 4 KiB were not wiped with zeros through %s (writes: %s)"
                     % (s["lv"], name, s["writes"]))
                continue
            print("ok: scenario %s: shim: %s wiped (4096 zero bytes at %s+%d)"
                  % (scen, s["lv"], s["dev"], s["start"]))
            continue
        fillv = 0xFF if s["nosync"] else 0x00
        if not covered(s["writes"], s["len"], ("all=0x%02x" % fillv,)):
            fail("%s: not filled with 0x%02x through %s (writes: %s)" % (s["lv"], fillv, name, s["writes"]))
            continue
        if not any(o == 0 and f.startswith("mixed head=" + HEADER.hex()) for o, _, _, f in s["writes"]):
            fail("%s: no disk-log header written at its start" % s["lv"])
            continue
        with open(s["image"], "rb") as f:
            f.seek(s["start"])
            b = f.read(s["len"])
        if b[:16] != HEADER:
            fail("%s: %s at %d holds %s, expected the disk-log header %s"
                 % (s["lv"], s["image"], s["start"], b[:16].hex(), HEADER.hex()))
            continue
        rest = b[16:]
        if rest.count(bytes([fillv])) != len(rest):
            bad = next(i for i, c in enumerate(rest) if c != fillv) + 16
            fail("%s: %s byte %d of the log is 0x%02x, expected 0x%02x"
                 % (s["lv"], s["image"], bad, b[bad], fillv))
            continue
        print("ok: scenario %s: shim: %s header 72 52 69 4d 02 00 00 00 ff*8 at %s+%d, then 0x%02x to +%d"
              % (scen, s["lv"], s["dev"], s["start"], fillv, s["len"]))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
