#!/usr/bin/env bash
# The runner's private /dev and its fences, with real lvm2:
#   - for each fence (none, the default; devicesfile; filter), lvm inside
#     the run sees exactly the farm's devices: /dev holds the basic nodes
#     and one node per farm device named as its PV metadata's hint
#     (/dev/pvNNNN of configs/mixed-1000.conf), `lvm lvmdiskscan` lists
#     exactly those, `pvs` lists the farm's PVs by those names, a foreign
#     PV on a loop of the host is never seen (nor its VG);
#   - with fence none lvm's own hints are on: /run/lvm/hints (private)
#     names the real paths; no "last written to" / "not using quick
#     activation" in any event-activation pvscan's output;
#   - /sys/dev/block, /sys/class/block and /sys/block inside the run hold
#     the farm's devices only, each entry the kernel's own;
#   - the run document says, per configuration, which fence ran and what
#     /dev held (private, N farm nodes, naming farm, the sysfs views);
#   - dev_names = "disk": sda, sdb, ... and /dev/disk/by-id links;
#   - a run that cannot make its private /dev refuses fence none (exit 1,
#     clear message, nothing left behind) but runs fenced by a devices file
#     on the host's /dev, and says so;
#   - loop devices: attach records the ones it created (not those it
#     reused: those stay after detach); attach --new-loops creates one per
#     device and detach deletes them, a held one only once it is closed.
# What lvm saw is recorded by an lvm wrapper (--lvm) that runs inside the
# run's namespace: on each `pvs` it lists /dev, runs lvmdiskscan and keeps
# the lvm.conf and hints in force.
# usage: test-run-dev.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-run-dev.sh FUSEFARM}
top=$here/../..
ff_require python3 losetup mountpoint find
ff_env_init
s=$FF_SCRATCH

# ---- a PV outside the farm, as the host would have one ----------------------
hostloop=$(ff_foreign_pv "$s/host.img" hostvg)

