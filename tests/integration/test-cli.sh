#!/usr/bin/env bash
# test-cli.sh: bad command lines and bad inputs, for every command
# (fusefarm/ff-cli.h, README "Exit status"):
#   - an unknown option exits 2 and names it, with "Try 'fusefarm CMD
#     --help'."; so do a missing option argument (naming the option), a
#     bad number (naming option and value), too many arguments, an
#     unknown command;
#   - a file of one kind given where another is expected (a farm spec to
#     run, a scenario to mount, a spec as --profile, a run document as a
#     spec, ...) is named as what it is, exit 2;
#   - a missing input file (spec, profile, scenario, overlay, run
#     document, stats file) exits 2 naming the path;
#   - the whole scenario is checked before anything is mounted
#     (fusefarm/run-check.h): an lvm.conf key of the matrix that the lvm
#     build does not list (exit 2, file:line, the key, the build's version
#     and "did you mean"), a profile of a fusefarm/profile axis that does
#     not load (exit 2, naming it), a fence value that does not fit (named);
#     `run --check` and `check SCENARIO` print the configurations, and
#     every shipped scenario passes them;
#   - a refused command creates nothing: no output dir or file, no fence
#     dir, no scratch dir in TMPDIR, no mount, no loop device.
# Needs the system's lvm (its list of settings) and no loop device, no
# FUSE mount (nothing is mounted); nbdkit for the plugin's spec= and
# profile=.
#
# usage: test-cli.sh FUSEFARM
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh" # ff_die, ff_log only

bin=${1:?usage: test-cli.sh FUSEFARM}
top=$(cd "${FF_SOURCE_DIR:-$here/../..}" && pwd)
cfg=$top/configs
data=$top/tests/data

s=$(mktemp -d "${TMPDIR:-/tmp}/test-cli.XXXXXX")
trap 'rm -rf "$s"' EXIT
mkdir "$s/mnt" "$s/tmp"
cd "$s"
checked=0

# expect RC TEXT -- ARGS...: `fusefarm ARGS` exits RC and its stderr holds
# TEXT (and, for a usage error, the --help hint of its command).
expect() {
  local want=$1 text=$2 rc=0
  shift 3
  TMPDIR=$s/tmp "$bin" "$@" >"$s/stdout" 2>"$s/err" </dev/null || rc=$?
  ((rc == want)) ||
    ff_die "fusefarm $*: exit $rc, expected $want: $(head -c 400 "$s/err")"
  grep -qF -- "$text" "$s/err" ||
    ff_die "fusefarm $*: stderr lacks '$text': $(head -c 400 "$s/err")"
  checked=$((checked + 1))
}

# usage RC TEXT CMD ARGS...: as expect, with "Try 'fusefarm CMD --help'."
usage() {
  local want=$1 text=$2
  shift 2
  expect "$want" "$text" -- "$@"
  grep -qxF "Try 'fusefarm $1 --help'." "$s/err" ||
    ff_die "fusefarm $*: no --help hint: $(head -c 400 "$s/err")"
}

ff_log "unknown options, for every command"
commands="gen manifest check mount attach detach fence profile stats vm run report"
for c in $commands; do
  usage 2 "fusefarm $c: unknown option '--bogus'" "$c" --bogus
done
usage 2 "fusefarm gen: unknown option '-x'" gen -qx -o "$s/out"
usage 2 "fusefarm gen: unknown option '-x'" gen --force -xq -o "$s/out"
usage 2 "fusefarm profile: unknown option '-z'" profile -z MNT
expect 2 "fusefarm: unknown option '--bogus'" -- --bogus
expect 2 "fusefarm: unknown command 'nosuchcmd' (commands: gen, manifest," -- nosuchcmd
grep -qxF "Try 'fusefarm --help'." "$s/err" || ff_die "nosuchcmd: no --help hint"
for c in $commands; do
  grep -qF " $c" "$s/err" || ff_die "nosuchcmd: command $c not listed: $(cat "$s/err")"
done
"$bin" --help >"$s/stdout" || ff_die "fusefarm --help failed"
grep -q "2 bad usage or" "$s/stdout" || ff_die "fusefarm --help states no exit-code rule"

