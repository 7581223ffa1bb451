#!/usr/bin/env bash
#
# test-lvm-env.sh: prove that tests/lib/lvm-env.sh fences lvm off the host.
#
# A second private env stands in for "the host": it owns a PV (VG
# vgoutside) on a loop device that stays attached for the whole test.  The
# env under test then runs pvs/vgs/lvs/pvscan (--cache too) and must never
# list that PV; the host's /run/lvm, /run/lock/lvm and /etc/lvm must be
# unchanged afterwards and no mount may be left.  Child shells check that
# cleanup runs on failure and on SIGTERM, detaches only the loops its env
# attached, is idempotent, and that ff_require fails with a package name.
#
# Usage: test-lvm-env.sh   (root; lvm2, util-linux, mount, coreutils)

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib=$here/../lib/lvm-env.sh
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$lib"

ff_require grep sort find truncate losetup

host_state() {
	local d
	for d in /run/lvm /run/lock/lvm /etc/lvm; do
		if [[ -e $d ]]; then
			find "$d" -printf '%p %y %s %T@ %m\n' | sort
		else
			echo "$d absent"
		fi
	done
}

# mounts in the host namespace that involve our scratch dirs or /run/lvm
# our_mounts: mounts of this test's own world only: anything under its
# two scratch envs, and lvm's run dirs in this namespace (a leaked bind
# mount of the fence).  Other farms' and tests' mounts on the machine are
# not ours to look at.
our_mounts() {
	local pats=(-e ' /run/lvm ' -e ' /run/lock/lvm ')
	[[ -n ${out_env:-} ]] && pats+=(-e " $out_env[/ ]")
	[[ -n ${in_env:-} ]] && pats+=(-e " $in_env[/ ]")
	grep "${pats[@]}" /proc/self/mountinfo || true
}

# loop_backing DEV: the file DEV is attached to, or nothing
loop_backing() {
	cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null || true
}

# detach_requested DEV: losetup -d took DEV though it is still bound.
# LOOP_CLR_FD on a loop another process holds open (a scan of every
# /dev/loopN by someone else on the machine) sets autoclear and returns;
# the kernel detaches it at that process's last close.  Our loops are
# attached without autoclear.
detach_requested() {
	[[ $(cat "/sys/block/${1#/dev/}/loop/autoclear" 2>/dev/null) == 1 ]]
}

# assert_absent FILE WHAT PATTERN...: no PATTERN occurs in FILE
assert_absent() {
	local file=$1 what=$2 p
	shift 2
	for p in "$@"; do
		if grep -qF -- "$p" "$file"; then
			cat "$file" >&2
			ff_die "$what: outside PV leaked into the fenced env ('$p' listed)"
		fi
	done
}

host_before=$(host_state)
mounts_before=$(our_mounts)

# --- the "host": a second env with its own PV, attached until the end ----
ff_env_init
out_env=$FF_SCRATCH
truncate -s 32M "$out_env/outside.img"
out_dev=$(ff_loop_attach "$out_env/outside.img")
# quiet CMD...: run CMD, show its stderr only when it fails
quiet() {
	local err
	err=$("$@" 2>&1 >/dev/null) || {
		printf '%s\n' "$err" >&2
		ff_die "$*: failed"
	}
}

quiet ff_lvm pvcreate "$out_dev"
quiet ff_lvm vgcreate vgoutside "$out_dev"
out_uuid=$(ff_lvm pvs --noheadings -o pv_uuid "$out_dev" | tr -d ' ')
[[ $out_uuid =~ ^[0-9A-Za-z]{6}(-[0-9A-Za-z]{4}){5}-[0-9A-Za-z]{6}$ ]] ||
	ff_die "outside env: no PV UUID for $out_dev ('$out_uuid')"