# ---- the wrapper: what lvm sees inside the run ----------------------------------
reallvm=$(command -v lvm)
mkdir -p "$s/calls"
cat >"$s/seelvm" <<SH
#!/bin/sh
case "\$1" in
pvs)
  d=\$(mktemp -d "$s/calls/pvs.XXXXXX")
  cp "\$LVM_SYSTEM_DIR/lvm.conf" "\$d/lvm.conf"
  find /dev -mindepth 1 >"\$d/dev.txt"
  find /dev -type b -exec stat -c '%n %Hr:%Lr' {} + >"\$d/devnum.txt"
  grep -H . /sys/dev/block/*/dev >"\$d/sysdev.txt"
  ls /sys/class/block >"\$d/sysclass.txt"
  ls /sys/block >"\$d/sysblock.txt"
  "$reallvm" lvmdiskscan >"\$d/diskscan.txt" 2>&1
  "$reallvm" "\$@" >"\$d/out" 2>"\$d/err"
  rc=\$?
  cp /run/lvm/hints "\$d/hints" 2>/dev/null
  cat "\$d/out"
  cat "\$d/err" >&2
  exit \$rc
  ;;
pvscan)
  "$reallvm" "\$@" >"$s/calls/pvscan.\$\$.out" 2>&1
  rc=\$?
  cat "$s/calls/pvscan.\$\$.out"
  exit \$rc
  ;;
esac
exec "$reallvm" "\$@"
SH
chmod +x "$s/seelvm"

cat >"$s/fences.conf" <<SC
name = "dev-fences";
spec = "$top/configs/mixed-1000.conf";
devices = 12;
matrix = ( { key = "fusefarm/fence"; values = ["none", "devicesfile", "filter"]; } );
workloads = ( { type = "pvs"; },
              { type = "event-activation"; concurrency = 8; } );
SC

export TMPDIR=$s
"$bin" run "$s/fences.conf" --lvm "$s/seelvm" --json "$s/run.json" --no-svg \
  --keep --quiet >"$s/table.txt" 2>"$s/run.err" ||
  { cat "$s/run.err" >&2; ff_die "fusefarm run failed"; }
kept=$(sed -n 's/^fusefarm run: kept //p' "$s/run.err")
[[ -d $kept ]] || ff_die "no kept scratch dir in: $(cat "$s/run.err")"
ff_run_leftovers "$s" || ff_die "the run left something behind"
cat "$s/table.txt"

python3 - "$s/run.json" "$s/calls" "$kept" "$hostloop" <<'PY' || ff_die "lvm did not see exactly the farm's devices"
import glob, json, os, re, sys
doc = json.load(open(sys.argv[1]))
calls, kept, hostloop = sys.argv[2], sys.argv[3], sys.argv[4]
bad = []
# The farm: its device names and which are PVs (the manifest the run read).
configs = doc["configs"]
if [c.get("fence") for c in configs] != ["none", "devicesfile", "filter"]:
    bad.append(f"fences {[c.get('fence') for c in configs]}")
ndev = configs[0]["farm"]["devices"]
for c in configs:
    d = c.get("dev", {})
    sb = d.get("sys_block", {})
    if not (d.get("private") is True and d.get("naming") == "farm"
            and d.get("farm_nodes") == ndev and d.get("basic_nodes", 0) >= 6
            and sb.get("views") == 3 and sb.get("farm_entries") == ndev
            and sb.get("host_entries", 0) > ndev):
        bad.append(f"config {c['id']}: dev {d}")
# One pvs call per configuration, in order (mktemp names sort by time? no:
# order them by the fence their lvm.conf holds).
seen = {}
for d in glob.glob(os.path.join(calls, "pvs.*")):
    conf = open(os.path.join(d, "lvm.conf")).read()
    fence = ("filter" if "global_filter" in conf else
             "devicesfile" if "use_devicesfile = 1" in conf else "none")
    if fence in seen:
        bad.append(f"two pvs calls with fence {fence}")
    seen[fence] = d
if sorted(seen) != ["devicesfile", "filter", "none"]:
    bad.append(f"pvs calls for fences {sorted(seen)}")
basic = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
         "/dev/tty", "/dev/shm", "/dev/fd", "/dev/stdin", "/dev/stdout",
         "/dev/stderr", "/dev/pts", "/dev/ptmx", "/dev/mapper",
         "/dev/mapper/control"}
names = lists = None
for fence, d in sorted(seen.items(), key=lambda kv: kv[0] != "none"):
    dev = [l for l in open(os.path.join(d, "dev.txt")).read().split("\n") if l]
    farm = sorted(p for p in dev if p not in basic and not p.startswith("/dev/pts/"))
    if len(farm) != ndev or not all(re.fullmatch(r"/dev/pv\d{4}", p) for p in farm):
        bad.append(f"{fence}: /dev holds {len(farm)} other nodes: {farm[:5]}")
    if any(p.startswith("/dev/loop") for p in dev):
        bad.append(f"{fence}: a loop node in the private /dev")
    names = names or farm
    # The sysfs block views: the farm's devices only, each entry the
    # kernel's own (its dev file names it), lvm's walk of them included.
    nums = sorted(l.split()[1] for l in open(os.path.join(d, "devnum.txt")) if l.strip())
    # "/sys/dev/block/7:3/dev:7:3": the entry, and what its dev file says
    sysdev = [l.strip()[len("/sys/dev/block/"):].split("/dev:")
              for l in open(os.path.join(d, "sysdev.txt")) if l.strip()]
    if len(nums) != ndev or sorted(e[0] for e in sysdev) != nums:
        bad.append(f"{fence}: /sys/dev/block holds {len(sysdev)} entries "
                   f"{[e[0] for e in sysdev][:5]}, the farm's nodes are {nums[:5]}")
    if any(len(e) != 2 or e[0] != e[1] for e in sysdev):
        bad.append(f"{fence}: a /sys/dev/block entry is not its device: {sysdev[:3]}")
    cls = sorted(open(os.path.join(d, "sysclass.txt")).read().split())
    blk = sorted(open(os.path.join(d, "sysblock.txt")).read().split())
    if len(cls) != ndev or cls != blk or not all(re.fullmatch(r"loop\d+", n) for n in cls):
        bad.append(f"{fence}: /sys/class/block {cls[:5]} ({len(cls)}), /sys/block {blk[:5]} ({len(blk)})")
    if os.path.basename(hostloop) in cls:
        bad.append(f"{fence}: the host PV's loop is in /sys/class/block")
    scan = open(os.path.join(d, "diskscan.txt")).read()
    listed = sorted(set(re.findall(r"(/dev/\S+)\s+\[", scan)))
    # lvm's own filters drop a partitioned device (the farm's mbr and gpt
    # signatures): what it lists is farm nodes only, the same with every
    # fence, every PV among them.
    if not listed or not set(listed) <= set(farm):
        bad.append(f"{fence}: lvmdiskscan lists {listed[:5]}... ({len(listed)}), "
                   f"not farm nodes only")
    lists = lists if lists is not None else listed
    if listed != lists:
        bad.append(f"{fence}: lvmdiskscan lists another set than fence none")
    out = open(os.path.join(d, "out")).read()
    pvs = re.findall(r"^\s*(/dev/\S+)", out, re.M)
    if not pvs or not set(pvs) <= set(listed):
        bad.append(f"{fence}: pvs lists {pvs[:5]}")
    for f in ("out", "err", "diskscan.txt", "dev.txt", "hints"):
        p = os.path.join(d, f)
        if os.path.exists(p):
            t = open(p).read()
            if re.search(re.escape(hostloop) + r"\b", t) or "hostvg" in t:
                bad.append(f"{fence}: {f} names the host PV")
    hints = os.path.join(d, "hints")
    if fence == "none":
        if not os.path.exists(hints):
            bad.append("fence none: no /run/lvm/hints (lvm's hints are off?)")
        else:
            scans = re.findall(r"^scan:(\S+)", open(hints).read(), re.M)
            if not scans or not set(scans) <= set(farm):
                bad.append(f"fence none: hints name {scans[:5]}")
# The event-activation pvscans (every configuration's): no wrong hint.
outs = glob.glob(os.path.join(calls, "pvscan.*.out"))
if not outs:
    bad.append("no pvscan output recorded")
for p in outs:
    t = open(p).read()
    if "last written to" in t or "not using quick activation" in t:
        bad.append(f"{os.path.basename(p)}: {t.strip()[:200]}")
    if re.search(re.escape(hostloop) + r"\b", t) or "hostvg" in t:
        bad.append(f"{os.path.basename(p)}: names the host PV")
for b in bad[:30]:
    print(b)
sys.exit(1 if bad else 0)
PY
ff_lvm vgs --noheadings -o vg_name 2>/dev/null | grep -qw hostvg || ff_die "the host VG is gone"
rm -rf "$kept" "$s/calls"
mkdir -p "$s/calls"

# ---- disk names --------------------------------------------------------------------
cat >"$s/disk.conf" <<SC
name = "dev-disk";
spec = "$top/configs/mixed-1000.conf";
devices = 12;
dev_names = "disk";
workloads = ( { type = "pvs"; } );
SC
"$bin" run "$s/disk.conf" --lvm "$s/seelvm" --json "$s/disk.json" --no-svg \
  --quiet >/dev/null 2>"$s/disk.err" ||
  { cat "$s/disk.err" >&2; ff_die "the dev_names = disk run failed"; }
ff_run_leftovers "$s" || ff_die "the disk-named run left something behind"
python3 - "$s/disk.json" "$s/calls" <<'PY' || ff_die "dev_names = disk: wrong names"
import glob, json, os, re, string, sys
doc = json.load(open(sys.argv[1]))
c = doc["configs"][0]
n = c["farm"]["devices"]
bad = []
if c["dev"].get("naming") != "disk" or c["dev"].get("links") != n or c.get("fence") != "none":
    bad.append(f"dev {c['dev']} fence {c.get('fence')}")
(d,) = glob.glob(os.path.join(sys.argv[2], "pvs.*"))
dev = [l for l in open(os.path.join(d, "dev.txt")).read().split("\n") if l]
want = ["/dev/sd" + string.ascii_lowercase[i] for i in range(n)]
sd = sorted(p for p in dev if re.fullmatch(r"/dev/sd[a-z]+", p))
if sd != want:
    bad.append(f"sd nodes {sd}")
ids = [p for p in dev if p.startswith("/dev/disk/by-id/scsi-0FUSEFARM_")]
if len(ids) != n:
    bad.append(f"{len(ids)} by-id links")
pvs = re.findall(r"^\s*(/dev/\S+)", open(os.path.join(d, "out")).read(), re.M)
if not pvs or not set(pvs) <= set(want):
    bad.append(f"pvs lists {pvs[:5]}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# ---- no private /dev: fence none is refused, a fenced run goes on ---------------
# FUSEFARM_TEST_NO_PRIVATE_DEV makes the runner behave as if the private
# /dev could not be made.
cat >"$s/none.conf" <<SC
name = "dev-none";
spec = "$top/configs/mixed-1000.conf";
devices = 12;
workloads = ( { type = "pvs"; } );
SC
rc=0
FUSEFARM_TEST_NO_PRIVATE_DEV=1 "$bin" run "$s/none.conf" --json "$s/none.json" \
  --no-svg --quiet >/dev/null 2>"$s/none.err" || rc=$?
((rc == 1)) || ff_die "fence none without a private /dev exited $rc, expected 1: $(cat "$s/none.err")"
grep -q "refusing fence none" "$s/none.err" || ff_die "no refusal message: $(cat "$s/none.err")"
ff_run_leftovers "$s" || ff_die "the refused run left something behind"
sed 's/^workloads/fence = "devicesfile";\nworkloads/' "$s/none.conf" >"$s/df.conf"
FUSEFARM_TEST_NO_PRIVATE_DEV=1 "$bin" run "$s/df.conf" --json "$s/df.json" \
  --no-svg --quiet >/dev/null 2>"$s/df.err" ||
  { cat "$s/df.err" >&2; ff_die "a devicesfile-fenced run without a private /dev failed"; }
ff_run_leftovers "$s" || ff_die "the host-/dev run left something behind"
python3 - "$s/df.json" <<'PY' || ff_die "the run document does not say /dev was the host's"
import json, sys
c = json.load(open(sys.argv[1]))["configs"][0]
ok = (c["fence"] == "devicesfile" and c["dev"]["private"] is False
      and c["dev"]["error"] and all(r["exit"] == 0 for w in c["workloads"] for r in w["runs"]))
sys.exit(0 if ok else 1)
PY
# ---- loop devices: detach deletes those attach created, only those ------------
# The host has thousands of free loop devices: attach reuses them (none
# created), and --new-loops creates one per device (LOOP_CTL_ADD), which
# detach deletes.  A loop device's entry is "ours" only through the
# records of our state dir.
sysloops() { ls /sys/block | grep '^loop' | sort; }
bound_here() { # LOOP: bound to a file of this test's scratch dir?
  local b
  b=$(cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null) || return 1
  [[ $b == "$s/"* ]]
}
ff_fuse_mount "$bin" "$top/configs/mixed-1000.conf" "$s/mnt" --devices 12
sysloops >"$s/loops-before"
"$FF_FUSEFARM" attach "$FF_MNT" --state "$FF_STATE" --quiet >/dev/null ||
  ff_die "attach failed"
nrec=$(wc -l <"$FF_STATE/loops")
((nrec > 0)) || ff_die "attach recorded no loop"
# created: exactly the recorded loops that did not exist before
while read -r dev _; do
  if grep -qx "${dev#/dev/}" "$s/loops-before"; then
    ! grep -qx "$dev" "$FF_STATE/created" 2>/dev/null ||
      ff_die "$dev existed before attach but is recorded as created"
    echo "$dev" >>"$s/reused"
  else
    grep -qx "$dev" "$FF_STATE/created" ||
      ff_die "$dev did not exist before attach but is not recorded as created"
  fi
done <"$FF_STATE/loops"
"$FF_FUSEFARM" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "detach failed"
if [[ -s $s/reused ]]; then
  while read -r dev; do
    [[ -e /sys/block/${dev#/dev/} ]] || ff_die "detach deleted $dev, a loop device attach reused"
  done <"$s/reused"
fi
ff_log "attach reused $(wc -l <"$s/reused" 2>/dev/null || echo 0) of $nrec free loop devices; detach kept them"

"$FF_FUSEFARM" attach "$FF_MNT" --state "$FF_STATE" --new-loops --quiet >/dev/null ||
  ff_die "attach --new-loops failed"
cp "$FF_STATE/created" "$s/created"
(($(wc -l <"$s/created") == nrec)) ||
  ff_die "attach --new-loops recorded $(wc -l <"$s/created") created loops of $nrec"
while read -r dev; do
  ! grep -qx "${dev#/dev/}" "$s/loops-before" || ff_die "--new-loops reused $dev"
  bound_here "$dev" || ff_die "$dev (created) does not carry a farm file"
done <"$s/created"
# one created loop held open: detach cannot finish it (busy, exit 1), keeps
# its record, and deletes it once it is closed and detach runs again
held=$(head -1 "$s/created")
exec 8<"$held"
rc=0
"$FF_FUSEFARM" detach "$FF_MNT" --state "$FF_STATE" --quiet 2>"$s/busy.err" || rc=$?
((rc == 1)) || ff_die "detach with $held held open exited $rc, expected 1"
grep -qx "$held" "$FF_STATE/created" || ff_die "the held loop $held lost its created record"
(($(wc -l <"$FF_STATE/created") == 1)) || ff_die "created keeps more than the held loop"
exec 8<&-
"$FF_FUSEFARM" detach "$FF_MNT" --state "$FF_STATE" --quiet ||
  ff_die "detach after closing $held failed"
# every loop attach created is gone (or, should the kernel have handed its
# number to someone else meanwhile, carries none of our files)
while read -r dev; do
  if [[ -e /sys/block/${dev#/dev/} ]] && ! bound_here "$dev"; then
    b=$(cat "/sys/block/${dev#/dev/}/loop/backing_file" 2>/dev/null || true)
    [[ -n $b ]] || ff_die "detach left $dev, which attach created (unbound)"
  fi
done <"$s/created"
[[ ! -e $FF_STATE ]] || ff_die "detach left the state dir"
ff_log "attach --new-loops created $nrec loop devices; detach deleted them"
echo "PASS: the run's lvm sees the farm's devices only, named as their hints, with every fence; detach deletes the loops attach created"
