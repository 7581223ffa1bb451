#!/usr/bin/env python3
"""farm-subset.py MANIFEST N OUT_MANIFEST [DM_NAMES]: the first N devices.

`--disks N` of the guest runs attaches the farm's first N devices (the
nbd plugin serves the whole spec; it has no scaling key).  This writes
the manifest the guest's checks use: those N devices and only the VGs all
of whose PVs are among them (a VG cut by N is left out: lvm sees it with
missing PVs and does not activate it).  N = 0 keeps every device.  Prints
the kept device names, one a line.  With DM_NAMES, also writes the sorted
dm names ("VG-LV", "-" doubled) of every LV of the kept undamaged VGs:
what event activation must make active.
"""
import json
import sys

man = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
devs = man["devices"] if n == 0 else man["devices"][:n]
if n > len(man["devices"]):
    sys.exit("farm-subset: --disks %d: the farm has only %d devices"
             % (n, len(man["devices"])))
keep = {d["name"] for d in devs}
man["devices"] = devs
man["vgs"] = [vg for vg in man["vgs"]
              if all(p["device"] in keep for p in vg["pvs"])]
json.dump(man, open(sys.argv[3], "w"))
if len(sys.argv) > 4:
    names = []
    for vg in man["vgs"]:
        if vg.get("damage", "none") != "none":
            continue
        for lv in vg["lvs"]:
            names.append(vg["name"].replace("-", "--") + "-" +
                         lv["name"].replace("-", "--"))
    with open(sys.argv[4], "w") as f:
        f.write("".join(x + "\n" for x in sorted(names)))
for d in devs:
    print(d["name"])
