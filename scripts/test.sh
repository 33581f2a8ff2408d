#!/usr/bin/env bash
# Sets up a fresh machine, builds everything and runs every test (lit suite,
# executed CPU tests, Python tests). GPU tests are skipped, visibly, where no
# GPU is present; scripts/device.sh runs them on a GPU host.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ctest --test-dir "${SPECC_BUILD_DIR:-$root/build}" --output-on-failure
