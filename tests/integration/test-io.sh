#!/usr/bin/env bash
# The io workload (fio on a farm device) end to end, with the real fio:
#   - a farm of 4 devices, `io` randwrite then randread of 2 MiB on
#     pv0001, under the ideal profile and one whose writes take a fixed
#     2 ms, run by `fusefarm run --out DIR`: the run document has every
#     io member; fio's total I/Os are size / bs, all in the job's
#     direction; the farm's counters of pv0001 hold at least the I/Os fio
#     did (reads for the read job, writes for the write job); the text
#     report (report.txt and `fusefarm report`) has the io table with a
#     row per config and job;
#   - an LV target is refused before anything is mounted, naming the
#     target and `fusefarm vm` (exit 2), and so is target "ram" (the
#     guest's RAM disk) as a value of the target axis;
#   - the nbd transport (fusefarm/transport "nbd") is refused the same
#     way (exit 2);
#   - a fio that is not there ($FF_FIO) is a failed command with its
#     message (exit 1), and the run leaves nothing behind.
# Properties only: no speed is judged (the 2 ms profile's times are
# printed beside ideal's).
# usage: test-io.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-io.sh FUSEFARM}
ff_require python3 fio losetup
ff_env_init
s=$FF_SCRATCH
export TMPDIR=$s

cat >"$s/farm.conf" <<'EOF'
seed = 1;
device_size = "64M";
vgs = ({ count = 2; pvs = 1; lvs = ({ size = "8M"; }); });
orphans = ({ count = 2; });
EOF
cat >"$s/write-2ms.conf" <<'EOF'
name = "write-2ms";
groups = ({ devices = "all"; write = { dist = "fixed"; value = "2ms"; }; });
EOF
cat >"$s/io.conf" <<'EOF'
name = "io-small";
spec = "farm.conf";
matrix = ( { key = "fusefarm/profile"; values = ["ideal", "write-2ms.conf"]; } );
workloads = ( { type = "io"; name = "randwrite"; target = "pv0001";
                rw = "randwrite"; bs = "4K"; size = "2M"; repeat = 2; },
              { type = "io"; name = "randread"; target = "pv0001";
                rw = "randread"; bs = "4K"; size = "2M"; repeat = 2; } );
EOF

# ---- the run ---------------------------------------------------------------------
"$bin" run "$s/io.conf" --out "$s/out" --quiet >"$s/table.txt" 2>"$s/run.err" ||
  { cat "$s/run.err" >&2; ff_die "fusefarm run failed"; }
ff_run_leftovers "$s" || ff_die "the run left something behind"
cat "$s/table.txt"

python3 - "$s/out/run.json" <<'PY' || ff_die "the run document's io members are wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
ios_expected = (2 << 20) // 4096
if len(doc["configs"]) != 2:
    bad.append(f"{len(doc['configs'])} configs, expected 2")
for c in doc["configs"]:
    names = [w["name"] for w in c["workloads"]]
    if names != ["randwrite", "randread"]:
        bad.append(f"config {c['id']}: workloads {names}")
    for w in c["workloads"]:
        where = f"config {c['id']} {w['name']}"
        if w["type"] != "io" or w.get("target") != "pv0001":
            bad.append(f"{where}: type {w['type']} target {w.get('target')}")
        if not w["command"].startswith("fio --output-format=json"):
            bad.append(f"{where}: command {w['command']}")
        for k in ("min", "median", "max", "reads", "bytes_read", "writes",
                  "bytes_written", "flushes"):
            if k not in w:
                bad.append(f"{where}: missing {k}")
        if len(w["runs"]) != 2:
            bad.append(f"{where}: {len(w['runs'])} runs")
        did, idle = ("write", "read") if w["name"] == "randwrite" else ("read", "write")
        for i, r in enumerate(w["runs"]):
            rw = f"{where} run {i + 1}"
            if r["exit"] != 0 or r["errors"] != 0 or not r["wall"] > 0:
                bad.append(f"{rw}: exit {r['exit']} errors {r['errors']} "
                           f"wall {r['wall']} {r.get('message', '')}")
                continue
            io = r.get("io")
            if io is None:
                bad.append(f"{rw}: no io")
                continue
            for k in ("target", "path", "read", "write", "error", "farm"):
                if k not in io:
                    bad.append(f"{rw}: io.{k} missing")
            for d in ("read", "write"):
                for k in ("bw", "iops", "ios", "bytes", "clat_p50_ns",
                          "clat_p99_ns"):
                    if k not in io[d]:
                        bad.append(f"{rw}: io.{d}.{k} missing")
            if io["error"] != 0:
                bad.append(f"{rw}: fio error {io['error']}")
            # fio's random map: every block of [0, size) once
            if io[did]["ios"] != ios_expected:
                bad.append(f"{rw}: {io[did]['ios']} {did} I/Os, expected "
                           f"{ios_expected} (2 MiB / 4 KiB)")
            if io[did]["bytes"] != 2 << 20:
                bad.append(f"{rw}: {io[did]['bytes']} bytes {did}")
            if io[idle]["ios"] != 0 or io[idle]["clat_p50_ns"] is not None:
                bad.append(f"{rw}: {io[idle]['ios']} {idle} I/Os")
            if not (io[did]["bw"] > 0 and io[did]["iops"] > 0 and
                    0 < io[did]["clat_p50_ns"] <= io[did]["clat_p99_ns"]):
                bad.append(f"{rw}: {did} numbers {io[did]}")
            # The farm served at least what fio did, on pv0001 (direct
            # I/O through the loop: every I/O reaches the daemon).
            farm = io["farm"]
            served = farm["reads"] if did == "read" else farm["writes"]
            if served < io[did]["ios"]:
                bad.append(f"{rw}: the farm served {served} {did}s of pv0001, "
                           f"fio did {io[did]['ios']}")
            if did == "write" and farm["bytes_written"] < 2 << 20:
                bad.append(f"{rw}: pv0001 took {farm['bytes_written']} bytes")
            if r["reads"] < farm["reads"] or r["writes"] < farm["writes"]:
                bad.append(f"{rw}: the farm's totals are below pv0001's")
