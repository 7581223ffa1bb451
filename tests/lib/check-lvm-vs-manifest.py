#!/usr/bin/env python3
"""Compare what real lvm2 reports for a farm with `fusefarm manifest`.

usage: check-lvm-vs-manifest.py MANIFEST.json MAP PVS.json VGS.json LVS.json

MAP has one line per attached device: "<loop device> <device name>".
The JSON files are lvm's --reportformat json output of:
  pvs -o pv_name,vg_name,pv_uuid,dev_size,pe_start,pv_pe_count[,pv_mda_count]
  vgs -o vg_name,vg_uuid,vg_extent_size,pv_count,lv_count,vg_seqno
         [,vg_systemid,max_lv,max_pv,vg_allocation_policy]
  lvs -o vg_name,lv_name,lv_uuid,seg_start_pe,seg_size_pe,segtype,stripes,
         stripe_size,seg_pe_ranges
all with --units b --nosuffix.  Exits 1 listing every difference.
"""
import json
import sys


def report(path, key):
    with open(path) as f:
        return json.load(f)["report"][0][key]


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    manifest = json.load(open(sys.argv[1]))
    loop_of = {}
    for line in open(sys.argv[2]):
        loop, name = line.split()
        loop_of[name] = loop
    errors = []

    # PVs: every PV-carrying device attached, nothing else.
    want_pvs = {}
    for d in manifest["devices"]:
        if d["role"] in ("pv", "orphan") and d["name"] in loop_of:
            want_pvs[loop_of[d["name"]]] = d
    got_pvs = {r["pv_name"]: r for r in report(sys.argv[3], "pv")}
    for loop, d in want_pvs.items():
        r = got_pvs.get(loop)
        if not r:
            errors.append(f"pvs: {loop} ({d['name']}) missing")
            continue
        if r["pv_uuid"] != d["pv_uuid"]:
            errors.append(f"pvs: {loop} uuid {r['pv_uuid']} != {d['pv_uuid']}")
        if r["vg_name"] != (d["vg"] or ""):
            errors.append(f"pvs: {loop} vg {r['vg_name']!r} != {d['vg']!r}")
        if int(r["dev_size"]) != d["size"]:
            errors.append(f"pvs: {loop} dev_size {r['dev_size']} != {d['size']}")
    for loop in got_pvs:
        if loop not in want_pvs:
            errors.append(f"pvs: unexpected PV {loop}")

    vg_by_name = {v["name"]: v for v in manifest["vgs"]}
    pvinfo = {}
    for v in manifest["vgs"]:
        for p in v["pvs"]:
            pvinfo[p["uuid"]] = (v, p)
    for loop, d in want_pvs.items():
        r = got_pvs.get(loop)
        if r and d["role"] == "pv":
            v, p = pvinfo[d["pv_uuid"]]
            if int(r["pe_start"]) != p["pe_start"]:
                errors.append(f"pvs: {loop} pe_start {r['pe_start']} != {p['pe_start']}")
            if int(r["pv_pe_count"]) != p["pe_count"]:
                errors.append(f"pvs: {loop} pe_count {r['pv_pe_count']} != {p['pe_count']}")
            if "pv_mda_count" in r and int(r["pv_mda_count"]) != p["mda_count"]:
                errors.append(f"pvs: {loop} mda_count {r['pv_mda_count']} != {p['mda_count']}")

    # VGs.
    got_vgs = {r["vg_name"]: r for r in report(sys.argv[4], "vg")}
    for name, v in vg_by_name.items():
        r = got_vgs.get(name)
        if not r:
            errors.append(f"vgs: {name} missing")
            continue
        for field, want in (("vg_uuid", v["uuid"]),
                            ("vg_extent_size", str(v["extent_size"])),
                            ("pv_count", str(len(v["pvs"]))),
                            ("lv_count", str(len(v["lvs"]))),
                            ("vg_seqno", str(v["seqno"]))):
            if r[field] != want:
                errors.append(f"vgs: {name} {field} {r[field]} != {want}")
        # optional fields, compared when the report has them
        for field, want in (("vg_systemid", v.get("system_id") or ""),
                            ("max_lv", str(v.get("max_lv", 0))),
                            ("max_pv", str(v.get("max_pv", 0))),
                            ("vg_allocation_policy", v.get("alloc", "normal"))):
            if field in r and r[field].strip() != want:
                errors.append(f"vgs: {name} {field} {r[field]} != {want}")
    for name in got_vgs:
        if name not in vg_by_name:
            errors.append(f"vgs: unexpected VG {name}")

    # LVs, segment by segment.
    want_segs = {}
    for v in manifest["vgs"]:
        for lv in v["lvs"]:
            for s in lv["segments"]:
                ranges = " ".join(
                    f"{loop_of.get(a['device'], '?')}:{a['start_pe']}-{a['end_pe']}"
                    for a in s["areas"])
                want_segs[(v["name"], lv["name"], s["start_extent"])] = {
                    "lv_uuid": lv["uuid"],
                    "seg_size_pe": str(s["extent_count"]),
                    "segtype": s["type"],
                    "stripes": str(s["stripes"]),
                    "stripe_size": str(s["stripe_size"]),
                    "seg_pe_ranges": ranges,
                }
    got_segs = {}
    for r in report(sys.argv[5], "lv"):
        got_segs[(r["vg_name"], r["lv_name"], int(r["seg_start_pe"]))] = r
    for key, want in want_segs.items():
        r = got_segs.get(key)
        if not r:
            errors.append(f"lvs: segment {key} missing")
            continue
        for field, value in want.items():
            if r[field].strip() != value:
                errors.append(f"lvs: {key} {field} {r[field]!r} != {value!r}")
    for key in got_segs:
        if key not in want_segs:
            errors.append(f"lvs: unexpected segment {key}")

    for e in errors[:50]:
        print(e)
    if errors:
        print(f"{len(errors)} differences")
        return 1
    print(f"lvm matches the manifest: {len(want_pvs)} PVs, {len(vg_by_name)} VGs, "
          f"{len(want_segs)} LV segments")
    return 0


if __name__ == "__main__":
    sys.exit(main())
