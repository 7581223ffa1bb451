# shellcheck shell=bash
#
# lvm-env.sh: a fenced lvm2 environment for integration tests and the
# scenario runner.  Source it from a bash script that runs as root and uses
# `set -euo pipefail`.
#
# Why this exists: lvm on this machine must never see or change the host's
# disks or state.  Three things would leak otherwise (see
# docs/fuse.md and docs/ondisk-format.md §7):
#   - the config and devices file come from /etc/lvm: we point
#     LVM_SYSTEM_DIR at a private directory with its own lvm.conf;
#   - a missing devices file makes lvm scan every block device: we create an
#     empty one before the first lvm call and list only our loop devices;
#   - /run/lvm (hints, pvs_online, vgs_online, pvs_lookup) and /run/lock/lvm
#     are compiled in: every lvm call runs in a private mount namespace where
#     both are bind mounts of directories in our scratch dir.
#
# State (shell globals, one set per shell; do not edit them):
#   FF_SCRATCH      current env's scratch dir (mktemp -d under ${TMPDIR:-/tmp})
#   FF_LVM_SYSTEM_DIR  $FF_SCRATCH/etc: lvm.conf and devices/system.devices
#   FF_DEVICES_FILE $FF_LVM_SYSTEM_DIR/devices/system.devices
#   FF_ENVS         every scratch dir this shell created, for cleanup
# Several envs may exist in one shell (a test that needs a second, unrelated
# "host" view); ff_env_init makes the new one current and ff_env_use
# switches.  Each env records the loop devices it attached in
# $FF_SCRATCH/loops ("DEV<TAB>BACKING-FILE" lines) and the ones whose node
# losetup created in $FF_SCRATCH/created; cleanup detaches those, deletes
# the created nodes, and touches nothing else.
#
# Ownership: the EXIT/INT/TERM/PIPE/HUP traps belong to this library once
# ff_env_init ran.  A test needing its own cleanup registers it with
# ff_on_cleanup instead of calling `trap`.

FF_ENVS=()
FF_CLEANUP_HOOKS=()
FF_SCRATCH=
FF_LVM_SYSTEM_DIR=
FF_DEVICES_FILE=
FF_TRAPS_SET=

# ff_die MSG: print "FAIL: MSG" to stderr and exit 1 (the EXIT trap cleans up).
ff_die() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}

# ff_log MSG: progress line on stderr, prefixed with the script name.
ff_log() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

# ff_wait_until SECS CMD [ARGS...]: wait until CMD succeeds (a condition
# about something the test started: a file exists, a counter reached N, a
# process exited); status 1 if it still fails after SECS seconds.  The one
# polling loop of the test suite: a test never sleeps a fixed time and
# assumes something happened; it waits for the thing.  SECS is a give-up
# limit for a hung test (generous: a loaded machine is slow), never a
# measurement.  FF_WAIT_SCALE (default 1) multiplies every limit.
ff_wait_until() {
	local secs=$1 deadline
	shift
	deadline=$(awk -v n="$secs" -v k="${FF_WAIT_SCALE:-1}" -v t="$EPOCHREALTIME" \
		'BEGIN { printf "%.3f", t + n * k }')
	until "$@"; do
		awk -v t="$EPOCHREALTIME" -v d="$deadline" 'BEGIN { exit !(t >= d) }' && return 1
		sleep 0.02
	done
}

# ff__pkg CMD: the Debian (bookworm) package that ships CMD.
ff__pkg() {
	case $1 in
	lvm | pvcreate | vgcreate | lvcreate | pvs | vgs | lvs | pvck | pvscan | lvmdevices) echo lvm2 ;;
	losetup | mount | umount) echo mount ;;
	unshare | nsenter | blockdev | findmnt | wipefs | flock | setpriv) echo util-linux ;;
	hexdump) echo bsdextrautils ;;
	cmp | diff) echo diffutils ;;
	xxd) echo xxd ;;
	strace) echo strace ;;
	fio) echo fio ;;
	python3) echo python3 ;;
	jq) echo jq ;;
	perf) echo linux-perf ;;
	mktemp | truncate | od | dd | cat | sort | stat | timeout | realpath | env) echo coreutils ;;
	*) echo "the package providing $1 (apt-file search bin/$1)" ;;
	esac
}

