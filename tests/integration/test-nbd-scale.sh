#!/usr/bin/env bash
# 1024 exports from one nbdkit process with --threads 1, as a VM with
# 1024 disks uses it (docs/guest.md, "1024 disks"; docs/nbd.md):
#   - with `ulimit -n` 2112 (2N+64), soft and hard, 1024 libnbd
#     connections, one per export, are all open at once and every export
#     reads as the manifest says (tests/lib/nbd-many.py); the stats file
#     counts one read on each;
#   - nbdinfo --list shows all 1024;
#   - a soft limit below 2N+64 is raised by the plugin toward the hard one;
#   - a hard limit below 2N+64 stops nbdkit at start with an error naming
#     the limit, N and the number needed (not a silent partial farm).
# usage: test-nbd-scale.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"

bin=${1:?usage: test-nbd-scale.sh FUSEFARM}
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
py=/usr/bin/python3 # Debian's: python3-libnbd is not on other pythons' path
ff_require nbdkit nbdinfo
"$py" -c 'import nbd' 2>/dev/null ||
  ff_die "$py cannot import nbd: install python3-libnbd (scripts/deps.sh)"
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
ff_env_init # scratch dir and cleanup trap only
s=$FF_SCRATCH
n=1024
need=$((2 * n + 64))
hard=$(ulimit -Hn)
[[ $hard == unlimited ]] || ((hard >= need)) ||
  ff_die "this shell's hard fd limit $hard is below $need: cannot run the test"

cat >"$s/farm.conf" <<'CONF'
# 1024 devices of every kind: 400 two-PV VGs with a duplicate-pv VG among
# them, orphans, blanks and signatures.
seed = 1024; device_size = "16M";
vgs = ({ count = 399; pvs = 2; lvs = ({ fill = 0.5; }); },
       { name = "dup"; pvs = 1; damage = "duplicate-pv"; });
orphans = ({ count = 100; });
blanks = ({ count = 100; });
signatures = ({ count = 12; type = "gpt"; }, { count = 12; type = "ext4"; });
CONF
"$bin" manifest "$s/farm.conf" >"$s/manifest.json"
got=$("$py" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$s/manifest.json")
((got == n)) || ff_die "the test farm has $got devices, not $n"

# 1. 1024 connections within ulimit -n 2112.
start=$(date +%s.%N)
(
  ulimit -n "$need" # soft and hard
  exec "$nbdkit" --threads 1 -U - "$plugin" spec="$s/farm.conf" stats="$s/stats.json" \
    --run "[ \"\$(ulimit -Hn)\" = $need ] || { echo 'ulimit -Hn not set'; exit 1; }
           $py $here/../lib/nbd-many.py \"\$unixsocket\" $s/manifest.json &&
           nbdinfo --list --json \"\$uri\" >$s/list.json"
) >"$s/many.out" 2>"$s/nbdkit.err" ||
  ff_die "1024 connections failed: $(cat "$s/many.out"; tail -5 "$s/nbdkit.err")"
took=$("$py" -c "print(f'{$(date +%s.%N) - $start:.1f}')")
cat "$s/many.out"
"$py" - "$s/list.json" "$s/stats.json" "$n" <<'PY' || ff_die "list or stats incomplete"
import json, sys
n = int(sys.argv[3])
lst = json.load(open(sys.argv[1]))["exports"]
st = json.load(open(sys.argv[2]))
reads = [d["reads"] for d in st["devices"]]
print(f"nbdinfo --list: {len(lst)} exports; stats: {len(reads)} devices, "
      f"{sum(reads)} reads, each read {set(reads)} time(s)")
sys.exit(0 if len(lst) == n and len(reads) == n and set(reads) == {1} else 1)
PY
ff_log "1024 exports, 1024 connections, ulimit -n $need: $took s"

# 2. A low soft limit is raised (the hard one allows it).
(
  ulimit -Sn 1000
  exec "$nbdkit" --threads 1 -U - "$plugin" spec="$s/farm.conf" \
    --run "nbdinfo --list --json \"\$uri\" >$s/list2.json"
) 2>"$s/raised.err" || ff_die "nbdkit did not raise a soft limit of 1000: $(cat "$s/raised.err")"
"$py" -c 'import json,sys; sys.exit(0 if len(json.load(open(sys.argv[1]))["exports"]) == 1024 else 1)' \
  "$s/list2.json" || ff_die "after raising the soft limit, not all 1024 exports are listed"

# 3. A hard limit too low: a clear error, a non-zero exit, nothing served.
if (
  ulimit -n 1000 # soft and hard
  exec "$nbdkit" --threads 1 -U - "$plugin" spec="$s/farm.conf" --run 'touch '"$s"'/served'
) 2>"$s/low.err"; then
  ff_die "nbdkit started with ulimit -n 1000 for 1024 exports"
fi
[[ ! -e $s/served ]] || ff_die "nbdkit served with too few file descriptors"
grep -q "file descriptor limit too low: 1024 exports need 2112 (2 per export + 64) but ulimit -n is 1000 and the hard limit 1000" \
  "$s/low.err" || ff_die "unclear error for a low fd limit: $(cat "$s/low.err")"
ff_log "ulimit -n 1000: $(grep -o 'file descriptor limit too low.*' "$s/low.err" | head -1)"
echo "PASS: 1024 exports to 1024 connections with --threads 1 within 2N+64 fds"
