#!/usr/bin/env bash
# The installed tree works on its own (issue 11 item 5):
#   - `cmake --install` into a DESTDIR under the scratch dir puts the
#     program, plugin, both man pages, the guest scripts, the in-guest
#     binaries and the configs where README.md "Install" says;
#   - the installed tree is then moved (a path baked at build time would
#     now be wrong) and every command below runs in a mount namespace
#     where the source and build trees are hidden under empty tmpfs
#     mounts, so the program can only use what was installed;
#   - `fusefarm --help`, `fusefarm vm --help`, `fusefarm vm --paths` (every
#     path inside the moved tree), `man -l` of both pages;
#   - `fusefarm run ci-small`: the installed scenario, found by name, runs
#     to completion with a complete run document, its scratch dir in
#     $TMPDIR;
#   - `fusefarm vm` boots 16 disks (guest/tests/farm16.conf) with the
#     installed guest scripts, ff-dmcheck and plugin: every dm table
#     matches the manifest, nothing left running, the run dir in $TMPDIR
#     (not in a sanitizer build, as test-vm in tests/run.sh);
#   - a data directory that is not there is a clear error naming it.
# The guest images are built or checked before this test by the ctest
# fixture guest/images (`fusefarm vm --prepare`, default cache
# /var/cache/fusefarm/guest), as for test-vm.sh; run by hand, the boot
# builds them on first use.
# usage: test-install.sh FUSEFARM  (FF_BUILD_DIR, FF_SOURCE_DIR: the trees)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh"

bin=${1:?usage: test-install.sh FUSEFARM}
bin=$(realpath "$bin")
src=$(realpath "${FF_SOURCE_DIR:-$here/../..}")
build=$(realpath "${FF_BUILD_DIR:-$(dirname "$(dirname "$bin")")}")
ff_require python3 unshare mount cmake man # man: man-db (scripts/deps.sh)
for t in qemu-system-x86_64 nbdkit cpio debugfs; do
  command -v $t >/dev/null || ff_die "$t missing (scripts/deps.sh installs it)"
