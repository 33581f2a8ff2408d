#!/usr/bin/env bash
# The main job: set up, build, and check every kernel in kernels/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${SPECC_BUILD_DIR:-$root/build}
for k in "$root"/kernels/*.mlir; do
  "$build/bin/specc-opt" "$k" > /dev/null
  echo "verified $(basename "$k")"
done
