#!/usr/bin/env bash
# Real lvm2 over NBD on this host (no kernel nbd here): the plugin serves
# the farm, one nbdfuse mount per export turns each into a file, a loop
# device per file, and lvm in the fenced env (tests/lib/lvm-env.sh):
#   - pvs, vgs, lvs match `fusefarm manifest` exactly
#     (tests/lib/check-lvm-vs-manifest.py), stderr clean;
#   - vgck passes; lvm's own writes (vgchange --addtag, lvcreate) go
#     through NBD into the overlay and lvm reads them back; the plugin's
#     stats file counts lvm's reads and writes.
# usage: test-nbd-lvm.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"
# shellcheck source=../lib/farm.sh
. "$here/../lib/farm.sh"

bin=${1:?usage: test-nbd-lvm.sh FUSEFARM}
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
py=/usr/bin/python3
ff_require nbdkit nbdfuse fusermount3 mountpoint python3
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
ff_env_init
s=$FF_SCRATCH
sock=$s/nbd.sock

cat >"$s/farm.conf" <<'CONF'
# smoke.conf's VG, a 3-PV VG with 2 mdas per PV, a 1-PV VG, an orphan, a
# blank and a gpt disk: 9 devices.
seed = 42; device_size = "64M";
vgs = ({ name = "smoke"; pvs = 2;
         lvs = ({ name = "lin"; size = "8M"; },
                { name = "str"; type = "striped"; stripes = 2;
                  stripe_size = "64K"; size = "16M"; }); },
       { name = "multi"; pvs = 3; mda_copies = 2;
         lvs = ({ name = "s3"; type = "striped"; stripes = 3; size = "24M"; },
                { name = "big"; fill = 0.5; }); },
       { name = "one"; pvs = 1; lvs = ({ fill = 0.25; }); });