done
ff_env_init
s=$FF_SCRATCH
case $s/ in
"$src"/* | "$build"/*) ff_die "the scratch dir $s is inside the trees this test hides" ;;
esac

# ---- install, then move the tree --------------------------------------------
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
[[ $prefix == /* ]] || ff_die "no CMAKE_INSTALL_PREFIX in $build/CMakeCache.txt"
DESTDIR=$s/dest cmake --install "$build" >"$s/install.out" 2>&1 ||
  { cat "$s/install.out" >&2; ff_die "cmake --install failed"; }
mv "$s/dest" "$s/moved"
root=$s/moved
p=$root$prefix
ff=$p/bin/fusefarm
for f in "$ff" "$p/share/man/man1/fusefarm.1" \
  "$p/share/man/man1/nbdkit-fusefarm-plugin.1" \
  "$p/share/fusefarm/guest/run-initramfs.sh" "$p/share/fusefarm/guest/lib.sh" \
  "$p/share/fusefarm/guest/build-initramfs.sh" "$p/share/fusefarm/guest/init.sh" \
  "$p/share/fusefarm/configs/scenarios/ci-small.conf" \
  "$p/share/fusefarm/configs/mixed-1000.conf" \
  "$p/share/fusefarm/configs/profiles/fixed-20ms.conf" \
  "$p/libexec/fusefarm/ff-dmcheck" "$p/libexec/fusefarm/ff-guestrun"; do
  [[ -s $f ]] || ff_die "not installed: ${f#"$root"}"
done
[[ -x $ff && -x $p/share/fusefarm/guest/run-initramfs.sh ]] ||
  ff_die "the program or the guest scripts are not executable"
plugin=$(find "$root" -name nbdkit-fusefarm-plugin.so)
[[ -n $plugin ]] || ff_die "the plugin was not installed under DESTDIR"
[[ ! -e $root$prefix/bin/ff-build-tree ]] || ff_die "the build tree's marker was installed"
cp "$src/guest/tests/farm16.conf" "$s/farm16.conf"

# inst CMD...: run CMD with the source and build trees hidden (an empty
# tmpfs over each, in a private mount namespace), FF_* variables unset,
# TMPDIR and the working directory the scratch dir.
inst() {
  env -u FF_SOURCE_DIR -u FF_BUILD_DIR -u FF_GUEST_DIR TMPDIR="$s" \
    unshare -m --propagation private bash -c '
      for d in "$1" "$2"; do
        [ -d "$d" ] && mount -t tmpfs -o size=64k,mode=0555 ff-hidden "$d"
      done
      cd "$3" || exit 1
      shift 3
      exec "$@"' inst "$build" "$src" "$s" "$@"
}
inst test ! -e "$src/guest/run-initramfs.sh" -a ! -e "$build/guest/ff-dmcheck" ||
  ff_die "inst does not hide the source and build trees"

# ---- help, paths, man pages -------------------------------------------------
inst "$ff" --help >"$s/help.out" || ff_die "fusefarm --help failed"
grep -q '^  vm ' "$s/help.out" || ff_die "fusefarm --help lists no vm: $(cat "$s/help.out")"
inst "$ff" vm --help >"$s/vmhelp.out" || ff_die "fusefarm vm --help failed"
grep -q -- '--boot initramfs' "$s/vmhelp.out" || ff_die "fusefarm vm --help: $(cat "$s/vmhelp.out")"
inst "$ff" vm --paths >"$s/paths.out" || ff_die "fusefarm vm --paths failed"
python3 - "$s/paths.out" "$root" "$p" "$plugin" "$s" <<'PY' || ff_die "vm --paths: $(cat "$s/paths.out")"
import os, sys
got = dict(l.split(None, 1) for l in open(sys.argv[1]).read().splitlines())
root, p, plugin, tmp = sys.argv[2:]
want = {"program": p + "/bin/fusefarm", "layout": "installed",
        "datadir": p + "/share/fusefarm", "guest": p + "/share/fusefarm/guest",
        "libexecdir": p + "/libexec/fusefarm", "plugin": plugin, "tmpdir": tmp}
bad = ["%s: %r, want %r" % (k, got.get(k), v) for k, v in want.items()
       if got.get(k) != v]
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
for m in fusefarm nbdkit-fusefarm-plugin; do
  MANWIDTH=80 man -l "$p/share/man/man1/$m.1" >"$s/$m.man" 2>"$s/$m.manerr" ||
    ff_die "man -l $m.1: $(cat "$s/$m.manerr")"
  grep -q NAME "$s/$m.man" && grep -q "$m" "$s/$m.man" || ff_die "man -l $m.1 renders no page"
done
for c in gen manifest check mount attach detach profile stats fence run report vm \
  FUSEFARM_DATADIR FUSEFARM_LIBEXECDIR TMPDIR; do
  grep -q "$c" "$s/fusefarm.man" || ff_die "fusefarm(1) does not describe $c"
done

# a data directory that is not there: a clear error naming it
rc=0
FUSEFARM_DATADIR=$s/nowhere inst "$ff" vm "$s/farm16.conf" >/dev/null 2>"$s/nodata.err" || rc=$?
((rc == 2)) && grep -q "$s/nowhere/guest/run-initramfs.sh" "$s/nodata.err" &&
  grep -q FUSEFARM_DATADIR "$s/nodata.err" ||
  ff_die "a missing data directory: rc $rc, $(cat "$s/nodata.err")"

# ---- fusefarm run of the installed ci-small ---------------------------------------
inst "$ff" run ci-small --json "$s/run.json" --no-svg --keep --quiet \
  >"$s/run.out" 2>"$s/run.err" || { cat "$s/run.err" >&2; ff_die "fusefarm run ci-small failed"; }
kept=$(sed -n 's/^fusefarm run: kept //p' "$s/run.err")
[[ $kept == "$s"/fusefarm-run.* && -d $kept ]] || ff_die "the run's scratch dir is not in TMPDIR: $(cat "$s/run.err")"
rm -rf "$kept"
python3 - "$s/run.json" "$p/share/fusefarm/configs/scenarios/ci-small.conf" <<'PY' ||
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
if doc.get("format") != "fusefarm-run" or "finished" not in doc or "error" in doc:
    bad.append("document: format %r, finished %r, error %r" % (
        doc.get("format"), doc.get("finished"), doc.get("error")))
if doc["scenario"]["name"] != "ci-small" or doc["scenario"]["file"] != sys.argv[2]:
    bad.append("scenario %r, not the installed ci-small" % doc["scenario"])
if len(doc["configs"]) != 2:
    bad.append("%d configs, expected 2" % len(doc["configs"]))
profiles = sorted(c["profile"].split("/")[-1] for c in doc["configs"])
if profiles != ["builtin:ideal", "fixed-20ms.conf"]:
    bad.append("profiles %r" % profiles)
for c in doc["configs"]:
    if len(c["workloads"]) != 7:
        bad.append("config %d: %d workloads" % (c["id"], len(c["workloads"])))
    for w in c["workloads"]:
        if not w["runs"]:
            bad.append("config %d %s: no runs" % (c["id"], w["name"]))
        for r in w["runs"]:
            if r["exit"] != 0 or r["errors"] != 0 or not r["wall"] > 0:
                bad.append("config %d %s: run %r" % (c["id"], w["name"], r))
print("\n".join(bad[:20])); sys.exit(1 if bad else 0)
PY
  ff_die "the installed ci-small run document is incomplete"
# (other fusefarm mounts on a shared machine are not ours)
grep ' fuse.fusefarm ' /proc/mounts | grep -qF " $s/" && ff_die "the run left a fusefarm mount"
if pgrep -f "fusefarm (mount|run) .*$s" >/dev/null; then
  ff_die "the run left a fusefarm process"
fi
ff_log "fusefarm run ci-small from the installed tree: $(grep -c . "$s/run.out") lines of table"

# ---- a 16-disk boot from the installed tree -------------------------------------
# (as tests/run.sh does for test-vm, not in a sanitizer build: minutes of
# TCG that exercise no more of our code than the pass without)
if grep -q '^FF_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "PASS: the installed tree (moved, source and build trees hidden) runs help, man and run ci-small (no boot: sanitizer build)"
  exit 0
fi
rc=0
inst "$ff" vm "$s/farm16.conf" --nbd-client 0 --timeout 400 --json "$s/boot.json" \
  >"$s/boot.out" 2>&1 || rc=$?
# a failed boot keeps its run directory (in TMPDIR, so in our scratch)
if ((rc != 0)) || ! grep -q 'verdict: ff-dmcheck: 11 LVs checked, 0 mismatched' "$s/boot.out"; then
  sed 's/^/  /' "$s/boot.out" >&2
  ff_die "the installed fusefarm vm: rc $rc, no passing verdict"
fi
grep -q '(16/16 disks)' "$s/boot.out" || ff_die "the guest did not see 16 disks"
python3 - "$s/boot.json" <<'PY' || ff_die "the boot's JSON: $(cat "$s/boot.json")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["status"] == 0 and d["disks"] == 16 and d["dmcheck_rc"] == 0 else 1)
PY
if pgrep -f "$s/ff-(guest|vm)\." >/dev/null; then
  pgrep -af "$s/ff-(guest|vm)\." >&2
  ff_die "the boot left processes behind"
fi
shopt -s nullglob
left=("$s"/ff-guest.* "$s"/ff-vm.*)
((${#left[@]} == 0)) || ff_die "the boot left its run dirs: ${left[*]}"
ff_log "16-disk boot from the installed tree: $(grep -m1 'verdict:' "$s/boot.out")"

echo "PASS: the installed tree (moved, source and build trees hidden) runs help, man, run ci-small and a 16-disk boot"
