# shellcheck shell=bash
#
# farm.sh: helpers shared by the integration tests that generate a farm
# and look at it with real lvm2.  Source after lvm-env.sh.

# The lines lvm prints on a kernel without device-mapper, whatever the
# disks hold (docs/ondisk-format.md §8, the last paragraph): allowed on stderr.
FF_NO_DM_RE='/dev/mapper/control: open failed|Failure to communicate with kernel device-mapper driver|Check that device-mapper is available in the kernel|Incompatible libdevmapper .* and kernel driver'

# ff_farm_attach FUSEFARM [SPEC]: generate SPEC (empty: the built-in farm)'s images and manifest into
# $FF_SCRATCH, attach every image (in manifest order) and write
# $FF_SCRATCH/map: "<loop device> <device name>" per line.
ff_farm_attach() {
  local bin=$1 spec=$2 n
  local -a names files loops
  "$bin" manifest ${spec:+"$spec"} >"$FF_SCRATCH/manifest.json"
  "$bin" gen -q ${spec:+"$spec"} -o "$FF_SCRATCH/img"
  mapfile -t names < <(python3 -c '
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    print(d["name"])' "$FF_SCRATCH/manifest.json")
  for n in "${names[@]}"; do
    files+=("$FF_SCRATCH/img/$n")
  done
  mapfile -t loops < <(ff_loop_attach "${files[@]}")
  ((${#loops[@]} == ${#names[@]})) ||
    ff_die "attached ${#loops[@]} of ${#names[@]} devices"
  paste -d' ' <(printf '%s\n' "${loops[@]}") <(printf '%s\n' "${names[@]}") \
    >"$FF_SCRATCH/map"
}

# ff_loop_of NAME: the loop device carrying farm device NAME.
ff_loop_of() {
  awk -v n="$1" '$2 == n { print $1 }' "$FF_SCRATCH/map"
}

# ff_expect_clean_stderr FILE WHAT: fail unless FILE holds nothing but the
# known no-device-mapper lines, and, for each md signature device of the
# farm listed in the devices file, lvm's note that it excludes it.
ff_expect_clean_stderr() {
  local rest md re=$FF_NO_DM_RE
  for md in $(python3 -c '
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    if d.get("signature") == "md":
        print(d["name"])' "$FF_SCRATCH/manifest.json"); do
    re+="|^  Devices file $(ff_loop_of "$md") is excluded: device is an md component\.\$"
  done
  rest=$(grep -Ev "$re" "$1" || true)
  if [[ -n $rest ]]; then
    printf '%s\n' "$rest" | head -20 >&2
    ff_die "$2: unexpected stderr (above)"
  fi
}

# ---- the FUSE daemon ------------------------------------------------------

# ff_fuse_mount FUSEFARM SPEC MNT [MOUNT-ARGS...]: mount SPEC (empty: the
# built-in farm) at MNT with `fusefarm mount` and register the cleanup
# that, whatever happens, detaches the loops attach attached, unmounts and
# stops the daemon.  Sets FF_MNT and FF_STATE (the attach state dir, kept
# in the scratch dir so the host's /run/fusefarm is never touched).
ff_fuse_mount() {
  local bin=$1 spec=$2 mnt=$3
  shift 3
  FF_FUSEFARM=$bin
  FF_MNT=$mnt
  FF_STATE=$FF_SCRATCH/state
  mkdir -p "$mnt"
  ff_on_cleanup "ff_fuse_cleanup '$mnt'"
  "$bin" mount ${spec:+"$spec"} "$mnt" --log "$FF_SCRATCH/daemon.log" "$@" ||
    ff_die "fusefarm mount failed"
  FF_DAEMON_PID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' \
    "$mnt/.fusefarm/info.json")
}

# ff_fuse_cleanup MNT: detach, unmount, stop the daemon (idempotent).
# After the unmount the daemon answers what is pending, saves its overlay
# (--save-overlay) and exits: that exit is waited for (a loaded machine
# may take tens of seconds, and a daemon killed early loses its save);
# kill -9 only ends a daemon still there after FF_FUSE_EXIT_WAIT seconds
# (default 120), a hang.
ff_fuse_cleanup() {
  local mnt=$1
  "$FF_FUSEFARM" detach "$mnt" --state "$FF_STATE" --quiet 2>/dev/null || true
  if ff_is_mounted "$mnt"; then
    fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true
  fi
  if [[ -n ${FF_DAEMON_PID:-} ]]; then
    if ! ff_wait_exit "$FF_DAEMON_PID" "${FF_FUSE_EXIT_WAIT:-120}"; then
      printf 'ff_fuse_cleanup: daemon %s still running %s s after the unmount: kill -9; mount namespaces still holding %s:\n%s\n' \
        "$FF_DAEMON_PID" "${FF_FUSE_EXIT_WAIT:-120}" "$mnt" "$(ff_mount_holders "$mnt")" >&2
      kill -9 "$FF_DAEMON_PID" 2>/dev/null || true
    fi
  fi
  # A daemon that died first leaves the mount behind until unmounted.
  if ff_is_mounted "$mnt"; then
    fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null ||
      printf 'ff_fuse_cleanup: could not unmount %s\n' "$mnt" >&2
  fi
  # A daemon whose save at exit failed left its report for detach to
  # tell (/run/fusefarm/MNT.save-failed): told and forgotten here.
  "$FF_FUSEFARM" detach "$mnt" --state "$FF_STATE" --quiet 2>/dev/null || true
}

# ff_mount_holders MNT: after MNT was unmounted here, the processes (one
# "PID mnt:[NS] COMMAND" line per mount namespace) whose mount namespace
# still holds a copy of it.  A namespace made while MNT was mounted (any
# `unshare -m`, ours or another program's) copies every mount, and the
# kernel keeps the FUSE connection, and so the daemon, until the last
# copy goes: the usual reason a daemon outlives its unmount.
ff_mount_holders() {
  local d p ns seen=" "
  d=$(realpath -m -- "$1")
  for p in /proc/[0-9]*; do
    ns=$(readlink "$p/ns/mnt" 2>/dev/null) || continue
    [[ $seen == *" $ns "* ]] && continue
    awk -v d="$d" '{ gsub(/\\040/, " ", $5) } $5 == d { f = 1 } END { exit !f }' \
      "$p/mountinfo" 2>/dev/null || continue
    seen+="$ns "
    printf '%s %s %s\n' "${p#/proc/}" "$ns" "$(tr '\0' ' ' <"$p/cmdline" | cut -c1-100)"
  done
}

# ff_fuse_attach [ATTACH-ARGS...]: `fusefarm attach` the mount into the
# test's state dir, point ff_lvm at the lvm config attach wrote, and write
# $FF_SCRATCH/map ("<loop> <name>") for the manifest checks.
ff_fuse_attach() {
  "$FF_FUSEFARM" attach "$FF_MNT" --state "$FF_STATE" --quiet "$@" >/dev/null ||
    ff_die "fusefarm attach failed"
  awk '{ printf "%s\t%s\n", $1, $3 }' "$FF_STATE/loops" >"$FF_SCRATCH/loops"
  awk '{ print $1, $2 }' "$FF_STATE/loops" >"$FF_SCRATCH/map"
  FF_LVM_SYSTEM_DIR=$FF_STATE/lvm
  FF_DEVICES_FILE=$FF_STATE/lvm/devices/system.devices
}

# ff_stats_json: the daemon's stats snapshot on stdout.
ff_stats_json() {
  cat "$FF_MNT/.fusefarm/stats.json"
}

# ---- fault tests (test-faults-*.sh) ------------------------------------------

# ff_is_mounted DIR: is DIR a mount point?  Read from /proc/self/mountinfo,
# never from DIR itself: `mountpoint` fails on a FUSE mount whose daemon
# is dead (ENOTCONN), which is exactly the mount a fault test looks for.
ff_is_mounted() {
  local d
  d=$(realpath -m -- "$1")
  awk -v d="$d" '{ gsub(/\\040/, " ", $5) } $5 == d { f = 1 } END { exit !f }' \
    /proc/self/mountinfo
}

# ff_ms_since T0: whole milliseconds elapsed since T0 (an $EPOCHREALTIME).
ff_ms_since() {
  awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }'
}

# ff_alive PID: is PID running?  A zombie is not (a daemonized process's
# parent may reap it only much later).
ff_alive() {
  local st
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ ${st%% *} != Z ]]
}

# ff_gone PID: has PID exited?  (not ff_alive; for ff_wait_until)
ff_gone() {
  ! ff_alive "$1"
}

# ff_wait_exit PID SECS: wait up to SECS seconds (a give-up limit, through
# ff_wait_until) for PID (any process, not only a child) to have exited
# (ff_alive); status 1 if it is still running.
ff_wait_exit() {
  ff_wait_until "$2" ff_gone "$1"
}

# ff_fuse_reads: reads the daemon at $FF_MNT has answered so far.
ff_fuse_reads() {
  python3 -c 'import json, sys
print(sum(d["reads"] for d in json.load(open(sys.argv[1]))["devices"]))' \
    "$FF_MNT/.fusefarm/stats.json"
}

# ff__reads_reached N: has the daemon at $FF_MNT answered N reads?
ff__reads_reached() {
  local n
  n=$(ff_fuse_reads 2>/dev/null) || return 1
  ((n >= $1))
}

# ff_wait_reads N SECS: wait up to SECS seconds (a give-up limit, through
# ff_wait_until) until the daemon at $FF_MNT has answered N reads (to act
# in the middle of an lvm scan); fails the test otherwise.
ff_wait_reads() {
  ff_wait_until "$2" ff__reads_reached "$1" ||
    ff_die "the daemon answered $(ff_fuse_reads) reads in $2 s, expected $1"
}

# ff_loops_still_ours LOOPS-FILE: the loops recorded in LOOPS-FILE
# ("<dev> <name> <backing>" lines, as `fusefarm attach` writes them) that
# still carry their file, also as the kernel shows it after the file's
# mount was lazily unmounted ("/<name>").  One "<dev> <name> <shown>" line
# each; nothing when every one is gone.
ff_loops_still_ours() {
  local dev name back cur
  while read -r dev name back; do
    [[ -n $dev ]] || continue
    cur=$(cat "/sys/block/${dev#/dev/}/loop/backing_file" 2>/dev/null) || continue
    case $cur in
    "$back" | "$back (deleted)" | "/$name" | "/$name (deleted)")
      printf '%s %s %s\n' "$dev" "$name" "$cur"
      ;;
    esac
  done <"$1"
}

# ff_foreign_pv IMG VG: a PV with its VG VG on a loop over a 64 MiB file
# IMG: what the host would have beside the farm (tests that lvm never sees
# it).  Prints the loop device.
ff_foreign_pv() {
	local loop
	truncate -s 64M "$1"
	loop=$(ff_loop_attach "$1")
	ff_lvm pvcreate -q "$loop" >/dev/null 2>&1 || ff_die "pvcreate on the foreign PV $loop failed"
	ff_lvm vgcreate -q "$2" "$loop" >/dev/null 2>&1 || ff_die "vgcreate $2 on $loop failed"
	printf '%s\n' "$loop"
}

# ff_run_leftovers DIR: fails (listing them) if a `fusefarm run` whose
# TMPDIR and files are under DIR left anything behind: a fusefarm mount, a
# daemon or runner, a loop over one of its files.  Other farms on the
# machine are not looked at: the caller passes beside them.
ff_run_leftovers() {
	local d=$1 bad=0
	if grep -F " $d/" /proc/self/mountinfo | grep -q ' fuse.fusefarm '; then
		grep -F " $d/" /proc/self/mountinfo >&2
		bad=1
	fi
	if pgrep -f "fusefarm (mount|run) .*$d/" >/dev/null; then
		pgrep -af "fusefarm (mount|run) .*$d/" >&2
		bad=1
	fi
	if losetup -l -n -O BACK-FILE | grep -qF "$d/fusefarm-run."; then
		losetup -l -n -O NAME,BACK-FILE | grep -F "$d/fusefarm-run." >&2
		bad=1
	fi
	return $bad
}

# ff_gate_lvm SCRIPT PREFIX RELEASE: write SCRIPT, an lvm for `fusefarm run
# --lvm` that runs the real one, except the first event-activation pvscan
# it is asked for (`pvscan --cache --listvg`): that one writes its pid to
# PREFIX.pid (PREFIX.first marks it taken) and blocks reading the fifo
# RELEASE, so a test acts while a run is inside event activation, farm
# attached, with that pvscan its running child.
ff_gate_lvm() {
	local reallvm
	reallvm=$(command -v lvm)
	cat >"$1" <<SH
#!/bin/sh
case " \$* " in
*" pvscan --cache --listvg "*)
  if mkdir "$2.first" 2>/dev/null; then
    echo \$\$ >"$2.tmp" && mv "$2.tmp" "$2.pid"
    read -r _ <"$3"
  fi
  ;;
esac
exec "$reallvm" "\$@"
SH
	chmod +x "$1"
}
