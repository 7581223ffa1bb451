# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # BL_* globals are read by the scripts sourcing us
#
# lib.sh: what the benchmarks share.  Sourced by bench/run (every
# benchmark, one table), bench/bench-fuse.sh and bench/bench-nbd.sh, from
# bash running as root with `set -euo pipefail`.
#
# A benchmark measures two things side by side in the same run and records
# a row: what was measured (A), its baseline (B), the ratio A/B and the
# parameters (bl_row).  bench/report.py prints the rows as one table and
# as JSON.  Nothing here asserts anything about speed (docs/style.md, "Tests").
#
# Fencing and cleanup come from tests/lib/lvm-env.sh: lvm runs with a
# private config, a devices file naming only our loops and a private
# /run/lvm.  That config is always written by `fusefarm fence` (this
# build's; runner/ff-fence.h is the one module that knows what a fenced
# lvm.conf holds), never by hand here.  Every resource a section starts is
# registered with ff_on_cleanup before it can leak, and the EXIT/INT/TERM
# traps of lvm-env.sh release it: our tmpfs, our FUSE mounts (loops
# detached first, through the state dir `fusefarm attach` wrote; the
# daemon signalled only while its pid is still a fusefarm with our mount
# point in its arguments), our nbdkit servers (found by their socket, a
# path in our scratch dir, on their command line), the loops we attached
# to tmpfs images (recorded with their backing file: a loop reused by
# someone else meanwhile is left alone).  Nothing else on the machine is
# touched.
#
# State (globals; set by bl_init and the sections, read them):
#   BL_TOP BL_BUILD    the tree and the build dir
#   BL_BIN             the fusefarm program
#   BL_S               the scratch dir (= FF_SCRATCH)
#   BL_ROWS            the rows recorded so far (TSV, see bl_row)
#   BL_PY              Debian's python3 (it has libnbd's bindings)
# and, per section, the BL_* values the legacy scripts print.

# bl_init BUILD_DIR: paths, the fenced env, the traps, a raised fd limit.
bl_init() {
  BL_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  BL_BUILD=$(cd "$1" && pwd)
  BL_BIN=$BL_BUILD/fusefarm/fusefarm
  BL_PLUGIN=$BL_BUILD/nbd-plugin/nbdkit-fusefarm-plugin.so
  BL_NBDKIT=$BL_BUILD/nbd-plugin/ff-nbdkit
  BL_CORE=$BL_BUILD/bench/bench-core
  BL_FLOOD=$BL_BUILD/bench/aio-flood
  BL_READRATE=$BL_BUILD/bench/readrate
  BL_URING=$BL_BUILD/bench/fuse-uring
  BL_BURST=$BL_BUILD/bench/nbd-burst
  BL_PY=/usr/bin/python3
  [[ -x $BL_PY ]] || BL_PY=python3
  # lvm-env.sh's `fusefarm fence` runs are this build's too.
  FF_FUSEFARM_BIN=$BL_BIN
  # shellcheck source=../tests/lib/lvm-env.sh
  . "$BL_TOP/tests/lib/lvm-env.sh"
  ff_require python3 fusermount3 mountpoint
  local f
  for f in "$BL_BIN" "$BL_CORE" "$BL_FLOOD" "$BL_READRATE"; do
    [[ -x $f ]] || ff_die "$f: not built (scripts/build.sh $BL_BUILD)"
  done
  ff_env_init
  BL_S=$FF_SCRATCH
  BL_ROWS=$BL_S/rows.tsv
  : >"$BL_ROWS"
  BL_SERVERS=()
  BL_TMPFS=
  # Scans open every device at once (10,000 fds and more).
  ulimit -Sn "$(ulimit -Hn)"
}

# bl_log MSG: a progress line on stderr.
bl_log() {
  printf '== %s\n' "$*" >&2
}

# bl_calc EXPR: evaluate an arithmetic expression with awk (floats).
bl_calc() {
  awk "BEGIN { printf \"%.6g\\n\", $1 }"
}

