#!/usr/bin/env bash
# A host with udev leaves the farm's loops alone (issue: "the host our
# users have").  lvm2's own rule (69-lvm.rules, Debian's name for
# 69-dm-lvm.rules) runs `pvscan --cache --autoactivation event` on a
# loop's change event once it has a backing file: on a host with udevd,
# attach would make the host's lvm activate every farm VG.  So `fusefarm
# attach` writes udev rules naming its mount, and this test runs udev's
# rules on the farm's loop devices as udevd would (`udevadm test
# --action=change`), in a namespace of its own: a private /run (the rules
# attach wrote, the udev database, /run/lvm), a private /dev (the loop
# nodes only) and the test's lvm config in /etc/lvm, so neither the
# host's udev state nor its lvm is touched.  It checks:
# - a farm loop gets FUSEFARM_MOUNT, DM_UDEV_DISABLE_OTHER_RULES_FLAG=1,
#   SYSTEMD_READY=0, UDISKS_IGNORE=1; lvm2's rule runs no pvscan on it and
#   marks nothing (no LVM_LOOP_PV_ACTIVATED), blkid leaves no ID_FS_TYPE;
# - a loop of the same PV image outside the farm still gets lvm2's
#   treatment (the rule names only the farm's loops);
# - detach removes the rules; attach of a mount point udev cannot name
#   literally is refused when udev runs... (unit test-udev covers the text);
# - `fusefarm udev-rule --install` (farm PVs by content, however they
#   arrive: nbd-client, a qemu disk, a loop of gen's images): the loop
#   outside the farm, a farm PV by its "fusefm-" UUID, gets FUSEFARM_PV=1
#   and no pvscan; a PV whose UUID the spec gave (not a farm-made one)
#   still gets lvm2's treatment; --remove takes the file away.
# usage: test-udev-fence.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-udev-fence.sh FUSEFARM}
spec=$here/../../configs/smoke.conf
ff_require udevadm unshare fusermount3 python3
ff_env_init
s=$FF_SCRATCH
export FUSEFARM_UDEV_RULES_DIR=$s/rules.d

