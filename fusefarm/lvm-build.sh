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

usage() {
	cat <<EOF
usage: $prog REF [--git DIR|URL] [--cache DIR] [--jobs N] [--force] [--quiet]
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
	--force) force=1; shift ;;
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
	gitsrc=.
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

dest=$cache/$commit
lvm=$dest/sbin/lvm

# --- the cache --------------------------------------------------------------
# An install is complete when its build.json is there: it is written last,
# in the staging directory, before the rename that makes $dest appear.
complete() {
	[ -f "$dest/build.json" ] && [ -x "$lvm" ]
}
if complete && [ "$force" = 0 ]; then
	say "cached: $ref ($commit, $version)"
	printf '%s\n' "$lvm"
	exit 0
fi

# One builder per commit; a second one waits, then finds the install.
exec 9>"$cache/.$commit.lock" || die "cannot create the lock $cache/.$commit.lock"
if ! flock -n 9; then
	say "another build of $commit is running; waiting for it"
	flock 9 || die "lock $cache/.$commit.lock failed"
fi
if complete && [ "$force" = 0 ]; then
	printf '%s\n' "$lvm"
	exit 0
fi

# --- configure flags, per version range -------------------------------------
# VERSION reads "2.02.177(2)-git (2017-12-18)" or "2.03.39(2) (2025-..)".
vmaj=0 vmin=0 vpat=0
if [[ $version =~ ^([0-9]+)\.([0-9]+)\.([0-9]+) ]]; then
	vmaj=${BASH_REMATCH[1]} vmin=$((10#${BASH_REMATCH[2]})) vpat=$((10#${BASH_REMATCH[3]}))
else
	die_usage "$ref ($commit): VERSION '$version' is not an lvm2 version"
fi
vnum=$((vmaj * 10000 + vmin * 1000 + vpat))

# The one place that knows which flags which lvm2 needs (docs/lvm-builds.md
# explains each).  Unknown --enable/--disable/--with options are only a
# warning to an autoconf configure, but we pass each where it exists.
lvm_flags() {
	local prefix=$1
	# Installed under the cache; the programs find their own libraries
	# (libdevmapper of the same tree) through the rpath, never Debian's.
	flags=(--prefix="$prefix" --exec-prefix="$prefix" --libdir="$prefix/lib"
		--with-usrlibdir="$prefix/lib" --with-usrsbindir="$prefix/sbin"
		--with-udev-prefix="$prefix" --with-systemdsystemunitdir="$prefix/lib/systemd/system"
		--with-tmpfilesdir="$prefix/lib/tmpfiles.d")
	# No daemons required: no udev synchronisation or rules, no dmeventd,
	# no lvmpolld, no lock managers, no cluster mirror daemon.
	flags+=(--disable-udev_sync --disable-udev_rules --disable-dmeventd
		--disable-lvmpolld --disable-lvmlockd-sanlock --disable-lvmlockd-dlm
		--disable-cmirrord)
	# Fewer build dependencies, nothing the farm measures: no interactive
	# shell, no selinux labels, no translations.
	flags+=(--disable-readline --disable-selinux --disable-nls)
	if [ "$vnum" -lt 23000 ]; then
		# 2.02: build lvmetad so a runner can start a private one; it
		# is not used unless lvm.conf says use_lvmetad=1.
		flags+=(--enable-lvmetad --with-clvmd=none --with-cluster=none)
	else
		# 2.03: log to stderr/syslog, never link libsystemd.
		flags+=(--disable-systemd-journal --disable-app-machineid
			--disable-notify-dbus)
	fi
	# gcc 10+ defaults to -fno-common; trees before ~2.03.10 define
	# globals in headers (multiple definition at link time).
	cflags="-O2 -g -fcommon"
	ldflags="-Wl,-rpath,$prefix/lib"
}

# --- build ------------------------------------------------------------------
mkdir -p "$cache/logs" || die "cannot create $cache/logs"
tmp=$(mktemp -d "$cache/.build-$commit.XXXXXX") || die "cannot create a build directory in $cache"
log=$tmp/build.log
failed_log=$cache/logs/$commit.log
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

lvm_flags "$dest"
start=$(date +%s)
say "building $ref ($commit, $version) in $tmp; log: $log"

fail_build() { # STEP
	local step=$1
	cp "$log" "$failed_log" 2>/dev/null
	err "$step failed for $ref ($commit, $version); last lines of the log:"
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
[ -x configure ] || fail_build "configure (no configure script at this commit)"
run_step configure env CFLAGS="$cflags" LDFLAGS="$ldflags" ./configure "${flags[@]}" ||
	fail_build configure
run_step make make -j"$jobs" || fail_build make
run_step "make install" make install DESTDIR="$tmp/stage" || fail_build "make install"
stage=$tmp/stage$dest
[ -x "$stage/sbin/lvm" ] || fail_build "make install (no sbin/lvm installed)"

# The installed lvm must run from the stage with its own libdevmapper: the
# rpath names $dest, which does not exist yet, so point the loader there.
vline=$(LD_LIBRARY_PATH=$stage/lib LVM_SYSTEM_DIR=$tmp/noconf "$stage/sbin/lvm" version 2>>"$log" | head -n1 | sed 's/^ *//')
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
say "built $ref ($commit): $vline in $((end - start)) s"
printf '%s\n' "$lvm"
exit 0