# ff_require CMD...: fail the test (exit 1) naming the Debian package to
# install when a command is missing.  A missing prerequisite never turns
# into a pass or a skip (docs/style.md, "Tests").
ff_require() {
	local c missing=0
	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1; then
			printf 'FAIL: %s: command not found; SKIP is not allowed: install %s (apt-get install %s)\n' \
				"$c" "$(ff__pkg "$c")" "$(ff__pkg "$c")" >&2
			missing=1
		fi
	done
	if ((missing)); then
		exit 1
	fi
	return 0
}

# ff__fusefarm: the fusefarm binary: $FF_FUSEFARM_BIN, else the build
# tree's ($FF_BUILD_DIR, which ctest sets for every integration test), else
# fusefarm on PATH.
ff__fusefarm() {
	if [[ -n ${FF_FUSEFARM_BIN:-} ]]; then
		printf '%s\n' "$FF_FUSEFARM_BIN"
	elif [[ -n ${FF_BUILD_DIR:-} && -x $FF_BUILD_DIR/fusefarm/fusefarm ]]; then
		printf '%s\n' "$FF_BUILD_DIR/fusefarm/fusefarm"
	elif command -v fusefarm >/dev/null 2>&1; then
		command -v fusefarm
	else
		ff_die "lvm-env: no fusefarm binary (set FF_BUILD_DIR to the build tree, or FF_FUSEFARM_BIN)"
	fi
}

# ff__fence SCRATCH: (re)write SCRATCH/etc/lvm.conf and its devices file
# with `fusefarm fence` (runner/ff-fence.h, the one place that knows what
# a fenced lvm.conf holds), naming every loop of SCRATCH/loops.  With
# FF_FENCE_SCENARIO and FF_FENCE_CONFIG set, that scenario
# configuration's lvm settings are added.
ff__fence() {
	local bin devs=() dev file
	bin=$(ff__fusefarm) || exit 1
	while IFS=$'\t' read -r dev file; do
		[[ -n $dev ]] && devs+=("$dev")
	done <"$1/loops"
	local scen=()
	if [[ -n ${FF_FENCE_SCENARIO:-} ]]; then
		scen=(--scenario "$FF_FENCE_SCENARIO" --config "${FF_FENCE_CONFIG:-1}")
	fi
	"$bin" fence --quiet --dir "$1/etc" "${scen[@]}" -- "${devs[@]}" >/dev/null ||
		ff_die "lvm-env: fusefarm fence --dir $1/etc failed"
}

# ff_env_init: create a new private env and make it current.  Creates the
# scratch dir, $FF_SCRATCH/{etc,run,lock}, and with `fusefarm fence`
# lvm.conf and an EMPTY devices file (before any lvm call: without it lvm
# would scan the whole machine).  lvm.conf keeps backups off and their dirs
# under /run/lvm, which ff_lvm bind-mounts from $FF_SCRATCH/run.  Installs the EXIT/INT/TERM traps that run
# ff_env_cleanup.  Prints nothing; read $FF_SCRATCH.
ff_env_init() {
	ff_require lvm losetup unshare mount mktemp
	if [[ $(id -u) != 0 ]]; then
		ff_die "lvm-env: must run as root (loop devices, mount namespaces)"
	fi
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/fusefarm-lvm.XXXXXX")
	FF_ENVS+=("$d")
	if [[ -z $FF_TRAPS_SET ]]; then
		trap ff_env_cleanup EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
		# a reader that goes away (| head) or a closed terminal must not
		# skip the cleanup
		trap 'exit 141' PIPE
		trap 'exit 129' HUP
		FF_TRAPS_SET=1
	fi
	mkdir -p "$d/etc/devices" "$d/run" "$d/lock"
	: >"$d/loops"
	ff__fence "$d"
	ff_env_use "$d"
}

