#!/usr/bin/env bash
# Everything specc does on a GPU host, in one call: build the MLIR-free runtime
# from kernel artifacts that `specc` made elsewhere (build/artifacts), build
# the wheel (scripts/wheel.sh: runtime + native torch binding) and install it,
# run the GPU tests from the installed wheel on the cubin path, run
# compute-sanitizer over KV moves, run the tests again on the PTX (JIT) path
# and on the ctypes binding, and run the benchmark.
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
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)
say "gpu: $gpu"
# SPECC_DEVICE_GPU: a word the GPU's name must hold (e.g. H200) for the run
# to go on. Results are only comparable on one kind of card, so a run meant
# for one stops here, before it builds anything, when the host has another.
if [ -n "${SPECC_DEVICE_GPU:-}" ] && [[ "${gpu%%,*}" != *"$SPECC_DEVICE_GPU"* ]]; then
  say "not run: the GPU is not an $SPECC_DEVICE_GPU (SPECC_DEVICE_GPU)"
  exit 3
fi
for f in kernels.sm_80.cubin kernels.sm_90.cubin kernels.ptx kernels.manifest kernels.host.o; do
  [ -f "$art/$f" ] || { say "missing artifact $art/$f: run scripts/build.sh where MLIR is"; exit 1; }
done
# The kernels this run tests, named by content: the commit above is only
# what git says of the checkout, which need not be what built them.
say "kernel images: $(cd "$art" && md5sum kernels.sm_90.cubin kernels.sm_80.cubin kernels.ptx | awk '{printf "%s %.8s  ", $2, $1}')"

skip() { [[ " ${SPECC_DEVICE_SKIP:-} " == *" $1 "* ]]; }

# sglang's copy kernel for bs 512 (2048 locations) takes about 5 minutes in
# ptxas, longer than the benchmark waits for a compile. Unless a Triton cache
# is carried in .bench/triton-cache, fill one for bs 512 beside the builds
# and tests (niced workers), so that the benchmark has sglang's bs 512 cells
# (the `512 x60` target) in the same run. bs 2048's does not finish in ptxas.
tcache=$root/.bench/triton-cache
compile_pid=
if ! skip bench && [ -f "$root/.bench/cache_move.py" ] && [ ! -d "$tcache" ]; then
  rm -rf "$tcache.tmp"
  # Whatever compiled is kept, a specialization that ran out of time or
  # failed is compiled (or said missing) by the benchmark itself.
  (cd "$root/python" && python3 benchmarks/bench_move.py --compile-only --sglang-src "$root/.bench" \
     --bs 512 --triton-cache-dir "$tcache.tmp" --compile-budget-s "${SPECC_COMPILE_BUDGET_S:-540}" \
     > "$OUT/compile-sglang.log" 2>&1; rc=$?; mv "$tcache.tmp" "$tcache"; exit $rc) &
  compile_pid=$!
fi

rt=/tmp/specc-runtime
cmake -S "$root" -B "$rt" -G Ninja -DSPECC_RUNTIME_ONLY=ON -DSPECC_KERNEL_ARTIFACTS="$art" \
  -DSPECC_TORCH_EXTENSION=OFF > "$OUT/build.log" 2>&1 &&
  cmake --build "$rt" >> "$OUT/build.log" 2>&1 || { say "runtime build FAILED"; tail -30 "$OUT/build.log"; exit 1; }
say "runtime build: ok"

# SPECC_DEVICE_GPU (above): the card the run is for. SPECC_DEVICE_SKIP:
# words among "tests ptx ctypes sanitize ncu bench" to leave out of a
# short run; SPECC_PTX_TESTS: the test files of the PTX run (default: all);
# SPECC_SANITIZE_TOOLS: the compute-sanitizer tools (default: memcheck
# racecheck initcheck synccheck); SPECC_COMPILE_BUDGET_S: the seconds
# sglang's bs 512 compiles may take (default 540).

# The wheel, as a fleet gets it: built here from the artifacts, installed
# with pip, imported with no compiler and no build step.
site=/tmp/specc-site
rm -rf "$site" /tmp/specc-wheel
t0=$(date +%s)
if "$root/scripts/wheel.sh" "$art" /tmp/specc-wheel >> "$OUT/build.log" 2>&1 &&
   python3 -m pip install -q --no-deps --no-index --target "$site" /tmp/specc-wheel/specc-*.whl >> "$OUT/build.log" 2>&1 &&
   (cd /tmp && PYTHONPATH=$site python3 -c "import torch, specc; assert specc.native_binding(), 'no native binding'; print(specc.__file__, specc.backend(0))") >> "$OUT/build.log" 2>&1
