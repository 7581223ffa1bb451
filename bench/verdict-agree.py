#!/usr/bin/env python3
"""verdict-agree.py A.json B.json: do two runs' verdicts contradict?

Issue 29's promise: two back-to-back runs of one scenario never report
opposite results for the same pair.  Every ratio of both run documents'
"verdict" (docs/run-json.md: event against direct activation per
configuration, and each axis effect per pair of configurations) is
matched by what it compares; a ratio is a result when its 95% interval
excludes 1 (above: slower, below: faster).  Prints one line per
contradiction (a result in one run and the opposite result in the other)
and a summary; exits 1 when there is one, 2 on bad input.

    fusefarm run --json a.json && fusefarm run --json b.json
    bench/verdict-agree.py a.json b.json
"""
import json
import sys


def ratios(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("verdict-agree: %s: %s" % (path, e), file=sys.stderr)
        sys.exit(2)
    v = doc.get("verdict") if isinstance(doc, dict) else None
    if not isinstance(v, dict):
        print("verdict-agree: %s: no \"verdict\" member (a run document "
              "of fusefarm run, docs/run-json.md)" % path, file=sys.stderr)
        sys.exit(2)
    out = {}
    for e in v.get("event_direct", []):
        if "low" in e:
            out[e["compares"]] = (e["low"], e["high"])
    for a in v.get("axes", []):
        for eff in a.get("effects", []):
            for p in eff.get("pairs", []):
                if "low" in p:
                    key = "%s: %s with %s" % (a["compares"], eff["workload"],
                                              p["with"])
                    out[key] = (p["low"], p["high"])
    return out


def side(lo, hi):
    return 1 if lo > 1 else (-1 if hi < 1 else 0)


def main():
    if len(sys.argv) != 3:
        print("usage: verdict-agree.py A.json B.json", file=sys.stderr)
        return 2
    a, b = ratios(sys.argv[1]), ratios(sys.argv[2])
    n = agree = one = contra = 0
    for k in sorted(set(a) & set(b)):
        n += 1
        sa, sb = side(*a[k]), side(*b[k])
        if sa and sb and sa != sb:
            contra += 1
            print("contradiction: %s: 95%% CI %.3g-%.3gx vs %.3g-%.3gx"
                  % (k, a[k][0], a[k][1], b[k][0], b[k][1]))
        elif sa and sb:
            agree += 1
        elif sa or sb:
            one += 1
    print("%d ratios in both: %d results in both and agreeing, %d a result "
          "in one only (no clear difference in the other), %d contradicting"
          % (n, agree, one, contra))
    return 1 if contra else 0


if __name__ == "__main__":
    sys.exit(main())
