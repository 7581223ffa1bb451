#!/usr/bin/env bash
# test-lvm-build.sh: `fusefarm lvm-build` (docs/lvm-builds.md) over a small
# git tree of its own that looks enough like lvm2 (VERSION, VERSION_DM,
# tools/lvm.c, a configure that writes a Makefile):
#   - an unknown REF, a commit that is not an lvm2 tree, a --git that is
#     not a git tree, no tree at all: exit 2 naming what was wrong;
#   - a commit whose configure fails, and one whose make fails: exit 125
#     naming the step, with the log's last lines and the full log's path
#     (which holds the error);
#   - a build prints only the lvm path on stdout, writes build.json and
#     build.log, never writes the user's tree; a second call is a cache
#     hit (same path, configure not run again, build.json not rewritten);
#     --force builds again (and removes what a killed build left);
#     abbreviated commits, branches, FF_LVM_GIT and a file:// URL (cloned
#     into the cache) all resolve;
#   - --patch FILE: applied before configure, cached apart under
#     COMMIT-pHASH and named in build.json; a patch that does not apply
#     is exit 125 (no install), a missing or empty one exit 2;
#   - two builds of one commit at once: the second waits for the first
#     (its configure held on a fifo until the second says it waits), the
#     build runs once, both print the same path;
#   - a cache that cannot be created: exit 1.
# With FF_LVM_BUILDS (lvm paths, space separated, e.g. from
# /tmp/lvm-builds.txt) each real build's `lvm version` is checked against
# its build.json.
#
# `test-lvm-build.sh FUSEFARM --real` (ctest label lvmbuild, not in the
# default run: minutes of CPU) builds a real lvm2: the tree $FF_LVM_GIT
# at $FF_LVM_REF (default: its newest v2_* tag), else the tarball
# $FF_LVM_TARBALL, else Debian's lvm2 source package (apt-get source,
# needs the network), and checks that the lvm runs with the
# libdevmapper of its own tree.
#
# usage: test-lvm-build.sh FUSEFARM [--real]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/lvm-env.sh
. "$here/../lib/lvm-env.sh" # ff_die, ff_log, ff_wait_until, ff_require

bin=${1:?usage: test-lvm-build.sh FUSEFARM [--real]}
mode=${2:-fake}
case $bin in /*) ;; */*) bin=$PWD/$bin ;; esac
ff_require git flock mkfifo setsid

s=$(mktemp -d "${TMPDIR:-/tmp}/test-lvm-build.XXXXXX")
bg=()
cleanup() {
  local p
  # The background builds run in sessions of their own (setsid): kill
  # each whole group, configure held on the fifo included.
  for p in "${bg[@]}"; do
    kill -- "-$p" 2>/dev/null || true
  done
  rm -rf "$s"
}
trap cleanup EXIT
real_git=${FF_LVM_GIT:-}
unset FF_LVM_GIT FF_LVM_CACHE
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
checked=0

# run RC -- ARGS...: `fusefarm lvm-build ARGS` exits RC; its stdout and
# stderr are in $s/out and $s/err.
run() {
  local want=$1 rc=0
  shift 2
  "$bin" lvm-build "$@" >"$s/out" 2>"$s/err" </dev/null || rc=$?
  ((rc == want)) ||
    ff_die "lvm-build $*: exit $rc, expected $want: $(tail -c 1500 "$s/err")"
  checked=$((checked + 1))
}

# has TEXT: the last run's stderr holds TEXT.
has() {
  grep -qF -- "$1" "$s/err" ||
    ff_die "stderr lacks '$1': $(tail -c 1500 "$s/err")"
}

real_builds() {
  local lvm dir v
  for lvm in ${FF_LVM_BUILDS:-}; do
    dir=${lvm%/sbin/lvm}
    [ -x "$lvm" ] || ff_die "FF_LVM_BUILDS: $lvm is not an executable"
    [ -f "$dir/build.json" ] || ff_die "FF_LVM_BUILDS: no $dir/build.json"
    mkdir -p "$s/etc-empty"
    # stdout only: without device-mapper in the kernel lvm complains
    # on stderr (and exits non-zero) after printing its versions.
    v=$(LVM_SYSTEM_DIR=$s/etc-empty LVM_SUPPRESS_FD_WARNINGS=1 "$lvm" version 2>/dev/null |
      head -n1 | sed 's/^ *//')
    case $v in
    "LVM version:"*) ;;
    *) ff_die "$lvm version: '$v'" ;;
    esac
    grep -qF "\"lvm_version\": \"$v\"" "$dir/build.json" ||
      ff_die "$lvm: '$v' is not the version in $dir/build.json"
    ff_log "real build ok: $lvm: $v"
    checked=$((checked + 1))
  done
}

