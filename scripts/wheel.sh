#!/usr/bin/env bash
# Builds a wheel of the Python package for the machine it runs on (its python,
# its torch) from kernel artifacts that `specc` made elsewhere: no LLVM, no
# MLIR, no network. The wheel holds the runtime with the kernels embedded, the
# native torch binding (when torch is importable here) and the ctypes binding.
# Usage: scripts/wheel.sh [ARTIFACT_DIR] [OUT_DIR]
#   ARTIFACT_DIR  kernels.{sm_80,sm_90}.cubin, kernels.ptx, kernels.manifest,
#                 kernels.host.o (default: build/artifacts)
#   OUT_DIR       where the .whl goes (default: dist)
# Then, on every GPU host of the same python and torch:
#   pip install --no-deps specc-*.whl
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
art=$(cd "${1:-$root/build/artifacts}" && pwd)
out=${2:-$root/dist}
mkdir -p "$out"
for f in kernels.sm_80.cubin kernels.sm_90.cubin kernels.ptx kernels.manifest kernels.host.o; do
  [ -f "$art/$f" ] || { echo "wheel.sh: missing $art/$f (run scripts/build.sh where MLIR is)" >&2; exit 1; }
done
# The extension is required wherever torch imports: a wheel without it would
# be slower, silently.
ext=OFF
python3 -c "import torch" 2>/dev/null && ext=ON
SPECC_RUNTIME_ONLY=ON SPECC_KERNEL_ARTIFACTS="$art" SPECC_TORCH_EXTENSION=$ext \
  python3 -m pip wheel --no-build-isolation --no-deps --no-index -w "$out" "$root/python"
ls -1 "$out"/specc-*.whl