ff_log "option arguments and values"
usage 2 "fusefarm gen: option '-o' needs an argument" gen -o
usage 2 "fusefarm manifest: option '--devices' needs an argument" manifest --devices
usage 2 "fusefarm mount: option '--profile' needs an argument" mount "$s/mnt" --profile
usage 2 "fusefarm attach: option '--state' needs an argument" attach "$s/mnt" --state
usage 2 "fusefarm detach: option '--state' needs an argument" detach "$s/mnt" --state
usage 2 "fusefarm fence: option '--dir' needs an argument" fence --dir
usage 2 "fusefarm vm: option '--disks' needs an argument" vm --disks
usage 2 "fusefarm run: option '--json' needs an argument" run --json
usage 2 "fusefarm report: option '--top' needs an argument" report x.json --top
usage 2 "fusefarm gen: option '--force' takes no argument" gen --force=1 -o "$s/out"
usage 2 "fusefarm stats: option '--reset' takes no argument" stats --re=1 MNT
usage 2 "fusefarm vm: ambiguous option '--c' (--cache, --config, --csv)" vm --c 1
usage 2 "fusefarm manifest: --devices -3: expected a whole number from 1 to 1000000" manifest --devices -3
usage 2 "fusefarm manifest: --devices 2x: expected a whole number" manifest --devices 2x
usage 2 "fusefarm mount: --threads 0: expected a whole number from 1 to 64" mount --threads 0 "$s/mnt"
usage 2 "fusefarm mount: --devices abc: expected a whole number" mount --devices abc "$s/mnt"
usage 2 "fusefarm run: --top abc: expected a whole number" run --top abc
usage 2 "fusefarm report: --top abc: expected a whole number" report "$data/run-sample.json" --top abc
usage 2 "fusefarm vm: --timeout 1.5: expected a whole number from 1 to 86400" vm --timeout 1.5
usage 2 "fusefarm vm: --boot grub: expected initramfs or systemd" vm --boot grub
usage 2 "fusefarm fence: --config 0: expected a whole number from 1" \
  fence --dir "$s/fence" --lvm-version 2.03.16 --scenario "$cfg/scenarios/ci-small.conf" --config 0

ff_log "this machine cannot run it: exit 77 (not root), with and without --expect"
# fusefarm run as an unprivileged user: 77, distinct from 1 (a failed run)
# and 125 (--expect could not judge: git bisect's skip); docs/ci.md.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
  nogroup=$(id -gn nobody)
  for extra in "" "--expect pvs<100"; do
    rc=0
    # shellcheck disable=SC2086 # $extra is one option and its value, or none
    (cd / && setpriv --reuid nobody --regid "$nogroup" --clear-groups -- \
      "$bin" run "$cfg/scenarios/ci-small.conf" --json "$s/nobody.json" --no-svg \
      $extra) >"$s/stdout" 2>"$s/err" </dev/null || rc=$?
    ((rc == 77)) || ff_die "run as nobody ${extra:+($extra) }: exit $rc, expected 77: $(head -c 400 "$s/err")"
    grep -qxF "fusefarm run: needs root (loop devices, FUSE, a private mount namespace)" "$s/err" ||
      ff_die "run as nobody: stderr lacks 'needs root': $(head -c 400 "$s/err")"
    [ ! -e "$s/nobody.json" ] || ff_die "run as nobody wrote $s/nobody.json"
    checked=$((checked + 1))
  done
  "$bin" run --help | grep -q "77 this" || ff_die "run --help does not state exit 77"
else
  ff_die "the exit-77 check needs root, setpriv (util-linux) and a user nobody"
fi

ff_log "device-mapper mode and scale (fusefarm run --dm, --devices; dm, fusefarm/dm)"
usage 2 "fusefarm run: --dm yes: expected auto (real when the kernel has device-mapper), real or none" run --dm yes
usage 2 "fusefarm run: --devices 0: expected a whole number from 1" run --devices 0
usage 2 "fusefarm run: --repeat 0: expected a whole number from 1 to 1000" run --repeat 0
printf 'name = "d"; spec = "%s"; dm = "yes"; workloads = ({ type = "pvs"; });\n' "$cfg/smoke.conf" >"$s/dm-key.conf"
expect 2 "fusefarm run: $s/dm-key.conf:1: dm: unknown device-mapper mode 'yes' (expected \"auto\"" -- run "$s/dm-key.conf"
printf 'name = "d"; spec = "%s"; matrix = ({ key = "fusefarm/dm"; values = ["none", "rael"]; });\nworkloads = ({ type = "pvs"; });\n' \
  "$cfg/smoke.conf" >"$s/dm-axis.conf"
