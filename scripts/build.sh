#!/usr/bin/env bash
# Configures and builds specc (compiler, kernels, runtime) into ./build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPECC_BUILD_DIR:-$root/build}
[ -f "$build/build.ninja" ] || cmake -G Ninja -S "$root" -B "$build"
cmake --build "$build"
