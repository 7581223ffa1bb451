#!/usr/bin/env bash
# The fs workload's mkdir storm (mkdirs, mdtest -D -C) and sysfs tunables
# (fs_tunables, the matrix axis fusefarm/fs_tunables), end to end on the
# host with the real mkfs.ext4 on a 64 GiB blank farm disk:
#   - fusefarm/mount_options ["", no_prefetch_block_bitmaps] x
#     fusefarm/fs_tunables ["", mb_prefetch_limit=0]: 4 configurations;
#     in each, every job's directories are there afterwards (read back:
#     4 x 300), the kernel shows the mount option where it was given (and
#     not elsewhere), the tunable reads back 0 where it was given (and is
#     not recorded elsewhere), the farm counted reads while mounting and
#     during the storm, and creates/s is given; `fusefarm report` prints
#     the storm table, a row per configuration;
#   - a tunable the filesystem does not have fails the command, naming
#     its sysfs file (exit 1), and leaves nothing mounted;
#   - refused before anything runs (exit 2): mkdirs with nrfiles, a
#     tunable with a slash, fs_tunables on a pvs workload.
# Properties only: which directories exist, what the kernel took, which
# counters moved; no speed is judged.
# usage: test-fs-mkdir.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-fs-mkdir.sh FUSEFARM}
ff_require python3 losetup mkfs.ext4
ff_env_init
s=$FF_SCRATCH
export TMPDIR=$s

# the scenario's ext4: every group's bitmap on disk, few inodes
mkfs='-O ^metadata_csum,^uninit_bg -i 67108864 -E lazy_itable_init=0,lazy_journal_init=1,nodiscard'
scenario() { # NAME WORKLOAD-KEYS [MATRIX]
  {
    echo "name = \"$1\";"
    echo 'farm = "seed = 5; blanks = ({ count = 1; device_size = \"64G\"; });";'
    echo "${3:-}"
    echo "workloads = ( { type = \"fs\"; name = \"storm\"; target = \"pv0000\"; fstype = \"ext4\";"
    echo "                mkfs_options = \"$mkfs\"; $2 } );"
  } >"$s/$1.conf"
}

ff_log "4 configurations: mount option x tunable, 4 jobs x 300 directories"
scenario storm 'numjobs = 4; mkdirs = 300;' \
  'matrix = ( { key = "fusefarm/mount_options"; values = ["", "no_prefetch_block_bitmaps"]; },
           { key = "fusefarm/fs_tunables"; values = ["", "mb_prefetch_limit=0"]; } );'
"$bin" run "$s/storm.conf" --json "$s/storm.json" --no-svg --quiet \
  >"$s/storm.out" 2>"$s/storm.err" || { cat "$s/storm.err" >&2; ff_die "the storm run failed"; }
ff_run_leftovers "$s" || ff_die "the storm run left something behind"
python3 - "$s/storm.json" <<'PY' || ff_die "the storm's run document"
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
seen = set()
for c in doc["configs"]:
    opt = c["settings"].get("fusefarm/mount_options")
    tun = c["settings"].get("fusefarm/fs_tunables")
    seen.add((opt, tun))
    for w in c["workloads"]:
        for r in w["runs"]:
            fs = r.get("fs", {})
            m = fs.get("mkdir", {})
            where = f"config {c['id']} ({opt!r}, {tun!r})"
            if r["exit"] or r["errors"]:
                bad.append(f"{where}: run {r}")
            if (m.get("jobs"), m.get("per_job"), m.get("made")) != (4, 300, 1200):
                bad.append(f"{where}: mkdir {m}")
            if not m.get("per_second", 0) > 0:
                bad.append(f"{where}: per_second {m.get('per_second')}")
            mounted = fs.get("mounted", "").split(",")
            if ("no_prefetch_block_bitmaps" in mounted) != (opt == "no_prefetch_block_bitmaps"):
                bad.append(f"{where}: mounted {fs.get('mounted')!r}")
            want = {"mb_prefetch_limit": "0"} if tun else None
            if fs.get("tunables") != want:
                bad.append(f"{where}: tunables {fs.get('tunables')}")
            for k in ("mount_farm", "load_farm"):
                if not fs.get(k, {}).get("reads", 0) > 0:
                    bad.append(f"{where}: {k} {fs.get(k)}")
            if "io" in r:
                bad.append(f"{where}: a storm has no fio result, yet io is {r['io']}")
if seen != {("", ""), ("", "mb_prefetch_limit=0"), ("no_prefetch_block_bitmaps", ""),
            ("no_prefetch_block_bitmaps", "mb_prefetch_limit=0")}:
    bad.append(f"configurations {sorted(seen)}")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
grep -q "mkdir storm (4 jobs x 300 directories) in ext4" "$s/storm.json" ||
  ff_die "the workload's command does not describe the storm"
# the report's storm table: a row per configuration, 1200 made, with
# creates/s and the farm's reads
"$bin" report "$s/storm.json" >"$s/report.txt" || ff_die "report of the storm failed"
grep -q '^mkdir storms (creates/s' "$s/report.txt" || ff_die "the report has no mkdir storm table"
n=$(grep -cE '^ +[1-4] .* storm +[0-9]+ +1200 +[0-9]+ +[0-9.]+$' "$s/report.txt" || true)
[[ $n == 4 ]] || { cat "$s/report.txt" >&2; ff_die "the storm table has $n rows of 4"; }

ff_log "a tunable ext4 does not have: a failed command naming its file"
scenario badknob 'numjobs = 1; mkdirs = 10; fs_tunables = "no_such_knob=1";'
rc=0
"$bin" run "$s/badknob.conf" --json "$s/badknob.json" --no-svg --quiet \
  >"$s/badknob.out" 2>"$s/badknob.err" || rc=$?
[[ $rc == 1 ]] || { cat "$s/badknob.err" >&2; ff_die "a missing tunable exited $rc, not 1"; }
grep -Eq "fs_tunables: no_such_knob=1: /sys/fs/ext4/[a-z0-9]+/no_such_knob: no such tunable of ext4" "$s/badknob.err" ||
  { cat "$s/badknob.err" >&2; ff_die "the failure does not name the tunable's file"; }
ff_run_leftovers "$s" || ff_die "the failed run left something mounted or attached"

ff_log "refused before anything runs"
expect2() { # WANT CONF: exit 2, stderr holds WANT
  local rc=0
  "$bin" run "$2" >"$s/bad.out" 2>"$s/bad.err" || rc=$?
  [[ $rc == 2 ]] || { cat "$s/bad.err" >&2; ff_die "$2 exited $rc, not 2"; }
  grep -qF -- "$1" "$s/bad.err" || { cat "$s/bad.err" >&2; ff_die "$2 did not say: $1"; }
}
scenario both 'mkdirs = 10; nrfiles = 2;'
expect2 "workloads.[0].mkdirs: makes directories instead of fio's files: give mkdirs or nrfiles, not both" "$s/both.conf"
scenario slash 'mkdirs = 10; fs_tunables = "mb_prefetch_limit=../0";'
expect2 "workloads.[0].fs_tunables: 'mb_prefetch_limit=../0': the value of mb_prefetch_limit is empty or has a slash, a blank or a quote" "$s/slash.conf"
printf 'name = "p";\nworkloads = ( { type = "pvs"; fs_tunables = "a=1"; } );\n' >"$s/pvs.conf"
expect2 "workloads.[0].fs_tunables: only fs workloads take fs_tunables" "$s/pvs.conf"
ff_run_leftovers "$s" || ff_die "a refused run left something behind"
ff_log "ok"