if [ "$mode" = --real ]; then
  ff_require tar make gcc
  src=
  ref=
  if [ -n "$real_git" ]; then
    src=$real_git
    ref=${FF_LVM_REF:-$(git -C "$src" tag -l 'v2_*' --sort=-v:refname | head -n1)}
  else
    tarball=${FF_LVM_TARBALL:-}
    if [ -z "$tarball" ]; then
      ff_require apt-get
      ff_log "fetching Debian's lvm2 source (apt-get source; set FF_LVM_TARBALL or FF_LVM_GIT to avoid the network)"
      mkdir -p "$s/apt/lists/partial" "$s/apt/dl"
      echo "deb-src http://deb.debian.org/debian bookworm main" >"$s/apt/sources.list"
      aptopt=(-o "Dir::Etc::SourceList=$s/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$s/apt/lists" -o "Dir::Cache=$s/apt/cache")
      (apt-get "${aptopt[@]}" update && cd "$s/apt/dl" &&
        apt-get "${aptopt[@]}" source --download-only lvm2) >"$s/apt.log" 2>&1 ||
        ff_die "apt-get source lvm2 failed (no network? set FF_LVM_TARBALL): $(tail -n 5 "$s/apt.log")"
      tarball=$(ls "$s"/apt/dl/lvm2_*.orig.tar.* | head -n1)
    fi
    [ -f "$tarball" ] || ff_die "no lvm2 tarball: $tarball"
    mkdir "$s/lvm2"
    tar -xf "$tarball" -C "$s/lvm2" --strip-components=1
    git -C "$s/lvm2" init -q
    git -C "$s/lvm2" add -A
    git -C "$s/lvm2" commit -q -m "lvm2 from ${tarball##*/}"
    git -C "$s/lvm2" tag real
    src=$s/lvm2
    ref=real
  fi
  ff_log "building $ref of $src (minutes)"
  start=$(date +%s)
  run 0 -- "$ref" --git "$src" --cache "$s/cache" --jobs "${FF_LVM_JOBS:-2}"
  end=$(date +%s)
  lvm=$(cat "$s/out")
  [ -x "$lvm" ] || ff_die "no lvm at '$lvm'"
  mkdir -p "$s/etc-empty"
  LVM_SYSTEM_DIR=$s/etc-empty LVM_SUPPRESS_FD_WARNINGS=1 "$lvm" version >"$s/version" 2>"$s/version.err" || true
  grep -q "LVM version:" "$s/version" || ff_die "$lvm version: $(cat "$s/version" "$s/version.err")"
  # Its own libdevmapper: the library version lvm reports is the tree's
  # VERSION_DM, and any libdevmapper it loads is inside the cache.
  dm=$(git -C "$src" show "$ref:VERSION_DM" | cut -d' ' -f1)
  grep -q "Library version: *$dm" "$s/version" ||
    ff_die "$lvm: library version is not the tree's $dm: $(cat "$s/version")"
  if ldd "$lvm" | grep -q devmapper; then
    ldd "$lvm" | grep devmapper | grep -qF "$s/cache/" ||
      ff_die "$lvm loads a libdevmapper outside its build: $(ldd "$lvm" | grep devmapper)"
  fi
  ff_log "real build of $ref: $(head -n1 "$s/version" | sed 's/^ *//') in $((end - start)) s"
  real_builds
  ff_log "ok ($checked checks)"
  exit 0
fi