expect 2 "fusefarm run: $s/dm-axis.conf:1: matrix.[0].values: value 1 'rael' does not fit fusefarm/dm (expected \"auto\", \"real\" or \"none\")" -- run "$s/dm-axis.conf"
sed -i 's/"rael"/"real"/' "$s/dm-axis.conf"
expect 2 "fusefarm run: --dm none and the scenario's fusefarm/dm axis: give one" -- run "$s/dm-axis.conf" --dm none
expect 2 "fusefarm vm: the fusefarm/dm axis has \"none\": the guest always activates with real device-mapper" -- vm "$s/dm-axis.conf"
printf 'name = "d"; spec = "%s"; matrix = ({ key = "fusefarm/devices"; values = [2, 4]; });\nworkloads = ({ type = "pvs"; });\n' \
  "$cfg/smoke.conf" >"$s/dev-axis.conf"
expect 2 "fusefarm run: --devices 3 and the scenario's fusefarm/devices axis: give one" -- run "$s/dev-axis.conf" --devices 3
# real asked of a kernel without device-mapper: refused before anything
# runs (a kernel with it runs the scenario: not checked here)
if ! grep -qw device-mapper /proc/misc; then
  expect 2 "fusefarm run: --dm real, but this kernel's device-mapper cannot be used" -- run "$cfg/scenarios/ci-small.conf" --dm real
  expect 2 "fusefarm run: the fusefarm/dm axis's \"real\", but this kernel's device-mapper cannot be used" -- run "$s/dm-axis.conf"
fi

ff_log "operands"
usage 2 "fusefarm gen: missing -o DIR" gen
usage 2 "fusefarm mount: missing MNT" mount
usage 2 "fusefarm attach: missing MNT" attach
usage 2 "fusefarm profile: missing MNT" profile
usage 2 "fusefarm report: missing FILE.json" report
for c in check manifest run vm attach detach stats report; do
  usage 2 "fusefarm $c: too many arguments (from 'b'" "$c" a b
done
usage 2 "fusefarm gen: too many arguments (from 'b')" gen a b -o "$s/out"
usage 2 "fusefarm mount: too many arguments (from 'c'" mount a b c
usage 2 "fusefarm profile: too many arguments (from 'c')" profile a b c

ff_log "a file of another kind"
smoke=$cfg/smoke.conf ci=$cfg/scenarios/ci-small.conf ssd=$cfg/profiles/ssd.conf
expect 2 "fusefarm run: $smoke: this is a farm spec, not a scenario (serve it with fusefarm mount, or name it in a scenario: spec = \"$smoke\";)" -- run "$smoke"
expect 2 "fusefarm run: $ssd: this is a profile, not a scenario" -- run "$ssd"
expect 2 "fusefarm run: $data/run-sample.json: this is a run document (JSON), not a scenario (render it with fusefarm report)" -- run "$data/run-sample.json"
expect 2 "fusefarm mount: $ci: this is a scenario, not a farm spec (run it with fusefarm run)" -- mount "$ci" "$s/mnt"
expect 2 "fusefarm mount: $smoke: this is a farm spec, not a profile" -- mount --profile "$smoke" "$s/mnt"
expect 2 "fusefarm mount: $ssd: this is a profile, not a farm spec (give it with --profile" -- mount "$ssd" "$s/mnt"
expect 2 "fusefarm manifest: $ssd: this is a profile, not a farm spec" -- manifest "$ssd"
expect 2 "fusefarm gen: $data/run-sample.json: this is a run document (JSON), not a farm spec" -- gen "$data/run-sample.json" -o "$s/out"
expect 2 "fusefarm fence: $smoke: this is a farm spec, not a scenario" -- \
  fence --dir "$s/fence" --lvm-version 2.03.16 --scenario "$smoke" --config 1