for c in doc["configs"]:
    for w in c["workloads"]:
        print(f"config {c['id']} ({c['label']}) {w['name']}: median "
              f"{w['median']:.3f} s")
for b in bad[:30]:
    print(b)
sys.exit(1 if bad else 0)
PY

# The io table, in what was printed, report.txt and `fusefarm report`.
grep -q '^io (fio): median' "$s/table.txt" || ff_die "no io table in the report"
for row in '1 .*randwrite .*pv0001 .*2  write' '1 .*randread .*pv0001 .*2  read' \
  '2 .*randwrite .*pv0001 .*2  write' '2 .*randread .*pv0001 .*2  read'; do
  grep -Eq "^ +$row " "$s/table.txt" || ff_die "no io row /$row/ in: $(cat "$s/table.txt")"
done
grep -q 'clat p99' "$s/out/report.txt" || ff_die "report.txt has no io table"
"$bin" report "$s/out/run.json" >"$s/report.txt" || ff_die "fusefarm report failed"
cmp -s "$s/table.txt" "$s/report.txt" || ff_die "fusefarm report renders differently from the run"

# ---- refused before anything runs (exit 2) -----------------------------------------
# refused NAME WHAT PATTERN...: `fusefarm run $s/NAME.conf` exits 2 with
# every PATTERN (fixed strings) in its message, makes no run directory
# and leaves nothing behind.
refused() {
  local name=$1 what=$2 rc=0 p
  shift 2
  "$bin" run "$s/$name.conf" --out "$s/$name-out" --quiet >/dev/null 2>"$s/$name.err" || rc=$?
  ((rc == 2)) || ff_die "$what exited $rc, expected 2: $(cat "$s/$name.err")"
  for p in "$@"; do
    grep -qF -- "$p" "$s/$name.err" || ff_die "the refusal of $what does not say '$p': $(cat "$s/$name.err")"
  done
  [[ ! -e $s/$name-out ]] || ff_die "$what: a refused run made its run directory"
  ff_run_leftovers "$s" || ff_die "$what: a refused run left something behind"
}
# an LV target (the host has no device-mapper)
cat >"$s/lv.conf" <<'EOF'
name = "io-lv";
spec = "farm.conf";
workloads = ( { type = "io"; target = "vg0001/lvol0"; size = "1M"; } );
EOF
refused lv "an LV target" 'target vg0001/lvol0 is an LV' 'fusefarm vm'
# the guest's RAM disk, as a value of the target axis
cat >"$s/ram.conf" <<'EOF'
name = "io-ram";
spec = "farm.conf";
matrix = ( { key = "fusefarm/target"; values = ["pv0002", "ram"]; } );
workloads = ( { type = "io"; name = "w"; target = "pv0002"; size = "1M"; } );
EOF
refused ram "target ram" \
  "target ram is the guest's RAM disk, which only \`fusefarm vm\` has (a value of the fusefarm/target axis)"
# the nbd transport: the guest's
cat >"$s/nbd.conf" <<'EOF'
name = "io-nbd";
spec = "farm.conf";
matrix = ( { key = "fusefarm/transport"; values = ["scsi", "nbd"]; } );
workloads = ( { type = "io"; target = "pv0001"; size = "1M"; } );
EOF
refused nbd "the nbd transport" 'fusefarm/transport has "nbd"' 'fusefarm vm'

# ---- no fio: a failed command with its message -----------------------------------
cat >"$s/one.conf" <<'EOF'
name = "io-one";
spec = "farm.conf";
workloads = ( { type = "io"; target = "pv0002"; size = "1M"; } );
EOF
rc=0
FF_FIO=$s/no-such-fio "$bin" run "$s/one.conf" --out "$s/nofio" --quiet --no-svg \
  >/dev/null 2>"$s/nofio.err" || rc=$?
((rc == 1)) || ff_die "a run without fio exited $rc, expected 1: $(cat "$s/nofio.err")"
grep -q 'install fio' "$s/nofio.err" || ff_die "no 'install fio' in: $(cat "$s/nofio.err")"
python3 - "$s/nofio/run.json" <<'PY' || ff_die "the missing fio is not recorded as a failed command"
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["configs"][0]["workloads"][0]["runs"][0]
sys.exit(0 if r["errors"] == 1 and r["exit"] != 0 and "no-such-fio" in r["message"]
         and "io" not in r else 1)
PY
ff_run_leftovers "$s" || ff_die "a run without fio left something behind"
echo "PASS: io workloads run fio on farm devices, record and report its numbers"