# --- a small tree that looks like lvm2 -------------------------------------
t=$s/lvm2
mkdir -p "$t/tools"
echo "2.03.99(2)-git (2026-12-01)" >"$t/VERSION"
echo "1.02.199-git (2026-12-01)" >"$t/VERSION_DM"
echo "int main(void) { return 0; }" >"$t/tools/lvm.c"
# The event-activation rule and units a boot with the build uses: a rule
# template with lvm2's placeholders (udev/Makefile.in names it), and a
# scripts/Makefile (written by configure) whose install_systemd_units
# installs one unit naming the prefix's lvm.
mkdir -p "$t/udev"
cat >"$t/udev/Makefile.in" <<'EOF'
LVM_RULES=11-dm-lvm.rules
LVM_RULES+=69-dm-lvm.rules
EOF
cat >"$t/udev/69-dm-lvm.rules.in" <<'EOF'
(LVM_EXEC_RULE)
ACTION!="(PVSCAN_ACTION)", GOTO="lvm_end"
IMPORT{program}="(LVM_EXEC)/lvm pvscan --cache $env{DEVNAME}"
RUN+="(SYSTEMDRUN) --no-block (LVM_EXEC)/lvm vgchange -aay"
GOTO="(PVSCAN_RULE)"
LABEL="lvm_end"
EOF
# configure: records each run in $FAKE_COUNT; with $FAKE_GATE (a fifo),
# says so in $FAKE_GATE.in and waits for a line on it.
cat >"$t/configure" <<'EOF'
#!/bin/sh
if [ "$1" = --help ]; then
  echo "  --disable-udev_sync     disable udev synchronisation"
  echo "  --with-udev-prefix=PFX  udev prefix"
  exit 0
