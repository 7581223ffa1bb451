#!/usr/bin/env bash
# test-report.sh: `fusefarm report` on the run documents in tests/data
# (docs/run-json.md; the outputs are described in docs/report.md):
#   - usage errors exit 2, and so does bad input: an unreadable file,
#     invalid JSON, a document that is not a run document (a stats
#     snapshot is named as such), a malformed document (naming the place:
#     configs[2].workloads[0]: missing "median"), which prints nothing and
#     writes no file; an output that cannot be written exits 1;
#   - the table: header, exact rows of run-sample.json, "-" for workloads
#     a config did not run, failures, the slowest-units lists (--top) and
#     the notes;
#   - the verdict under it (tests/data/verdict-*.json): a clear ratio with
#     its 95% interval, differences whose interval holds 1 called no clear
#     difference, too few repetitions not judged, a failed run not judged; the definitions of
#     the terms (repetitions, units, ideal);
#   - the CSV files: header, one row per run (the walls of the document),
#     one row per pvscan and vgchange in OUT-devices.csv;
#   - the SVG files parse as XML (python3's xml.etree); the bar chart has
#     one bar per (config, workload) in the workload's colour and a value
#     label per bar; each event activation has a timeline with one bar
#     per unit and (with few units) a label per unit; every SVG renders
#     to a PNG of its size with rsvg-convert; a document with io rows
#     (run-io.json) also gets an io chart: one square per (config, io
#     workload) in the workload's colour, a higher clat p50 drawn higher
#     in each configuration; a document without io rows gets none; an
#     LV row's PVs get a row each under the io table (io.devices, the
#     median over the runs);
#   - --junit: the JUnit XML report parses (xml.etree) with the structure
#     CI reporters read, its counts, the failed lvchange and, with
#     --expect, a <failure> per failing and an <error> per unjudged
#     expression (tests/lib/check-junit.py);
#   - run-slow.json (slow-tail against ideal): the timeline rows that
#     touched a device the profile made slow (its pvscan, its VG's
#     vgchange) are marked, exactly those, and none under ideal or in a
#     document without "slow" (run-event.json);
#   - a run with 3,000 devices per event activation: every bar drawn,
#     labels thinned out but the slowest always labelled.
# Needs no root, no lvm, no loop device.
#
# usage: test-report.sh FUSEFARM   (python3; rsvg-convert from librsvg2-bin)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh" # ff_die, ff_log, ff_require only

bin=${1:?usage: test-report.sh FUSEFARM}
data=${FF_SOURCE_DIR:-$here/../..}/tests/data
ff_require python3
if ! command -v rsvg-convert >/dev/null 2>&1; then
  ff_die "rsvg-convert: command not found; SKIP is not allowed: install librsvg2-bin (apt-get install librsvg2-bin)"
fi
[[ -r $data/run-sample.json && -r $data/run-event.json && -r $data/verdict-clear.json ]] ||
  ff_die "no sample documents in $data"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The checks on the outputs: python3 reads the JSON, the CSV and the SVG.
cat >"$tmp/check.py" <<'EOF'
import csv, json, math, re, struct, sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
# docs/report.md: the colours of runner/ff-report.c
PALETTE = [0x1f77b4, 0xff7f0e, 0x2ca02c, 0x9467bd, 0x8c564b,
           0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf]
FAILED, PVSCAN, VGCHANGE = 0xd62728, 0x1f77b4, 0xff7f0e
CONFIG, UNIT = 0x203060, 0x202020

def die(msg):
    sys.exit("FAIL: " + msg)

def shade(c, f):
    return (int(((c >> 16) & 255) * f) << 16 | int(((c >> 8) & 255) * f) << 8
            | int((c & 255) * f))

def colour(style):
    m = re.search(r"fill:rgb\(([^)]*)\)", style or "")
    if not m:
        return None
    parts = m.group(1).split(",")
    if parts[0].endswith("%"):
        v = [round(float(p[:-1]) * 255 / 100) for p in parts]
    else:
        v = [int(p) for p in parts]
    return v[0] << 16 | v[1] << 8 | v[2]

