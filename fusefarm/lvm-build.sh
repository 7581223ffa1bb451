#!/bin/bash
# fusefarm lvm-build: build lvm2 at one commit of a git tree into a cache
# keyed by the commit, and print the path of its lvm binary.
#
# Run by `fusefarm lvm-build` (fusefarm/cmd-lvm-build.c), which checks
# nothing itself and passes its arguments here; usable on its own too.
# docs/lvm-builds.md describes the cache, the flags and the exit codes.
#
# Exit status (git bisect run compatible):
#   0   built, or found in the cache: the lvm path is on stdout
#   125 the tree at that commit cannot be built (configure or make failed)
#   2   bad usage, unknown REF, not an lvm2 tree
#   1   any other failure (cache not writable, git missing, ...)
set -u
set -o pipefail

prog=${FF_PROG:-fusefarm lvm-build}
quiet=0
force=0
jobs=
gitsrc=
cache=
ref=
patches=()
debug=0

usage() {
	cat <<EOF
usage: $prog REF [--git DIR|URL] [--patch FILE]... [--cache DIR] [--jobs N]
       [--debug] [--force] [--quiet]
EOF
}

say() {
	[ "$quiet" = 1 ] || printf '%s: %s\n' "$prog" "$*" >&2
}

err() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

die_usage() {
	err "$*"
	exit 2
}

die() {
	err "$*"
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--git) [ $# -ge 2 ] || die_usage "--git needs a directory or URL"
		gitsrc=$2; shift 2 ;;
	--git=*) gitsrc=${1#--git=}; shift ;;
	--cache) [ $# -ge 2 ] || die_usage "--cache needs a directory"
		cache=$2; shift 2 ;;
	--cache=*) cache=${1#--cache=}; shift ;;
	--jobs|-j) [ $# -ge 2 ] || die_usage "--jobs needs a number"
		jobs=$2; shift 2 ;;
	--jobs=*) jobs=${1#--jobs=}; shift ;;
	--patch) [ $# -ge 2 ] || die_usage "--patch needs a file"
		patches+=("$2"); shift 2 ;;
	--patch=*) patches+=("${1#--patch=}"); shift ;;
	--force) force=1; shift ;;
	--debug) debug=1; shift ;;
	--quiet|-q) quiet=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; die_usage "unknown option '$1'" ;;
	*) [ -z "$ref" ] || die_usage "more than one REF: '$ref' and '$1'"
		ref=$1; shift ;;
	esac