fi
prefix=
for a; do
  case $a in --prefix=*) prefix=${a#--prefix=} ;; esac
done
[ -n "${FAKE_COUNT:-}" ] && echo run >>"$FAKE_COUNT"
if [ -n "${FAKE_GATE:-}" ]; then
  : >"$FAKE_GATE.in"
  read -r _ <"$FAKE_GATE"
fi
echo "checking for a fake lvm2... yes"
cat >Makefile <<MK
all:
	printf '#!/bin/sh\necho "  LVM version:     2.03.99(2)-git (2026-12-01)"\n' >lvm
install:
	mkdir -p \$(DESTDIR)$prefix/sbin
	install -m 755 lvm \$(DESTDIR)$prefix/sbin/lvm
MK
mkdir -p scripts
cat >scripts/Makefile <<MK
install_systemd_units:
	mkdir -p \$(DESTDIR)$prefix/lib/systemd/system
	printf '[Service]\nExecStart=$prefix/sbin/lvm pvscan --cache --activate ay %%i\n' >\$(DESTDIR)$prefix/lib/systemd/system/lvm2-pvscan@.service
MK
EOF
chmod +x "$t/configure"
git -C "$t" init -q -b main
git -C "$t" add -A
git -C "$t" commit -q -m good
git -C "$t" tag v2_03_99
good=$(git -C "$t" rev-parse HEAD)

# A commit whose configure fails.
git -C "$t" checkout -q -b broken
cat >"$t/configure" <<'EOF'
#!/bin/sh
[ "$1" = --help ] && exit 0
echo "checking for io_setup in -laio... no"
echo "configure: error: libaio could not be found" >&2
exit 1
EOF
git -C "$t" commit -q -am "configure fails"
git -C "$t" tag badconf
# A commit whose make fails.
git -C "$t" checkout -q main
cat >"$t/configure" <<'EOF'
#!/bin/sh
printf 'all:\n\t@echo "tools/lvm.c:1: error: fake compile error"; exit 1\n' >Makefile
EOF
git -C "$t" commit -q -am "make fails"
git -C "$t" tag badmake
# A commit that is not an lvm2 tree.
git -C "$t" rm -q VERSION
git -C "$t" commit -q -m "no VERSION"
git -C "$t" tag notlvm
# A commit shaped like lvm2 2.02.177: its udev/Makefile.in spells out the
# whole pvscan rule as PVSCAN_RULE (lvm2 before 99bfbbf22), the template
# has a bare (PVSCAN_RULE) line, and scripts/Makefile's
# install_systemd_generators ignores DESTDIR, as lvm2's does.
git -C "$t" checkout -q -b oldstyle "$good"
cat >"$t/udev/Makefile.in" <<'EOF'
LVM_RULES=11-dm-lvm.rules
LVM_RULES+=69-dm-lvm-metad.rules
ifeq ("@UDEV_SYSTEMD_BACKGROUND_JOBS@", "yes")
PVSCAN_RULE=ACTION\!=\"remove\", ENV{LVM_PV_GONE}==\"1\", RUN\+=\"@bindir@/systemd-run $(LVM_EXEC)\/lvm pvscan --cache \$$major\:\$$minor\", GOTO=\"lvm_end\"\nENV{SYSTEMD_WANTS}\+=\"lvm2-pvscan@\$$major:\$$minor.service\"
else
PVSCAN_RULE=RUN\+\=\"$(LVM_EXEC)/lvm pvscan --background --cache --activate ay --major \$$major --minor \$$minor\", ENV{LVM_SCANNED}=\"1\"
endif
EOF
git -C "$t" rm -q udev/69-dm-lvm.rules.in
cat >"$t/udev/69-dm-lvm-metad.rules.in" <<'EOF'
ENV{DM_UDEV_DISABLE_OTHER_RULES_FLAG}=="1", GOTO="lvm_end"
LABEL="lvm_scan"
(PVSCAN_RULE)
LABEL="lvm_end"
EOF
cat >"$t/generators.mk" <<'EOF'
install_systemd_generators:
	mkdir -p $(systemd_generator_dir)
	printf '#!/bin/sh\n' >$(systemd_generator_dir)/lvm2-activation-generator
	chmod 755 $(systemd_generator_dir)/lvm2-activation-generator
EOF
sed -i 's|^cat >scripts/Makefile <<MK$|cp generators.mk scripts/Makefile; cat >>scripts/Makefile <<MK|' "$t/configure"
git -C "$t" add -A
git -C "$t" commit -q -m "2.02.177-style rule and generator"
git -C "$t" tag oldstyle-tag
old=$(git -C "$t" rev-parse HEAD)
git -C "$t" checkout -q "$good"
git -C "$t" branch -q stable "$good"
git -C "$t" status --porcelain >"$s/status.before"
head_before=$(git -C "$t" rev-parse HEAD)

c=$s/cache
export FAKE_COUNT=$s/count
count() { [ -f "$FAKE_COUNT" ] && wc -l <"$FAKE_COUNT" || echo 0; }

ff_log "bad usage and bad input: exit 2"
run 2 -- --git "$t" --cache "$c"
has "missing REF"
has "Try 'fusefarm lvm-build --help'."
run 2 -- v2_03_99 --git "$t" --cache "$c" --jobs 0
has "--jobs 0"
run 2 -- v2_03_99 --bogus
has "unknown option '--bogus'"
run 2 -- v2_03_99 v2_03_98 --git "$t"
has "too many arguments"
run 2 -- nosuch --git "$t" --cache "$c"
has "unknown REF 'nosuch'"
run 2 -- notlvm --git "$t" --cache "$c"
has "not an lvm2 tree: no VERSION"
run 2 -- v2_03_99 --git "$s/none" --cache "$c"
has "$s/none: no such directory"
mkdir "$s/plain"
run 2 -- v2_03_99 --git "$s/plain" --cache "$c"
has "not a git tree"
(cd "$s/plain" && run 2 -- v2_03_99 --cache "$c")
has "no lvm2 git tree"
[ "$(count)" = 0 ] || ff_die "a refused command ran configure"

ff_log "a tree that does not build: exit 125, the step and the log named"
run 125 -- badconf --git "$t" --cache "$c" --quiet
has "configure failed for badconf"
has "libaio could not be found"
has "full log: $c/logs/"
log=$(sed -n 's/.*full log: //p' "$s/err")
grep -qF "libaio could not be found" "$log" || ff_die "$log lacks configure's error"
[ ! -s "$s/out" ] || ff_die "a failed build printed on stdout: $(cat "$s/out")"
run 125 -- badmake --git "$t" --cache "$c" --quiet
has "make failed for badmake"
has "fake compile error"
[ ! -e "$c/$(git -C "$t" rev-parse badmake)" ] || ff_die "a failed build left an install"
! compgen -G "$c/.build-*" >/dev/null || ff_die "a failed build left its build directory: $(ls -a "$c")"

ff_log "a build: only the lvm path on stdout, build.json, the tree untouched"
run 0 -- v2_03_99 --git "$t" --cache "$c"
lvm=$(cat "$s/out")
[ "$lvm" = "$c/$good/sbin/lvm" ] || ff_die "stdout '$lvm', expected $c/$good/sbin/lvm"
[ "$(wc -l <"$s/out")" = 1 ] || ff_die "stdout is more than the path: $(cat "$s/out")"
"$lvm" version | grep -q "LVM version: *2.03.99" || ff_die "$lvm does not run"
for k in '"ref": "v2_03_99"' "\"commit\": \"$good\"" '"lvm_version": "LVM version:     2.03.99(2)-git (2026-12-01)"' \
  '"--disable-udev_sync"' '"wall_seconds"'; do
  grep -qF -- "$k" "$c/$good/build.json" || ff_die "build.json lacks $k: $(cat "$c/$good/build.json")"
done
# The options this configure does not list are recorded, not passed.
grep -q '"configure_unknown": \[.*"--enable-lvmetad"' "$c/$good/build.json" ||
  ff_die "build.json does not record --enable-lvmetad as unknown: $(cat "$c/$good/build.json")"
grep -q "checking for a fake lvm2... yes" "$c/$good/build.log" || ff_die "build.log lacks configure's output"
grep -q '^### configure:.*--disable-udev_sync' "$c/$good/build.log" &&
  ! grep -q '^### configure:.*--enable-lvmetad' "$c/$good/build.log" ||
  ff_die "configure got an option its --help does not list: $(grep '^### configure' "$c/$good/build.log")"
[ "$(count)" = 1 ] || ff_die "configure ran $(count) times, expected 1"
# The boot files: the rule made from the template with a systemd
# distribution's values, every lvm call naming this build; the unit from
# the tree's own make target; no generator target, so none.
rule=$c/$good/lib/udev/rules.d/69-dm-lvm.rules
[ -f "$rule" ] || ff_die "no $rule: $(grep '^### boot' "$c/$good/build.log")"
for k in 'ACTION!="add|change"' "IMPORT{program}=\"$c/$good/sbin/lvm pvscan --cache" \
  "RUN+=\"/usr/bin/systemd-run --no-block $c/$good/sbin/lvm vgchange -aay\"" \
  'GOTO="systemd_background"'; do
  grep -qF -- "$k" "$rule" || ff_die "$rule lacks $k: $(cat "$rule")"
done
! grep -q '(LVM_EXEC_RULE)\|(LVM_EXEC)\|(SYSTEMDRUN)' "$rule" || ff_die "$rule kept a placeholder: $(cat "$rule")"
grep -qF "ExecStart=$c/$good/sbin/lvm pvscan --cache --activate ay %i" \
  "$c/$good/lib/systemd/system/lvm2-pvscan@.service" || ff_die "no lvm2-pvscan@.service naming the build"
grep -qF '"boot": {"udev_rule": "lib/udev/rules.d/69-dm-lvm.rules", "units": ["lvm2-pvscan@.service"], "generator": null}' \
  "$c/$good/build.json" || ff_die "build.json's boot is wrong: $(grep boot "$c/$good/build.json")"
git -C "$t" status --porcelain | cmp -s - "$s/status.before" || ff_die "the build wrote into the tree: $(git -C "$t" status --porcelain)"
[ "$(git -C "$t" rev-parse HEAD)" = "$head_before" ] || ff_die "the build moved the tree's HEAD"

ff_log "cache hit: same path, nothing rebuilt; --force rebuilds"
m0=$(stat -c %Y.%Z "$c/$good/build.json")
i0=$(stat -c %i "$c/$good/build.json")
for r in v2_03_99 "${good:0:10}" stable "$good"; do
  run 0 -- "$r" --git "$t" --cache "$c"
  [ "$(cat "$s/out")" = "$lvm" ] || ff_die "$r: '$(cat "$s/out")', expected $lvm"
done
(cd "$t" && run 0 -- HEAD --cache "$c")
[ "$(cat "$s/out")" = "$lvm" ] || ff_die "HEAD in the tree: '$(cat "$s/out")'"
FF_LVM_GIT=$t FF_LVM_CACHE=$c run 0 -- v2_03_99
[ "$(cat "$s/out")" = "$lvm" ] || ff_die "FF_LVM_GIT, FF_LVM_CACHE: '$(cat "$s/out")'"
[ "$(count)" = 1 ] || ff_die "a cache hit ran configure ($(count) runs)"
[ "$(stat -c %Y.%Z "$c/$good/build.json")" = "$m0" ] &&
  [ "$(stat -c %i "$c/$good/build.json")" = "$i0" ] || ff_die "a cache hit rewrote build.json"
mkdir "$c/.build-$good.killed" # what a killed build leaves
run 0 -- v2_03_99 --git "$t" --cache "$c" --force --quiet
[ ! -e "$c/.build-$good.killed" ] || ff_die "a build left a killed build's directory"
[ "$(cat "$s/out")" = "$lvm" ] || ff_die "--force: '$(cat "$s/out")'"
[ ! -s "$s/err" ] || ff_die "--quiet printed: $(cat "$s/err")"
[ "$(count)" = 2 ] || ff_die "--force did not build again ($(count) runs)"
[ "$(stat -c %i "$c/$good/build.json")" != "$i0" ] || ff_die "--force kept the old build.json"

ff_log "--patch: applied before configure, cached apart, keyed by the patch"
git clone -q "$t" "$s/pt"
git -C "$s/pt" checkout -q "$good"
sed -i 's/^echo "checking for a fake lvm2... yes"$/&\necho "checking for the patch... applied"/' "$s/pt/configure"
git -C "$s/pt" diff >"$s/fix.patch"
grep -q "checking for the patch" "$s/fix.patch" || ff_die "could not make a patch: $(cat "$s/fix.patch")"
n0=$(count)
run 0 -- v2_03_99 --git "$t" --cache "$c" --patch "$s/fix.patch"
plvm=$(cat "$s/out")
pdir=${plvm%/sbin/lvm}
[[ $pdir =~ ^$c/$good-p[0-9a-f]{16}$ ]] || ff_die "a patched build at '$plvm', expected $c/$good-pHASH/sbin/lvm"
grep -q "checking for the patch... applied" "$pdir/build.log" ||
  ff_die "the patch was not applied before configure: $(grep -v '^#' "$pdir/build.log" | head)"
sum=$(sha256sum <"$s/fix.patch" | cut -d' ' -f1)
grep -qF "\"patches\": [{\"file\": \"$s/fix.patch\", \"sha256\": \"$sum\"}]" "$pdir/build.json" ||
  ff_die "build.json does not name the patch: $(cat "$pdir/build.json")"
grep -qF '"patches": []' "$c/$good/build.json" || ff_die "the unpatched build.json lists patches"
! grep -q "checking for the patch" "$c/$good/build.log" || ff_die "the unpatched build was patched"
[ "$(count)" = $((n0 + 1)) ] || ff_die "the patched build ran configure $(($(count) - n0)) times"
(cd "$s" && run 0 -- "$good" --git "$t" --cache "$c" --patch fix.patch)
[ "$(cat "$s/out")" = "$plvm" ] || ff_die "a relative --patch: '$(cat "$s/out")', expected $plvm"
run 0 -- v2_03_99 --git "$t" --cache "$c"
[ "$(cat "$s/out")" = "$lvm" ] || ff_die "without --patch: '$(cat "$s/out")', expected $lvm"
[ "$(count)" = $((n0 + 1)) ] || ff_die "a cache hit with --patch ran configure"
printf -- '--- a/tools/lvm.c\n+++ b/tools/lvm.c\n@@ -1 +1 @@\n-int main(void) { return 2; }\n+int main(void) { return 3; }\n' >"$s/bad.patch"
run 125 -- v2_03_99 --git "$t" --cache "$c" --patch "$s/fix.patch" --patch "$s/bad.patch" --quiet
has "patch $s/bad.patch (it does not apply to this commit) failed for v2_03_99"
has "full log: $c/logs/$good-p"
! compgen -G "$c/$good-p*" | grep -qv "^$pdir$" || ff_die "a patch that does not apply left an install: $(ls "$c")"
[ "$(count)" = $((n0 + 1)) ] || ff_die "configure ran after a patch failed to apply"
run 2 -- v2_03_99 --git "$t" --cache "$c" --patch "$s/none.patch"
has "--patch $s/none.patch"
: >"$s/empty.patch"
run 2 -- v2_03_99 --git "$t" --cache "$c" --patch "$s/empty.patch"
has "the file is empty"

ff_log "a URL is cloned into the cache"
run 0 -- v2_03_99 --git "file://$t" --cache "$s/cache2"
[ "$(cat "$s/out")" = "$s/cache2/$good/sbin/lvm" ] || ff_die "URL: '$(cat "$s/out")'"
ls -d "$s"/cache2/git/*.git >/dev/null || ff_die "no clone in $s/cache2/git"
run 2 -- nosuch --git "file://$t" --cache "$s/cache2"
has "unknown REF 'nosuch'"

ff_log "two builds of one commit at once: one builds, the other waits"
rm -f "$FAKE_COUNT"
mkfifo "$s/gate"
FAKE_GATE=$s/gate setsid "$bin" lvm-build v2_03_99 --git "$t" --cache "$s/cache3" \
  >"$s/out1" 2>"$s/err1" </dev/null &
bg+=($!)
p1=$!
ff_wait_until 120 test -e "$s/gate.in" || ff_die "the first build never reached configure: $(cat "$s/err1")"
setsid "$bin" lvm-build v2_03_99 --git "$t" --cache "$s/cache3" >"$s/out2" 2>"$s/err2" </dev/null &
bg+=($!)
p2=$!
ff_wait_until 120 grep -q "another build of $good is running" "$s/err2" ||
  ff_die "the second build did not wait: $(cat "$s/err2")"
echo go >"$s/gate"
wait "$p1" || ff_die "first build failed: $(cat "$s/err1")"
wait "$p2" || ff_die "second build failed: $(cat "$s/err2")"
bg=()
[ "$(cat "$s/out1")" = "$s/cache3/$good/sbin/lvm" ] && cmp -s "$s/out1" "$s/out2" ||
  ff_die "the two builds printed '$(cat "$s/out1")' and '$(cat "$s/out2")'"
[ "$(count)" = 1 ] || ff_die "configure ran $(count) times for two concurrent builds"
checked=$((checked + 1))

ff_log "a 2.02.177-style tree: the whole pvscan rule in place, the generator in the build"
run 0 -- oldstyle-tag --git "$t" --cache "$c"
rule=$c/$old/lib/udev/rules.d/69-dm-lvm-metad.rules
[ -f "$rule" ] || ff_die "no $rule: $(grep '^### boot' "$c/$old/build.log")"
for k in "ACTION!=\"remove\", ENV{LVM_PV_GONE}==\"1\", RUN+=\"/usr/bin/systemd-run $c/$old/sbin/lvm pvscan --cache \$major:\$minor\", GOTO=\"lvm_end\"" \
  'ENV{SYSTEMD_WANTS}+="lvm2-pvscan@$major:$minor.service"'; do
  grep -qxF -- "$k" "$rule" || ff_die "$rule lacks the line $k: $(cat "$rule")"
done
! grep -qx 'systemd_background\|(PVSCAN_RULE)' "$rule" || ff_die "$rule kept a bare label: $(cat "$rule")"
[ -x "$c/$old/lib/systemd/system-generators/lvm2-activation-generator" ] ||
  ff_die "no generator in the build: $(ls -R "$c/$old/lib" | head -20)"
grep -qF '"generator": "lib/systemd/system-generators/lvm2-activation-generator"' "$c/$old/build.json" ||
  ff_die "build.json does not name the generator: $(grep boot "$c/$old/build.json")"

ff_log "--debug: frame pointers, its own cache entry"
run 0 -- v2_03_99 --git "$t" --cache "$c" --debug
[ "$(cat "$s/out")" = "$c/$good-debug/sbin/lvm" ] || ff_die "--debug: '$(cat "$s/out")', expected $c/$good-debug/sbin/lvm"
grep -qF '"debug": true' "$c/$good-debug/build.json" || ff_die "--debug: build.json: $(cat "$c/$good-debug/build.json")"
grep -qF '"debug": false' "$c/$good/build.json" || ff_die "the plain build's build.json lacks \"debug\": false"
grep -q '^### configure:.*CFLAGS=.*-fno-omit-frame-pointer' "$c/$good-debug/build.log" ||
  ff_die "--debug: configure did not get -fno-omit-frame-pointer: $(grep '^### configure' "$c/$good-debug/build.log")"
! grep -q '^### configure:.*-fno-omit-frame-pointer' "$c/$good/build.log" ||
  ff_die "the plain build got -fno-omit-frame-pointer"

ff_log "a cache that cannot be created: exit 1"
: >"$s/afile"
run 1 -- v2_03_99 --git "$t" --cache "$s/afile/cache"
has "cache $s/afile/cache"

real_builds
ff_log "ok ($checked checks)"
