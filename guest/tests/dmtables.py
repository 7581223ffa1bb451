#!/usr/bin/env python3
"""dmtables.py MANIFEST TABLES DEVMAP [DMDEVS]: write the `dmsetup table`
text that lvm should produce for MANIFEST (every undamaged VG activated),
a devmap ("MAJ:MIN DEVICE", device i as 8:16*i) and the dm devices'
numbers ("254:K DM-NAME", K in name order), which mirror and raid tables
refer to.  An implementation of the mapping independent of ff-dmcheck,
written from lvm's tables (docs/spec-format.md, mirror and raid LVs), for
guest/tests/test-dmcheck.sh."""
import json
import sys

m = json.load(open(sys.argv[1]))
majmin = {d["name"]: "%d:%d" % (8 + (16 * d["index"]) // 256, (16 * d["index"]) % 256)
          for d in m["devices"]}
with open(sys.argv[3], "w") as f:
    for name, mm in majmin.items():
        f.write("%s %s\n" % (mm, name))
def dmname(vg, lv):
    return vg.replace("-", "--") + "-" + lv.replace("-", "--")


names = sorted(dmname(vg["name"], lv["name"]) for vg in m["vgs"]
               if vg["damage"] == "none" for lv in vg["lvs"])
dmnum = {n: "254:%d" % k for k, n in enumerate(names)}
if len(sys.argv) > 4:
    with open(sys.argv[4], "w") as f:
        for n in names:
            f.write("%s %s\n" % (dmnum[n], n))


def top_params(vg, lv):
    """The one target of a mirror or raid LV, as lvm loads it."""
    sub = lambda name: dmnum[dmname(vg["name"], name)]
    region = lv["region_size"] // 512
    if lv["type"] == "mirror":
        log = ("disk 2 %s %d" % (sub(lv["log"]), region) if lv["log"]
               else "core 1 %d" % region)
        legs = " ".join("%s 0" % sub(i) for i in lv["images"])
        return "mirror", "%s %d %s 1 handle_errors" % (log, len(lv["images"]), legs)
    opts = ["%d" % (lv["stripe_size"] // 512), "region_size", "%d" % region]
    if lv["data_copies"]:
        opts += ["raid10_copies", "%d" % lv["data_copies"]]
    pairs = " ".join("%s %s" % (sub(mt) if mt else "-", sub(im))
                     for mt, im in zip(lv["metas"] or [None] * len(lv["images"]),
                                       lv["images"]))
    return "raid", "%s %d %s %d %s" % (lv["dm_type"], len(opts), " ".join(opts),
                                       len(lv["images"]), pairs)


lines = []
for vg in m["vgs"]:
    if vg["damage"] != "none":
        continue
    es = vg["extent_size"]
    pe_start = {pv["uuid"]: pv["pe_start"] for pv in vg["pvs"]}
    for lv in vg["lvs"]:
        dm = dmname(vg["name"], lv["name"])
        if lv.get("dm_type"):
            typ, params = top_params(vg, lv)
            lines.append((dm, "%s: 0 %d %s %s" % (dm, lv["extents"] * es // 512,
                                                  typ, params)))
            continue
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