done
if [ $# -gt 0 ]; then
	[ -z "$ref" ] && [ $# -eq 1 ] || die_usage "more than one REF"
	ref=$1
fi
[ -n "$ref" ] || { usage >&2; die_usage "missing REF (a tag, branch or commit of an lvm2 git tree)"; }
if [ -n "$jobs" ]; then
	case $jobs in
	''|*[!0-9]*|0) die_usage "--jobs: '$jobs' is not a positive number" ;;
	esac
else
	jobs=$(nproc 2>/dev/null || echo 1)
fi
command -v git >/dev/null || die "git not found (install git)"
# Patches are read once, here, by absolute path: the build runs elsewhere.
for i in "${!patches[@]}"; do
	p=${patches[$i]}
	[ -n "$p" ] || die_usage "--patch: empty file name"
	[ -f "$p" ] && [ -r "$p" ] || die_usage "--patch $p: no such readable file"
	[ -s "$p" ] || die_usage "--patch $p: the file is empty"
	patches[$i]=$(cd "$(dirname "$p")" && pwd -P)/$(basename "$p")
done

cache=${cache:-${FF_LVM_CACHE:-/var/cache/fusefarm/lvm}}
gitsrc=${gitsrc:-${FF_LVM_GIT:-}}

mkdir -p "$cache" 2>/dev/null || die "cache $cache: cannot create the directory"
cache=$(cd "$cache" && pwd -P) || die "cache $cache: cannot enter the directory"
[ -w "$cache" ] || die "cache $cache: not writable"

# --- the git tree -----------------------------------------------------------
is_url() {
	case $1 in
	*://*|git@*:*) return 0 ;;
	esac
	return 1
}

if [ -z "$gitsrc" ]; then
	gitdir=$(git rev-parse --absolute-git-dir 2>/dev/null) ||
		die_usage "no lvm2 git tree: give --git DIR|URL or set FF_LVM_GIT (the current directory is not a git tree)"
	gitsrc=$(pwd -P)
elif is_url "$gitsrc"; then
	# A URL is cloned into the cache's own bare repository, one per URL.
	key=$(printf '%s' "$gitsrc" | sha1sum | cut -c1-12)
	gitdir=$cache/git/$key.git
	if [ ! -d "$gitdir" ]; then
		say "cloning $gitsrc into $gitdir"
		mkdir -p "$cache/git" || die "cannot create $cache/git"
		git clone -q --bare "$gitsrc" "$gitdir.tmp.$$" >&2 ||
			{ rm -rf "$gitdir.tmp.$$"; die "git clone $gitsrc failed"; }
		mv "$gitdir.tmp.$$" "$gitdir" 2>/dev/null || rm -rf "$gitdir.tmp.$$"
	fi
	# A full commit id already here needs no network; anything else
	# (a branch moves) is fetched first.
	if ! { [[ $ref =~ ^[0-9a-f]{40}$ ]] &&
		git --git-dir="$gitdir" cat-file -e "$ref^{commit}" 2>/dev/null; }; then
		say "fetching $gitsrc"
		git --git-dir="$gitdir" fetch -q --tags --force "$gitsrc" \
			'+refs/heads/*:refs/heads/*' >&2 ||
			die "git fetch $gitsrc failed"
	fi
else
	[ -d "$gitsrc" ] || die_usage "--git $gitsrc: no such directory"
	gitdir=$(git -C "$gitsrc" rev-parse --absolute-git-dir 2>/dev/null) ||
		die_usage "--git $gitsrc: not a git tree"
	gitsrc=$(cd "$gitsrc" && pwd -P)
fi
G() { git --git-dir="$gitdir" "$@"; }

commit=$(G rev-parse -q --verify "$ref^{commit}" 2>/dev/null) ||
	die_usage "unknown REF '$ref' in the git tree $gitsrc"

# An lvm2 tree has VERSION, VERSION_DM and tools/lvm.c at every commit we
# can build.
for f in VERSION VERSION_DM tools/lvm.c; do
	G cat-file -e "$commit:$f" 2>/dev/null ||
		die_usage "$gitsrc at $ref ($commit) is not an lvm2 tree: no $f"
done
version=$(G show "$commit:VERSION" | head -n1)

# A build with patches is its own cache entry, keyed by the commit and
# the patches' contents in their order: COMMIT-p<sha256 prefix>.
id=$commit
if [ ${#patches[@]} -gt 0 ]; then
	id=$commit-p$(cat "${patches[@]}" | sha256sum | cut -c1-16)
fi
# A build for profilers (--debug): symbols kept, frame pointers, no
# inlining of static functions into their callers: its own entry.
[ "$debug" = 1 ] && id=$id-debug
dest=$cache/$id
lvm=$dest/sbin/lvm
what="$ref ($commit, $version${patches[*]:+, ${#patches[@]} patch(es)}$([ "$debug" = 1 ] && echo ', debug'))"

# --- the cache --------------------------------------------------------------
# An install is complete when its build.json is there: it is written last,
# in the staging directory, before the rename that makes $dest appear.
complete() {
	[ -f "$dest/build.json" ] && [ -x "$lvm" ]
}
if complete && [ "$force" = 0 ]; then
	say "cached: $what"
	printf '%s\n' "$lvm"
	exit 0
fi

# One builder per commit; a second one waits, then finds the install.
exec 9>"$cache/.$id.lock" || die "cannot create the lock $cache/.$id.lock"
if ! flock -n 9; then
	say "another build of $id is running; waiting for it"
	flock 9 || die "lock $cache/.$id.lock failed"
fi
if complete && [ "$force" = 0 ]; then
	printf '%s\n' "$lvm"
	exit 0
fi
# Holding the lock, no other build of this commit runs: a build directory
# of it is what a killed build left behind.
rm -rf "$cache/.build-$id".*

# --- configure flags --------------------------------------------------------
# VERSION reads "2.02.177(2)-git (2017-12-18)" or "2.03.39(2) (2025-..)".
if [[ ! $version =~ ^([0-9]+)\.([0-9]+)\.([0-9]+) ]]; then
	die_usage "$ref ($commit): VERSION '$version' is not an lvm2 version"
fi

# The one place that knows which configure flags an lvm2 build gets, and
# why (docs/lvm-builds.md has the same list).  An option goes to configure
# only when that tree's `configure --help` knows it, so one list serves
# 2.02.177 to today and every commit between (a bisect lands anywhere):
# options come and go (lvmetad left in 2.03.00, systemd-journal came after
# 2.03.12), and an autoconf configure would only warn about an unknown one.
# The options it did not know are recorded in build.json.
lvm_flags() { # PREFIX CONFIGURE_HELP_FILE
	local prefix=$1 help=$2
	flags=()
	unknown=()
	want() {
		local o n
		for o; do
			n=${o%%=*}
			n=${n#--}
			n=${n#enable-} n=${n#disable-} n=${n#with-} n=${n#without-}
			if grep -qE -- "--(enable|disable|with|without)-$n([^a-z0-9_-]|$)" "$help"; then
				flags+=("$o")
			else
				unknown+=("$o")
			fi
		done
	}
	# Installed under the cache, libraries in PREFIX/lib; the rpath
	# (ldflags below) makes lvm load the libdevmapper of its own tree,
	# never Debian's.
	flags+=(--prefix="$prefix" --exec-prefix="$prefix" --libdir="$prefix/lib")
	want --with-usrlibdir="$prefix/lib" --with-usrsbindir="$prefix/sbin"
	# Whatever `make install` would put outside the prefix goes inside it.
	want --with-udev-prefix="$prefix" \
		--with-systemdsystemunitdir="$prefix/lib/systemd/system" \
		--with-tmpfilesdir="$prefix/lib/tmpfiles.d"
	# No daemon is required: no udev synchronisation or rules (the farm
	# has no udev; a runner gives --noudevsync semantics for free), no
	# dmeventd (monitoring), no lvmpolld (pvmove/convert polling), no
	# lock managers, no cluster mirror daemon, no D-Bus service.
	want --disable-udev_sync --disable-udev_rules \
		--disable-udev-systemd-background-jobs --disable-dmeventd \
		--disable-lvmpolld --disable-lvmlockd-sanlock --disable-lvmlockd-dlm \
		--disable-lvmlockd-idm --disable-cmirrord --disable-dbus-service \
		--disable-notify-dbus
	# 2.02: clvmd and its cluster locking off (the configure default
	# for these trees too; said so that it is not a surprise).
	want --with-clvmd=none --with-cluster=none
	# 2.02: build lvmetad so a runner can start a private one (its
	# socket is LVM_LVMETAD_SOCKET); lvm uses it only when lvm.conf says
	# global/use_lvmetad=1, so it is never required.
	want --enable-lvmetad
	# 2.02: the activation generator (lvm2_activation_generator_systemd_
	# red_hat, what a boot without lvmetad runs) is linked with liblvm2app
	# and scripts/Makefile builds it only with the application library
	# (APPLIB): without it the tree installs no generator.  2.03 has no
	# applib and builds its generator anyway.
	want --enable-applib
	# Later 2.03: log to stderr/syslog, never link libsystemd (journal,
	# machine-id as system id): builds the same with or without
	# libsystemd-dev installed.
	want --disable-systemd-journal --disable-app-machineid
	# Fewer build dependencies, nothing the farm measures: no
	# interactive shell, no selinux labels, no translations.
	want --disable-readline --disable-selinux --disable-nls
	# gcc 10+ defaults to -fno-common: a tree written for older gcc that
	# defines a global in a header fails to link ("multiple definition
	# of ..."); -fcommon is the old default and harmless for newer trees.
	cflags="-O2 -g -fcommon"
	[ "$debug" = 1 ] && cflags="-O2 -g -fcommon -fno-omit-frame-pointer -fno-optimize-sibling-calls"
	ldflags="-Wl,-rpath,$prefix/lib"
}

# --- build ------------------------------------------------------------------
mkdir -p "$cache/logs" || die "cannot create $cache/logs"
tmp=$(mktemp -d "$cache/.build-$id.XXXXXX") || die "cannot create a build directory in $cache"
log=$tmp/build.log
failed_log=$cache/logs/$id.log
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

start=$(date +%s)
say "building $what in $tmp; log: $log"

fail_build() { # STEP
	local step=$1
	cp "$log" "$failed_log" 2>/dev/null
	err "$step failed for $what; last lines of the log:"
	tail -n 25 "$log" | sed 's/^/  | /' >&2
	err "full log: $failed_log"
	exit 125
}

mkdir -p "$tmp/src" "$tmp/stage"
if ! G archive --format=tar "$commit" | tar -x -C "$tmp/src"; then
	die "git archive $commit failed"
fi
{
	echo "# fusefarm lvm-build $ref $commit $version"
	echo "# $(date -u +%FT%TZ) on $(uname -srm)"
} >"$log"
run_step() { # NAME CMD...
	local name=$1
	shift
	echo "### $name: $*" >>"$log"
	say "$name"
	if [ "$quiet" = 1 ]; then
		"$@" >>"$log" 2>&1
	else
		"$@" 2>&1 | tee -a "$log" | sed -u -n '/error\|Error\|warning: /p' >&2
	fi
}
cd "$tmp/src" || die "cannot enter $tmp/src"
# Patches in the order given, as `git apply` (-p1) does in a tree.  The
# ceiling keeps git from taking a repository above the cache for ours.
# One that does not apply makes this commit unbuildable as asked: 125,
# as for any build failure, so a bisect skips it.
for p in "${patches[@]}"; do
	echo "### patch: $p (sha256 $(sha256sum <"$p" | cut -c1-16))" >>"$log"
	say "patch $p"
	GIT_CEILING_DIRECTORIES=$tmp git apply --verbose "$p" >>"$log" 2>&1 ||
		fail_build "patch $p (it does not apply to this commit)"
done
[ -x configure ] || fail_build "configure (no configure script at this commit)"
./configure --help >"$tmp/configure.help" 2>>"$log" ||
	fail_build "configure --help"
lvm_flags "$dest" "$tmp/configure.help"
[ ${#unknown[@]} = 0 ] || echo "# configure does not know: ${unknown[*]}" >>"$log"
run_step configure env CFLAGS="$cflags" LDFLAGS="$ldflags" ./configure "${flags[@]}" ||
	fail_build configure
run_step make make -j"$jobs" || fail_build make
run_step "make install" make install DESTDIR="$tmp/stage" || fail_build "make install"
stage=$tmp/stage$dest
[ -x "$stage/sbin/lvm" ] || fail_build "make install (no sbin/lvm installed)"

# --- what a boot with this build needs (fusefarm vm --boot systemd) ------
# The tree's own event-activation udev rule and systemd units, as a
# distribution installs them, under the prefix: lib/udev/rules.d/69-*.rules
# (2.03.14+: 69-dm-lvm.rules, its pvscan and systemd-run vgchange; before:
# 69-dm-lvm-metad.rules, which starts lvm2-pvscan@MAJ:MIN.service),
# lib/systemd/system/ (lvm2-pvscan@.service; 2.02: lvm2-lvmetad.socket and
# .service) and lib/systemd/system-generators/lvm2-activation-generator
# (until 2.03.14: the units of direct activation when lvm.conf turns event
# activation, or lvmetad, off).  The rule is made from the tree's
# udev/69-*.rules.in with the values a systemd distribution's build gives
# (udev/Makefile.in's substitutions: pvscan as a systemd background job,
# udev's builtin blkid), every lvm call naming this build's sbin; units
# and generator come from the tree's own make targets.  None of this is
# needed to run lvm, so a step that fails is logged, never a build
# failure; build.json's "boot" says what is there.
boot_rule= boot_units=() boot_generator=
boot_files() { # the tree is the current directory
	local rule udevdir=$stage/lib/udev/rules.d u old_rule
	rule=$(sed -n 's/^LVM_RULES *+\{0,1\}= *//p' udev/Makefile.in 2>/dev/null |
		tr ' ' '\n' | grep '^69-.*\.rules$' | head -n1)
	if [ -n "$rule" ] && [ -f "udev/$rule.in" ]; then
		mkdir -p "$udevdir" &&
			sed -e "s+(DM_DIR)+mapper+;s+(BINDIR)+/usr/bin+;s+(SYSTEMDRUN)+/usr/bin/systemd-run+;s+(BLKID_RULE)+IMPORT{builtin}=\"blkid\"+;s+(PVSCAN_RULE)+systemd_background+;s+(PVSCAN_ACTION)+add|change+;s+(DM_EXEC_RULE)++;s+(DM_EXEC)+$dest/sbin+;s+(LVM_EXEC_RULE)++;s+(LVM_EXEC)+$dest/sbin+;" \
				"udev/$rule.in" >"$udevdir/$rule" &&
			boot_rule=lib/udev/rules.d/$rule
		# Before lvm2 99bfbbf22 (2018-04-17) (PVSCAN_RULE) stands for the
		# whole pvscan rule, which udev/Makefile.in spells out (its
		# systemd-run form, the one a systemd distribution builds), not
		# for a label: put that rule where the template has the bare line.
		old_rule=$(grep -m1 '^PVSCAN_RULE=.*systemd-run' udev/Makefile.in 2>/dev/null |
			sed -e 's/^PVSCAN_RULE=//' -e 's/\\\$\$/$/g' -e 's/\\n/\n/g' \
				-e 's/\\\(.\)/\1/g' -e 's+@bindir@+/usr/bin+g' \
				-e "s+\$(LVM_EXEC)+$dest/sbin+g")
		if [ -n "$boot_rule" ] && [ -n "$old_rule" ] &&
			grep -qx '(PVSCAN_RULE)' "udev/$rule.in"; then
			printf '%s\n' "$old_rule" >"$tmp/pvscan.rule"
			awk -v f="$tmp/pvscan.rule" '$0 == "systemd_background" {
					while ((getline l < f) > 0) print l; next } { print }' \
				"$udevdir/$rule" >"$tmp/rule.new" && mv "$tmp/rule.new" "$udevdir/$rule" ||
				boot_rule=
			echo "### boot: (PVSCAN_RULE) is udev/Makefile.in's whole pvscan rule (lvm2 before 99bfbbf22)" >>"$log"
		fi
		echo "### boot: udev rule ${boot_rule:-(failed)} from udev/$rule.in" >>"$log"
	else
		echo "### boot: no 69-*.rules in udev/Makefile.in's LVM_RULES" >>"$log"
	fi
	run_step "make install_systemd_units" make -C scripts install_systemd_units \
		DESTDIR="$tmp/stage" ||
		echo "### boot: install_systemd_units failed (no units)" >>"$log"
	for u in "$stage"/lib/systemd/system/*; do
		[ -f "$u" ] && boot_units+=("${u##*/}")
	done
	if grep -q '^install_systemd_generators:' scripts/Makefile 2>/dev/null; then
		# lvm2's target installs to $(systemd_generator_dir) without
		# DESTDIR: name the stage itself (and no DESTDIR, in case a tree's
		# target does honour it), never the cache entry or the host.
		run_step "make install_systemd_generators" make -C scripts \
			install_systemd_generators DESTDIR= \
			systemd_generator_dir="$stage/lib/systemd/system-generators" ||
			echo "### boot: install_systemd_generators failed" >>"$log"
		[ -x "$stage/lib/systemd/system-generators/lvm2-activation-generator" ] &&
			boot_generator=lib/systemd/system-generators/lvm2-activation-generator
	fi
	return 0
}
boot_files

# The installed lvm must run from the stage with its own libdevmapper: the
# rpath names $dest, which does not exist yet, so point the loader there.
vline=$(LD_LIBRARY_PATH=$stage/lib LVM_SYSTEM_DIR=$tmp/noconf LVM_SUPPRESS_FD_WARNINGS=1 \
	"$stage/sbin/lvm" version 2>>"$log" | head -n1 | sed 's/^ *//')
[ -n "$vline" ] || fail_build "lvm version (the built lvm does not run)"
end=$(date +%s)
cp "$log" "$stage/build.log"
json_str() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
{
	printf '{\n'
	printf '  "ref": "%s",\n' "$(json_str "$ref")"
	printf '  "commit": "%s",\n' "$commit"
	printf '  "version_file": "%s",\n' "$(json_str "$version")"
	printf '  "lvm_version": "%s",\n' "$(json_str "$vline")"
	printf '  "git": "%s",\n' "$(json_str "$gitsrc")"
	printf '  "cflags": "%s",\n' "$(json_str "$cflags")"
	printf '  "ldflags": "%s",\n' "$(json_str "$ldflags")"
	printf '  "configure": ['
	sep=
	for f in "${flags[@]}"; do
		printf '%s"%s"' "$sep" "$(json_str "$f")"
		sep=', '
	done
	printf '],\n'
	printf '  "configure_unknown": ['
	sep=
	for f in "${unknown[@]}"; do
		printf '%s"%s"' "$sep" "$(json_str "$f")"
		sep=', '
	done
	printf '],\n'
	printf '  "debug": %s,\n' "$([ "$debug" = 1 ] && echo true || echo false)"
	printf '  "patches": ['
	sep=
	for p in "${patches[@]}"; do
		printf '%s{"file": "%s", "sha256": "%s"}' "$sep" "$(json_str "$p")" \
			"$(sha256sum <"$p" | cut -d' ' -f1)"
		sep=', '
	done
	printf '],\n'
	printf '  "boot": {"udev_rule": %s, "units": [' \
		"$([ -n "$boot_rule" ] && printf '"%s"' "$boot_rule" || echo null)"
	sep=
	for u in "${boot_units[@]}"; do
		printf '%s"%s"' "$sep" "$(json_str "$u")"
		sep=', '
	done
	printf '], "generator": %s},\n' \
		"$([ -n "$boot_generator" ] && printf '"%s"' "$boot_generator" || echo null)"
	printf '  "jobs": %d,\n' "$jobs"
	printf '  "wall_seconds": %d,\n' $((end - start))
	printf '  "date": "%s"\n' "$(date -u +%FT%TZ)"
	printf '}\n'
} >"$stage/build.json"

# Into place: a --force rebuild moves the old install aside first.
if [ -e "$dest" ]; then
	mv "$dest" "$tmp/old" || die "cannot move the old $dest aside"
fi
mv "$stage" "$dest" || die "cannot move the build into $dest"
rm -f "$failed_log"
say "built $what: $vline in $((end - start)) s"
printf '%s\n' "$lvm"
exit 0
