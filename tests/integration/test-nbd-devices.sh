#!/usr/bin/env bash
# devices=N: the nbdkit plugin scales the farm exactly as
# `fusefarm mount --devices N` does, checked against a real FUSE mount of
# the same spec scaled the same way:
#   - nbdinfo --list shows MNT/.fusefarm/devices, in order, with the
#     sizes and descriptions of the mount's manifest.json (and not the
#     unscaled farm: N is chosen so the two differ);
#   - seven exports (PVs of a 2-mda VG, one beyond the unscaled farm's
#     last index, a damaged PV, a duplicate, an orphan, a gpt and an
#     ext4 signature) equal the FUSE files byte for byte, whole;
#   - shard=K/M splits the scaled farm;
#   - the fd check counts the scaled farm's exports: a limit that lets
#     the unscaled farm start refuses devices=N, naming the scaled count;
#   - overlays carry the scaled farm's fingerprint: one saved by the FUSE
#     mount at N loads into nbdkit at N (its write reads back), one saved
#     by nbdkit at N loads at N and is refused at another N and without
#     devices=, with a message naming devices=;
#   - bad values (0, -1, abc, 2000000, given twice) and a spec that does
#     not scale are refused at start, naming devices=;
#   - --help and the man page document devices=.
# usage: test-nbd-devices.sh FUSEFARM
# shellcheck disable=SC2016  # $uri, $unixsocket: expanded by nbdkit's --run
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-nbd-devices.sh FUSEFARM}
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
man=$FF_BUILD_DIR/nbd-plugin/nbdkit-fusefarm-plugin.1
py=/usr/bin/python3 # Debian's: python3-libnbd is not on other pythons' path
ff_require nbdkit nbdinfo nbdcopy cmp dd fusermount3 mountpoint
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
ff_env_init # scratch dir and cleanup trap only: no lvm here
s=$FF_SCRATCH
n=40      # the scaled size asked for
other=20  # another size, for the overlay refusal
# Names with %u: a scaled group makes several VGs.
cat >"$s/farm.conf" <<'CONF'
seed = 23; device_size = "32M";
vgs = ( { name = "big%u"; pvs = 3; mda_copies = 2;
          lvs = ({ name = "lin"; size = "16M"; },
                 { name = "str"; type = "striped"; stripes = 3; size = "24M"; }); },
        { count = 2; name = "vg%02u"; pvs = 1; lvs = ({ fill = 0.5; }); },
        { name = "dup%u"; pvs = 1; damage = "duplicate-pv"; },
        { name = "bad%u"; pvs = 2; damage = "bad-label-crc"; } );
orphans = ({ count = 2; });
blanks = ({ count = 1; });
signatures = ({ count = 1; type = "gpt"; }, { count = 1; type = "ext4"; });
CONF
"$bin" manifest "$s/farm.conf" >"$s/unscaled.json"
nbd() { # nbd ARGS... -- SCRIPT: a captive server of the farm, SCRIPT as --run
  local args=()
  while [[ $1 != -- ]]; do
    args+=("$1")
    shift
  done
  "$nbdkit" -U - "$plugin" spec="$s/farm.conf" "${args[@]}" --run "$2"
}