expect 2 "fusefarm vm: $ssd: this is a profile, not a scenario or farm spec" -- vm "$ssd"
expect 2 "fusefarm profile: $smoke: this is a farm spec, not a profile" -- profile "$s/mnt" "$smoke"
expect 2 "fusefarm report: $smoke: this is a farm spec, not a run document" -- report "$smoke" --csv "$s/x.csv"
expect 2 "fusefarm stats: $smoke: this is a farm spec, not a stats snapshot" -- stats "$smoke"
# The nbdkit plugin's spec= and profile= go through the same loaders.
plugin=${FF_BUILD_DIR:?FF_BUILD_DIR: the build tree}/nbd-plugin/nbdkit-fusefarm-plugin.so
nbdkit=$FF_BUILD_DIR/nbd-plugin/ff-nbdkit # nbdkit, with ASan preloaded in a sanitizer build
ff_require nbdkit
for kv in "spec=$ci|$ci: this is a scenario, not a farm spec" \
  "profile=$smoke|$smoke: this is a farm spec, not a profile"; do
  rc=0
  "$nbdkit" -U - "$plugin" "${kv%%|*}" --run true 2>"$s/err" || rc=$?
  ((rc != 0)) || ff_die "nbdkit ${kv%%|*}: accepted"
  grep -qF -- "${kv#*|}" "$s/err" || ff_die "nbdkit ${kv%%|*}: $(cat "$s/err")"
  checked=$((checked + 1))
done
# Not clearly another kind: the plain unknown-key message.
printf 'seed = 1;\ncolour = "red";\n' >"$s/typo.conf"
expect 2 "fusefarm check: $s/typo.conf:2: colour: unknown key (expected one of: seed," -- check "$s/typo.conf"

ff_log "the whole scenario, checked before anything is mounted"
ff_require lvm
# (an lvm build that a scenario names as a ref is never built here)
export FF_LVM_CACHE=$s/lvm-cache
printf 'name = "k"; spec = "%s";\nmatrix = ({ key = "fusefarm/devices"; values = [2]; },\n  { key = "global/use_aoi"; values = [0, 1]; });\nworkloads = ({ type = "pvs"; });\n' \
  "$smoke" >"$s/key.conf"
expect 2 "fusefarm run: $s/key.conf:3: matrix.[1].key: global/use_aoi: lvm" -- run "$s/key.conf" --out "$s/out"
grep -qE "global/use_aoi: lvm [0-9]+\.[0-9]+\.[0-9]+ has no such setting \(did you mean global/use_aio\?\)" "$s/err" ||
  ff_die "use_aoi: no version or suggestion: $(cat "$s/err")"
expect 2 "did you mean global/use_aio?" -- run "$s/key.conf" --check
expect 2 "fusefarm check: $s/key.conf:3: matrix.[1].key: global/use_aoi: lvm" -- check "$s/key.conf"
# fusefarm vm checks it the same way before anything boots: no run
# directory, no guest image, no qemu
expect 2 "fusefarm vm: $s/key.conf:3: matrix.[1].key: global/use_aoi: lvm" -- vm "$s/key.conf" --out "$s/vmout"
[[ ! -e $s/vmout ]] || ff_die "vm with a misspelt key made its run directory $s/vmout"
sed -i 's/use_aoi/use_aio/' "$s/key.conf"
TMPDIR=$s/tmp "$bin" run "$s/key.conf" --check >"$s/stdout" 2>"$s/err" ||
  ff_die "run --check with global/use_aio: $(cat "$s/err")"
printf 'name = "p"; spec = "%s";\nmatrix = ({ key = "fusefarm/profile";\n  values = ["ideal", "nosuch-profile.conf"]; });\nworkloads = ({ type = "pvs"; });\n' \
  "$smoke" >"$s/prof.conf"
expect 2 "fusefarm run: $s/prof.conf:3: matrix.[0].values: value 1: $s/nosuch-profile.conf: cannot read the profile" -- run "$s/prof.conf" --out "$s/out"
sed -i 's|nosuch-profile.conf|builtin:nosuch|' "$s/prof.conf"
expect 2 "fusefarm run: $s/prof.conf:3: matrix.[0].values: value 1: builtin:nosuch: no such built-in profile" -- run "$s/prof.conf" --check
printf 'name = "f"; spec = "%s";\nmatrix = ({ key = "fusefarm/fence"; values = ["none", "devicefile"]; });\nworkloads = ({ type = "pvs"; });\n' \
  "$smoke" >"$s/fence.conf"
