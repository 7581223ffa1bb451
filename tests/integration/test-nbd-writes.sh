#!/usr/bin/env bash
# Writes through the nbdkit plugin land in the overlay shared by every
# connection to an export (tests/lib/nbd-writes.py: two connections
# write, a third sees both; concurrent half-block writes; zero, trim, a
# cheap 4 GiB trim; a duplicate device shares its PV's writes), the stats
# file counts them, save-overlay keeps them at exit, and a new server with
# overlay= serves exactly what `fusefarm gen --overlay` writes.
# usage: test-nbd-writes.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"

bin=${1:?usage: test-nbd-writes.sh FUSEFARM}
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
py=/usr/bin/python3 # Debian's: python3-libnbd is not on other pythons' path
ff_require nbdkit nbdcopy cmp
"$py" -c 'import nbd' 2>/dev/null ||
  ff_die "$py cannot import nbd: install python3-libnbd (scripts/deps.sh)"
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
ff_env_init # scratch dir and cleanup trap only
s=$FF_SCRATCH

cat >"$s/farm.conf" <<'CONF'
seed = 5; device_size = "64M";
vgs = ({ name = "w"; pvs = 2; lvs = ({ fill = 0.5; }); },
       { name = "d"; pvs = 1; damage = "duplicate-pv"; });
orphans = ({ count = 1; device_size = "1T"; });
CONF
# pv0002: the PV of VG d, pv0003 its duplicate, pv0004 a 1 TiB orphan.

"$nbdkit" -U - "$plugin" spec="$s/farm.conf" stats="$s/stats.json" \
  stats-interval=0.2 save-overlay="$s/saved.ovl" \
  --run "$py $here/../lib/nbd-writes.py \"\$unixsocket\" pv0002 pv0003 pv0004" \
  2>"$s/nbdkit.err" || ff_die "writes over NBD failed: $(cat "$s/nbdkit.err")"

# The stats written at exit count the writes of each export.
"$bin" stats "$s/stats.json" >"$s/stats.txt" || ff_die "fusefarm stats cannot read the plugin's file"
"$py" - "$s/stats.json" <<'PY' || ff_die "the stats file does not count the writes"
import json, sys
st = json.load(open(sys.argv[1]))
dev = {d["name"]: d for d in st["devices"]}
assert st["format"] == "fusefarm-stats" and st["ndevs"] == 5, st["ndevs"]
assert sorted(dev) == ["pv0000", "pv0001", "pv0002", "pv0003", "pv0004"], sorted(dev)
w = dev["pv0002"]
print(f"pv0002: {w['writes']} writes ({w['bytes_written']} bytes), {w['reads']} reads; "
      f"pv0003: {dev['pv0003']['writes']} writes; in flight {st['inflight']}")
assert w["writes"] >= 600 and w["bytes_written"] >= 600 * 2048, w
assert w["reads"] >= 8 and dev["pv0003"]["writes"] == 1, dev["pv0003"]
assert dev["pv0000"]["reads"] == 0 and st["inflight"] == 0
assert w["errors"] == 0
PY
grep -q '^pv0002 ' "$s/stats.txt" || ff_die "fusefarm stats shows no pv0002 row: $(cat "$s/stats.txt")"

# The overlay saved at exit, served again and written by gen.
[[ -s $s/saved.ovl ]] || ff_die "save-overlay wrote nothing"
"$bin" gen -q "$s/farm.conf" --overlay "$s/saved.ovl" -o "$s/img"
"$nbdkit" -U - "$plugin" spec="$s/farm.conf" overlay="$s/saved.ovl" --run '
  set -e
  for n in pv0002 pv0003; do
    nbdcopy "nbd+unix:///$n?socket=$unixsocket" '"$s"'/$n.copy
  done' 2>"$s/nbdkit.err" || ff_die "serving the saved overlay failed: $(cat "$s/nbdkit.err")"
for n in pv0002 pv0003; do
  cmp "$s/$n.copy" "$s/img/$n" || ff_die "$n: overlay= serves other bytes than gen --overlay writes"
done
"$bin" gen -q "$s/farm.conf" -o "$s/plain"
cmp -s "$s/pv0002.copy" "$s/plain/pv0002" && ff_die "the saved overlay changed nothing"
# FUA on a device with a write cache (profile write_cache) writes the
# cache back: the plugin follows the write with a flush, counted as one;
# on a device without a cache a FUA write is only a write.
cat >"$s/wcache.conf" <<'CONF'
groups = ({ devices = "pv0000"; write_cache = true; });
CONF
"$nbdkit" -U - "$plugin" spec="$s/farm.conf" profile="$s/wcache.conf" \
  stats="$s/wstats.json" --run "$py - \"\$unixsocket\"" 2>"$s/nbdkit.err" <<'PY' ||
import nbd, sys
for name in ("pv0000", "pv0001"):
    h = nbd.NBD()
    h.set_export_name(name)
    h.connect_unix(sys.argv[1])
    assert h.can_flush() and h.can_fua(), name
    h.pwrite(b"x" * 4096, 1 << 20)  # cached: no flush
    h.pwrite(b"y" * 4096, 2 << 20, nbd.CMD_FLAG_FUA)
    h.shutdown()
PY
  ff_die "FUA writes over NBD failed: $(cat "$s/nbdkit.err")"
"$py" - "$s/wstats.json" <<'PY' || ff_die "a FUA write on a write-cached device was not followed by a flush"
import json, sys
dev = {d["name"]: d for d in json.load(open(sys.argv[1]))["devices"]}
c, w = dev["pv0000"], dev["pv0001"]
print(f"pv0000 (write cache): {c['writes']} writes, {c['flushes']} flushes; "
      f"pv0001: {w['writes']} writes, {w['flushes']} flushes")
assert (c["writes"], c["flushes"]) == (2, 1), c
assert (w["writes"], w["flushes"]) == (2, 0), w
PY

echo "PASS: writes shared by connections, counted, saved and served again; FUA writes back a write cache"
