#!/usr/bin/env bash
# The refactoring check (docs/testing.md): two fusefarm binaries must give
# the same bytes.
#
# usage: scripts/cmp-outputs.sh [--src DIR] [--out DIR] OLD_FUSEFARM NEW_FUSEFARM
#        scripts/cmp-outputs.sh --dirs OLD_OUT NEW_OUT
#   --src DIR   the tree whose configs/*.conf and tests/data run documents
#               both binaries are given (default: this tree)
#   --out DIR   where the outputs go, DIR/old and DIR/new (default: a
#               temporary directory, removed at exit)
#   --dirs      compare two output directories made before, no binary run
#
# Each binary writes `fusefarm gen` and `fusefarm manifest` of the
# built-in default and of every config, and `fusefarm report` (table, CSV,
# SVG) of every tests/data/run-*.json and verdict-*.json, with each
# command's stderr and exit status.  Then every file is compared byte for
# byte (never with cmp or diff -r: the gen images are sparse, up to TiB
# apparent): sizes, then each data extent of either side (SEEK_DATA,
# SEEK_HOLE) against the other side's bytes there, holes reading as zeros,
# so only the bytes written are read.  Prints one line per difference and
# a count; exit 0 when all are the same, 1 when any differs, 2 on bad
# usage.  Needs python3.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

# usage [STATUS]: the usage text above, on stderr unless STATUS is 0.
usage() {
  if [[ ${1:-2} == 0 ]]; then
    sed -n '5,11s/^# \{0,1\}//p' "$0"
    exit 0
  fi
  sed -n '5,11s/^# \{0,1\}//p' "$0" >&2
  exit 2
}

# outputs FUSEFARM SRC OUT: every output the check compares.
outputs() {
  local ff=$1 src=$2 out=$3 c n j rc
  local -a arg
  mkdir -p "$out"
  for c in default "$src"/configs/*.conf; do
    n=$(basename "$c" .conf)
    if [[ $c == default ]]; then arg=(); else arg=("$c"); fi
    rc=0
    "$ff" gen "${arg[@]}" -o "$out/gen-$n" -q >"$out/gen-$n.out" 2>&1 || rc=$?
    echo "rc $rc" >>"$out/gen-$n.out"
    rc=0
    "$ff" manifest "${arg[@]}" >"$out/manifest-$n.json" 2>"$out/manifest-$n.err" || rc=$?
    echo "rc $rc" >>"$out/manifest-$n.err"
  done
  for j in "$src"/tests/data/run-*.json "$src"/tests/data/verdict-*.json; do
    [[ -e $j ]] || continue
    n=$(basename "$j" .json)
    mkdir -p "$out/report-$n"
    (
      cd "$out/report-$n"
      rc=0
      "$ff" report "$j" --csv r.csv --svg r.svg >table.txt 2>err.txt || rc=$?
      echo "rc $rc" >>err.txt
    )
  done
}

# compare OLD_OUT NEW_OUT
compare() {
  python3 - "$1" "$2" <<'EOF'
import hashlib, os, sys

old, new = sys.argv[1], sys.argv[2]
CHUNK = 1 << 20

def files(top):
    out = set()
    for d, dirs, names in os.walk(top):
        for n in names:
            out.add(os.path.relpath(os.path.join(d, n), top))
    return out

def extents(fd, size):
    """The data regions of fd as (start, end) pairs."""
    ext, pos = [], 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:
            break
        end = os.lseek(fd, start, os.SEEK_HOLE)
        ext.append((start, end))
        pos = end
    return ext

def same_region(fa, fb, start, end):
    """fa's bytes [start, end) equal fb's (fb's holes read as zeros)."""
    while start < end:
        n = min(CHUNK, end - start)
        if os.pread(fa, n, start) != os.pread(fb, n, start):
            return False
        start += n
    return True

def same_file(a, b):
    sa, sb = os.stat(a), os.stat(b)
    if sa.st_size != sb.st_size:
        return "size %d, %d" % (sa.st_size, sb.st_size)
    fa, fb = os.open(a, os.O_RDONLY), os.open(b, os.O_RDONLY)
    try:
        # Every byte either side holds as data is compared; what is a hole
        # on both sides reads as zeros on both.
        for src, dst in ((fa, fb), (fb, fa)):
            for s, e in extents(src, sa.st_size):
                if not same_region(src, dst, s, e):
                    return "bytes differ in [%d, %d)" % (s, e)
    finally:
        os.close(fa)
        os.close(fb)
    return None

fo, fn = files(old), files(new)
diffs = 0
for p in sorted(fo ^ fn):
    print("only in %s: %s" % (old if p in fo else new, p))
    diffs += 1
for p in sorted(fo & fn):
    why = same_file(os.path.join(old, p), os.path.join(new, p))
    if why:
        print("differs: %s (%s)" % (p, why))
        diffs += 1
print("%d files compared, %d differences" % (len(fo & fn), diffs))
sys.exit(1 if diffs else 0)
EOF
}

src=$top out='' dirs=0
while (($#)); do
  case $1 in
  --src)
    (($# >= 2)) || usage
    src=$2
    shift
    ;;
  --out)
    (($# >= 2)) || usage
    out=$2
    shift
    ;;
  --dirs) dirs=1 ;;
  -h | --help) usage 0 ;;
  -*) usage ;;
  *) break ;;
  esac
  shift
done
(($# == 2)) || usage
command -v python3 >/dev/null ||
  {
    echo "${0##*/}: python3: command not found" >&2
    exit 2
  }
if ((dirs)); then
  compare "$1" "$2"
  exit
fi
old=$(realpath -- "$1") new=$(realpath -- "$2") src=$(realpath -- "$src")
if [[ -z $out ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
rm -rf "$out/old" "$out/new"
outputs "$old" "$src" "$out/old"
outputs "$new" "$src" "$out/new"
compare "$out/old" "$out/new"