# The reference: the FUSE daemon's farm at --devices N.
ff_fuse_mount "$bin" "$s/farm.conf" "$s/mnt" --devices "$n" --save-overlay "$s/fuse.ovl"
cp "$FF_MNT/.fusefarm/manifest.json" "$s/scaled.json"
cut -d' ' -f1 "$FF_MNT/.fusefarm/devices" >"$s/fuse.names"
total=$(wc -l <"$s/fuse.names")
unscaled=$("$py" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$s/unscaled.json")
((total > unscaled)) || ff_die "the mount serves $total devices at --devices $n, the spec $unscaled: not scaled"

# 1. The list: names in order, sizes, descriptions.
nbd devices="$n" -- 'nbdinfo --list --json "$uri"' >"$s/list.json" 2>"$s/nbdkit.err" ||
  ff_die "nbdinfo --list with devices=$n failed: $(cat "$s/nbdkit.err")"
"$py" - "$s/fuse.names" "$s/scaled.json" "$s/list.json" <<'PY' || ff_die "the exports are not the mount's devices"
import json, sys
fuse = open(sys.argv[1]).read().split()
man = {d["name"]: d for d in json.load(open(sys.argv[2]))["devices"]}
got = json.load(open(sys.argv[3]))["exports"]
names = [e["export-name"] for e in got]
bad = []
if names != fuse:
    bad.append(f"exports {names[:5]}... ({len(names)}) != MNT/.fusefarm/devices {fuse[:5]}... ({len(fuse)})")
for e in got:
    d = man.get(e["export-name"])
    if d is None:
        bad.append(f"{e['export-name']}: not in the mount's manifest")
    elif (e["export-size"], e.get("description")) != (d["size"], d["description"]):
        bad.append(f"{d['name']}: {e['export-size']} {e.get('description')!r} != {d['size']} {d['description']!r}")
print("\n".join(bad[:20]) or f"{len(names)} exports = the mount's devices, sizes and descriptions")
sys.exit(1 if bad else 0)
PY

# 2. Bytes: seven devices of every kind, whole, NBD against FUSE.
mapfile -t pick < <("$py" - "$s/scaled.json" "$unscaled" <<'PY'
import json, sys
devs = json.load(open(sys.argv[1]))["devices"]
unscaled = int(sys.argv[2])
def first(pred):
    return next(d["name"] for d in devs if pred(d))
print(devs[1]["name"])  # PV 2 of 3 of a 2-mda VG
print(first(lambda d: d["index"] >= unscaled and d["role"] == "pv"))
print(first(lambda d: d.get("damage") == "bad-label-crc"))
print(first(lambda d: d["role"] == "duplicate"))
print(first(lambda d: d["role"] == "orphan"))
print(first(lambda d: d.get("signature") == "gpt"))
print(devs[-1]["name"])  # the last: an ext4 signature
PY
)
((${#pick[@]} == 7)) || ff_die "picked ${#pick[@]} devices, not 7: ${pick[*]}"
nbd devices="$n" -- '
  set -e
  for e in '"${pick[*]}"'; do
    nbdcopy "nbd+unix:///$e?socket=$unixsocket" '"$s"'/$e.nbd
  done
' 2>"$s/nbdkit.err" || ff_die "nbdcopy with devices=$n failed: $(cat "$s/nbdkit.err")"
for e in "${pick[@]}"; do
  cmp "$s/$e.nbd" "$FF_MNT/$e" || ff_die "$e over NBD (devices=$n) differs from the FUSE file"
done
ff_log "bytes equal over NBD and FUSE: ${pick[*]}"

# A write through FUSE, saved at unmount (the FUSE overlay of the
# scaled farm), to load into nbdkit below.
w=${pick[1]} # a PV beyond the unscaled farm's last index
head -c 4096 /dev/urandom >"$s/block"
dd if="$s/block" of="$FF_MNT/$w" bs=4096 seek=1024 conv=notrunc status=none ||
  ff_die "write to $FF_MNT/$w failed"
cp "$s/$w.nbd" "$s/$w.want"
dd if="$s/block" of="$s/$w.want" bs=4096 seek=1024 conv=notrunc status=none
cmp "$FF_MNT/$w" "$s/$w.want" || ff_die "the FUSE write did not land"
# Unmount, then wait for the daemon to exit: it saves the overlay on its
# way out.
daemon_gone() {
  ! ff_alive "$FF_DAEMON_PID"
}
fusermount3 -u "$FF_MNT" || ff_die "fusermount3 -u $FF_MNT failed"
ff_wait_until 60 daemon_gone || ff_die "the daemon still runs 60 s after its unmount"
[[ -s $s/fuse.ovl ]] || ff_die "fusefarm mount --save-overlay wrote nothing at exit"

# 3. shard=K/M splits the scaled farm.
nbd devices="$n" shard=1/3 -- 'nbdinfo --list --json "$uri"' >"$s/shard.json" 2>"$s/nbdkit.err" ||
  ff_die "devices=$n shard=1/3 failed: $(cat "$s/nbdkit.err")"
"$py" - "$s/fuse.names" "$s/shard.json" <<'PY' || ff_die "shard=1/3 does not split the scaled farm"
import json, sys
fuse = open(sys.argv[1]).read().split()
got = [e["export-name"] for e in json.load(open(sys.argv[2]))["exports"]]
want = fuse[1::3]
print(f"shard 1/3 of the scaled farm: {len(got)} exports" if got == want else f"{got} != {want}")
sys.exit(0 if got == want else 1)
PY

# 4. The fd check counts the scaled farm: a hard limit the unscaled farm
# fits in (2*$unscaled+64) but the scaled one does not (2*$total+64).
lim=$((2 * unscaled + 64 + 8))
((lim < 2 * total + 64)) || ff_die "the fd limit $lim does not separate $unscaled and $total exports"
(ulimit -n "$lim" && nbd -- true) 2>"$s/fd.err" ||
  ff_die "the unscaled farm does not start with ulimit -n $lim: $(cat "$s/fd.err")"
if (ulimit -n "$lim" && nbd devices="$n" -- true) 2>"$s/fd.err"; then
  ff_die "devices=$n ($total exports) started with ulimit -n $lim"
fi
grep -qF "file descriptor limit too low: $total exports need $((2 * total + 64))" "$s/fd.err" ||
  ff_die "the fd check did not count the scaled farm: $(cat "$s/fd.err")"

# 5. Overlays: FUSE's at N into nbdkit at N; nbdkit's at N refused elsewhere.
nbd devices="$n" overlay="$s/fuse.ovl" save-overlay="$s/nbd.ovl" -- \
  "nbdcopy \"nbd+unix:///$w?socket=\$unixsocket\" $s/$w.ovl1" 2>"$s/nbdkit.err" ||
  ff_die "devices=$n refused the FUSE mount's overlay at --devices $n: $(cat "$s/nbdkit.err")"
cmp "$s/$w.ovl1" "$s/$w.want" || ff_die "$w: the FUSE write is not served with overlay="
[[ -s $s/nbd.ovl ]] || ff_die "save-overlay wrote nothing"
nbd devices="$n" overlay="$s/nbd.ovl" -- \
  "nbdcopy \"nbd+unix:///$w?socket=\$unixsocket\" $s/$w.ovl2" 2>"$s/nbdkit.err" ||
  ff_die "devices=$n refused its own overlay: $(cat "$s/nbdkit.err")"
cmp "$s/$w.ovl2" "$s/$w.want" || ff_die "$w: the write is lost after save-overlay and overlay="
for args in "devices=$other" ""; do
  # shellcheck disable=SC2086  # args: zero or one word
  if nbd $args overlay="$s/nbd.ovl" -- true 2>"$s/err"; then
    ff_die "an overlay saved with devices=$n was accepted with '${args:-no devices=}'"
  fi
  grep -qF "overlay=$s/nbd.ovl: overlay $s/nbd.ovl was saved for another farm" "$s/err" ||
    ff_die "unclear refusal with '${args:-no devices=}': $(cat "$s/err")"
  [[ -z $args ]] || grep -qF "scaled by devices=$other to" "$s/err" ||
    ff_die "the refusal does not name devices=$other: $(cat "$s/err")"
done

# 6. Bad values, and a spec whose fixed VG name cannot be scaled.
printf 'vgs = ({ name = "solo"; pvs = 1; });\n' >"$s/fixed.conf"
while IFS='|' read -r args want; do
  # shellcheck disable=SC2086  # args is a list of words
  if "$nbdkit" -U - "$plugin" $args --run true 2>"$s/err"; then
    ff_die "nbdkit accepted: $args"
  fi
  grep -qF -- "$want" "$s/err" || ff_die "nbdkit $args: expected '$want' in: $(cat "$s/err")"
done <<EOF
devices=0|devices=0: expected a device count from 1 to 1000000
devices=-1|devices=-1: expected a device count from 1 to 1000000
devices=abc|devices=abc: expected a device count from 1 to 1000000
devices=2000000|devices=2000000: expected a device count from 1 to 1000000
devices=|devices=: expected a device count
devices=5 devices=6|devices=6: devices given twice
devices=5 spec=$s/fixed.conf|spec=$s/fixed.conf devices=5: $s/fixed.conf:1: vgs.[0].name: VG name 'solo' is used twice
colour=blue|expected spec, profile, stats, stats-interval, devices, shard
EOF

# 7. Documented: --help and the man page.
"$nbdkit" "$plugin" --help >"$s/help" 2>&1 || ff_die "nbdkit fusefarm --help failed"
grep -q '^devices=N ' "$s/help" || ff_die "--help does not document devices="
[[ -s $man ]] || ff_die "$man: the man page was not built"
grep '^\.IP ' "$man" | grep -qF -- '\fBdevices=\fR' || ff_die "the man page has no entry for devices="
echo "PASS: devices=$n serves the $total devices of fusefarm mount --devices $n, byte for byte"