ff_fuse_mount "$bin" "$spec" "$s/mnt"
ff_fuse_attach
mnt=$(realpath "$FF_MNT")
shopt -s nullglob
rules=("$s"/rules.d/*fusefarm-*.rules)
((${#rules[@]} == 2)) || ff_die "attach wrote ${#rules[@]} rule files, expected 2: ${rules[*]}"
grep -qx "# mount: $mnt" "${rules[0]}" || ff_die "${rules[0]} does not name $mnt"

# A loop of pv0001's bytes that is not the farm's: lvm2's rule must
# still see it (the fence is for the farm alone).
"$bin" gen -q "$spec" -o "$s/img"
other=$(ff_loop_attach "$s/img/pv0001")

# udev_test LOOP OUT [RULES]: udev's rules on LOOP's change event, as
# udevd would run them, in a private /run, /dev and /etc/lvm; RULES (the
# private /run/udev/rules.d) defaults to what attach wrote.
udev_test() {
  local loop=$1 out=$2 rdir=${3:-$FUSEFARM_UDEV_RULES_DIR}
  unshare -m --propagation private bash -c '
    set -e
    loop=$1 rules=$2 etc=$3
    mount -t tmpfs ff-test-run /run
    mkdir -p /run/udev/rules.d /run/lvm /run/lock/lvm
    mount --bind "$rules" /run/udev/rules.d
    mount --bind "$etc" /etc/lvm
    dev=$(mktemp -d)
    mount -t tmpfs ff-test-dev "$dev"
    cp -a /dev/null /dev/zero /dev/urandom "$loop" "$dev/"
    mount --move "$dev" /dev
    udevadm test --action=change "/sys/block/${loop#/dev/}"
  ' udev-test "$loop" "$rdir" "$FF_LVM_SYSTEM_DIR" >"$out" 2>&1 ||
    { cat "$out" >&2; ff_die "udevadm test $loop failed"; }
}

farm_loop=$(ff_loop_of pv0001)
udev_test "$farm_loop" "$s/farm.out"
udev_test "$other" "$s/other.out"

prop() { sed -n "s/^$2=//p" "$1" | tail -1; }
[[ $(prop "$s/farm.out" FUSEFARM_MOUNT) == "$mnt" ]] ||
  ff_die "the farm's loop $farm_loop did not match the rule: $(grep -E '^[A-Z_]+=' "$s/farm.out")"
for kv in DM_UDEV_DISABLE_OTHER_RULES_FLAG=1 SYSTEMD_READY=0 UDISKS_IGNORE=1; do
  [[ $(prop "$s/farm.out" "${kv%=*}") == "${kv#*=}" ]] ||
    ff_die "the farm's loop: ${kv%=*}=$(prop "$s/farm.out" "${kv%=*}"), expected ${kv#*=}"
done
if grep -q "pvscan" "$s/farm.out"; then
  ff_die "lvm2's rule ran pvscan on the farm's loop: $(grep pvscan "$s/farm.out" | head -3)"
fi
[[ -z $(prop "$s/farm.out" LVM_LOOP_PV_ACTIVATED) ]] ||
  ff_die "lvm2's rule marked the farm's loop LVM_LOOP_PV_ACTIVATED"
[[ -z $(prop "$s/farm.out" ID_FS_TYPE) ]] ||
  ff_die "the farm's loop has ID_FS_TYPE=$(prop "$s/farm.out" ID_FS_TYPE)"
ff_log "farm loop $farm_loop: $(grep -E '^(FUSEFARM_MOUNT|DM_UDEV_DISABLE_OTHER_RULES_FLAG|SYSTEMD_READY|UDISKS_IGNORE)=' "$s/farm.out" | tr '\n' ' ')"

# The other loop: lvm2's rule acts as it would on any PV (the rules that
# make this so are the host's own: without lvm2's rule there is nothing
# to compare, and the first half of the test says enough).
[[ -z $(prop "$s/other.out" FUSEFARM_MOUNT) ]] ||
  ff_die "a loop outside the farm ($other) matched the farm's rule"
if grep -q "69-.*lvm.*rules" "$s/other.out"; then
  [[ $(prop "$s/other.out" ID_FS_TYPE) == LVM2_member ]] ||
    ff_die "blkid did not see the PV on $other: $(grep -E '^[A-Z_]+=' "$s/other.out")"
  grep -q "pvscan --cache" "$s/other.out" ||
    ff_die "lvm2's rule did not run pvscan on $other (is this the rule the test expects?)"
  ff_log "loop outside the farm $other: lvm2's rule ran: $(prop "$s/other.out" LVM_VG_NAME_INCOMPLETE)$(prop "$s/other.out" LVM_VG_NAME_COMPLETE)"
fi

# The content rule: the same loop outside the farm, now with `fusefarm
# udev-rule --install`'s file as the only runtime rule.
"$bin" udev-rule --install --dir "$s/pvrules" --quiet || ff_die "udev-rule --install failed"
[[ -f $s/pvrules/61-fusefarm-pv.rules ]] || ff_die "udev-rule --install wrote no $s/pvrules/61-fusefarm-pv.rules"
cmp -s "$s/pvrules/61-fusefarm-pv.rules" <("$bin" udev-rule) ||
  ff_die "the installed rule is not what udev-rule prints"
udev_test "$other" "$s/other-pv.out" "$s/pvrules"
[[ $(prop "$s/other-pv.out" FUSEFARM_PV) == 1 ]] ||
  ff_die "a farm PV outside the farm's mount ($other) did not match the PV rule: $(grep -E '^[A-Z_]+=' "$s/other-pv.out")"
[[ $(prop "$s/other-pv.out" ID_FS_UUID) == fusefm-* ]] ||
  ff_die "blkid's ID_FS_UUID of $other is '$(prop "$s/other-pv.out" ID_FS_UUID)', not a farm PV UUID"
for kv in DM_UDEV_DISABLE_OTHER_RULES_FLAG=1 SYSTEMD_READY=0 UDISKS_IGNORE=1; do
  [[ $(prop "$s/other-pv.out" "${kv%=*}") == "${kv#*=}" ]] ||
    ff_die "the farm PV $other: ${kv%=*}=$(prop "$s/other-pv.out" "${kv%=*}"), expected ${kv#*=}"
done
if grep -q "pvscan" "$s/other-pv.out"; then
  ff_die "lvm2's rule ran pvscan on a farm PV under the PV rule: $(grep pvscan "$s/other-pv.out" | head -3)"
fi
[[ -z $(prop "$s/other-pv.out" ID_FS_TYPE) ]] ||
  ff_die "the farm PV $other kept ID_FS_TYPE=$(prop "$s/other-pv.out" ID_FS_TYPE)"
ff_log "farm PV by content $other: $(grep -E '^(FUSEFARM_PV|ID_FS_UUID|DM_UDEV_DISABLE_OTHER_RULES_FLAG)=' "$s/other-pv.out" | tr '\n' ' ')"

# A PV whose UUID the spec names (as a replayed host's would be) is not
# a farm-made one: the PV rule leaves it to lvm2.
cat >"$s/given.conf" <<'EOC'
seed = 1;
device_size = "16M";
vgs = ({ name = "given"; pvs = 1;
         pv_uuids = [ "DSLbOH-f4a8-pksM-pqvF-llvc-xcom-2fxjeN" ];
         lvs = ( { name = "l"; size = "4M"; } ); });
EOC
"$bin" gen -q "$s/given.conf" -o "$s/given"
given=$(ff_loop_attach "$s/given/pv0000")
udev_test "$given" "$s/given.out" "$s/pvrules"
[[ -z $(prop "$s/given.out" FUSEFARM_PV) ]] ||
  ff_die "a PV with a spec-given UUID matched the farm PV rule"
if grep -q "69-.*lvm.*rules" "$s/given.out"; then
  grep -q "pvscan --cache" "$s/given.out" ||
    ff_die "lvm2's rule did not run pvscan on the spec-given PV $given"
fi
"$bin" udev-rule --remove --dir "$s/pvrules" --quiet || ff_die "udev-rule --remove failed"
[[ ! -e $s/pvrules/61-fusefarm-pv.rules ]] || ff_die "udev-rule --remove left the file"

# detach removes the rules with the last loop.
"$bin" detach "$FF_MNT" --state "$FF_STATE" --quiet || ff_die "detach failed"
rules=("$s"/rules.d/*fusefarm-*.rules)
((${#rules[@]} == 0)) || ff_die "detach left ${rules[*]}"
echo "ok"