# bl_jget FILE EXPR: print EXPR of the JSON document in FILE, named d
# (e.g. 'd["lat_ns"]["p50"]').
bl_jget() {
  "$BL_PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# bl_now: monotonic-enough nanoseconds for wall times.
bl_now() {
  date +%s%N
}

# bl_secs T0 T1: seconds between two bl_now values.
bl_secs() {
  bl_calc "($2 - $1) / 1e9"
}

# bl_rss_kib PID: resident set size of PID in KiB.
bl_rss_kib() {
  awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# bl_median: the median of the numbers on stdin, one a line.
bl_median() {
  sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# bl_row ID WHAT A A_UNIT B B_UNIT PARAMS [RATIO]: record a row.  A is the
# measured value, B its baseline, RATIO A/B unless given.  Values are
# plain numbers in their unit; PARAMS says how they were measured (the
# command and its parameters).
bl_row() {
  local ratio=${8:-}
  if [[ -z $ratio ]]; then
    ratio=$(awk -v a="$3" -v b="$5" 'BEGIN { if (b + 0 != 0) printf "%.6g", a / b; else print "nan" }' </dev/null)
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$ratio" "$7" >>"$BL_ROWS"
  printf '   %s: %s %s vs %s %s, ratio %s\n' "$1" "$3" "$4" "$5" "$6" "$ratio" >&2
}

# bl_report [ARGS...]: print the table of every row (bench/report.py ARGS).
bl_report() {
  "$BL_PY" "$BL_TOP/bench/report.py" "$BL_ROWS" "$@"
}

# ---- resources --------------------------------------------------------------

# bl_tmpfs: mount a private tmpfs at $BL_S/tmpfs once, and set BL_TMPFS
# to it.  It holds the sparse images every baseline reads.  Call it in the
# script's own shell, never in $(...): the cleanup it registers and
# BL_TMPFS would die with the subshell.
bl_tmpfs() {
  if [[ -z $BL_TMPFS ]]; then
    mkdir -p "$BL_S/tmpfs"
    ff_on_cleanup "bl__umount_tmpfs '$BL_S/tmpfs'"
    mount -t tmpfs -o size=8G,mode=0700 fusefarm-bench "$BL_S/tmpfs"
    BL_TMPFS=$BL_S/tmpfs
  fi
}

# bl__umount_tmpfs DIR: the cleanup of bl_tmpfs.  Detaches the env's loops
# first (some are backed by the tmpfs images), then unmounts.
bl__umount_tmpfs() {
  ff_loop_detach_all 2>/dev/null || true
  if mountpoint -q "$1"; then
    umount "$1" || umount -l "$1" || true
  fi
}

# bl_losetup FILE...: attach each FILE to a free loop device, one losetup
# per file (what a script would do), with direct I/O (the mode `fusefarm
# attach` gives the farm's loops), recorded in the env for cleanup; then
# fence the env's lvm to the loops recorded there (bl__fence).  Sets
# BL_LOOPS (the devices, in order).
bl_losetup() {
  local f dev
  BL_LOOPS=()
  for f in "$@"; do
    dev=$(losetup -f --show --direct-io=on -- "$f") || ff_die "losetup $f failed"
    printf '%s\t%s\n' "$dev" "$f" >>"$FF_SCRATCH/loops"
    BL_LOOPS+=("$dev")
  done
  bl__fence
}

# bl_losetup_detach: detach the loops of bl_losetup (those still backed by
# our files), forget them, and fence lvm to no device.
bl_losetup_detach() {
  ff_loop_detach_all
  bl__fence
}

# bl__fence: rewrite the current env's lvm config ($FF_LVM_SYSTEM_DIR)
# with `fusefarm fence --dir DIR DEV...`, DEV being every loop recorded
# in $FF_SCRATCH/loops (none: lvm sees no device).  Only between
# bl_fuse_umount and bl_fuse_attach: attach writes its own.
bl__fence() {
  local dev file
  local -a devs=()
  while IFS=$'\t' read -r dev file; do
    [[ -n $dev ]] && devs+=("$dev")
  done <"$FF_SCRATCH/loops"
  "$BL_BIN" fence --quiet --dir "$FF_LVM_SYSTEM_DIR" -- "${devs[@]}" >/dev/null ||
    ff_die "fusefarm fence --dir $FF_LVM_SYSTEM_DIR failed"
}

# bl__ours PID COMM ARG: PID is still a process named COMM with ARG among
# its arguments (so a recycled pid is never signalled).
bl__ours() {
  local comm
  read -r comm 2>/dev/null <"/proc/$1/comm" && [[ $comm == "$2" ]] &&
    tr '\0' '\n' 2>/dev/null <"/proc/$1/cmdline" | grep -qxF -- "$3"
}

# bl_fuse_mount SPEC MNT [MOUNT-ARGS...]: `fusefarm mount` SPEC at MNT (a
# new dir in the scratch dir); registers the cleanup first.  Sets BL_MNT,
# BL_STATE (the attach state dir, in the scratch dir: the host's
# /run/fusefarm is never used) and BL_PID (the daemon).
bl_fuse_mount() {
  local spec=$1 mnt=$2
  shift 2
  mkdir -p "$mnt"
  BL_MNT=$mnt
  BL_STATE=$mnt.state
  ff_on_cleanup "bl_fuse_umount '$mnt'"
  "$BL_BIN" mount "$spec" "$mnt" --log "$mnt.log" "$@" ||
    ff_die "fusefarm mount $spec failed (log $mnt.log)"
  BL_PID=$(bl_jget "$mnt/.fusefarm/info.json" 'd["pid"]')
  printf '%s\n' "$BL_PID" >"$mnt.pid"
}

# bl_fuse_attach [ARGS...]: `fusefarm attach` the current mount (with
# ARGS); point ff_lvm at the lvm config it wrote.  Sets BL_ATTACH_S
# (seconds) and BL_FARM_LOOP (an associative array: device name -> loop
# device).
bl_fuse_attach() {
  local t0 t1 dev name file
  t0=$(bl_now)
  "$BL_BIN" attach "$BL_MNT" --state "$BL_STATE" --quiet "$@" >/dev/null ||
    ff_die "fusefarm attach failed"
  t1=$(bl_now)
  BL_ATTACH_S=$(bl_secs "$t0" "$t1")
  declare -gA BL_FARM_LOOP=()
  : >"$FF_SCRATCH/loops"
  while read -r dev name file; do
    BL_FARM_LOOP[$name]=$dev
    printf '%s\t%s\n' "$dev" "$file" >>"$FF_SCRATCH/loops"
  done <"$BL_STATE/loops"
  FF_LVM_SYSTEM_DIR=$BL_STATE/lvm
  FF_DEVICES_FILE=$BL_STATE/lvm/devices/system.devices
}

# bl_fuse_umount MNT: detach the mount's loops, unmount, wait for the
# daemon to end (kill -9 it after 5 s if it is still ours).  Idempotent.
bl_fuse_umount() {
  local mnt=$1 pid i
  if [[ -d $mnt.state ]]; then
    "$BL_BIN" detach "$mnt" --state "$mnt.state" --quiet 2>/dev/null || true
  fi
  if mountpoint -q "$mnt"; then
    fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true
  fi
  pid=$(cat "$mnt.pid" 2>/dev/null) || pid=
  if [[ -n $pid ]]; then
    for ((i = 0; i < 50; i++)); do
      bl__ours "$pid" fusefarm "$mnt" || break
      sleep 0.1
    done
    if bl__ours "$pid" fusefarm "$mnt"; then
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$mnt.pid"
  fi
  if mountpoint -q "$mnt"; then
    fusermount3 -uz "$mnt" 2>/dev/null || printf 'bench: could not unmount %s\n' "$mnt" >&2
  fi
  if [[ ${FF_SCRATCH:-} && $mnt == "${BL_MNT:-}" ]]; then
    : >"$FF_SCRATCH/loops"
    FF_LVM_SYSTEM_DIR=$FF_SCRATCH/etc
    FF_DEVICES_FILE=$FF_SCRATCH/etc/devices/system.devices
  fi
}

# bl_serve SOCKET ARGS...: a daemonized nbdkit (this build's ff-nbdkit)
# listening on SOCKET (a path in the scratch dir, so unique to this run).
# The socket is recorded before nbdkit starts: bl_stop_servers (at exit
# too) finds the servers by it, whatever became of their pidfiles.  Sets
# BL_SERVER_PID.
bl_serve() {
  local sock=$1 i
  shift
  if ((${#BL_SERVERS[@]} == 0)); then
    ff_on_cleanup bl_stop_servers
  fi
  rm -f "$sock.pid"
  BL_SERVERS+=("$sock")
  "$BL_NBDKIT" -U "$sock" -P "$sock.pid" "$@" || ff_die "nbdkit $* did not start"
  # The daemon writes its pidfile after the parent returned.
  for ((i = 0; i < 100; i++)); do
    BL_SERVER_PID=$(cat "$sock.pid" 2>/dev/null) || BL_SERVER_PID=
    if [[ -n $BL_SERVER_PID ]] && bl__ours "$BL_SERVER_PID" nbdkit "$sock"; then
      return 0
    fi
    sleep 0.1
  done
  ff_die "nbdkit on $sock: no pidfile after 10 s"
}

# bl__server_pids: the pids of the processes named nbdkit that have one of
# our sockets as an argument (one grep over every command line).
bl__server_pids() {
  local f pid comm
  ((${#BL_SERVERS[@]})) || return 0
  printf '%s\n' "${BL_SERVERS[@]}" >"$BL_S/servers"
  while read -r f; do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    if read -r comm 2>/dev/null <"/proc/$pid/comm" && [[ $comm == nbdkit ]]; then
      printf '%s\n' "$pid"
    fi
  done < <(grep -lzxF -f "$BL_S/servers" /proc/[0-9]*/cmdline 2>/dev/null)
}

# bl_stop_servers: stop every nbdkit bl_serve started (found by socket, so
# a recycled pid is never signalled), SIGKILL what is left after 5 s.
bl_stop_servers() {
  local i
  local -a pids
  mapfile -t pids < <(bl__server_pids)
  if ((${#pids[@]})); then
    kill "${pids[@]}" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      mapfile -t pids < <(bl__server_pids)
      ((${#pids[@]})) || break
      sleep 0.1
    done
    if ((${#pids[@]})); then
      kill -9 "${pids[@]}" 2>/dev/null || true
    fi
  fi
  BL_SERVERS=()
}

# bl_rr_median N OUT KEY ARGS...: run readrate ARGS N times and keep in
# OUT the run whose KEY (a Python expression on its JSON, d) is the
# median: one 64 MiB-per-device sequential pass takes ~60 ms here, and
# one such sample of it moved its ratio by a fifth from run to run.
bl_rr_median() {
  local n=$1 out=$2 key=$3 i
  shift 3
  for ((i = 0; i < n; i++)); do
    "$BL_READRATE" "$@" >"$out.$i" || ff_die "readrate $* failed"
  done
  "$BL_PY" - "$out" "$n" "$key" <<'PY' || ff_die "bl_rr_median: $out"
import json, shutil, sys
out, n, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = []
for i in range(n):
    d = json.load(open("%s.%d" % (out, i)))
    runs.append((eval(key), i))
runs.sort()
shutil.copy("%s.%d" % (out, runs[n // 2][1]), out)
PY
}

# bl_time_pvs R: median wall seconds of R runs of fenced `lvm pvs`.
bl_time_pvs() {
  local r=$1 i t0 t1
  for ((i = 0; i < r; i++)); do
    t0=$(bl_now)
    ff_lvm pvs >/dev/null 2>&1 || ff_die "pvs failed"
    t1=$(bl_now)
    bl_secs "$t0" "$t1"
  done | bl_median
}

# bl_profile_fixed FILE VALUE / bl_profile_lognormal FILE MEDIAN P99: write
# a profile that delays every read of every device.
bl_profile_fixed() {
  cat >"$1" <<CONF
name = "fixed-$2";
groups = ({ devices = "all"; read = { dist = "fixed"; value = "$2"; }; });
CONF
}
bl_profile_lognormal() {
  cat >"$1" <<CONF
name = "lognormal-$2-$3";
groups = ({ devices = "all";
            read = { dist = "lognormal"; median = "$2"; p99 = "$3"; }; });
CONF
}
# bl_profile_queue FILE DEPTH SERVICE: one queue shared by every device.
bl_profile_queue() {
  cat >"$1" <<CONF
name = "queue-depth-$2";
queue = { depth = $2; service = "$3"; };
groups = ({ devices = "all"; });
CONF
}

# bl__no_errors FILE: die unless every read of a nbd-timed-reads.py run
# succeeded (a failed read is fast and would pass for a faithful one).
bl__no_errors() {
  [[ $(bl_jget "$1" 'sum(len(v) for v in d["errors"].values())') == 0 ]] ||
    ff_die "$1: reads failed: $(bl_jget "$1" 'd["errors"]')"
}

# bl__pct FILE Q: the Q-quantile (nearest rank), in ms, of every latency
# a tests/lib/*timed-reads.py run recorded.
bl__pct() {
  bl_jget "$1" "(lambda v: v[max(0, int(-(-len(v) * $2 // 1)) - 1)] * 1e3)(sorted(x for l in d['latencies'].values() for x in l))"
}

# bl_core_spec N FILE: the farm bench-core measures (N devices of 1 TiB:
# 80% of them in one-PV VGs, 20% in two-PV striped VGs), so that the
# daemon and the plugin are measured on the very same farm.
bl_core_spec() {
  "$BL_CORE" --spec "$1" >"$2"
}

# bl_image_kib SPEC DIR: `fusefarm gen` SPEC into DIR (on our tmpfs) and
# print the KiB its sparse images hold per device (what the same farm
# costs as files on tmpfs).
bl_image_kib() {
  "$BL_BIN" gen -q "$1" -o "$2" || ff_die "fusefarm gen $1 failed"
  local n kib
  n=$(find "$2" -maxdepth 1 -type f | wc -l)
  kib=$(du -sk "$2" | cut -f1)
  bl_calc "$kib / $n"
}

# ---- sections -----------------------------------------------------------------

# bl_section_core N...: bench-core for each N (devices of 1 TiB): RSS per
# device against the bytes the same farm's sparse images hold, for each N;
# the synthesized-read ratio and the build time for the largest N (and its
# growth from the smallest).
bl_section_core() {
  local n tmp last first
  bl_tmpfs
  tmp=$BL_TMPFS
  for n in "$@"; do
    bl_log "core: bench-core $n"
    FUSEFARM=$BL_BIN "$BL_CORE" --json "$n" "$tmp" >"$BL_S/core-$n.json" ||
      ff_die "bench-core $n failed"
    bl_row "mem.core.$n" "memory/device: core vs tmpfs image, $n devs" \
      "$(bl_jget "$BL_S/core-$n.json" 'd["rss_kib_per_device"]')" KiB \
      "$(bl_jget "$BL_S/core-$n.json" 'd["image_kib_per_device"]')" KiB \
      "bench-core $n: RSS growth of the build / N; du of gen images / N"
    first=${first:-$n}
    last=$n
  done
  bl_row core.read "core read: ff_farm_read vs pread of image" \
    "$(bl_jget "$BL_S/core-$last.json" 'd["synth_gib_s"]')" GiB/s \
    "$(bl_jget "$BL_S/core-$last.json" 'd["pread_gib_s"]')" GiB/s \
    "bench-core $last: first 128 KiB of each device, best of 3"
  bl_row core.lazy.mem "memory/device: lazy farm (plugin) vs packed, $last devs" \
    "$(bl_jget "$BL_S/core-$last.json" 'd["lazy_rss_kib_per_device"]')" KiB \
    "$(bl_jget "$BL_S/core-$last.json" 'd["rss_kib_per_device"]')" KiB \
    "bench-core $last: ff_farm_new_lazy vs ff_farm_new_packed, RSS growth / N"
  bl_row core.lazy.read "core read: lazy farm vs packed farm" \
    "$(bl_jget "$BL_S/core-$last.json" 'd["lazy_synth_gib_s"]')" GiB/s \
    "$(bl_jget "$BL_S/core-$last.json" 'd["synth_gib_s"]')" GiB/s \
    "bench-core $last: first 128 KiB of each device, every VG built again, best of 3"
  bl_row core.zero "4 KiB zero: device with $(bl_jget "$BL_S/core-$last.json" 'd["zero_busy_blocks"]') writes vs none" \
    "$(bl_jget "$BL_S/core-$last.json" 'd["zero_us_busy"]')" us \
    "$(bl_jget "$BL_S/core-$last.json" 'd["zero_us_empty"]')" us \
    "bench-core $last: ff_farm_zero_sparse, best of 3 x 2000 (1 = the range's cost only)"
  if [[ $first != "$last" ]]; then
    bl_row core.build "farm build: $last devs vs $((last / first)) x $first devs" \
      "$(bl_jget "$BL_S/core-$last.json" 'd["build_s"]')" s \
      "$(bl_calc "$(bl_jget "$BL_S/core-$first.json" 'd["build_s"]') * $last / $first")" s \
      "bench-core: spec load + ff_farm_new_packed (1 = linear)"
  fi
}

# bl_section_loops N [OPTIONS]: the FUSE daemon against tmpfs, N devices of
# 1 GiB attached as loops both ways (the farm of bench-fuse.sh).
#   pvs=R         pvs runs per median (default 5; 1 ms runs: (R+1)/2)
#   files=F       devices read by readrate (default 16)
#   seq=SPAN      sequential 1 MiB reads of SPAN per device (default 64M)
#   rand=R        random 4 KiB reads per device, ideal (default 2000)
#   lat=R         random 4 KiB reads per device under each profile, and
#                 with one thread under the ideal one (default 1000)
#   flood=P       aio-flood reads per file in flight (default 10)
#   flood_files=M files for aio-flood (default N)
#   flood_lat=L   the fixed latency of the flood (default 2s)
# Sets the BL_T_* values bench-fuse.sh prints.
bl_section_loops() {
  local n=$1 pvs=5 files=16 seq=64M rand=2000 lat=1000 flood=10 flood_files=$1
  local flood_lat=2s o
  shift
  for o in "$@"; do
    case $o in
    pvs=* | files=* | seq=* | rand=* | lat=* | flood=* | flood_files=* | flood_lat=*)
      local "${o%%=*}=${o#*=}"
      ;;
    *) ff_die "bl_section_loops: unknown option $o" ;;
    esac
  done
  local s=$BL_S tmp t0 t1 name rr=$BL_READRATE
  local -a names tl fl
  bl_tmpfs
  tmp=$BL_TMPFS
  cat >"$s/loops.conf" <<CONF
seed = 2; device_size = "1G";
vgs = ({ count = $((n * 9 / 10)); lvs = ({ fill = 0.5; }); },
       { count = $((n / 20)); pvs = 2; lvs = ({ type = "striped"; fill = 0.5; }); });
CONF
  bl_profile_fixed "$s/1ms.conf" 1ms
  bl_profile_lognormal "$s/lognormal.conf" 5ms 20ms
  bl_profile_fixed "$s/flood.conf" "$flood_lat"
  local ndev
  ndev=$("$BL_BIN" check "$s/loops.conf" | sed -n 's/.*ok: \([0-9]*\) devices.*/\1/p')

  bl_log "loops: $ndev tmpfs sparse-file loops (losetup)"
  "$BL_BIN" gen -q "$s/loops.conf" -o "$tmp/loops"
  mapfile -t names < <(cd "$tmp/loops" && ls)
  t0=$(bl_now)
  bl_losetup "${names[@]/#/$tmp/loops/}"
  t1=$(bl_now)
  BL_T_LOSETUP=$(bl_secs "$t0" "$t1")
  tl=("${BL_LOOPS[@]:0:files}")
  BL_T_TMPFS=$(bl_time_pvs "$pvs")
  "$rr" -b 1M -s "$seq" -t 4 "${tl[@]}" >"$s/seq-tmpfs.json"
  "$rr" -r -n "$rand" -t "$files" "${tl[@]}" >"$s/rand-tmpfs.json"
  "$rr" -r -n "$lat" -t 1 "${tl[@]}" >"$s/lat1-tmpfs.json"
  bl_losetup_detach

  bl_log "loops: $ndev farm loops (fusefarm mount + attach)"
  bl_fuse_mount "$s/loops.conf" "$s/mnt"
  bl_fuse_attach
  fl=()
  for name in "${names[@]:0:files}"; do
    fl+=("${BL_FARM_LOOP[$name]}")
  done
  BL_T_FARM=$(bl_time_pvs "$pvs")
  "$rr" -b 1M -s "$seq" -t 4 "${fl[@]}" >"$s/seq-farm.json"
  "$rr" -r -n "$rand" -t "$files" "${fl[@]}" >"$s/rand-farm.json"
  "$rr" -r -n "$lat" -t 1 "${fl[@]}" >"$s/lat1-farm.json"

  # lvm's read schedule, from the daemon's stats of one ideal pvs: the
  # label scan reads every device once, up to 64 at a time; every other
  # read waits for the one before it.
  echo reset >"$BL_MNT/.fusefarm/control"
  ff_lvm pvs >/dev/null 2>&1 || ff_die "pvs failed"
  read -r BL_ROUNDS BL_READS < <("$BL_PY" - "$BL_MNT/.fusefarm/stats.json" <<'PY'
import json, math, sys
st = json.load(open(sys.argv[1]))
n = len(st["devices"])
reads = sum(d["reads"] for d in st["devices"])
print(math.ceil(n / 64) + (reads - n), reads)
PY
  )

  bl_log "loops: injected latency (fixed 1 ms, lognormal 5/20 ms)"
  "$BL_BIN" profile "$BL_MNT" "$s/1ms.conf" >/dev/null
  "$rr" -r -n "$lat" -t "$files" "${fl[@]}" >"$s/lat-1ms.json"
  # whether the daemon held the CPUs awake meanwhile (--cpu-latency auto,
  # docs/fuse.md): it says so in the rows' how
  BL_HOLD=$(bl_jget "$BL_MNT/.fusefarm/info.json" \
    '"CPUs held (cpu_dma_latency 0)" if d["cpu_latency"]["holds"] else "CPUs not held: %s" % (d["cpu_latency"]["error"] or d["cpu_latency"]["mode"])')
  # and by how much it answered sooner: the transport share attach
  # measured (--transport-share auto, docs/fuse.md)
  BL_SHARE=$(bl_jget "$BL_MNT/.fusefarm/info.json" \
    '"transport share %.1f us (%s)" % (d["transport_share"]["ns"] / 1e3, d["transport_share"]["mode"]) if "transport_share" in d else "no transport share"')
  BL_T_1MS=$(bl_time_pvs $(((pvs + 1) / 2)))
  BL_IDEAL=$(bl_calc "$BL_T_FARM + $BL_ROUNDS * 0.001")
  "$BL_BIN" profile "$BL_MNT" "$s/lognormal.conf" >/dev/null
  "$rr" -r -n "$lat" -t "$files" "${fl[@]}" >"$s/lat-lognormal.json"

  # The model serves a depth-1 queue one at a time (the tests check its
  # decisions exactly); here the wall time a client sees: one read of each
  # of qn loops, submitted together in one io_submit (readrate -B), from
  # the submission to the last completion.
  local qn=$((files < 10 ? files : 10)) depth
  bl_log "loops: $qn reads sent at once through a shared queue of depth 1, then 64 (20 ms)"
  for depth in 1 64; do
    bl_profile_queue "$s/queue$depth.conf" "$depth" 20ms
    "$BL_BIN" profile "$BL_MNT" "$s/queue$depth.conf" >/dev/null
    "$rr" -B "${fl[@]:0:qn}" >"$s/queue$depth.json"
  done
  BL_Q1_MS=$(bl_jget "$s/queue1.json" 'd["span"] * 1e3')
  BL_Q64_MS=$(bl_jget "$s/queue64.json" 'd["span"] * 1e3')
  BL_QN=$qn

  local k=$((flood_files * flood))
  bl_log "loops: $k delayed reads in flight ($flood_files files x $flood, $flood_lat)"
  "$BL_BIN" profile "$BL_MNT" "$s/flood.conf" >/dev/null
  local -a ffiles
  mapfile -t ffiles < <(printf '%s\n' "${names[@]:0:flood_files}")
  (cd "$BL_MNT" && exec "$BL_FLOOD" "$flood" "${ffiles[@]}") >"$s/flood.txt" &
  local fpid=$!
  ff_on_cleanup "if bl__ours $fpid aio-flood '$BL_FLOOD'; then kill $fpid; fi"
  sleep "$(bl_calc "$(bl_lat_s "$flood_lat") / 2")"
  BL_THREADS=$(awk '/^Threads:/ { print $2 }' "/proc/$BL_PID/status")
  wait "$fpid" || ff_die "aio-flood failed: $(cat "$s/flood.txt")"
  BL_FLOOD_LINE=$(cat "$s/flood.txt")
  BL_FLOOD_WALL=$(sed -n 's/.*all done in \([0-9.]*\) s.*/\1/p' "$s/flood.txt")
  BL_DELAYED_MAX=$(bl_jget "$BL_MNT/.fusefarm/info.json" 'd["delayed_max"]')
  bl_fuse_umount "$BL_MNT"

  # The same reads with `fusefarm mount --passthrough`: under the ideal
  # profile every device is the kernel's to serve from a memory file.
  # Their baseline is taken again just before them, from the same 16
  # tmpfs images through loops: the section's first tmpfs figures are
  # minutes older, from before the farm's 1000 loops came and went, and
  # the machine's state since (its kworkers, its page cache) moved the
  # passthrough rows by up to a fifth from run to run.
  local -a pfl ptl=("${names[@]:0:files}")
  rm -f "$s/seq-pt.json"
  bl_log "loops: the tmpfs baseline again, next to the passthrough reads"
  bl_losetup "${ptl[@]/#/$tmp/loops/}"
  bl_rr_median 5 "$s/seq-tmpfs-pt.json" 'd["mib_s"]' -b 1M -s "$seq" -t 4 "${BL_LOOPS[@]}"
  bl_rr_median 3 "$s/rand-tmpfs-pt.json" 'd["iops"]' -r -n "$rand" -t "$files" "${BL_LOOPS[@]}"
  bl_rr_median 3 "$s/lat1-tmpfs-pt.json" 'd["lat_ns"]["p50"]' -r -n "$lat" -t 1 "${BL_LOOPS[@]}"
  bl_losetup_detach
  bl_log "loops: the same $files loops, fusefarm mount --passthrough"
  bl_fuse_mount "$s/loops.conf" "$s/mnt-pt" --passthrough
  if [[ $(bl_jget "$BL_MNT/.fusefarm/info.json" 'd["passthrough"]["kernel"]') == True ]]; then
    bl_fuse_attach
    for name in "${names[@]:0:files}"; do
      pfl+=("${BL_FARM_LOOP[$name]}")
    done
    bl_rr_median 5 "$s/seq-pt.json" 'd["mib_s"]' -b 1M -s "$seq" -t 4 "${pfl[@]}"
    bl_rr_median 3 "$s/rand-pt.json" 'd["iops"]' -r -n "$rand" -t "$files" "${pfl[@]}"
    bl_rr_median 3 "$s/lat1-pt.json" 'd["lat_ns"]["p50"]' -r -n "$lat" -t 1 "${pfl[@]}"
    BL_PT_DEVICES=$(bl_jget "$BL_MNT/.fusefarm/info.json" 'd["passthrough"]["devices"]')
  else
    bl_log "loops: passthrough skipped: the kernel did not take FUSE_PASSTHROUGH (6.9+)"
  fi
  bl_fuse_umount "$BL_MNT"

  bl_row loop.seq "seq read: farm loop vs tmpfs loop" \
    "$(bl_jget "$s/seq-farm.json" 'd["mib_s"]')" MiB/s \
    "$(bl_jget "$s/seq-tmpfs.json" 'd["mib_s"]')" MiB/s \
    "readrate -b 1M -s $seq -t 4, $files of $ndev loops"
  bl_row loop.rand "4K random read: farm loop vs tmpfs loop" \
    "$(bl_jget "$s/rand-farm.json" 'd["iops"]')" IOPS \
    "$(bl_jget "$s/rand-tmpfs.json" 'd["iops"]')" IOPS \
    "readrate -r -n $rand -t $files, $files loops"
  bl_row loop.lat "4K read p50 at $files threads: farm vs tmpfs" \
    "$(bl_jget "$s/rand-farm.json" 'd["lat_ns"]["p50"] / 1e3')" us \
    "$(bl_jget "$s/rand-tmpfs.json" 'd["lat_ns"]["p50"] / 1e3')" us \
    "the same runs, per-read latency"
  bl_row loop.lat1 "4K read p50, 1 thread: farm vs tmpfs" \
    "$(bl_jget "$s/lat1-farm.json" 'd["lat_ns"]["p50"] / 1e3')" us \
    "$(bl_jget "$s/lat1-tmpfs.json" 'd["lat_ns"]["p50"] / 1e3')" us \
    "readrate -r -n $lat -t 1, $files loops"
  if [[ -s $s/seq-pt.json ]]; then
    bl_row loop.pt.seq "seq read: passthrough farm loop vs tmpfs loop" \
      "$(bl_jget "$s/seq-pt.json" 'd["mib_s"]')" MiB/s \
      "$(bl_jget "$s/seq-tmpfs-pt.json" 'd["mib_s"]')" MiB/s \
      "fusefarm mount --passthrough ($BL_PT_DEVICES devices passed through); readrate as loop.seq, median of 5; B the same, again just before"
    bl_row loop.pt.rand "4K random read: passthrough farm loop vs tmpfs loop" \
      "$(bl_jget "$s/rand-pt.json" 'd["iops"]')" IOPS \
      "$(bl_jget "$s/rand-tmpfs-pt.json" 'd["iops"]')" IOPS "readrate as loop.rand, median of 3; B again just before"
    bl_row loop.pt.lat "4K read p50 at $files threads: passthrough vs tmpfs" \
      "$(bl_jget "$s/rand-pt.json" 'd["lat_ns"]["p50"] / 1e3')" us \
      "$(bl_jget "$s/rand-tmpfs-pt.json" 'd["lat_ns"]["p50"] / 1e3')" us "the median IOPS runs"
    bl_row loop.pt.lat1 "4K read p50, 1 thread: passthrough vs tmpfs" \
      "$(bl_jget "$s/lat1-pt.json" 'd["lat_ns"]["p50"] / 1e3')" us \
      "$(bl_jget "$s/lat1-tmpfs-pt.json" 'd["lat_ns"]["p50"] / 1e3')" us "readrate as loop.lat1, median of 3; B again just before"
  fi
  bl_row loop.pvs "pvs: farm loops vs tmpfs loops" "$BL_T_FARM" s "$BL_T_TMPFS" s \
    "lvm pvs, $ndev loops, median of $pvs"
  bl_row attach.rate "attach: fusefarm attach vs losetup" \
    "$(bl_calc "$ndev / $BL_ATTACH_S")" loops/s "$(bl_calc "$ndev / $BL_T_LOSETUP")" loops/s \
    "$ndev loops; B: losetup -f per tmpfs image"
  bl_row lat.fixed "fixed 1 ms: read p50 vs configured" \
    "$(bl_jget "$s/lat-1ms.json" 'd["lat_ns"]["p50"] / 1e6')" ms 1 ms \
    "readrate -r -n $lat -t $files, $files farm loops; $BL_HOLD; $BL_SHARE"
  bl_row lat.fixed.ideal "fixed 1 ms: read p50 vs ideal p50 + 1 ms" \
    "$(bl_jget "$s/lat-1ms.json" 'd["lat_ns"]["p50"] / 1e6')" ms \
    "$(bl_jget "$s/lat1-farm.json" 'd["lat_ns"]["p50"] / 1e6 + 1')" ms \
    "same; B: ideal p50 (loop.lat1) + 1 ms"
  bl_row lat.lognormal.p50 "lognormal 5/20 ms: read p50 vs configured" \
    "$(bl_jget "$s/lat-lognormal.json" 'd["lat_ns"]["p50"] / 1e6')" ms 5 ms \
    "readrate -r -n $lat -t $files, $files farm loops"
  bl_row lat.lognormal.ideal "lognormal 5/20 ms: p50 vs ideal p50 + 5 ms" \
    "$(bl_jget "$s/lat-lognormal.json" 'd["lat_ns"]["p50"] / 1e6')" ms \
    "$(bl_jget "$s/lat1-farm.json" 'd["lat_ns"]["p50"] / 1e6 + 5')" ms \
    "same; B: ideal p50 (loop.lat1) + 5 ms"
  bl_row lat.lognormal.p99 "lognormal 5/20 ms: read p99 vs configured" \
    "$(bl_jget "$s/lat-lognormal.json" 'd["lat_ns"]["p99"] / 1e6')" ms 20 ms \
    "same, $((lat * files)) reads"
  bl_row lat.pvs "pvs at 1 ms/read vs lvm's schedule" "$BL_T_1MS" s "$BL_IDEAL" s \
    "median of $(((pvs + 1) / 2)); B: ideal pvs + $BL_ROUNDS x 1 ms"
  bl_row queue.d1 "queue depth 1, 20 ms: $qn reads at once, span vs model" \
    "$BL_Q1_MS" ms "$((qn * 20))" ms "readrate -B: $qn farm loops, one io_submit to the last completion; B: $qn x 20 ms"
  bl_row queue.d64 "queue depth 64, 20 ms: $qn reads at once, span vs model" \
    "$BL_Q64_MS" ms 20 ms "the same; B: one service time"
  bl_row inflight.wall "in flight: K reads at latency L, wall vs L" \
    "$BL_FLOOD_WALL" s "$(bl_lat_s "$flood_lat")" s \
    "aio-flood $flood x $flood_files files, K=$k, $BL_THREADS threads"
  bl_row inflight.max "in flight: daemon's delayed_max vs K" "$BL_DELAYED_MAX" reads "$k" reads \
    "info.json, the same flood"
}

# bl_section_scale SMALL BIG: `fusefarm attach` and `fusefarm detach` of
# bench-core's farms of SMALL and of BIG devices, one after the other:
# the rate at BIG against the rate at SMALL (1 when both stay linear in
# the number of loops), and BIG's detach against the issue's budget of
# 10 s for 15,000.  Both attaches create every loop device they use
# (--new-loops) and both detaches delete them again, as a first attach
# on a machine does: the same work per loop at both sizes, whatever idle
# loop devices the machine has.  Then BIG once more with a plain attach
# (free loop devices first, as a user's attach), against the same with
# --new-loops: where finding the free ones costs more than creating new
# ones, it is not linear (LOOP_CTL_GET_FREE walks every loop device).
bl_section_scale() {
  local small=$1 big=$2 n plain
  local -A att det
  for n in "$small" "$big"; do
    bl_log "scale: attach and detach $n loops"
    bl_core_spec "$n" "$BL_S/scale-$n.conf"
    bl__scale_pass "$n" "$BL_S/scale-$n" --new-loops
    att[$n]=$BL_ATTACH_S det[$n]=$BL_DETACH_S
  done
  bl_log "scale: attach $big loops, free ones first"
  bl__scale_pass "$big" "$BL_S/scale-$big-plain"
  plain=$BL_ATTACH_S
  bl_row attach.plain "attach of $big loops: plain vs --new-loops" \
    "$(bl_calc "$big / $plain")" loops/s "$(bl_calc "$big / ${att[$big]}")" loops/s \
    "fusefarm attach (free loop devices first), $plain s; B: the --new-loops attach above"
  bl_row attach.scale "attach rate: $big loops vs $small" \
    "$(bl_calc "$big / ${att[$big]}")" loops/s "$(bl_calc "$small / ${att[$small]}")" loops/s \
    "fusefarm attach --new-loops, bench-core's farms; $big: ${att[$big]} s, $small: ${att[$small]} s"
  bl_row detach.scale "detach rate: $big loops vs $small" \
    "$(bl_calc "$big / ${det[$big]}")" loops/s "$(bl_calc "$small / ${det[$small]}")" loops/s \
    "fusefarm detach, deleting the loop devices attach created; $big: ${det[$big]} s, $small: ${det[$small]} s"
  bl_row detach.time "detach of $big loops vs $(bl_calc "10 * $big / 15000") s" \
    "${det[$big]}" s "$(bl_calc "10 * $big / 15000")" s \
    "the same detach; B: 10 s per 15,000 loops"
}

# bl__scale_pass N DIR [ATTACH-ARGS...]: mount bench-core's farm of N
# devices ($BL_S/scale-N.conf) under DIR, attach it (bl_fuse_attach
# ATTACH-ARGS: BL_ATTACH_S), time its detach (BL_DETACH_S, the deletion
# of the loop devices attach created included) and unmount it.
bl__scale_pass() {
  local n=$1 dir=$2 t0 t1
  shift 2
  bl_fuse_mount "$BL_S/scale-$n.conf" "$dir"
  bl_fuse_attach "$@"
  t0=$(bl_now)
  "$BL_BIN" detach "$BL_MNT" --state "$BL_STATE" --quiet ||
    ff_die "fusefarm detach of $n loops failed"
  t1=$(bl_now)
  BL_DETACH_S=$(bl_secs "$t0" "$t1")
  bl_fuse_umount "$BL_MNT"
}

# bl_section_uring FILES RAND LAT SEQ: what FUSE over io_uring would
# change in the loop rows.  bench/fuse-uring serves one file of 1 GiB of
# zeros, the same code answering through /dev/fuse (8 threads, as
# fusefarm mount) or through io_uring (a ring per CPU); FILES loop
# devices over it are read as the loops section reads the farm's (RAND
# random 4 KiB reads per loop over FILES threads, LAT over one thread,
# sequential 1 MiB reads of SEQ per loop over 4 threads), and the same
# over loops of a sparse 1 GiB file on tmpfs.  Skipped, with a line
# saying why, where the kernel has no FUSE over io_uring (6.14+) or the
# build no bench/fuse-uring (liburing-dev).  Sets the kernel's
# enable_uring for the run (it only lets servers ask for io_uring) and
# puts it back at exit.
bl_section_uring() {
  local files=$1 rand=$2 lat=$3 seq=$4 s=$BL_S mode line i
  local knob=/sys/module/fuse/parameters/enable_uring was
  local -a tl
  if [[ ! -x $BL_URING ]]; then
    bl_log "uring: skipped: $BL_URING not built (liburing-dev: scripts/deps.sh)"
    return 0
  fi
  if [[ ! -w $knob ]]; then
    bl_log "uring: skipped: this kernel has no FUSE over io_uring ($knob)"
    return 0
  fi
  was=$(cat "$knob")
  if [[ $was != Y ]]; then
    ff_on_cleanup "echo '$was' >'$knob'"
    echo Y >"$knob"
  fi
  bl_tmpfs
  truncate -s 1G "$BL_TMPFS/uring.img" "$BL_TMPFS/pt.img"
  local -a margs
  for mode in tmpfs dev uring pt; do
    local file=$BL_TMPFS/uring.img pid=
    margs=("$mode")
    [[ $mode != pt ]] || margs=(pt "$BL_TMPFS/pt.img")
    if [[ $mode != tmpfs ]]; then
      bl_log "uring: $files loops over bench/fuse-uring (${margs[*]})"
      mkdir -p "$s/uring-$mode"
      mkfifo "$s/uring-$mode.ready"
      "$BL_URING" "$s/uring-$mode" $((1 << 30)) "${margs[@]}" >"$s/uring-$mode.ready" 2>"$s/uring-$mode.err" &
      pid=$!
      ff_on_cleanup "bl__uring_stop $pid '$s/uring-$mode'"
      line=
      read -r -t 60 line <"$s/uring-$mode.ready" || true
      if [[ $line != ready && $mode == pt ]]; then
        bl_log "uring: passthrough skipped: $(cat "$s/uring-$mode.err")"
        bl__uring_stop "$pid" "$s/uring-$mode"
        continue
      fi
      [[ $line == ready ]] ||
        ff_die "bench/fuse-uring $mode did not start: $(cat "$s/uring-$mode.err")"
      file=$s/uring-$mode/f
    else
      bl_log "uring: $files loops over a sparse file on tmpfs"
    fi
    tl=()
    for ((i = 0; i < files; i++)); do
      tl+=("$file")
    done
    bl_losetup "${tl[@]}"
    "$BL_READRATE" -r -n "$rand" -t "$files" "${BL_LOOPS[@]}" >"$s/uring-rand-$mode.json"
    "$BL_READRATE" -r -n "$lat" -t 1 "${BL_LOOPS[@]}" >"$s/uring-lat1-$mode.json"
    "$BL_READRATE" -b 1M -s "$seq" -t 4 "${BL_LOOPS[@]}" >"$s/uring-seq-$mode.json"
    bl_losetup_detach
    [[ -z $pid ]] || bl__uring_stop "$pid" "$s/uring-$mode"
  done
  local p50='d["lat_ns"]["p50"] / 1e3' what
  for what in dev tmpfs; do
    bl_row "uring.rand.$what" "4K random read IOPS, $files threads: io_uring vs $what" \
      "$(bl_jget "$s/uring-rand-uring.json" 'd["iops"]')" IOPS \
      "$(bl_jget "$s/uring-rand-$what.json" 'd["iops"]')" IOPS \
      "bench/fuse-uring; readrate -r -n $rand -t $files, $files loops"
    bl_row "uring.lat.$what" "4K read p50, $files threads: io_uring vs $what" \
      "$(bl_jget "$s/uring-rand-uring.json" "$p50")" us \
      "$(bl_jget "$s/uring-rand-$what.json" "$p50")" us "the same runs"
    bl_row "uring.lat1.$what" "4K read p50, 1 thread: io_uring vs $what" \
      "$(bl_jget "$s/uring-lat1-uring.json" "$p50")" us \
      "$(bl_jget "$s/uring-lat1-$what.json" "$p50")" us "readrate -r -n $lat -t 1"
    bl_row "uring.seq.$what" "seq read: io_uring vs $what" \
      "$(bl_jget "$s/uring-seq-uring.json" 'd["mib_s"]')" MiB/s \
      "$(bl_jget "$s/uring-seq-$what.json" 'd["mib_s"]')" MiB/s "readrate -b 1M -s $seq -t 4"
  done
  bl_row uring.dev.rand.tmpfs "4K random read IOPS: /dev/fuse vs tmpfs" \
    "$(bl_jget "$s/uring-rand-dev.json" 'd["iops"]')" IOPS \
    "$(bl_jget "$s/uring-rand-tmpfs.json" 'd["iops"]')" IOPS \
    "the transport alone (no farm behind it): compare loop.rand"
  [[ -s $s/uring-seq-pt.json ]] || return 0
  bl_row uring.pt.rand "4K random read IOPS, $files threads: passthrough vs tmpfs" \
    "$(bl_jget "$s/uring-rand-pt.json" 'd["iops"]')" IOPS \
    "$(bl_jget "$s/uring-rand-tmpfs.json" 'd["iops"]')" IOPS \
    "bench/fuse-uring pt: f's reads go to a tmpfs file, not to the server"
  bl_row uring.pt.lat "4K read p50, $files threads: passthrough vs tmpfs" \
    "$(bl_jget "$s/uring-rand-pt.json" "$p50")" us \
    "$(bl_jget "$s/uring-rand-tmpfs.json" "$p50")" us "the same runs"
  bl_row uring.pt.lat1 "4K read p50, 1 thread: passthrough vs tmpfs" \
    "$(bl_jget "$s/uring-lat1-pt.json" "$p50")" us \
    "$(bl_jget "$s/uring-lat1-tmpfs.json" "$p50")" us "readrate -r -n $lat -t 1"
  bl_row uring.pt.seq "seq read: passthrough vs tmpfs" \
    "$(bl_jget "$s/uring-seq-pt.json" 'd["mib_s"]')" MiB/s \
    "$(bl_jget "$s/uring-seq-tmpfs.json" 'd["mib_s"]')" MiB/s "readrate -b 1M -s $seq -t 4"
}

# bl__uring_stop PID MNT: stop the bench/fuse-uring PID serving MNT
# (SIGTERM: it unmounts MNT and exits), then make sure MNT is unmounted.
# Idempotent.
bl__uring_stop() {
  local pid=$1 mnt=$2
  if bl__ours "$pid" fuse-uring "$mnt"; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  if mountpoint -q "$mnt"; then
    umount -l "$mnt" 2>/dev/null || true
  fi
}

# bl_lat_s DURATION: a profile duration ("2s", "500ms") in seconds.
bl_lat_s() {
  case $1 in
  *ms) bl_calc "${1%ms} / 1000" ;;
  *us) bl_calc "${1%us} / 1e6" ;;
  *s) bl_calc "${1%s}" ;;
  *) ff_die "bl_lat_s: $1: not a duration in s, ms or us" ;;
  esac
}

# bl_section_daemon_mem N...: the FUSE daemon's RSS serving bench-core's
# farm of N devices of 1 TiB, idle and after reading the first 128 KiB of
# every device (lvm's label scan), per device, against the bytes the same
# farm's sparse images hold per device.  Sets BL_RSS_IDLE_<N> and
# BL_RSS_SCAN_<N> (KiB).
bl_section_daemon_mem() {
  local n tmp idle scan img
  local -a files
  bl_tmpfs
  tmp=$BL_TMPFS
  for n in "$@"; do
    bl_log "daemon memory: $n devices of 1 TiB"
    bl_core_spec "$n" "$BL_S/core-$n.conf"
    img=$(bl_image_kib "$BL_S/core-$n.conf" "$tmp/mem-$n")
    rm -rf "${tmp:?}/mem-$n"
    bl_fuse_mount "$BL_S/core-$n.conf" "$BL_S/mnt-$n"
    idle=$(bl_rss_kib "$BL_PID")
    mapfile -t files < <(find "$BL_MNT" -maxdepth 1 -type f | sort)
    "$BL_READRATE" -b 128K -s 128K -t 4 "${files[@]}" >/dev/null
    scan=$(bl_rss_kib "$BL_PID")
    bl_fuse_umount "$BL_MNT"
    printf -v "BL_RSS_IDLE_$n" %s "$idle"
    printf -v "BL_RSS_SCAN_$n" %s "$scan"
    bl_row "mem.daemon.$n.idle" "memory/device: daemon vs tmpfs image, $n idle" \
      "$(bl_calc "$idle / $n")" KiB "$img" KiB \
      "VmRSS $((idle / 1024)) MiB / $n, bench-core's farm"
    bl_row "mem.daemon.$n.read" "memory/device: daemon vs tmpfs image, $n read" \
      "$(bl_calc "$scan / $n")" KiB "$img" KiB \
      "VmRSS $((scan / 1024)) MiB / $n after 128 KiB of each"
  done
}

# bl_section_plugin_mem N: the nbdkit plugin's RSS serving bench-core's farm
# of N devices against nbdkit's file plugin serving the same farm's sparse
# images (dir=, one export per file, on our tmpfs), idle and after reading
# the first 128 KiB of every export (one libnbd connection after the
# other); both with --threads 1.  N is lowered to what the fd hard limit
# allows (the plugin refuses to start short of 2 fds per export).
bl_section_plugin_mem() {
  local n=$1 tmp kind sock pid hard
  local -A idle scan
  # The plugin wants 2 fds per export + 64 (docs/nbd.md); where the hard
  # limit cannot be raised, serve fewer exports (whole thousands).
  hard=$(ulimit -Hn)
  if [[ $hard != unlimited ]] && ((2 * n + 64 > hard)); then
    ulimit -Hn $((2 * n + 64)) 2>/dev/null || true
    hard=$(ulimit -Hn)
    if [[ $hard != unlimited ]] && ((2 * n + 64 > hard)); then
      local fit=$(((hard - 64) / 2))
      fit=$((fit >= 1000 ? fit - fit % 1000 : fit))
      ((fit >= 10)) || ff_die "plugin memory: fd hard limit $hard is too low"
      bl_log "plugin memory: fd hard limit $hard: $fit exports, not $n"
      n=$fit
    fi
    ulimit -Sn "$hard"
  fi
  bl_tmpfs
  tmp=$BL_TMPFS
  ff_require nbdkit
  [[ -f $BL_PLUGIN && -x $BL_NBDKIT ]] || ff_die "$BL_PLUGIN: not built"
  "$BL_PY" -c 'import nbd' 2>/dev/null ||
    ff_die "$BL_PY: no libnbd bindings: install python3-libnbd (apt-get install python3-libnbd)"
  bl_core_spec "$n" "$BL_S/core-$n.conf"
  local img
  img=$(bl_image_kib "$BL_S/core-$n.conf" "$tmp/exports-$n")
  for kind in file fusefarm; do
    bl_log "plugin memory: nbdkit $kind plugin, $n exports"
    sock=$BL_S/mem-$kind.sock
    if [[ $kind == file ]]; then
      bl_serve "$sock" --threads 1 file dir="$tmp/exports-$n"
    else
      bl_serve "$sock" --threads 1 "$BL_PLUGIN" spec="$BL_S/core-$n.conf"
    fi
    pid=$BL_SERVER_PID
    idle[$kind]=$(bl_rss_kib "$pid")
    (cd "$tmp/exports-$n" && ls) | "$BL_PY" -c '
import sys, nbd
for name in sys.stdin.read().split():
    h = nbd.NBD()
    h.set_export_name(name)
    h.connect_unix(sys.argv[1])
    h.pread(131072, 0)
    h.shutdown()
' "$sock" || ff_die "reading every export of the $kind plugin failed"
    scan[$kind]=$(bl_rss_kib "$pid")
    bl_stop_servers
  done
  local imgk
  imgk=$(bl_calc "$img * $n")
  bl_row "mem.plugin.$n.idle" "nbdkit RSS: fusefarm vs file plugin, idle" \
    "$(bl_calc "${idle[fusefarm]} / 1024")" MiB "$(bl_calc "${idle[file]} / 1024")" MiB \
    "--threads 1, $n exports; file dir=tmpfs images"
  bl_row "mem.plugin.$n.read" "nbdkit RSS: fusefarm vs file plugin, read" \
    "$(bl_calc "${scan[fusefarm]} / 1024")" MiB "$(bl_calc "${scan[file]} / 1024")" MiB \
    "after 128 KiB of each export, 1 connection each"
  bl_row "mem.plugin.$n.total" "nbdkit RSS: fusefarm vs file + its images" \
    "$(bl_calc "${scan[fusefarm]} / 1024")" MiB "$(bl_calc "(${scan[file]} + $imgk) / 1024")" MiB \
    "same; B adds the images' $img KiB/device"
  rm -rf "${tmp:?}/exports-$n"
}

# bl_section_nbdcopy N SIZE: nbdcopy of N exports of SIZE from one nbdkit
# serving the farm (ideal profile) against nbdkit's memory plugin serving
# the same bytes (one server per image, filled before the clock starts),
# sparse (block status) and full (--no-extents); then the plugin with a
# fixed 1 ms read latency against the ideal.  Sets the BL_NBD_* values
# bench-nbd.sh prints.
bl_section_nbdcopy() {
  local n=$1 size=$2 s=$BL_S x
  local -a names
  ff_require nbdkit nbdcopy
  [[ -f $BL_PLUGIN && -x $BL_NBDKIT ]] || ff_die "$BL_PLUGIN: not built"
  cat >"$s/nbd.conf" <<CONF
seed = 4; device_size = "$size";
vgs = ({ count = $n; lvs = ({ fill = 0.5; }); });
CONF
  bl_profile_fixed "$s/nbd-1ms.conf" 1ms
  "$BL_BIN" gen -q "$s/nbd.conf" -o "$s/nbd-img"
  mapfile -t names < <(cd "$s/nbd-img" && ls)

  bl_log "nbd: $n exports of $size: nbdkit's memory plugin, one server per image"
  mkdir -p "$s/nbd-mem"
  for x in "${names[@]}"; do
    bl_serve "$s/nbd-mem/$x.sock" memory "$size"
    nbdcopy --destination-is-zero "$s/nbd-img/$x" "nbd+unix:///?socket=$s/nbd-mem/$x.sock" ||
      ff_die "filling the memory plugin with $x failed"
  done
  BL_NBD_MEM_SPARSE=$(bl__copy_all "nbd+unix:///?socket=$s/nbd-mem/%s.sock")
  BL_NBD_MEM_FULL=$(bl__copy_all "nbd+unix:///?socket=$s/nbd-mem/%s.sock" --no-extents)
  bl_stop_servers

  bl_log "nbd: $n exports of $size: the fusefarm plugin, one server, ideal profile"
  bl_serve "$s/nbd-ff.sock" "$BL_PLUGIN" spec="$s/nbd.conf"
  BL_NBD_FF_SPARSE=$(bl__copy_all "nbd+unix:///%s?socket=$s/nbd-ff.sock")
  BL_NBD_FF_FULL=$(bl__copy_all "nbd+unix:///%s?socket=$s/nbd-ff.sock" --no-extents)
  bl_stop_servers

  bl_log "nbd: the same with 1 ms per read"
  bl_serve "$s/nbd-ff1.sock" "$BL_PLUGIN" spec="$s/nbd.conf" profile="$s/nbd-1ms.conf" \
    stats="$s/nbd-1ms.json"
  BL_NBD_1MS_SPARSE=$(bl__copy_all "nbd+unix:///%s?socket=$s/nbd-ff1.sock")
  sleep 1.2 # a stats write after the sparse copies
  BL_NBD_READS_SPARSE=$(bl_jget "$s/nbd-1ms.json" 'd["totals"]["reads"]')
  BL_NBD_1MS_FULL=$(bl__copy_all "nbd+unix:///%s?socket=$s/nbd-ff1.sock" --no-extents)
  bl_stop_servers # the plugin writes the stats at exit
  BL_NBD_READS_FULL=$(($(bl_jget "$s/nbd-1ms.json" 'd["totals"]["reads"]') - BL_NBD_READS_SPARSE))
  rm -rf "$s/nbd-img"

  # Latency fidelity seen by a libnbd client (the tests check the model's
  # decisions; this is the wall clock): lognormal 5/20 ms, then 10 reads
  # on 10 connections released at once through a shared queue.
  local ln=$((n < 16 ? n : 16)) qn=$((n < 10 ? n : 10)) depth
  local timed=$BL_TOP/tests/lib/nbd-timed-reads.py
  bl_log "nbd: lognormal 5/20 ms, $ln exports x 250 reads (libnbd, 8 threads)"
  bl_profile_lognormal "$s/nbd-lognormal.conf" 5ms 20ms
  bl_serve "$s/nbd-ln.sock" "$BL_PLUGIN" spec="$s/nbd.conf" profile="$s/nbd-lognormal.conf"
  "$BL_PY" "$timed" "$s/nbd-ln.sock" --threads 8 --reads 250 --span $((1 << 20)) \
    "${names[@]:0:ln}" >"$s/nbd-ln.json" || ff_die "nbd-timed-reads.py failed"
  bl__no_errors "$s/nbd-ln.json"
  bl_stop_servers
  BL_NBD_LN_P50=$(bl__pct "$s/nbd-ln.json" 0.5)
  BL_NBD_LN_P99=$(bl__pct "$s/nbd-ln.json" 0.99)
  # The queue rows: one read on each of qn connections, all sent at once
  # by bench/nbd-burst from one thread (microseconds apart); without it
  # (no libnbd-dev), by nbd-timed-reads.py's threads, whose barrier lets
  # them go 0.4-1.2 ms apart, and that spread is in the span.
  local client=nbd-burst
  [[ -x $BL_BURST ]] || client="nbd-timed-reads.py (no $BL_BURST: libnbd-dev)"
  bl_log "nbd: $qn reads sent at once through a shared queue of depth 1, then 64 (20 ms; $client)"
  for depth in 1 64; do
    bl_profile_queue "$s/nbd-q$depth.conf" "$depth" 20ms
    bl_serve "$s/nbd-q$depth.sock" "$BL_PLUGIN" spec="$s/nbd.conf" profile="$s/nbd-q$depth.conf"
    if [[ $client == nbd-burst ]]; then
      "$BL_BURST" "$s/nbd-q$depth.sock" 4096 $((1 << 20)) "${names[@]:0:qn}"
    else
      "$BL_PY" "$timed" "$s/nbd-q$depth.sock" --threads "$qn" --reads 1 --span $((1 << 20)) \
        "${names[@]:0:qn}"
    fi >"$s/nbd-q$depth.json" || ff_die "$client failed"
    bl__no_errors "$s/nbd-q$depth.json"
    bl_stop_servers
  done
  # from the first request sent to the last reply
  BL_NBD_Q1_MS=$(bl_jget "$s/nbd-q1.json" 'd["span"] * 1e3')
  BL_NBD_Q64_MS=$(bl_jget "$s/nbd-q64.json" 'd["span"] * 1e3')
  BL_NBD_QN=$qn

  local p="nbdcopy x $n exports of $size"
  bl_row nbd.sparse "nbdcopy sparse: fusefarm vs memory plugin" \
    "$BL_NBD_FF_SPARSE" s "$BL_NBD_MEM_SPARSE" s "$p, block status"
  bl_row nbd.full "nbdcopy full: fusefarm vs memory plugin" \
    "$BL_NBD_FF_FULL" s "$BL_NBD_MEM_FULL" s "$p, --no-extents"
  bl_row nbd.lat.sparse "nbdcopy sparse at 1 ms/read vs ideal" \
    "$BL_NBD_1MS_SPARSE" s "$BL_NBD_FF_SPARSE" s \
    "$p; $(bl_calc "$BL_NBD_READS_SPARSE / $n") reads/export"
  bl_row nbd.lat.full "nbdcopy full at 1 ms/read vs ideal" \
    "$BL_NBD_1MS_FULL" s "$BL_NBD_FF_FULL" s \
    "$p; $(bl_calc "$BL_NBD_READS_FULL / $n") reads/export"
  bl_row nbd.lognormal.p50 "nbd lognormal 5/20 ms: read p50 vs configured" \
    "$BL_NBD_LN_P50" ms 5 ms "nbd-timed-reads.py, $ln exports x 250, 8 threads"
  bl_row nbd.lognormal.p99 "nbd lognormal 5/20 ms: read p99 vs configured" \
    "$BL_NBD_LN_P99" ms 20 ms "the same $((ln * 250)) reads"
  bl_row nbd.queue.d1 "nbd queue depth 1, 20 ms: $qn reads at once, span vs model" \
    "$BL_NBD_Q1_MS" ms "$((qn * 20))" ms "${client%% *}, $qn connections, first request sent to last reply; B: $qn x 20 ms"
  bl_row nbd.queue.d64 "nbd queue depth 64, 20 ms: $qn reads at once, span vs model" \
    "$BL_NBD_Q64_MS" ms 20 ms "the same; B: one service time"
}

# bl__copy_all URI-FORMAT [NBDCOPY-ARGS]: seconds to nbdcopy every export
# of bl_section_nbdcopy to null:, one after the other (URI-FORMAT has %s
# for the export name).
bl__copy_all() {
  local fmt=$1 t0 t1 x
  shift
  t0=$(bl_now)
  for x in "${names[@]}"; do
    # shellcheck disable=SC2059  # the format is ours
    nbdcopy "$@" "$(printf "$fmt" "$x")" null: || ff_die "nbdcopy $x failed"
  done
  t1=$(bl_now)
  bl_secs "$t0" "$t1"
}

# bl_section_guest_io: is the farm what caps fio in the guest?  One
# `fusefarm vm` boot (TCG; the guest images are built first if the cache
# has none: minutes) of bench/guest-io.conf: the same fio jobs on a raw
# farm disk with the ideal profile and on the guest's RAM disk (brd), in
# that one boot.  Rows: farm vs RAM disk for the clat p50 of 4 KiB random
# writes at iodepth 1 (what one I/O costs the guest: the floor under every
# profile latency), the IOPS of 4 KiB random reads at iodepth 16 and the
# MB/s of 256 KiB sequential writes at iodepth 16.
bl_section_guest_io() {
  local s=$BL_S doc=$BL_S/guest-io.json
  bl_log "guest-io: fusefarm vm bench/guest-io.conf (one TCG boot, ~1 min)"
  "$BL_BIN" vm "$BL_TOP/bench/guest-io.conf" --json "$doc" >"$s/guest-io.out" 2>"$s/guest-io.err" ||
    {
      tail -n 20 "$s/guest-io.err" >&2
      ff_die "guest-io: fusefarm vm failed (its output: above)"
    }
  local p="fio in one guest (TCG), ideal profile"
  bl_row guest.io.clat "guest 4K randwrite qd1 clat p50: farm disk vs RAM disk" \
    "$(bl_calc "$(bl__gio "$doc" farm-4k-randwrite write clat_p50_ns) / 1000")" us \
    "$(bl_calc "$(bl__gio "$doc" ram-4k-randwrite write clat_p50_ns) / 1000")" us "$p; 4 MiB"
  bl_row guest.io.iops "guest 4K randread qd16 IOPS: farm disk vs RAM disk" \
    "$(bl__gio "$doc" farm-4k-randread read iops)" IOPS "$(bl__gio "$doc" ram-4k-randread read iops)" IOPS "$p; 8 MiB"
  bl_row guest.io.mbs "guest 256K write qd16 MB/s: farm disk vs RAM disk" \
    "$(bl_calc "$(bl__gio "$doc" farm-256k-write write bw) / 1e6")" MB/s \
    "$(bl_calc "$(bl__gio "$doc" ram-256k-write write bw) / 1e6")" MB/s "$p; 128 MiB"
}

# bl__gio DOC WORKLOAD DIR KEY: io[DIR][KEY] of WORKLOAD's first run in
# the run document DOC (its first configuration).
bl__gio() {
  bl_jget "$1" "[w for w in d['configs'][0]['workloads'] if w['name'] == '$2'][0]['runs'][0]['io']['$3']['$4']"
}
