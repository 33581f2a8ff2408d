#!/usr/bin/env bash
# Sets up a fresh machine, builds everything and runs every test: the lit
# suite and the executed CPU tests (ctest), then the Python tests (pytest).
# GPU tests are skipped, visibly, where no GPU is present; scripts/device.sh
# runs them on a GPU host.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPECC_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure
cd "$root/python"
SPECC_RUNTIME_LIB="$build/lib/libspecc_runtime.so" python3 -m pytest -rs -p no:cacheprovider tests
