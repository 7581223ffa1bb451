#!/usr/bin/env bash
# test-architecture-doc.sh: docs/architecture.md names every source file:
#   - every .c and .h under generators/ serve/ runner/ fusefarm/
#     nbd-plugin/ guest/ is in its directory's row of the table, by its
#     file name or its stem (`ff-util` stands for ff-util.c and ff-util.h);
#   - no file under docs/ cites ../shared/ (the project's docs stand alone).
# Reads files only; the FUSEFARM argument is not used.
#
# usage: test-architecture-doc.sh [FUSEFARM]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "${FF_SOURCE_DIR:-$here/../..}" && pwd)
doc=$top/docs/architecture.md

fail=0
for d in generators serve runner fusefarm nbd-plugin guest; do
  row=$(grep -F "| \`$d/\` |" "$doc" || true)
  if [[ -z $row ]]; then
    echo "docs/architecture.md: no table row for $d/" >&2
    fail=1
    continue
  fi
  while IFS= read -r f; do
    b=${f##*/} s=${b%.*}
    # The stem as a whole word: ff-spec must not count for ff-spec-lv.c.
    if ! grep -qE "(^|[^A-Za-z0-9_-])${s//./\\.}(\\.[ch])?([^A-Za-z0-9_-]|$)" <<<"$row"; then
      echo "docs/architecture.md: $d/$b is not in the $d/ row" >&2
      fail=1
    fi
  done < <(cd "$top" && find "$d" -path "$d/tests" -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print | sort)
done
if grep -rn '\.\./shared/' "$top/docs"; then
  echo "docs/ cites ../shared/ (above)" >&2
  fail=1
fi
((fail == 0)) || exit 1
echo "docs/architecture.md names every source file"