# ff_env_use DIR: make the env whose scratch dir is DIR (created by
# ff_env_init in this shell) the current one.
ff_env_use() {
	local e
	for e in "${FF_ENVS[@]}"; do
		if [[ $e == "$1" ]]; then
			FF_SCRATCH=$1
			FF_LVM_SYSTEM_DIR=$1/etc
			FF_DEVICES_FILE=$1/etc/devices/system.devices
			return 0
		fi
	done
	ff_die "ff_env_use: $1: not an env of this shell"
}

# ff_on_cleanup CMD: run CMD (eval'd) at the start of ff_env_cleanup, before
# loops are detached (e.g. to unmount a FUSE mount backing the loops).
ff_on_cleanup() {
	FF_CLEANUP_HOOKS+=("$1")
}

# ff_loop_attach FILE...: attach each FILE to a free loop device (direct I/O
# off), record it in the current env, rewrite the env's devices file (one
# `fusefarm fence` run for all of them) and print the device paths, one per
# line, in argument order.
#
# Devices-file entries name the loops by device:
#   IDTYPE=devname IDNAME=/dev/loopN DEVNAME=/dev/loopN PVID=.
# which lvm 2.03.16 accepts (tests/integration/test-lvm-env.sh checks it);
# this is one fusefarm run per call where `lvm lvmdevices --adddev` is a
# full lvm run per device.  An lvm without a devices file gets a filter
# naming the same loops instead.
# Call it as out=$(ff_loop_attach …): its records are files, so the
# subshell is fine, and a failure still stops the test (a <(…) would not).
ff_loop_attach() {
	[[ -n $FF_SCRATCH ]] || ff_die "ff_loop_attach: call ff_env_init first"
	local f dev real had
	# The loop devices there before: one that losetup -f creates (a machine
	# with few of them, as a fresh one) is ours, and cleanup deletes it.
	had=" $(cd /sys/block && echo loop*) "
	for f in "$@"; do
		[[ -f $f ]] || ff_die "ff_loop_attach: $f: not a regular file"
		real=$(realpath -- "$f")
		# losetup -f takes a free device and then sets it up: another
		# user of the machine's loops may take or delete (LOOP_CTL_REMOVE,
		# a farm's detach) that device in between (EBUSY, ENXIO).  Then a
		# new free one is asked for; any other failure is final.
		dev=
		for _ in 1 2 3 4 5 6 7 8; do
			if dev=$(losetup -f --show --direct-io=off -- "$real" 2>"$FF_SCRATCH/losetup.err"); then
				break
			fi
			dev=
			grep -qE "No such device or address|Device or resource busy" "$FF_SCRATCH/losetup.err" || break
		done
		[[ -n $dev ]] || {
			cat "$FF_SCRATCH/losetup.err" >&2
			ff_die "ff_loop_attach: losetup $f failed"
		}
		printf '%s\t%s\n' "$dev" "$real" >>"$FF_SCRATCH/loops"
		if [[ $had != *" ${dev#/dev/} "* ]]; then
			printf '%s\n' "$dev" >>"$FF_SCRATCH/created"
			ff__journal created "$dev" "$real"
			had+="${dev#/dev/} "
		fi
		printf '%s\n' "$dev"
	done
	ff__fence "$FF_SCRATCH"
}

# ff_loop_adopt DEV BACKING [CREATED]: a loop device the test took over
# (attached BACKING to it itself) is the current env's from now on: cleanup
# detaches it, and deletes its node when the file CREATED (an attach state
# dir's `created`) lists DEV, as that attach's detach would have.
ff_loop_adopt() {
	[[ -n $FF_SCRATCH ]] || ff_die "ff_loop_adopt: call ff_env_init first"
	printf '%s\t%s\n' "$1" "$2" >>"$FF_SCRATCH/loops"
	if [[ -n ${3:-} ]] && grep -qxF -- "$1" "$3" 2>/dev/null; then
		printf '%s\n' "$1" >>"$FF_SCRATCH/created"
	fi
}

# ff_loop_list: print the current env's loop devices, in attach order.
ff_loop_list() {
	cut -f1 "$FF_SCRATCH/loops"
}

# ff_loop_detach_all: detach the current env's loop devices (only those,
# and only while they still point at the file we attached) and forget them.
# Flushes the page cache of each first so the image files are complete.
ff_loop_detach_all() {
	ff__detach_env "$FF_SCRATCH"
	: >"$FF_SCRATCH/loops"
}