then say "wheel: $(basename /tmp/specc-wheel/specc-*.whl) built and installed in $(( $(date +%s) - t0 )) s; $(tail -1 "$OUT/build.log")"
else say "wheel: FAILED (see build.log)"; tail -20 "$OUT/build.log"
fi

# Tests run on the installed package, from outside the source tree.
unset SPECC_RUNTIME_LIB
export PYTHONPATH=$site
run_tests() {  # name, test paths (relative to python/tests; "" = all), extra env
  local name=$1 files=() f; shift
  for f in $1; do files+=("$root/python/tests/$f"); done; shift
  [ ${#files[@]} -gt 0 ] || files=("$root/python/tests")
  (cd /tmp && env SPECC_EXPECT_PACKAGE="$site" "$@" python3 -m pytest -q -rs -p no:cacheprovider -c "$root/python/pyproject.toml" \
     --rootdir "$root/python" "${files[@]}" > "$OUT/pytest-$name.log" 2>&1)
  say "pytest ($name): $(tail -1 "$OUT/pytest-$name.log")"
}
# The native suite first, then the sanitizers (short, and what a change
# to the kernels most needs), then the PTX path and the ctypes binding,
# the longest runs, so that a call cut short by its time limit loses those.
skip tests || run_tests native-cubin "" SPECC_FORCE_PTX=0 SPECC_EXPECT_NATIVE=1
cd "$root/python"

skip sanitize || for tool in ${SPECC_SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}; do
  compute-sanitizer --tool $tool --error-exitcode 9 python3 tests/sanitize_cases.py > /tmp/sanitizer-$tool.log 2>&1
  say "compute-sanitizer $tool: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/sanitizer-$tool.log | tail -1)"
  cat /tmp/sanitizer-$tool.log >> "$OUT/sanitizer.log"
done
if ! skip tests; then
  skip ptx || run_tests native-ptx "${SPECC_PTX_TESTS:-}" SPECC_FORCE_PTX=1 SPECC_EXPECT_NATIVE=1
  skip ctypes || run_tests ctypes-cubin "" SPECC_FORCE_PTX=0 SPECC_NATIVE=0 SPECC_EXPECT_NATIVE=0
  # The two-GPU tests (tensor-parallel ranks over NCCL, a non-default device,
  # both devices at once) also run inside the suites above; said apart here.
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ "$ngpu" -ge 2 ]; then run_tests multi-gpu "test_multi_gpu.py" SPECC_EXPECT_NATIVE=1
  else say "multi-GPU tests (python/tests/test_multi_gpu.py): skipped, $ngpu GPU here, they need 2"
  fi
fi

# Per-kernel times of one small and one large tree batch (hardware counters).
skip ncu || for bs in 1 8 32 512; do
  ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size \
    -k regex:. python3 benchmarks/profile_case.py --bs $bs --calls 2 > /tmp/ncu-bs$bs.txt 2>&1
  say "ncu bs=$bs (64 x 2 KiB, tree), last call: $(grep -E 'gpu__time_duration|launch__registers|launch__grid_size' /tmp/ncu-bs$bs.txt \
    | tail -3 | awk '{print $1"="$(NF-1)$(NF)}' | tr '\n' ' ')"
  cat /tmp/ncu-bs$bs.txt >> "$OUT/ncu.txt"
done

if ! skip bench && [ -f benchmarks/bench_move.py ]; then
  # A Triton cache carried in .bench/triton-cache (sglang's kernels compiled
  # ahead with --compile-only: its bs-512 copy kernel takes minutes in ptxas).
  if [ -n "$compile_pid" ]; then
    t0=$(date +%s); wait "$compile_pid"
    say "sglang bs 512 compiles: rc=$? (waited $(( $(date +%s) - t0 )) s more); $(tail -1 "$OUT/compile-sglang.log")"
  fi
  cache=(); [ -d "$tcache" ] && cache=(--triton-cache-dir "$tcache")
  python3 benchmarks/bench_move.py --sglang-src "$root/.bench" --out "$OUT/bench.json" \
    "${cache[@]}" ${SPECC_BENCH_ARGS:-} > "$OUT/bench.txt" 2>&1
  say "benchmark: rc=$?"
  cat "$OUT/bench.txt" >> "$summary"
  # The Triton cache, with whatever this run compiled, comes back in one
  # file: unpacked into .bench/ where the run was started, the next run
  # carries it and waits for no compile it already made.
  [ -d "$tcache" ] && tar czf "$OUT/triton-cache.tgz" -C "$root/.bench" triton-cache &&
    say "triton cache: $OUT/triton-cache.tgz ($(du -h "$OUT/triton-cache.tgz" | cut -f1)); unpack with tar xzf triton-cache.tgz -C .bench"
fi
echo "==== summary"; cat "$summary"
