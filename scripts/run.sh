#!/usr/bin/env bash
# The main job: set up, build (which compiles kernels/ with specc into PTX,
# cubin for sm_80 and sm_90, and the host object of the CPU path), then run
# the KV move on random sglang-shaped batches and verify every byte: on the
# GPU when torch sees one, else on the CPU path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${SPECC_BUILD_DIR:-$root/build}
echo "kernels compiled by specc (build/artifacts):"
for f in "$build"/artifacts/*; do
  printf '  %-22s %8d bytes\n' "$(basename "$f")" "$(wc -c < "$f")"
done
grep -c '^kernel ' "$build/artifacts/kernels.manifest" | sed 's/^/  kernels in the launch manifest: /'
SPECC_RUNTIME_LIB="$build/lib/libspecc_runtime.so" python3 "$root/python/examples/move_demo.py"
