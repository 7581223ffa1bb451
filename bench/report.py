#!/usr/bin/env python3
"""Print the rows bench/lib.sh recorded as one table, and as JSON.

usage: report.py ROWS.tsv [--json FILE] [--meta KEY=VALUE]...

ROWS.tsv holds one row per line, tab-separated: id, what, A, A's unit,
B, B's unit, ratio A/B, params (bl_row in bench/lib.sh).  The table goes
to stdout: a header line from the --meta values, then per row what, A, B
(the baseline), A/B and how it was measured.  --json FILE writes
{"format": "fusefarm-bench", "version": 1, "meta": {...}, "rows": [{"id",
"what", "a": {"value", "unit"}, "b": {...}, "ratio", "params"}]}.
"""
import argparse
import json
import math
import sys


def num(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def fmt(v, unit=""):
    if v is None:
        return "-"
    a = abs(v)
    if a == 0:
        t = "0"
    elif a >= 1e5:
        t = f"{v:.0f}"
    elif a >= 100:
        t = f"{v:.1f}".rstrip("0").rstrip(".") if a < 1000 else f"{v:.0f}"
    elif a >= 1:
        t = f"{v:.3g}" if a >= 10 else f"{v:.3f}".rstrip("0").rstrip(".")
    else:
        t = f"{v:.3g}"
    return f"{t} {unit}".rstrip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("--json")
    ap.add_argument("--meta", action="append", default=[])
    a = ap.parse_args()
    meta = dict(m.split("=", 1) for m in a.meta)
    rows = []
    with open(a.rows) as f:
        for line in f:
            if not line.strip():
                continue
            rid, what, av, au, bv, bu, ratio, params = line.rstrip("\n").split("\t")
            rows.append({"id": rid, "what": what,
                         "a": {"value": num(av), "unit": au},
                         "b": {"value": num(bv), "unit": bu},
                         "ratio": num(ratio), "params": params})

    # The header: what ran, then where.
    first = ["fusefarm benchmarks"]
    if "mode" in meta:
        first.append(f"{meta['mode']} run")
    if "date" in meta:
        first.append(meta["date"])
    if "seconds" in meta:
        first.append(f"{meta['seconds']} s")
    print(", ".join(first))
    where = [f"{k} {meta[k]}" for k in ("kernel", "cpus", "load", "build", "commit")
             if k in meta]
    if where:
        print(", ".join(where))
    for k in ("seconds", "cpus"):
        if k in meta and num(meta[k]) is not None:
            meta[k] = int(num(meta[k]))
    cols = [("what (A vs B)", [r["what"] for r in rows]),
            ("A", [fmt(r["a"]["value"], r["a"]["unit"]) for r in rows]),
            ("B (baseline)", [fmt(r["b"]["value"], r["b"]["unit"]) for r in rows]),
            ("A/B", [fmt(r["ratio"]) for r in rows]),
            ("how", [r["params"] for r in rows])]
    width = [max([len(h)] + [len(v) for v in vs]) for h, vs in cols]
    right = [False, True, True, True, False]

    def line(cells):
        out = []
        for c, w, r in zip(cells, width, right):
            out.append(c.rjust(w) if r else c.ljust(w))
        return "  ".join(out).rstrip()

    print(line([h for h, _ in cols]))
    for i in range(len(rows)):
        print(line([vs[i] for _, vs in cols]))

    if a.json:
        doc = {"format": "fusefarm-bench", "version": 1, "meta": meta, "rows": rows}
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
