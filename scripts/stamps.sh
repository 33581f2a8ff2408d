#!/usr/bin/env bash
# Phase times measured inside the fused kernel, on a GPU host: builds the
# MLIR-free runtime around a stamped kernel image (a folder with the
# kernels.sm_90.cubin and kernels.manifest that `specc` made from a tree with
# python/benchmarks/variants/phase-stamps.patch or planner-stamps.patch
# applied; the other artifacts come from build/artifacts) and runs
# python/benchmarks/phase_stamps.py on it through the ctypes binding.
# Writes $OUT/stamps-<folder>.txt.
# Usage: scripts/stamps.sh IMAGE_DIR [phase_stamps.py arguments...]
#   e.g. scripts/stamps.sh build/ab/stamps --large --bs 512 2048
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$root/device-out}
mkdir -p "$OUT"
[ $# -ge 1 ] || { sed -n 2,10p "$0"; exit 2; }
img=$(cd "$1" && pwd); shift
name=$(basename "$img")
. "$root/scripts/image-runtime.sh"
image_runtime "$root" "$img" "stamps-$name" ||
  { echo "stamps: runtime build FAILED"; tail -20 "/tmp/image-rt-stamps-$name.log"; exit 1; }
SPECC_NATIVE=0 SPECC_FORCE_PTX=0 SPECC_RUNTIME_LIB=/tmp/image-rt-stamps-$name/lib/libspecc_runtime.so \
  PYTHONPATH=$root/python python3 "$root/python/benchmarks/phase_stamps.py" "$@" 2>&1 |
  tee "$OUT/stamps-$name.txt"
