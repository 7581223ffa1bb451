#!/usr/bin/env bash
# A short fuzz run (CI): configure and build the libFuzzer targets with
# clang (FF_FUZZ=ON) in their own build directory, then run each target
# for S seconds, one at a time on one worker, starting from its corpus and
# regression inputs.  Exit 1 on the first crash, leak, UB report or
# violated invariant, naming the input that caused it; print the execs
# each target did.  See docs/fuzzing.md.
#
# usage: tests/fuzz/run.sh [--seconds S] [--targets "spec read"] [BUILD_DIR]
#   S defaults to 30; BUILD_DIR to build-fuzz/ at the top of the tree.
#   New inputs libFuzzer finds go to BUILD_DIR/fuzz-corpus/TARGET, crash
#   inputs to BUILD_DIR/fuzz-artifacts/TARGET/; the source tree is not
#   written to.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
seconds=30
targets="spec profile scenario read"
dir=

while (($#)); do
  case $1 in
  --seconds)
    seconds=${2:?--seconds needs a number}
    shift 2
    ;;
  --targets)
    targets=${2:?--targets needs a list}
    shift 2
    ;;
  -h | --help)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  -*)
    echo "tests/fuzz/run.sh: unknown option $1" >&2
    exit 2
    ;;
  *)
    dir=$1
    shift
    ;;
  esac
done
[[ $seconds =~ ^[0-9]+$ ]] || {
  echo "tests/fuzz/run.sh: --seconds takes a whole number" >&2
  exit 2
}
dir=${dir:-$top/build-fuzz}

cc=$(command -v clang || true)
if [[ -z $cc ]]; then
  echo "tests/fuzz/run.sh: clang is missing (install the Debian packages" \
    "clang and libclang-rt-dev)" >&2
  exit 1
fi
if ! compgen -G "$("$cc" -print-resource-dir)/lib/linux/libclang_rt.fuzzer-*.a" \
  >/dev/null; then
  echo "tests/fuzz/run.sh: clang has no libFuzzer runtime (install the" \
    "Debian package libclang-rt-dev)" >&2
  exit 1
fi

echo "== fuzz: build with clang, libFuzzer, ASan and UBSan in $dir"
bins=()
for t in $targets; do bins+=("fuzz-$t"); done
mkdir -p "$dir"
cmake -S "$top" -B "$dir" -DCMAKE_C_COMPILER="$cc" -DFF_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$dir/configure.log" 2>&1 || {
  cat "$dir/configure.log" >&2
  exit 1
}
cmake --build "$dir" -j"$(nproc)" --target "${bins[@]}" >/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=suppressions=$here/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in $targets; do
  work=$dir/fuzz-corpus/$t
  art=$dir/fuzz-artifacts/$t
  log=$dir/fuzz-$t.log
  mkdir -p "$work" "$art"
  opts=()
  [[ -f $here/$t.dict ]] && opts+=("-dict=$here/$t.dict")
  seeds=("$here/corpus/$t")
  [[ -d $here/regressions/$t ]] && seeds+=("$here/regressions/$t")
  # -timeout: an input that takes this long is a hang, reported as a crash.
  if "$dir/tests/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout=25 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/" \
    "${opts[@]}" \
    "$work" "${seeds[@]}" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz-$t: ok, ${execs:-?} execs in ${seconds}s"
  else
    status=1
    echo "fuzz-$t: FAILED (log: $log)"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*fuzz invariant)' \
      "$log" | head -5 || true
    input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    if [[ -n $input ]]; then
      echo "fuzz-$t: crashing input: $input"
      echo "fuzz-$t: keep it as $here/regressions/$t/<name> once fixed"
    fi
  fi
done
exit "$status"
