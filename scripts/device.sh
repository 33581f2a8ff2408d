#!/usr/bin/env bash
# Everything specc does on a GPU host, in one call: build the MLIR-free runtime
# from kernel artifacts that `specc` made elsewhere (build/artifacts), install
# the Python package, run the GPU tests on the cubin path and again on the
# PTX (JIT) path, run compute-sanitizer over a KV move, and run the benchmark.
# Writes logs and a summary to $OUT (default ./device-out); prints the summary
# last, in a handful of files.
# Usage: scripts/device.sh [ARTIFACT_DIR]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
art=${1:-$root/build/artifacts}
OUT=${OUT:-$root/device-out}
mkdir -p "$OUT"
summary=$OUT/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

say "specc device run: $(date -u +%Y-%m-%dT%H:%MZ) commit ${SPECC_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
for f in kernels.sm_80.cubin kernels.sm_90.cubin kernels.ptx kernels.manifest kernels.host.o; do
  [ -f "$art/$f" ] || { say "missing artifact $art/$f: run scripts/build.sh where MLIR is"; exit 1; }
done

rt=/tmp/specc-runtime
cmake -S "$root" -B "$rt" -G Ninja -DSPECC_RUNTIME_ONLY=ON -DSPECC_KERNEL_ARTIFACTS="$art" > "$OUT/build.log" 2>&1 &&
  cmake --build "$rt" >> "$OUT/build.log" 2>&1 || { say "runtime build FAILED"; tail -30 "$OUT/build.log"; exit 1; }
say "runtime build: ok"

# SPECC_DEVICE_SKIP: words among "pip ncu bench" to leave out of a short run.
skip() { [[ " ${SPECC_DEVICE_SKIP:-} " == *" $1 "* ]]; }

site=/tmp/specc-site
if ! skip pip; then
  if SPECC_RUNTIME_ONLY=ON SPECC_KERNEL_ARTIFACTS="$art" python3 -m pip install -q --upgrade \
       --no-build-isolation --no-deps --no-index --target "$site" "$root/python" >> "$OUT/build.log" 2>&1 &&
     PYTHONPATH=$site python3 -c "import specc, torch; print(specc.__file__, specc.backend(0))" >> "$OUT/build.log" 2>&1
  then say "pip install ./python: ok ($(tail -1 "$OUT/build.log"))"
  else say "pip install ./python: FAILED (see build.log)"
  fi
fi

export SPECC_RUNTIME_LIB=$rt/lib/libspecc_runtime.so
cd "$root/python"
export PYTHONPATH=$root/python
run_tests() {  # name, extra env
  local name=$1; shift
  env "$@" python3 -m pytest -q -rs -p no:cacheprovider tests > "$OUT/pytest-$name.log" 2>&1
  say "pytest ($name): $(tail -1 "$OUT/pytest-$name.log")"
}
run_tests cubin SPECC_FORCE_PTX=0
run_tests ptx SPECC_FORCE_PTX=1

cat > /tmp/specc_sanitize.py <<'PY'
import sys; sys.path.insert(0, "tests")
import torch, specc
from gpu_cases import make_case, reference
from test_gpu import _crossed
def run(args, bufs, skip=(), check=True):
    want, _, _ = reference(args, bufs, skip=skip)
    try:
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=check)
    except specc.InputError:
        assert skip, "unexpected InputError"
    torch.cuda.synchronize()
    assert all(torch.equal(a, b) for a, b in zip(bufs, want))
    return specc.last_status()
# bs * W = 480: every block plans alone; 1500: one planner block, the others wait.
for bs, tree in ((96, False), (96, True), (300, True)):
    args, bufs = make_case(bs, 5, tree=tree, layers=2, k_row=160, v_row=20, seed=1)
    run(args, bufs)
# MLA-like rows, a 64-draft tree.
args, bufs = make_case(40, 9, tree=True, num_draft=64, layers=3, k_row=576, mla=True, seed=2)
run(args, bufs)
# Rows shared between requests: staged in one chunk (local) and in depth order.
for bs in (64, 300):
    args, bufs = _crossed(bs, 4, seed=bs)
    assert run(args, bufs)[6] == 2
# One bad request among the others, on both plans.
for bs in (16, 400):
    args, bufs = make_case(bs, 4, tree=True, seed=7)
    args["req_pool_indices"][3] = args["req_to_token"].shape[0] + 1
    st = run(args, bufs, skip={3})
    assert st[0] == 1 and st[4] == 1, st
print("sanitized run ok")
PY
for tool in memcheck racecheck initcheck synccheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 python3 /tmp/specc_sanitize.py > /tmp/sanitizer-$tool.log 2>&1
  say "compute-sanitizer $tool: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/sanitizer-$tool.log | tail -1)"
  cat /tmp/sanitizer-$tool.log >> "$OUT/sanitizer.log"
done

# Per-kernel times of one small and one large tree batch (hardware counters).
skip ncu || for bs in 1 8 32 512; do
  ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size \
    -k regex:. python3 benchmarks/profile_case.py --bs $bs --calls 2 > /tmp/ncu-bs$bs.txt 2>&1
  say "ncu bs=$bs (64 x 2 KiB, tree), last call: $(grep -E 'gpu__time_duration|launch__registers|launch__grid_size' /tmp/ncu-bs$bs.txt \
    | tail -3 | awk '{print $1"="$(NF-1)$(NF)}' | tr '\n' ' ')"
  cat /tmp/ncu-bs$bs.txt >> "$OUT/ncu.txt"
done

if ! skip bench && [ -f benchmarks/bench_move.py ]; then
  python3 benchmarks/bench_move.py --sglang-src "$root/.bench" --out "$OUT/bench.json" \
    ${SPECC_BENCH_ARGS:-} > "$OUT/bench.txt" 2>&1
  say "benchmark: rc=$?"
  cat "$OUT/bench.txt" >> "$summary"
fi
echo "==== summary"; cat "$summary"
