#!/usr/bin/env python3
"""dmtables.py MANIFEST TABLES DEVMAP: write the `dmsetup table` text that
lvm should produce for MANIFEST (every undamaged VG activated), and a
devmap ("MAJ:MIN DEVICE", device i as 8:16*i).  An implementation of the
mapping independent of ff-dmcheck, for guest/tests/test-dmcheck.sh."""
import json
import sys

m = json.load(open(sys.argv[1]))
majmin = {d["name"]: "%d:%d" % (8 + (16 * d["index"]) // 256, (16 * d["index"]) % 256)
          for d in m["devices"]}
with open(sys.argv[3], "w") as f:
    for name, mm in majmin.items():
        f.write("%s %s\n" % (mm, name))
lines = []
for vg in m["vgs"]:
    if vg["damage"] != "none":
        continue
    es = vg["extent_size"]
    pe_start = {pv["uuid"]: pv["pe_start"] for pv in vg["pvs"]}
    for lv in vg["lvs"]:
        dm = vg["name"].replace("-", "--") + "-" + lv["name"].replace("-", "--")
        for seg in lv["segments"]:
            start = seg["start_extent"] * es // 512
            length = seg["extent_count"] * es // 512
            areas = ["%s %d" % (majmin[a["device"]],
                                (pe_start[a["pv_uuid"]] + a["start_pe"] * es) // 512)
                     for a in seg["areas"]]
            if seg["type"] == "linear":
                params = areas[0]
            else:
                params = "%d %d %s" % (seg["stripes"], seg["stripe_size"] // 512,
                                       " ".join(areas))
            lines.append((dm, "%s: %d %d %s %s" % (dm, start, length, seg["type"], params)))
# dmsetup lists devices sorted by name
with open(sys.argv[2], "w") as f:
    for _, line in sorted(lines, key=lambda x: x[0]):
        f.write(line + "\n")