out_uuid_raw=${out_uuid//-/}
ff_log "outside PV $out_dev $out_uuid (VG vgoutside)"

# --- the env under test ----------------------------------------------------
ff_env_init
in_env=$FF_SCRATCH
truncate -s 32M "$in_env/in0.img" "$in_env/in1.img"
in_out=$(ff_loop_attach "$in_env/in0.img" "$in_env/in1.img")
mapfile -t in_devs <<<"$in_out"
((${#in_devs[@]} == 2)) || ff_die "ff_loop_attach printed '${in_out}'"
log=$in_env/out.log

# The devname lines ff_loop_attach wrote are accepted: pvs -a lists exactly
# our two devices (an empty or missing devices file would list none or all).
# (-o pv_name alone makes a label-only report that lists PVs only.)
ff_lvm pvs -a --noheadings -o pv_name,vg_name >"$log" 2>&1
got=$(awk 'NF { print $1 }' "$log" | sort)
want=$(printf '%s\n' "${in_devs[@]}" | sort)
[[ $got == "$want" ]] || {
	cat "$log" >&2
	ff_die "pvs -a listed '$got', expected '$want'"
}

quiet ff_lvm pvcreate "${in_devs[@]}"
quiet ff_lvm vgcreate vginside "${in_devs[@]}"
quiet ff_lvm lvcreate -an -Zn --driverloaded n -L 8M -n lv0 vginside

: >"$log"
for cmd in "pvs -a -o pv_name,pv_uuid,vg_name" "vgs -o vg_name,vg_uuid,pv_count" \
	"lvs -a -o lv_name,vg_name,devices" "pvscan" "pvscan --cache" \
	"pvscan --cache ${in_devs[0]}" "vgs --noheadings -o vg_name" \
	"pvs --noheadings -o pv_uuid" "lvmdevices"; do
	# shellcheck disable=SC2086
	{
		echo "# lvm $cmd"
		ff_lvm $cmd 2>&1 || echo "[rc=$?]"
	} >>"$log"
done
assert_absent "$log" "pvs/vgs/lvs/pvscan/lvmdevices" \
	"$out_dev " "$out_dev:" "$out_dev(" "$out_uuid" "$out_uuid_raw" vgoutside
grep -qF -- "${in_devs[1]}" "$log" || ff_die "fenced env does not see its own PV"
grep -q vginside "$log" || ff_die "fenced env does not see its own VG"

# Naming the outside device explicitly still does not reveal it.
rc=0
ff_lvm pvscan --cache "$out_dev" >"$log" 2>&1 || rc=$?
assert_absent "$log" "pvscan --cache $out_dev" "$out_uuid" "$out_uuid_raw" vgoutside
rc=0
ff_lvm vgs vgoutside >"$log" 2>&1 || rc=$?
((rc != 0)) || ff_die "vgs vgoutside succeeded inside the fenced env"
assert_absent "$log" "vgs vgoutside" "$out_uuid" "$out_dev"

# pvscan --cache wrote the env's own /run/lvm, and only there.
[[ -e $in_env/run/pvs_online ]] || ff_die "pvscan --cache did not use the private /run/lvm"
online=$(ls "$in_env/run/pvs_online")
[[ $(wc -l <<<"$online") == 2 ]] || ff_die "pvs_online holds '$online', expected 2 PVs"
[[ $online != *"$out_uuid_raw"* ]] || ff_die "outside PV marked online"
[[ -z $(ls -A "$out_env/run") ]] || ff_die "the other env's /run/lvm was written"
if grep -qF -- "$out_dev" "$FF_DEVICES_FILE"; then
	ff_die "outside device in the env's devices file"
fi

# --- cleanup behaviour, in child shells -----------------------------------
child_common=". '$lib'; ff_env_init; truncate -s 8M \"\$FF_SCRATCH/c.img\";
	d=\$(ff_loop_attach \"\$FF_SCRATCH/c.img\");
	printf '%s\n%s\n' \"\$FF_SCRATCH\" \"\$d\" >'$in_env/child'"

check_child() { # WHAT WANT-RC RC
	local what=$1 want=$2 rc=$3 cs cd
	((rc == want)) || ff_die "$what: child exited $rc, expected $want"
	{ read -r cs && read -r cd; } <"$in_env/child" || ff_die "$what: child state missing"
	[[ ! -e $cs ]] || ff_die "$what: child scratch $cs not removed"
	[[ $(loop_backing "$cd") != "$cs/"* ]] || detach_requested "$cd" ||
		ff_die "$what: child loop $cd still attached, and no detach requested"
	[[ $(loop_backing "$out_dev") == "$out_env/outside.img" ]] ||
		ff_die "$what: child detached a loop it did not attach ($out_dev)"
}

rc=0
bash -c "set -euo pipefail; $child_common; false; echo unreachable" || rc=$?
check_child "failure midway" 1 "$rc"

rc=0
bash -c "set -euo pipefail; $child_common; kill -TERM \$\$; echo unreachable" || rc=$?
check_child "SIGTERM" 143 "$rc"

rc=0
bash -c "set -euo pipefail; $child_common; ff_env_cleanup; ff_env_cleanup; ff_env_cleanup" || rc=$?
check_child "idempotent cleanup" 0 "$rc"

rc=0
msg=$(bash -c ". '$lib'; ff_require ff-no-such-command-xyz lvm; echo unreachable" 2>&1) || rc=$?
((rc == 1)) || ff_die "ff_require: exit $rc, expected 1"
[[ $msg == *"install"* && $msg != *unreachable* ]] || ff_die "ff_require: message '$msg'"

# --- finally: everything we attached goes, the host is untouched ----------
ff_env_cleanup
for d in "$out_dev" "${in_devs[@]}"; do
	case $(loop_backing "$d") in
	"$out_env"/* | "$in_env"/*)
		detach_requested "$d" || ff_die "$d still attached after cleanup, and no detach requested"
		;;
	esac
done
[[ ! -e $out_env && ! -e $in_env ]] || ff_die "scratch dirs not removed"
host_after=$(host_state)
if [[ $host_after != "$host_before" ]]; then
	diff <(echo "$host_before") <(echo "$host_after") >&2 || true
	ff_die "host /run/lvm, /run/lock/lvm or /etc/lvm changed"
fi
[[ $(our_mounts) == "$mounts_before" ]] || ff_die "mounts left behind: $(our_mounts)"

echo "PASS: test-lvm-env.sh"