def svg(path):
    """Filled paths and text runs (a <g> of glyph <use>s) per colour."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        die("%s: not well-formed XML: %s" % (path, e))
    if root.tag != SVG + "svg":
        die("%s: root is %s, not svg" % (path, root.tag))
    fills, texts = {}, {}
    for p in root.iter(SVG + "path"):
        st = p.get("style", "")
        if "stroke:none" in st.replace(" ", ""):
            c = colour(st)
            fills[c] = fills.get(c, 0) + 1
    for g in root.iter(SVG + "g"):
        if any(ch.tag == SVG + "use" for ch in g):
            c = colour(g.get("style"))
            texts[c] = texts.get(c, 0) + 1
    w = float(root.get("width").rstrip("px"))
    h = float(root.get("height").rstrip("px"))
    return fills, texts, w, h

def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        die("%s: not a PNG" % path)
    return struct.unpack(">II", head[16:24])

def names(doc):
    out = []
    for c in doc["configs"]:
        for w in c["workloads"]:
            if w["name"] not in out:
                out.append(w["name"])
    return out

def check_bars(doc, path, png):
    fills, texts, w, h = svg(path)
    for k, name in enumerate(names(doc)):
        n = sum(1 for c in doc["configs"] for x in c["workloads"]
                if x["name"] == name)
        col = PALETTE[k % len(PALETTE)]
        # one bar per config that ran it, plus the legend swatch
        if fills.get(col, 0) != n + 1:
            die("%s: %d bars of %s's colour, expected %d" %
                (path, fills.get(col, 0), name, n + 1))
        if texts.get(shade(col, 0.6), 0) != n:
            die("%s: %d value labels for %s, expected %d" %
                (path, texts.get(shade(col, 0.6), 0), name, n))
    nc = len(doc["configs"])
    # per config its key line ("config ID: LABEL"), and the groups
    # labelled by their axis values, not by id: a row per key that varies
    # (at most 4), the one that changes most often between neighbours
    # nearest the axis; in the rows further out, neighbours that share
    # the value (and those of the rows under them) share one label
    keys = []
    for c in doc["configs"]:
        for k in c["settings"]:
            if k not in keys:
                keys.append(k)
    val = lambda c, k: json.dumps(c["settings"].get(k))
    varying = [k for k in keys
               if len({val(c, k) for c in doc["configs"]}) > 1
               or any(k not in c["settings"] for c in doc["configs"])]
    changes = lambda k: sum(val(a, k) != val(b, k) for a, b in
                            zip(doc["configs"], doc["configs"][1:]))
    rows = sorted(varying[:4], key=lambda k: -changes(k))
    spans = 0
    for r in range(len(rows)):
        cut = lambda a, b: any(val(a, k) != val(b, k) for k in rows[r:])
        spans += 1 + sum(cut(a, b) for a, b in
                         zip(doc["configs"], doc["configs"][1:]))
    want = nc + (spans if rows else nc)
    if texts.get(CONFIG, 0) != want:
        die("%s: %d config labels, expected %d (%d configs, axis rows %s)" %
            (path, texts.get(CONFIG, 0), want, nc, rows))
    if texts.get(0x000000, 0) < 3 + len(names(doc)):
        die("%s: title, legend or footer missing" % path)
    if tuple(png_size(png)) != (round(w), round(h)):
        die("%s: %s is not %gx%g" % (png, png_size(png), w, h))
    print("%s: %d bars, %d text runs, %gx%g" %
          (path, sum(fills.values()), sum(texts.values()), w, h))

def check_timeline(doc, cid, path, png, top, all_labelled):
    c = [c for c in doc["configs"] if c["id"] == cid][0]
    w = [w for w in c["workloads"] if w["type"] == "event-activation"][0]
    units = [(u, "pvscan") for u in w["devices"]] + \
            [(u, "vgchange") for u in w["activations"]]
    ok_pv = sum(1 for u, k in units if k == "pvscan" and u["exit"] == 0)
    ok_vg = sum(1 for u, k in units if k == "vgchange" and u["exit"] == 0)
    bad = sum(1 for u, k in units if u["exit"] != 0)
    fills, texts, width, h = svg(path)
    want = {PVSCAN: ok_pv + 1, VGCHANGE: ok_vg + 1,
            FAILED: bad + (1 if bad else 0)}
    for col, n in want.items():
        if fills.get(col, 0) != n:
            die("%s: %d bars of colour %06x, expected %d" %
                (path, fills.get(col, 0), col, n))
    labels = texts.get(UNIT, 0)
    if all_labelled and labels != len(units):
        die("%s: %d unit labels, expected one per unit (%d)" %
            (path, labels, len(units)))
    if not all_labelled and not (min(top, len(units)) <= labels < len(units) // 4):
        die("%s: %d unit labels for %d units (top %d): not thinned out" %
            (path, labels, len(units), top))
    if tuple(png_size(png)) != (round(width), round(h)):
        die("%s: %s is not %gx%g" % (png, png_size(png), width, h))
    print("%s: %d units, %d labels, %gx%g" % (path, len(units), labels, width, h))

SLOW, SLOW_ROW = 0x8e24aa, 0xf3e5f5

def check_slow(doc, cid, path):
    """The rows marked as touching a device the config's profile made slow
    (a band behind the row, a triangle left of it: filled for the device's
    pvscan, hollow for its VG's vgchange) are exactly those of the
    config's "slow" devices; none without "slow" or with none slow."""
    c = [c for c in doc["configs"] if c["id"] == cid][0]
    w = [w for w in c["workloads"] if w["type"] == "event-activation"][0]
    slow = set((c.get("slow") or {}).get("devices", []))
    vgs = {u["vg"] for u in w["devices"] if u["device"] in slow and u["vg"]}
    # the rows in the order ff_runreport_order(FF_RR_BY_START) draws them
    rows = sorted([(u["start"], u["end"], 0, u["device"]) for u in w["devices"]] +
                  [(u["start"], u["end"], 1, u["vg"]) for u in w["activations"]])
    pitch = max(1, min(14, 2400 / len(rows)))
    want = {i for i, (_, _, k, name) in enumerate(rows)
            if name in (slow if k == 0 else vgs)}
    bands, marks = set(), {True: set(), False: set()}
    for p in ET.parse(path).getroot().iter(SVG + "path"):
        st = p.get("style", "").replace(" ", "")
        ys = [float(y) for y in re.findall(r"-?[0-9.]+", p.get("d", ""))[1::2]]
        filled = "stroke:none" in st
        col = colour(st) if filled else colour(st.replace("stroke:rgb", "fill:rgb"))
        if col not in (SLOW, SLOW_ROW) or not ys:
            continue
        if min(ys) < 146:  # the legend's swatches
            if not c.get("slow", {}).get("devices"):
                die("%s: a slow-device legend without slow devices" % path)
            continue
        if col == SLOW_ROW:
            bands.add(round((min(ys) - 146) / pitch))
        else:
            mid = (min(ys) + max(ys)) / 2
            marks[filled].add(int((mid - 146) // pitch))
    names = lambda s: sorted(rows[i][3] for i in s)
    if bands != want:
        die("%s: bands behind %s, expected the rows of %s" %
            (path, names(bands), names(want)))
    if marks[True] | marks[False] != want or \
       any(rows[i][2] != (0 if f else 1) for f in marks for i in marks[f]):
        die("%s: marks at %s (filled) and %s (hollow), expected %s" %
            (path, names(marks[True]), names(marks[False]), names(want)))
    print("%s: %d rows of %d marked as touching the slow devices %s" %
          (path, len(want), len(rows), sorted(slow)))

def check_csv(doc, runs_csv, units_csv):
    keys = []
    for c in doc["configs"]:
        for k in c["settings"]:
            if k not in keys:
                keys.append(k)
    head = ["scenario", "config_id", "config_label"] + keys + \
           ["workload", "type", "run", "wall", "exit", "errors"]
    rows = list(csv.reader(open(runs_csv, newline="")))
    if rows[0] != head:
        die("%s: header %s, expected %s" % (runs_csv, rows[0], head))
    want = [(c["id"], w["name"], i + 1, r) for c in doc["configs"]
            for w in c["workloads"] for i, r in enumerate(w["runs"])]
    if len(rows) - 1 != len(want):
        die("%s: %d rows, expected %d" % (runs_csv, len(rows) - 1, len(want)))
    for row, (cid, name, i, r) in zip(rows[1:], want):
        d = dict(zip(head, row))
        if len(row) != len(head) or int(d["config_id"]) != cid or \
           d["workload"] != name or int(d["run"]) != i or \
           abs(float(d["wall"]) - r["wall"]) > 1e-6 or \
           int(d["exit"]) != r["exit"] or int(d["errors"]) != r["errors"]:
            die("%s: row %s, expected config %d %s run %d %s" %
                (runs_csv, row, cid, name, i, r))
    uhead = ["config_id", "workload", "unit", "device", "vg", "start", "end",
             "duration", "exit", "vg_complete"]
    urows = list(csv.reader(open(units_csv, newline="")))
    if urows[0] != uhead:
        die("%s: header %s" % (units_csv, urows[0]))
    uwant = []
    for c in doc["configs"]:
        for w in c["workloads"]:
            if w["type"] == "event-activation":
                uwant += [(c["id"], "pvscan", u) for u in w["devices"]]
                uwant += [(c["id"], "vgchange", u) for u in w["activations"]]
    if len(urows) - 1 != len(uwant):
        die("%s: %d rows, expected %d" % (units_csv, len(urows) - 1, len(uwant)))
    for row, (cid, kind, u) in zip(urows[1:], uwant):
        d = dict(zip(uhead, row))
        if int(d["config_id"]) != cid or d["unit"] != kind or \
           d["device"] != (u.get("device", "") if kind == "pvscan" else "") or \
           d["vg"] != (u["vg"] or "") or \
           abs(float(d["duration"]) - (u["end"] - u["start"])) > 2e-6 or \
           int(d["exit"]) != u["exit"]:
            die("%s: row %s, expected config %d %s %s" % (units_csv, row, cid, kind, u))
    print("%s: %d runs; %s: %d units" % (runs_csv, len(want), units_csv, len(uwant)))

def big(src, n, out):
    """src with n devices (two per VG) in every event activation."""
    doc = json.load(open(src))
    for c in doc["configs"]:
        for w in c["workloads"]:
            if w["type"] != "event-activation":
                continue
            devs, acts = [], []
            for i in range(n):
                s = i * 0.002
                e = s + 0.02 + 0.00004 * i * (1 + (i * 7919 % 100) / 150)
                vg = "vg%05d" % (i // 2)
                devs.append({"device": "pv%05d" % i, "vg": vg, "start": s,
                             "end": e, "exit": 0, "vg_complete": i % 2 == 1})
                if i % 2:
                    s2 = max(e, devs[-2]["end"])
                    acts.append({"vg": vg, "start": s2,
                                 "end": s2 + 0.05 + (i % 37) / 150, "exit": 0})
            w["devices"], w["activations"] = devs, acts
            wall = max(u["end"] for u in devs + acts)
            for r in w["runs"]:
                r["wall"] = wall
            w["min"] = w["median"] = w["max"] = wall
    json.dump(doc, open(out, "w"))

def breakdoc(src, out):
    doc = json.load(open(src))
    del doc["configs"][2]["workloads"][0]["median"]
    json.dump(doc, open(out, "w"))

def squares(path):
    """The 7 x 7 squares of the io chart: (colour, x centre, y centre)."""
    out = []
    for p in ET.parse(path).getroot().iter(SVG + "path"):
        st = p.get("style", "")
        if "stroke:none" not in st.replace(" ", ""):
            continue
        v = [float(x) for x in re.findall(r"-?[0-9.]+", p.get("d", ""))]
        xs, ys = v[0::2], v[1::2]
        if len(xs) >= 4 and abs(max(xs) - min(xs) - 7) < 0.01 and \
           abs(max(ys) - min(ys) - 7) < 0.01:
            out.append((colour(st), (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2))
    return out

def p50(w):
    """The io chart's value: median clat p50 of the writes (else reads)."""
    v = []
    for r in w["runs"]:
        io = r.get("io") or {}
        d = io.get("write") if (io.get("write") or {}).get("ios", 0) > 0 else io.get("read")
        if d and d.get("ios", 0) > 0 and (d.get("clat_p50_ns") or 0) > 0:
            v.append(d["clat_p50_ns"])
    v.sort()
    return None if not v else (v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2)

def check_io(doc, path, png):
    fills, texts, w, h = svg(path)
    sq = squares(path)
    names_ = names(doc)
    for k, name in enumerate(names_):
        n = sum(1 for c in doc["configs"] for x in c["workloads"]
                if x["name"] == name and x["type"] in ("io", "fs") and p50(x))
        col = PALETTE[k % len(PALETTE)]
        got = sum(1 for c, _, _ in sq if c == col)
        if got != n:
            die("%s: %d squares of %s's colour, expected %d" % (path, got, name, n))
        if n and fills.get(col, 0) != n + 1:
            die("%s: %d fills of %s's colour, expected %d squares + the legend" %
                (path, fills.get(col, 0), name, n))
    # per configuration (a column of squares), a higher p50 is drawn higher
    for i, c in enumerate(doc["configs"]):
        xs = sorted(set(round(x, 1) for _, x, _ in sq))
        col_y = {cl: y for cl, x, y in sq if round(x, 1) == xs[i]}
        vals = [(p50(x), col_y[PALETTE[names_.index(x["name"]) % len(PALETTE)]])
                for x in c["workloads"] if x["type"] in ("io", "fs") and p50(x)]
        for a in vals:
            for b in vals:
                if a[0] > b[0] * 1.01 and not a[1] < b[1]:
                    die("%s: config %d: p50 %d drawn at y %.1f, not above p50 %d at %.1f" %
                        (path, c["id"], a[0], a[1], b[0], b[1]))
    if tuple(png_size(png)) != (round(w), round(h)):
        die("%s: %s is not %gx%g" % (png, png_size(png), w, h))
    print("%s: %d squares, %gx%g" % (path, len(sq), w, h))

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "io":
    check_io(json.load(open(args[0])), args[1], args[2])
elif cmd == "bars":
    check_bars(json.load(open(args[0])), args[1], args[2])
elif cmd == "timeline":
    check_timeline(json.load(open(args[0])), int(args[1]), args[2], args[3],
                   int(args[4]), args[5] == "all")
elif cmd == "slow":
    check_slow(json.load(open(args[0])), int(args[1]), args[2])
elif cmd == "csv":
    check_csv(json.load(open(args[0])), args[1], args[2])
elif cmd == "big":
    big(args[0], int(args[1]), args[2])
elif cmd == "break":
    breakdoc(args[0], args[1])
else:
    die("check.py: unknown command " + cmd)
EOF
check() { python3 "$tmp/check.py" "$@" || exit 1; }

# expect_fail STATUS MESSAGE ARGS...: `fusefarm report ARGS` exits STATUS
# and its stderr contains MESSAGE.
expect_fail() {
  local want=$1 msg=$2 rc=0
  shift 2
  "$bin" report "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  ((rc == want)) || ff_die "report $*: exit $rc, expected $want ($(head -c 300 "$tmp/err"))"
  grep -qF -- "$msg" "$tmp/err" ||
    ff_die "report $*: stderr lacks '$msg': $(head -c 300 "$tmp/err")"
}

# report ARGS...: run `fusefarm report ARGS`, stdout to $tmp/out; fail on
# a non-zero exit or an error message.
report() {
  "$bin" report "$@" >"$tmp/out" 2>"$tmp/err" ||
    ff_die "report $*: exit $? ($(head -c 300 "$tmp/err"))"
  if grep -q "fusefarm report:" "$tmp/err"; then
    ff_die "report $*: $(cat "$tmp/err")"
  fi
}

has_line() {
  grep -qxF -- "$1" "$tmp/out" || ff_die "no line '$1' in the table:
$(cat "$tmp/out")"
}

# ---- usage and bad documents -------------------------------------------
ff_log "usage and errors"
expect_fail 2 "missing FILE.json"
expect_fail 2 "too many arguments" a.json b.json
expect_fail 2 "--top x: expected a whole number from 0 to" "$data/run-sample.json" --top x
expect_fail 2 "--top -1: expected a whole number from 0 to" "$data/run-sample.json" --top -1
expect_fail 2 "fusefarm report: unknown option '--bogus'" "$data/run-sample.json" --bogus
"$bin" report --help >"$tmp/out" || ff_die "report --help failed"
grep -q "^usage: fusefarm report FILE.json" "$tmp/out" || ff_die "report --help: no usage"
# A document that is missing, unreadable or malformed is bad input: 2.
expect_fail 2 "fusefarm report: $tmp/none.json: No such file or directory" "$tmp/none.json"
printf '{"format": "fusefarm-run",' >"$tmp/bad.json"
expect_fail 2 "fusefarm report: $tmp/bad.json:1:" "$tmp/bad.json"
grep -qF "not valid JSON" "$tmp/err" || ff_die "invalid JSON: $(cat "$tmp/err")"
printf '{"format": "fusefarm-stats", "version": 1}\n' >"$tmp/stats.json"
expect_fail 2 "fusefarm report: $tmp/stats.json: this is a stats snapshot (JSON), not a run document (print it with fusefarm stats)" "$tmp/stats.json"
check break "$data/run-sample.json" "$tmp/broken.json"
expect_fail 2 "fusefarm report: $tmp/broken.json: configs[2].workloads[0]: missing \"median\"" \
  "$tmp/broken.json" --csv "$tmp/broken.csv" --svg "$tmp/broken.svg"
[[ ! -s $tmp/out ]] || ff_die "malformed document: the table was printed anyway"
for f in "$tmp"/broken.csv "$tmp"/broken*.svg "$tmp"/broken-devices.csv; do
  [[ ! -e $f ]] || ff_die "malformed document: $f was written"
done

# ---- run-sample.json: no event activation -------------------------------
ff_log "run-sample.json"
report "$data/run-sample.json" --csv "$tmp/s.csv" --svg "$tmp/s.svg"
has_line "scenario: short-commands"
has_line "host: kernel 6.18.44-fc-v857, 2 cpus, lvm 2.03.16(2) (2022-05-18) (/sbin/lvm), no device-mapper, fusefarm 0.1.0"
has_line "date: 2026-11-30T21:02:11Z to 2026-11-30T21:09:47Z"
has_line "every config: fusefarm/profile=ssd"
has_line "config  use_aio  obtain_device_list_from_udev       median (min–max)       median (min–max)    median (min–max)"
has_line "     1        1                             1  0.634 s (0.608–0.643)     2.87 s (2.70–2.90)  2.33 s (2.24–2.37)"
has_line "     3        0                             1  0.452 s (0.449–0.452)     2.07 s (2.00–2.09)  1.70 s (1.64–1.74) !"
has_line "     4        0                             0  0.157 s (0.156–0.162)  0.703 s (0.691–0.713)  1.70 s (1.65–1.77)"
has_line "! config 3, lvchange: 1 of 5 runs failed (worst exit 5, 1 failed command)"
has_line "- aio contention: 64 io_submit threads while use_aio=1"
has_line "median (min–max): wall time of the workload over its repetitions (3 to 5)"
has_line "- use_aio=0 vs use_aio=1 (2 pairs of configs differing only in it):"
has_line "    too few repetitions for a 95% interval (4 a side, or 3 and 5): not judged: pvs 0.73x, activate 0.74x"
has_line "    a run failed, not judged: lvchange 0.74x"
n=$(grep -c '^ *[0-9][0-9]*  ' "$tmp/out")
((n == 4)) || ff_die "run-sample.json: $n table rows, expected 4"
if grep -q "^slowest units\|slowest pvscan" "$tmp/out"; then
  ff_die "run-sample.json has no event activation, but the table shows slowest units"
fi
check csv "$data/run-sample.json" "$tmp/s.csv" "$tmp/s-devices.csv"
[[ $(wc -l <"$tmp/s-devices.csv") == 1 ]] || ff_die "s-devices.csv: expected the header alone"
rsvg-convert "$tmp/s.svg" -o "$tmp/s.png" || ff_die "rsvg-convert s.svg failed"
check bars "$data/run-sample.json" "$tmp/s.svg" "$tmp/s.png"
ls "$tmp"/s-timeline-* >/dev/null 2>&1 && ff_die "timelines drawn for a run without event activation"
[[ ! -e $tmp/s-io.svg ]] || ff_die "an io chart drawn for a run without io workloads"

# ---- --junit: the JUnit XML report for CI (docs/ci.md) --------------------
# Parsed by xml.etree and checked by hand (tests/lib/check-junit.py: no
# JUnit XSD ships with Debian): 4 suites (one per config) of 3 testcases,
# config 3's lvchange failed (exit 5, no error line recorded); with
# --expect a suite of one testcase per expression: fails is a <failure>,
# not judged (exit 125) an <error>.
ff_log "run-sample.json --junit"
junit=("$here/../lib/check-junit.py")
report "$data/run-sample.json" --junit "$tmp/s.xml"
"${junit[@]}" "$tmp/s.xml" --suites 4 --tests 12 --failures 1 --errors 0 \
  --failed short-commands.config-3/lvchange --passed short-commands.config-4/lvchange \
  --passed short-commands.config-1/pvs \
  --message "short-commands.config-3/lvchange=1 of 5 runs failed (worst exit 5)" ||
  ff_die "run-sample.json --junit: see above"
grep -qF '<property name="global/use_aio" value="0"/>' "$tmp/s.xml" ||
  ff_die "run-sample.json --junit: no settings as properties"
rc=0
"$bin" report "$data/run-sample.json" --junit "$tmp/e.xml" \
  --expect 'pvs < 100' --expect 'activate > 100' --expect 'lvchange < 100' \
  >"$tmp/out" 2>"$tmp/err" || rc=$?
((rc == 125)) || ff_die "report --expect --junit: exit $rc, expected 125: $(cat "$tmp/err")"
"${junit[@]}" "$tmp/e.xml" --suites 5 --tests 15 --failures 2 --errors 1 \
  --passed "short-commands.expect/pvs < 100" \
  --failed "short-commands.expect/activate > 100" \
  --errored "short-commands.expect/lvchange < 100" \
  --message "short-commands.expect/activate > 100=fails: 2.87 s > 100: false" \
  --message "short-commands.expect/lvchange < 100=not judged: 'lvchange' in config 3" ||
  ff_die "report --expect --junit: see above"
rc=0
"$bin" report "$data/run-sample.json" --junit "$tmp/no/such/dir.xml" >/dev/null 2>"$tmp/err" || rc=$?
((rc == 1)) && grep -qF "$tmp/no/such/dir.xml" "$tmp/err" ||
  ff_die "report --junit to a missing directory: exit $rc, $(cat "$tmp/err")"

# ---- run-io.json: io rows (guest/tests/io-2x2.conf in a guest) --------------
ff_log "run-io.json"
report "$data/run-io.json" --svg "$tmp/io.svg"
has_line "     2  write-5ms.conf  ram       ram              1  write  27.6  6737   3.82 µs    259 µs            -        -"
[[ -s $tmp/io-io.svg ]] || ff_die "run-io.json: no io chart (io-io.svg)"
rsvg-convert "$tmp/io-io.svg" -o "$tmp/io-io.png" || ff_die "rsvg-convert io-io.svg failed"
check io "$data/run-io.json" "$tmp/io-io.svg" "$tmp/io-io.png"
# the PVs of an LV target: a row per PV with the median over the runs
# (config 1's lv row made 3 runs, pv0000 100/300/200 writes, a second PV
# with 5/1/3 flushes)
has_line "     2  lv        vg0000/lvol0  pv0000     128        0"
python3 - "$data/run-io.json" "$tmp/io3.json" <<'PY'
import copy, json, sys
d = json.load(open(sys.argv[1]))
w = [w for w in d["configs"][0]["workloads"] if w["name"] == "lv"][0]
run = w["runs"][0]
w["runs"] = []
for wr, fl in ((100, 5), (300, 1), (200, 3)):
    r = copy.deepcopy(run)
    r["io"]["devices"]["pv0000"]["writes"] = wr
    r["io"]["devices"]["pv0001"] = dict(r["io"]["devices"]["pv0000"], writes=0, flushes=fl)
    w["runs"].append(r)
w["repeat"] = 3
json.dump(d, open(sys.argv[2], "w"))
PY
report "$tmp/io3.json"
has_line "     1  lv        vg0000/lvol0  pv0000     200        0"
has_line "     1  lv        vg0000/lvol0  pv0001       0        3"
has_line "     2  lv        vg0000/lvol0  pv0000     128        0"

# ---- the verdict ------------------------------------------------------------
ff_log "verdict-*.json"
report "$data/verdict-clear.json"
has_line "verdict (ratios of wall times: the Hodges-Lehmann estimate from the repetitions with its 95% confidence interval, Mann-Whitney; an interval holding 1 is no clear difference; fewer than 4 repetitions a side are not judged):"
has_line "- event-activation = 44x direct-activation in config 1 (5 repetitions each, 95% CI 42–47x)"
has_line "- profile=builtin:fixed-1ms vs profile=ideal (1 pair of configs differing only in it):"
has_line "    pvs 3.1x (95% CI 3.0–3.3x)"
has_line "units of event-activation: 4 = 3 pvscans (one per device) + 1 vgchange (one per VG the pvscans completed), config 1, last repetition"
has_line "ideal: the profile with no latency: every request is answered at once"
has_line "median (min–max): wall time of the workload over its 5 repetitions (middle, fastest, slowest); slowest pvscan, vgchange: the longest of the last repetition"
report "$data/verdict-noise.json"
has_line "- event-activation = 1.00x direct-activation in config 1 (5 repetitions each, 95% CI 0.87–1.14x): no clear difference"
has_line "    no clear difference (the 95% interval holds 1): pvs 1.03x (95% CI 0.95–1.12x), event-activation 1.02x (95% CI 0.85–1.19x), direct-activation 1.02x (95% CI 0.94–1.11x)"
grep -q "^    [a-z-]* [0-9.]*x (95" "$tmp/out" &&
  ff_die "verdict-noise.json: a difference within the spread is shown as a result"
report "$data/verdict-single.json"
has_line "- event-activation = 44x direct-activation in config 1 (1 and 1 repetitions: too few for a 95% interval, not judged)"
has_line "    too few repetitions for a 95% interval (4 a side, or 3 and 5): not judged: pvs 3.1x, direct-activation 3.0x, event-activation 1.33x"
has_line "median: wall time of the workload, 1 repetition each (no spread); slowest pvscan, vgchange: the longest of the last repetition"

# ---- run-event.json: event activation in configs 1 and 2 -----------------
ff_log "run-event.json"
report "$data/run-event.json" --csv "$tmp/e.csv" --svg "$tmp/e.svg"
has_line "     1                             1                 1     1.06 s (1.01–1.07)     1.39 s (1.36–1.43)    pv0107: 0.574 s   vg0027: 0.414 s                   -"
has_line "     3                             1                 0     1.07 s (1.03–1.08)                      -                  -                 -  5.69 s (5.55–5.88)"
has_line "! config 2, boot-event: 1 of 180 units exited non-zero in the last repetition"
has_line "slowest units: config 1 (obtain_device_list_from_udev=1 event_activation=1), boot-event, last repetition: 10 of 180"
has_line "  0.574 s  pvscan pv0107 (vg0053)"
n=$(grep -c '^  [0-9.]* s  \(pvscan\|vgchange\) ' "$tmp/out")
((n == 20)) || ff_die "run-event.json: $n slowest units listed, expected 2 x 10"
report "$data/run-event.json" --top 3
n=$(grep -c '^  [0-9.]* s  \(pvscan\|vgchange\) ' "$tmp/out")
((n == 6)) || ff_die "run-event.json --top 3: $n slowest units listed, expected 2 x 3"
report "$data/run-event.json" --top 0
grep -q "^slowest units" "$tmp/out" && ff_die "--top 0 still lists slowest units"
check csv "$data/run-event.json" "$tmp/e.csv" "$tmp/e-devices.csv"
rsvg-convert "$tmp/e.svg" -o "$tmp/e.png" || ff_die "rsvg-convert e.svg failed"
check bars "$data/run-event.json" "$tmp/e.svg" "$tmp/e.png"
for id in 1 2; do
  f=$tmp/e-timeline-$id.svg
  [[ -s $f ]] || ff_die "no timeline $f"
  rsvg-convert "$f" -o "${f%.svg}.png" || ff_die "rsvg-convert $f failed"
  check timeline "$data/run-event.json" "$id" "$f" "${f%.svg}.png" 10 all
  check slow "$data/run-event.json" "$id" "$f" # no "slow": no marks
done
ls "$tmp"/e-timeline-[34]* >/dev/null 2>&1 && ff_die "timelines for configs without event activation"

# Output names without the extensions: suffixes are appended.
report "$data/run-event.json" --csv "$tmp/plain" --svg "$tmp/chart"
for f in plain plain-devices.csv chart chart-timeline-1.svg chart-timeline-2.svg; do
  [[ -s $tmp/$f ]] || ff_die "--csv plain --svg chart: no $f"
done
expect_fail 1 "fusefarm report: $tmp/no/dir.csv: No such file or directory" \
  "$data/run-event.json" --csv "$tmp/no/dir.csv"
expect_fail 1 "fusefarm report: $tmp/no/dir.svg: No such file or directory" \
  "$data/run-event.json" --svg "$tmp/no/dir.svg"

# ---- run-slow.json: slow-tail's 2 slow devices marked, none under ideal ----
ff_log "run-slow.json"
report "$data/run-slow.json" --svg "$tmp/slow.svg"
for id in 1 2; do
  f=$tmp/slow-timeline-$id.svg
  rsvg-convert "$f" -o "${f%.svg}.png" || ff_die "rsvg-convert $f failed"
  check timeline "$data/run-slow.json" "$id" "$f" "${f%.svg}.png" 10 all
  check slow "$data/run-slow.json" "$id" "$f"
done
# the check finds marks where they are: config 2's drawn for config 1 fail
python3 "$tmp/check.py" slow "$data/run-slow.json" 1 "$tmp/slow-timeline-2.svg" >/dev/null &&
  ff_die "check slow: config 2's marks pass for config 1, which has none"

# ---- thousands of devices ------------------------------------------------
ff_log "3000 devices per event activation"
check big "$data/run-event.json" 3000 "$tmp/big.json"
start=$(date +%s%N)
report "$tmp/big.json" --svg "$tmp/big.svg" --csv "$tmp/big.csv" --top 15
ms=$((($(date +%s%N) - start) / 1000000))
for id in 1 2; do
  f=$tmp/big-timeline-$id.svg
  rsvg-convert "$f" -o "${f%.svg}.png" || ff_die "rsvg-convert $f failed"
  check timeline "$tmp/big.json" "$id" "$f" "${f%.svg}.png" 15 thinned
done
check csv "$tmp/big.json" "$tmp/big.csv" "$tmp/big-devices.csv"
ff_log "report of 2 x 4,500 units with CSV and SVG: $ms ms"

echo "test-report: PASS"