orphans = ({ count = 1; });
blanks = ({ count = 1; });
signatures = ({ count = 1; type = "gpt"; });
CONF
"$bin" manifest "$s/farm.conf" >"$s/manifest.json"
mapfile -t names < <("$py" -c '
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    print(d["name"])' "$s/manifest.json")

nbdkit_pid=
fuse_pids=()
teardown() {
  local n p
  ff_loop_detach_all # loops hold the nbdfuse files open
  for n in "${names[@]}"; do
    if mountpoint -q "$s/fuse/$n"; then
      fusermount3 -u "$s/fuse/$n" 2>/dev/null || fusermount3 -uz "$s/fuse/$n" 2>/dev/null || true
    fi
  done
  for p in "${fuse_pids[@]}" $nbdkit_pid; do
    kill "$p" 2>/dev/null || true
    ff_wait_until 30 gone "$p" || kill -9 "$p" 2>/dev/null || true
  done
  fuse_pids=()
  nbdkit_pid=
}
ff_on_cleanup teardown

# gone PID: PID (a child of this shell, or not) has exited.
gone() {
  ! ff_alive "$1"
}

# ready FILE PID WHAT: FILE exists; fails the test if PID died first.
ready() {
  [[ -s $1 ]] && return 0
  ff_alive "$2" || ff_die "$3 died before it was ready"
  return 1
}

# wait_pidfile FILE PID WHAT: until FILE exists, or PID died.
wait_pidfile() {
  ff_wait_until 60 ready "$@" || ff_die "$3: not ready after 60 s"
}

"$nbdkit" -f -U "$sock" -P "$s/nbdkit.pid" --threads 1 "$plugin" \
  spec="$s/farm.conf" stats="$s/stats.json" stats-interval=0.2 2>"$s/nbdkit.err" &
nbdkit_pid=$!
wait_pidfile "$s/nbdkit.pid" "$nbdkit_pid" nbdkit

files=()
for n in "${names[@]}"; do
  mkdir -p "$s/fuse/$n"
  nbdfuse -P "$s/fuse/$n.pid" "$s/fuse/$n/$n" "nbd+unix:///$n?socket=$sock" \
    2>>"$s/nbdfuse.err" &
  fuse_pids+=("$!")
  files+=("$s/fuse/$n/$n")
done
for ((i = 0; i < ${#names[@]}; i++)); do
  wait_pidfile "$s/fuse/${names[i]}.pid" "${fuse_pids[i]}" "nbdfuse ${names[i]}"
done
mapfile -t loops < <(ff_loop_attach "${files[@]}")
((${#loops[@]} == ${#names[@]})) || ff_die "attached ${#loops[@]} of ${#names[@]} devices"
paste -d' ' <(printf '%s\n' "${loops[@]}") <(printf '%s\n' "${names[@]}") >"$s/map"
ff_log "${#names[@]} exports through nbdfuse on ${loops[0]}..${loops[-1]}"

common=(--reportformat json --units b --nosuffix)
ff_lvm pvs "${common[@]}" -o pv_name,vg_name,pv_uuid,dev_size,pe_start,pv_pe_count \
  >"$s/pvs.json" 2>"$s/pvs.err" || ff_die "pvs failed: $(head -5 "$s/pvs.err")"
ff_expect_clean_stderr "$s/pvs.err" pvs
ff_lvm vgs "${common[@]}" -o vg_name,vg_uuid,vg_extent_size,pv_count,lv_count,vg_seqno \
  >"$s/vgs.json" 2>"$s/vgs.err" || ff_die "vgs failed: $(head -5 "$s/vgs.err")"
ff_expect_clean_stderr "$s/vgs.err" vgs
ff_lvm lvs "${common[@]}" \
  -o vg_name,lv_name,lv_uuid,seg_start_pe,seg_size_pe,segtype,stripes,stripe_size,devices,seg_pe_ranges \
  >"$s/lvs.json" 2>"$s/lvs.err" || ff_die "lvs failed: $(head -5 "$s/lvs.err")"
ff_expect_clean_stderr "$s/lvs.err" lvs
python3 "$here/../lib/check-lvm-vs-manifest.py" "$s/manifest.json" "$s/map" \
  "$s/pvs.json" "$s/vgs.json" "$s/lvs.json" || ff_die "lvm over NBD disagrees with the manifest"
ff_lvm vgck >"$s/vgck.out" 2>&1 || { cat "$s/vgck.out" >&2; ff_die "vgck failed"; }
ff_expect_clean_stderr "$s/vgck.out" vgck
ff_log "pvs, vgs, lvs over NBD match the manifest; vgck clean"

# lvm writes through NBD and reads its writes back.
ff_lvm vgchange --addtag overnbd multi >"$s/w.out" 2>&1 || { cat "$s/w.out" >&2; ff_die "vgchange --addtag failed"; }
ff_lvm lvcreate --driverloaded n -an -Zn -L 4M -n added one >"$s/w.out" 2>&1 ||
  { cat "$s/w.out" >&2; ff_die "lvcreate failed"; }
ff_lvm vgs --noheadings -o vg_name,vg_tags,lv_count multi one >"$s/after" 2>/dev/null
read -r v1 t1 c1 <<<"$(sed -n 1p "$s/after")"
read -r v2 c2 <<<"$(sed -n 2p "$s/after")"
[[ $v1 == multi && $t1 == overnbd && $c1 == 2 && $v2 == one && $c2 == 2 ]] ||
  ff_die "lvm does not read back its writes: $(cat "$s/after")"
# stats_show_io: the plugin's stats file (rewritten every 0.2 s) counts
# lvm's reads and writes.
stats_show_io() {
  "$py" - "$s/stats.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
print(f"plugin stats: {t['reads']} reads, {t['writes']} writes from lvm over NBD")
sys.exit(0 if t["reads"] > 0 and t["writes"] > 0 else 1)
PY
}
ff_wait_until 60 stats_show_io >"$s/stats.out" || {
  tail -1 "$s/stats.out" >&2
  ff_die "the plugin's stats miss lvm's I/O"
}
tail -1 "$s/stats.out"
echo "PASS: real lvm over NBD sees the manifest's farm and its own writes"