# ff__journal WHAT DEV BACKING: with FUSEFARM_LOOP_JOURNAL set (tests/run.sh
# sets it), append "WHAT DEV BACKING" to it as fusefarm attach and detach
# do (fusefarm/attach.h): tests/check-leftovers.sh fails a pass that left a
# loop device it created.
ff__journal() {
	[[ -z ${FUSEFARM_LOOP_JOURNAL:-} ]] ||
		printf '%s %s %s\n' "$1" "$2" "$3" >>"$FUSEFARM_LOOP_JOURNAL"
}

# ff__detach_env DIR: detach every loop recorded in DIR/loops whose backing
# file is still the one recorded, and delete the ones ff_loop_attach
# created (DIR/created).  A loop that was detached meanwhile and reused by
# someone else is left alone.
ff__detach_env() {
	local dev file cur rc=0 gone=()
	local -A made=()
	[[ -f $1/loops ]] || return 0
	if [[ -f $1/created ]]; then
		while read -r dev; do
			[[ -n $dev ]] && made[$dev]=1
		done <"$1/created"
	fi
	while IFS=$'\t' read -r dev file; do
		[[ -n $dev ]] || continue
		if [[ -n ${made[$dev]:-} ]]; then
			gone+=("$dev" "$file")
		fi
		cur=$(cat "/sys/block/${dev#/dev/}/loop/backing_file" 2>/dev/null) || continue
		if [[ $cur != "$file" && $cur != "$file (deleted)" ]]; then
			continue
		fi
		blockdev --flushbufs "$dev" 2>/dev/null || true
		losetup -d "$dev" || rc=1
	done <"$1/loops"
	if ((${#gone[@]})); then
		ff__loop_remove "${gone[@]}" || rc=1
	fi
	rm -f -- "$1/created"
	return $rc
}

# ff__loop_remove DEV BACKING...: delete each loop device DEV that our
# attach created for BACKING, once its detach is through: `losetup -d` of
# a loop someone else holds open (another farm's lvm scan) only marks it,
# and the kernel lets go at their last close.  A DEV bound to another file
# by then is someone else's and stays ("left" in the journal).  Status 1,
# naming it, when one is still busy after 30 s (times FF_WAIT_SCALE).
ff__loop_remove() {
	python3 - "$@" <<'PY'
import errno, fcntl, os, sys, time

journal = os.environ.get("FUSEFARM_LOOP_JOURNAL")
scale = float(os.environ.get("FF_WAIT_SCALE") or 1)
ctl = os.open("/dev/loop-control", os.O_RDWR)
rc = 0
args = sys.argv[1:]
for dev, back in zip(args[0::2], args[1::2]):
    nr = int(dev[len("/dev/loop"):])
    deadline = time.monotonic() + 30 * scale
    while True:
        try:
            with open(f"/sys/block/loop{nr}/loop/backing_file") as f:
                cur = f.read().rstrip("\n")
        except OSError:
            cur = None  # unbound, or gone
        if cur is not None and cur not in (back, back + " (deleted)"):
            what = "left"
            break
        try:
            fcntl.ioctl(ctl, 0x4C81, nr)  # LOOP_CTL_REMOVE
            what = "deleted"
            break
        except OSError as e:
            if e.errno in (errno.ENODEV, errno.ENXIO):
                what = "deleted"  # someone deleted it first
                break
            if e.errno != errno.EBUSY or time.monotonic() > deadline:
                print(f"lvm-env: cannot delete {dev}, which losetup created "
                      f"for {back}: {os.strerror(e.errno)}", file=sys.stderr)
                what = None
                rc = 1
                break
        time.sleep(0.02)
    if what and journal:
        with open(journal, "a") as f:
            f.write(f"{what} {dev} {back}\n")
sys.exit(rc)
PY
}

# ff_env_cleanup: run the cleanup hooks, then for every env of this shell
# (newest first) detach its recorded loops and remove its scratch dir.
# Idempotent; installed as the EXIT trap by ff_env_init.  Set FF_KEEP=1 to
# keep the scratch dirs (loops are detached regardless).  Keeps the exit
# status of the script.
ff_env_cleanup() {
	local rc=$? i h
	set +e
	for h in "${FF_CLEANUP_HOOKS[@]}"; do
		eval "$h"
	done
	FF_CLEANUP_HOOKS=()
	for ((i = ${#FF_ENVS[@]} - 1; i >= 0; i--)); do
		ff__detach_env "${FF_ENVS[i]}"
		if [[ ${FF_KEEP:-0} == 1 ]]; then
			: >"${FF_ENVS[i]}/loops"
			printf '%s: kept %s\n' "${0##*/}" "${FF_ENVS[i]}" >&2
		else
			rm -rf -- "${FF_ENVS[i]}"
		fi
	done
	FF_ENVS=()
	FF_SCRATCH=
	return $rc
}

# ff_lvm ARGS...: run `lvm ARGS` fenced into the current env: in a private
# mount namespace (one `unshare -m --propagation private` per call) where
# /run/lvm and /run/lock/lvm are bind mounts of $FF_SCRATCH/run and
# $FF_SCRATCH/lock, with LVM_SYSTEM_DIR=$FF_LVM_SYSTEM_DIR, TZ=UTC,
# LVM_SUPPRESS_FD_WARNINGS=1 and `ulimit -n` raised to 2*devices+1024 (lvm
# keeps one fd per PV and silently lists fewer when short).  Where the hard
# limit cannot be raised (no CAP_SYS_RESOURCE: this sandbox stops at 20000)
# the soft limit goes up to the hard one, and the call fails when that is
# below devices+64 rather than let lvm skip devices.  The mounts die with
# the process.  stdin/stdout/stderr and the exit status pass through.
ff_lvm() {
	[[ -n $FF_SCRATCH ]] || ff_die "ff_lvm: call ff_env_init first"
	local n nofile
	n=$(wc -l <"$FF_SCRATCH/loops")
	nofile=$((2 * n + 1024))
	(
		hard=$(ulimit -Hn)
		if [[ $hard != unlimited ]] && ((hard < nofile)); then
			ulimit -Hn "$nofile" 2>/dev/null || true
			hard=$(ulimit -Hn)
		fi
		if [[ $hard != unlimited ]] && ((hard < nofile)); then
			if ((hard < n + 64)); then
				printf 'ff_lvm: fd hard limit %s is below %d devices + 64 and cannot be raised\n' \
					"$hard" "$n" >&2
				exit 1
			fi
			nofile=$hard
		fi
		soft=$(ulimit -Sn)
		if [[ $soft != unlimited ]] && ((soft < nofile)); then
			ulimit -Sn "$nofile"
		fi
		ff_lvm_exec "$FF_LVM_SYSTEM_DIR" "$FF_SCRATCH/run" "$FF_SCRATCH/lock" "$@"
	)
}

# ff_lvm_exec SYSTEM_DIR RUN LOCK ARGS...: exec lvm ARGS with
# LVM_SYSTEM_DIR=SYSTEM_DIR in a private mount namespace where /run/lvm
# and /run/lock/lvm are bind mounts of RUN and LOCK.  The one place the
# tests enter lvm's fence (ff_lvm; test-attach for attach's own config).
# If the host lacks /run/lvm or /run/lock/lvm, a private tmpfs over /run
# supplies the mount points without touching the host.
ff_lvm_exec() {
	local sysdir=$1 run=$2 lock=$3
	shift 3
	# shellcheck disable=SC2016  # $1, $2, $@ belong to the inner sh
	exec env LVM_SYSTEM_DIR="$sysdir" TZ=UTC LVM_SUPPRESS_FD_WARNINGS=1 \
		unshare -m --propagation private -- /bin/sh -c '
			set -e
			if [ ! -d /run/lvm ] || [ ! -d /run/lock/lvm ]; then
				mount -t tmpfs -o mode=0755 ff-run /run
				mkdir -p /run/lvm /run/lock/lvm
			fi
			mount --bind "$1" /run/lvm
			mount --bind "$2" /run/lock/lvm
			shift 2
			exec lvm "$@"' ff-lvm "$run" "$lock" "$@"
}
