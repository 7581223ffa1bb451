#!/usr/bin/env bash
# One farm from three nbdkit servers over TCP (loopback here; one host
# each in real use), shard=0/3, 1/3, 2/3, the way docs/nbd.md shows:
#   - each lists exactly the devices whose index is K modulo 3, and
#     together they list the whole farm once, with the descriptions one
#     server gives;
#   - an export read from each server equals its `fusefarm gen` image;
#   - a server refuses another shard's device, naming the right shard;
#   - each server's stats file lists only its own devices.
# usage: test-nbd-shard.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"

bin=${1:?usage: test-nbd-shard.sh FUSEFARM}
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
py=/usr/bin/python3
ff_require nbdkit nbdinfo nbdcopy cmp
[[ -f $plugin && -x $nbdkit ]] || ff_die "$plugin or $nbdkit: not built (cmake --build)"
ff_env_init # scratch dir and cleanup trap only
s=$FF_SCRATCH
spec=$here/../../configs/damaged.conf
m=3

"$bin" manifest "$spec" >"$s/manifest.json"
"$bin" gen -q "$spec" -o "$s/img"

# gone PID: our child PID has exited (reaped or a zombie).
gone() {
  local st
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 0
  [[ ${st%% *} == Z ]]
}

pids=()
stop_servers() {
  local p
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    ff_wait_until 30 gone "$p" || kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  pids=()
}
ff_on_cleanup stop_servers

# Free loopback ports, one per server.
mapfile -t ports < <("$py" - "$m" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in socks:
    x.bind(("127.0.0.1", 0))
for x in socks:
    print(x.getsockname()[1])
PY
)
for ((k = 0; k < m; k++)); do
  # -f: in the background but with our stderr, for the messages.
  "$nbdkit" -f -i 127.0.0.1 -p "${ports[k]}" -P "$s/nbdkit$k.pid" --threads 1 "$plugin" \
    spec="$spec" shard="$k/$m" stats="$s/stats$k.json" 2>"$s/nbdkit$k.err" &
  pids+=("$!")
done
# listening K: shard K wrote its pidfile; fails the test if it died first.
listening() {
  [[ -s $s/nbdkit$1.pid ]] && return 0
  gone "${pids[$1]}" && ff_die "shard $1/$m did not start: $(cat "$s/nbdkit$1.err")"
  return 1
}
for ((k = 0; k < m; k++)); do
  ff_wait_until 60 listening "$k" || ff_die "shard $k/$m: no pidfile after 60 s"
done
"$nbdkit" -U - "$plugin" spec="$spec" --run 'nbdinfo --list --json "$uri"' >"$s/one.json" ||
  ff_die "a single server did not list the farm"

for ((k = 0; k < m; k++)); do
  nbdinfo --list --json "nbd://127.0.0.1:${ports[k]}" >"$s/list$k.json" ||
    ff_die "nbdinfo --list of shard $k failed"
done
"$py" - "$s" "$m" <<'PY' || ff_die "the shards do not add up to the farm"
import json, sys
s, m = sys.argv[1], int(sys.argv[2])
devs = json.load(open(f"{s}/manifest.json"))["devices"]
one = {e["export-name"]: e.get("description") for e in json.load(open(f"{s}/one.json"))["exports"]}
seen, bad = {}, []
for k in range(m):
    names = [e["export-name"] for e in json.load(open(f"{s}/list{k}.json"))["exports"]]
    want = [d["name"] for d in devs if d["index"] % m == k]
    if sorted(names) != sorted(want):
        bad.append(f"shard {k}/{m} lists {names}, want {want}")
    for e in json.load(open(f"{s}/list{k}.json"))["exports"]:
        if e["export-name"] in seen:
            bad.append(f"{e['export-name']} listed by shards {seen[e['export-name']]} and {k}")
        seen[e["export-name"]] = k
        if e.get("description") != one.get(e["export-name"]):
            bad.append(f"{e['export-name']}: description {e.get('description')!r} != {one.get(e['export-name'])!r}")
if sorted(seen) != sorted(one):
    bad.append(f"together: {len(seen)} exports, one server: {len(one)}")
print("\n".join(bad) or f"{m} shards list {len(seen)} exports, each once, as one server does")
sys.exit(1 if bad else 0)
PY

# One export from each shard, byte for byte; a foreign name refused.
for ((k = 0; k < m; k++)); do
  name=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["exports"][-1]["export-name"])' "$s/list$k.json")
  nbdcopy "nbd://127.0.0.1:${ports[k]}/$name" "$s/$name.copy" ||
    ff_die "nbdcopy $name from shard $k failed"
  cmp "$s/$name.copy" "$s/img/$name" || ff_die "$name from shard $k differs from its image"
done
name=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["exports"][0]["export-name"])' "$s/list1.json")
if nbdinfo "nbd://127.0.0.1:${ports[0]}/$name" >/dev/null 2>"$s/foreign.err"; then
  ff_die "shard 0 served $name of shard 1"
fi
# The client has its answer; the server's log line may follow it.
ff_wait_until 60 grep -q "export '$name' (device [0-9]*) is served by shard 1/$m, not by this server (shard=0/$m)" \
  "$s/nbdkit0.err" || ff_die "unclear refusal: $(cat "$s/nbdkit0.err" "$s/foreign.err")"

stop_servers
"$py" - "$s" "$m" <<'PY' || ff_die "a shard's stats list other devices"
import json, sys
s, m = sys.argv[1], int(sys.argv[2])
for k in range(m):
    st = json.load(open(f"{s}/stats{k}.json"))
    idx = [d["index"] for d in st["devices"]]
    assert idx and all(i % m == k for i in idx), (k, idx)
    assert st["totals"]["reads"] > 0, k
print(f"each shard's stats file lists only its devices")
PY
echo "PASS: $m shards over TCP serve the farm once, each its own devices"
