#!/usr/bin/env bash
# qemu's NBD client against the plugin (captive nbdkit):
#   - qemu-img info: raw, the device's size;
#   - qemu-img compare: every export identical to its `fusefarm gen` image;
#   - qemu-img map: data exactly where nbdinfo --map says;
#   - qemu-img convert to qcow2, then compare with the image;
#   - qemu-io writes a pattern; a second connection (qemu-img compare)
#     sees the image with the pattern in it.
# usage: test-nbd-qemu.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"

bin=${1:?usage: test-nbd-qemu.sh FUSEFARM}
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
py=/usr/bin/python3
ff_require nbdkit nbdinfo qemu-img qemu-io
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
ff_env_init # scratch dir and cleanup trap only
s=$FF_SCRATCH

cat >"$s/farm.conf" <<'CONF'
seed = 3; device_size = "256M";
vgs = ({ name = "q"; pvs = 2; mda_copies = 2;
         lvs = ({ name = "a"; size = "100M"; },
               { name = "b"; type = "striped"; stripes = 2; size = "64M"; }); });
orphans = ({ count = 1; });
blanks = ({ count = 1; });
signatures = ({ count = 1; type = "mbr"; });
CONF
"$bin" gen -q "$s/farm.conf" -o "$s/img"
cp --sparse=always "$s/img/pv0000" "$s/pv0000.written"
printf 'U%.0s' $(seq 65536) | dd of="$s/pv0000.written" bs=65536 seek=16 conv=notrunc status=none

cat >"$s/run.sh" <<EOF
set -eu
sock=\$1
u() { echo "nbd+unix:///\$1?socket=\$sock"; }
for n in \$(ls $s/img); do
  qemu-img info --output=json "\$(u \$n)" >$s/\$n.info
  qemu-img compare -f raw -F raw "\$(u \$n)" $s/img/\$n >$s/\$n.cmp
  qemu-img map -f raw --output=json "\$(u \$n)" >$s/\$n.qmap
  nbdinfo --map --json "\$(u \$n)" >$s/\$n.nmap
done
qemu-img convert -f raw -O qcow2 "\$(u pv0000)" $s/pv0000.qcow2
qemu-img compare -f qcow2 -F raw $s/pv0000.qcow2 $s/img/pv0000 >$s/qcow2.cmp
qemu-io -f raw -c 'write -P 0x55 1M 64k' -c flush "\$(u pv0000)" >$s/qemu-io.out
qemu-img compare -f raw -F raw "\$(u pv0000)" $s/pv0000.written >$s/written.cmp
EOF
"$nbdkit" -U - "$plugin" spec="$s/farm.conf" --run "bash $s/run.sh \"\$unixsocket\"" 2>"$s/nbdkit.err" ||
  ff_die "qemu against the plugin failed: $(tail -5 "$s/nbdkit.err")"
"$py" - "$s" "$s/img" <<'PY' || ff_die "qemu sees something else than the farm"
import json, os, sys
s, img = sys.argv[1:]
bad = []
names = sorted(os.listdir(img))
for n in names:
    info = json.load(open(f"{s}/{n}.info"))
    size = os.path.getsize(f"{img}/{n}")
    if info["format"] != "raw" or info["virtual-size"] != size:
        bad.append(f"{n}: qemu-img info {info['format']} {info['virtual-size']}")
    if "Images are identical" not in open(f"{s}/{n}.cmp").read():
        bad.append(f"{n}: qemu-img compare: {open(f'{s}/{n}.cmp').read()}")
    q = [(e["start"], e["start"] + e["length"]) for e in json.load(open(f"{s}/{n}.qmap")) if e["data"]]
    m = [(e["offset"], e["offset"] + e["length"]) for e in json.load(open(f"{s}/{n}.nmap")) if not e["type"] & 1]
    if q != m:
        bad.append(f"{n}: qemu-img map data {q[:4]} != nbdinfo --map data {m[:4]}")
for f, what in (("qcow2.cmp", "qcow2 copy"), ("written.cmp", "after qemu-io's write")):
    if "Images are identical" not in open(f"{s}/{f}").read():
        bad.append(f"{what}: {open(f'{s}/{f}').read()}")
print("\n".join(bad) or f"qemu-img info/compare/map agree on {len(names)} exports; "
      "qcow2 convert and a qemu-io write check out")
sys.exit(1 if bad else 0)
PY
echo "PASS: qemu-img and qemu-io see the farm's bytes"
