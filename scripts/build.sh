#!/usr/bin/env bash
# Configure and build fusefarm.  usage: scripts/build.sh [BUILD_DIR] [CMAKE_ARGS...]
# Default BUILD_DIR is build/ at the top of the tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build}
shift || true
cmake -S "$top" -B "$dir" "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)" >/dev/null
