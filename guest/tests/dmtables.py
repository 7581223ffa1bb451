#!/usr/bin/env python3
"""dmtables.py MANIFEST TABLES DEVMAP [DMDEVS]: write the `dmsetup table`
text that lvm should produce for MANIFEST (every undamaged VG activated),
a devmap ("MAJ:MIN DEVICE", device i as 8:16*i) and the dm devices'
numbers ("254:K DM-NAME", K in name order), which mirror and raid tables
refer to.  An implementation of the mapping independent of ff-dmcheck,
written from lvm's tables (docs/spec-format.md, mirror and raid LVs), for
guest/tests/test-dmcheck.sh.  Thin pools, thin LVs and snapshots as
docs/research/thin-snapshot.md (section 5) says lvm loads them, cache
LVs as docs/research/cache.md does (no device for a cache pool)."""
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


def origins(vg):
    return {lv["origin"] for lv in vg["lvs"] if lv.get("type") == "snapshot"}


def unused_pool_part(vg, lv):
    """A sub-LV of a cache pool that caches nothing: never activated."""
    if lv.get("role") not in ("cmeta", "cdata"):
        return False
    return not next(p for p in vg["lvs"] if p["name"] == lv["parent"]).get("cached_lv")


def devices(vg):
    """The dm devices lvm makes for vg's LVs (docs/research/thin-snapshot.md
    section 5): none for the pool metadata spare and snapshotN, a -tpool
    layer and the public device for a thin pool, -real under an origin,
    -cow under a snapshot."""
    for lv in vg["lvs"]:
        d = dmname(vg["name"], lv["name"])
        if (lv.get("role") in ("pmspare", "snapshot") or lv.get("type") == "cache-pool"
                or unused_pool_part(vg, lv)):
            continue
        if lv.get("type") == "thin-pool":
            yield d + "-tpool"
        elif lv["name"] in origins(vg):
            yield d + "-real"
        elif lv.get("type") == "snapshot":
            yield d + "-cow"
        yield d


names = sorted(d for vg in m["vgs"] if vg["damage"] == "none"
               for d in devices(vg))
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
    # libdm writes no region_size for raid0 (region 0)
    opts = ["%d" % (lv["stripe_size"] // 512)]
    if region:
        opts += ["region_size", "%d" % region]
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
        size = lv["extents"] * es // 512
        if (lv.get("role") in ("pmspare", "snapshot") or lv.get("type") == "cache-pool"
                or unused_pool_part(vg, lv)):
            continue
        if lv.get("type") == "cache":
            pool = next(p for p in vg["lvs"] if p["name"] == lv["pool"])
            lines.append((dm, "%s: 0 %d cache %s %s %s %d 2 metadata2 %s %s %s" % (
                dm, size, dmnum[dmname(vg["name"], pool["metadata"])],
                dmnum[dmname(vg["name"], pool["data"])],
                dmnum[dmname(vg["name"], lv["origin"])], lv["chunk_size"] // 512,
                lv["cache_mode"], lv["policy"], lv.get("policy_args", "0"))))
            continue
        if lv.get("type") == "thin-pool":
            feats = (([] if lv["zero"] else ["skip_block_zeroing"]) +
                     {"ignore": ["ignore_discard"],
                      "nopassdown": ["no_discard_passdown"]}.get(lv["discards"], []))
            lines.append((dm + "-tpool", "%s-tpool: 0 %d thin-pool %s %s %d 0 %s" % (
                dm, size, dmnum[dmname(vg["name"], lv["metadata"])],
                dmnum[dmname(vg["name"], lv["data"])], lv["chunk_size"] // 512,
                " ".join([str(len(feats))] + feats))))
            lines.append((dm, "%s: 0 %d linear %s 0" % (dm, size, dmnum[dm + "-tpool"])))
            continue
        if lv.get("type") == "integrity":
            # dm-integrity's own form of lvm's table (a 6.1 kernel's):
            # meta_device first, its defaults, internal_hash last
            extra = (["journal_watermark:50", "commit_time:10000"] if lv["mode"] == "J"
                     else ["sectors_per_bit:32768", "bitmap_flush_interval:10000"])
            opts = (["meta_device:%s" % dmnum[dmname(vg["name"], lv["meta"])],
                     "journal_sectors:176", "interleave_sectors:1", "buffer_sectors:128"] +
                    extra + ["internal_hash:%s" % lv["internal_hash"]])
            lines.append((dm, "%s: 0 %d integrity %s 0 %d %s %d %s" % (
                dm, size, dmnum[dmname(vg["name"], lv["origin"])], lv["tag_size"],
                lv["mode"], len(opts), " ".join(opts))))
            continue
        if lv.get("type") == "thin":
            lines.append((dm, "%s: 0 %d thin %s %d" % (
                dm, size, dmnum[dmname(vg["name"], lv["pool"]) + "-tpool"], lv["device_id"])))
            continue
        if lv["name"] in origins(vg):
            lines.append((dm, "%s: 0 %d snapshot-origin %s" % (dm, size, dmnum[dm + "-real"])))
            dm += "-real"
        elif lv.get("type") == "snapshot":
            origin = next(o for o in vg["lvs"] if o["name"] == lv["origin"])
            lines.append((dm, "%s: 0 %d snapshot %s %s P %d" % (
                dm, origin["extents"] * es // 512,
                dmnum[dmname(vg["name"], lv["origin"]) + "-real"], dmnum[dm + "-cow"],
                lv["chunk_size"] // 512)))
            dm += "-cow"
        elif lv.get("type") == "pvmove":
            # an interrupted pvmove: the first segment a mirror of its
            # extents and their new place, the others linear where they are
            for seg in lv["segments"]:
                pa = ["%s %d" % (majmin[a["device"]],
                                 (pe_start[a["pv_uuid"]] + a["start_pe"] * es) // 512)
                      for a in seg["areas"]]
                lines.append((dm, "%s: %d %d %s" % (
                    dm, seg["start_extent"] * es // 512, seg["extent_count"] * es // 512,
                    "mirror core 1 %d 2 %s %s" % (lv["region_size"] // 512, pa[0], pa[1])
                    if seg["moving"] else "linear " + pa[0])))
            continue
        elif lv.get("dm_type"):
            typ, params = top_params(vg, lv)
            lines.append((dm, "%s: 0 %d %s %s" % (dm, lv["extents"] * es // 512,
                                                  typ, params)))
            continue
        for seg in lv["segments"]:
            start = seg["start_extent"] * es // 512
            length = seg["extent_count"] * es // 512
            areas = ["%s %d" % (dmnum[dmname(vg["name"], a["lv"])], a["start_le"] * es // 512)
                     if "lv" in a else
                     "%s %d" % (majmin[a["device"]],
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