expect 2 "fusefarm run: $s/fence.conf:2: matrix.[0].values: value 1 'devicefile' does not fit fusefarm/fence (expected \"none\", \"devicesfile\", \"devicesfile-all\", \"devicesfile-used\" or \"filter\")" -- run "$s/fence.conf"
# --check: the configurations, numbered as the run's table numbers them,
# and what the run would time; `fusefarm check` does the same
for cmd in "run ci-small --check" "check $ci"; do
  # shellcheck disable=SC2086
  TMPDIR=$s/tmp "$bin" $cmd >"$s/stdout" 2>"$s/err" || ff_die "fusefarm $cmd: exit $?: $(cat "$s/err")"
  if ! { grep -qx " *1  profile=ideal" "$s/stdout" &&
    grep -qx " *2  profile=fixed-20ms.conf" "$s/stdout" &&
    [[ $(grep -c '^ *[0-9][0-9]*  ' "$s/stdout") == 2 ]] &&
    grep -qE "^about [0-9]+ timed commands" "$s/stdout"; }; then
    ff_die "fusefarm $cmd: not 2 configurations and an estimate: $(cat "$s/stdout")"
  fi
  checked=$((checked + 1))
done
# Every shipped scenario passes --check with the system's lvm (--lvm lvm:
# the builds some of them name are git refs, built elsewhere).  A host
# without device-mapper refuses those that need it (real activation, LV
# targets: they run with fusefarm vm), and says so.
for f in "$cfg"/scenarios/*.conf; do
  rc=0
  TMPDIR=$s/tmp "$bin" run "$f" --check --lvm lvm >"$s/stdout" 2>"$s/err" || rc=$?
  if ((rc != 0)); then
    if ! { ((rc == 2)) && ! grep -qw device-mapper /proc/misc &&
      grep -qE "device-mapper cannot be used|need device-mapper, which this kernel lacks" "$s/err"; }; then
      ff_die "run $f --check: exit $rc: $(cat "$s/err")"
    fi
    ff_log "  $(basename "$f"): needs device-mapper (not on this host)"
  else
    grep -qE "^about [0-9]+ timed command" "$s/stdout" || ff_die "run $f --check: no estimate: $(cat "$s/stdout")"
  fi
  checked=$((checked + 1))
done

ff_log "missing input files"
none=$s/none
expect 2 "fusefarm check: $none.conf: cannot read the spec: No such file or directory" -- check "$none.conf"
expect 2 "fusefarm manifest: $none.conf: cannot read the spec" -- manifest "$none.conf"
expect 2 "fusefarm gen: $none.conf: cannot read the spec" -- gen "$none.conf" -o "$s/out"
expect 2 "$none.ovl: No such file or directory" -- gen "$smoke" -o "$s/out" --overlay "$none.ovl"
expect 2 "fusefarm mount: $none.conf: cannot read the spec" -- mount "$none.conf" "$s/mnt"
expect 2 "fusefarm mount: $none.conf: cannot read the profile" -- mount "$smoke" "$s/mnt" --profile "$none.conf"
expect 2 "$none.ovl: No such file or directory" -- mount "$smoke" "$s/mnt" --overlay "$none.ovl"
expect 2 "fusefarm run: $none.conf: cannot read the scenario" -- run "$none.conf"
expect 2 "fusefarm fence: $none.conf: cannot read the scenario" -- \
  fence --dir "$s/fence" --lvm-version 2.03.16 --scenario "$none.conf" --config 1
expect 2 "fusefarm vm: $none.conf is neither a scenario" -- vm "$none.conf"
expect 2 "fusefarm profile: $none.conf: No such file or directory" -- profile "$s/mnt" "$none.conf"
expect 2 "fusefarm report: $none.json: No such file or directory" -- report "$none.json" --svg "$s/x.svg"
expect 2 "fusefarm stats: $none: No such file or directory" -- stats "$none"

ff_log "nothing was created"
for p in "$s/out" "$s/fence" "$s/x.csv" "$s/x.svg" "$none.conf" "$none.ovl"; do
  [[ ! -e $p ]] || ff_die "a refused command created $p"
done
[[ -z $(ls -A "$s/tmp") ]] || ff_die "a refused command left $(ls -A "$s/tmp") in TMPDIR"
[[ -z $(ls -A "$s/mnt") ]] || ff_die "a refused command left $(ls -A "$s/mnt") in $s/mnt"
if grep -qF " $s/" /proc/self/mountinfo; then
  ff_die "a refused command mounted something: $(grep -F " $s/" /proc/self/mountinfo)"
fi
if command -v losetup >/dev/null &&
  losetup -l -n -O BACK-FILE 2>/dev/null | grep -qF "$s/"; then
  ff_die "a refused command attached a loop device"
fi
echo "test-cli: PASS ($checked refused command lines)"
