#!/usr/bin/env bash
# Kernel variants side by side, in one run on a GPU host. A variant is a
# folder holding a kernels.sm_90.cubin and a kernels.manifest that `specc`
# made from another revision of the lowering (the other artifacts come from
# build/artifacts). For each: a runtime-only build with that image, then the
# move benchmark's specc columns (ctypes binding, no sglang) on one layout;
# last, one table of device time per call (us), a column per variant, and
# how many of each variant's configurations matched the reference.
# Usage: scripts/ab.sh [VARIANT_DIR...]   (default: build/artifacts, then
#        every folder of build/ab); SPECC_AB_LAYOUT (default llama8b; several
#        separated by spaces),
#        SPECC_AB_BS (default "1 8 32 128 512"); SPECC_AB_TESTS: test files
#        of python/tests (e.g. "test_gpu.py") to run on each variant's
#        runtime before its benchmark, so that a variant is timed only
#        after it was shown exact (default: none); SPECC_AB_TESTED: the
#        variants (folder names) those tests run on (default: all; the
#        baseline's image is usually tested already); SPECC_AB_SANITIZE:
#        compute-sanitizer tools (e.g. "memcheck racecheck") to run over
#        python/tests/sanitize_cases.py on the same variants, after their
#        tests; SPECC_AB_ARGS: more
#        arguments for bench_move.py (e.g. "--flush-kind clean");
#        SPECC_AB_PAIRED=1: instead of one bench_move.py run per variant,
#        one python/benchmarks/ab_paired.py run that loads every variant's
#        runtime at once and times their calls in turns (the first variant
#        is the base; SPECC_AB_PAIRED_ARGS: more arguments for it, e.g.
#        "--rounds 200 --targets req_to_token").
# Writes $OUT/ab-<variant>.{json,txt} (or $OUT/ab-paired.{json,md,log}),
# $OUT/ab-tests-<variant>.log and $OUT/ab.md.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$root/device-out}
mkdir -p "$OUT"
. "$root/scripts/image-runtime.sh"
base=$root/build/artifacts
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=("$base" "$root"/build/ab/*)
names=()
for v in "${variants[@]}"; do
  name=$(basename "$v")
  names+=("$name")
  (image_runtime "$root" "$v" "ab-$name" ||
   echo "variant $name: runtime build FAILED (see /tmp/image-rt-ab-$name.log)") &
done
wait
# A variant's runtime library; whether the tests and sanitizers run on a
# variant (SPECC_AB_TESTED); a command run from python/ on a variant's
# runtime through the ctypes binding.
rtlib() { echo "/tmp/image-rt-ab-$1/lib/libspecc_runtime.so"; }
tested() { [ -z "${SPECC_AB_TESTED:-}" ] || [[ " $SPECC_AB_TESTED " == *" $1 "* ]]; }
on_runtime() {
  local name=$1; shift
  (cd "$root/python" && SPECC_NATIVE=0 SPECC_FORCE_PTX=0 SPECC_EXPECT_NATIVE=0 \
     SPECC_RUNTIME_LIB=$(rtlib "$name") PYTHONPATH=$root/python "$@")
}
for name in "${names[@]}"; do
  if [ -n "${SPECC_AB_TESTS:-}" ] && tested "$name"; then
    files=()
    for f in $SPECC_AB_TESTS; do files+=("$root/python/tests/$f"); done
    on_runtime "$name" python3 -m pytest -q -p no:cacheprovider "${files[@]}" \
      > "$OUT/ab-tests-$name.log" 2>&1
    echo "variant $name: tests rc=$? ($(tail -1 "$OUT/ab-tests-$name.log"))"
  fi
  if [ -n "${SPECC_AB_SANITIZE:-}" ] && tested "$name"; then
    for tool in $SPECC_AB_SANITIZE; do
      log=$OUT/ab-sanitize-$tool-$name.log
      on_runtime "$name" compute-sanitizer --tool "$tool" --error-exitcode 9 \
        python3 tests/sanitize_cases.py > "$log" 2>&1
      echo "variant $name: compute-sanitizer $tool rc=$? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|sanitized run ok' "$log" | tr '\n' ' '))"
    done
  fi
  [ -n "${SPECC_AB_PAIRED:-}" ] && continue
  on_runtime "$name" python3 "$root/python/benchmarks/bench_move.py" \
    --sglang-src /nonexistent --layouts ${SPECC_AB_LAYOUT:-llama8b} --bs ${SPECC_AB_BS:-1 8 32 128 512} \
    --reps 50 --host-reps 200 ${SPECC_AB_ARGS:-} --out "$OUT/ab-$name.json" > "$OUT/ab-$name.txt" 2>&1
  echo "variant $name: rc=$? ($(tail -1 "$OUT/ab-$name.txt"))"
done
if [ -n "${SPECC_AB_PAIRED:-}" ]; then
  libs=()
  for name in "${names[@]}"; do libs+=(--lib "$name=$(rtlib "$name")"); done
  PYTHONPATH=$root/python python3 "$root/python/benchmarks/ab_paired.py" "${libs[@]}" \
    --layouts ${SPECC_AB_LAYOUT:-llama8b} --bs ${SPECC_AB_BS:-1 8 32 128 512} \
    ${SPECC_AB_PAIRED_ARGS:-} --out "$OUT/ab-paired.json" > "$OUT/ab-paired.md" 2> "$OUT/ab-paired.log"
  rc=$?
  echo "paired run: rc=$rc (its warnings and errors: $OUT/ab-paired.log)"
  [ $rc -eq 0 ] || tail -20 "$OUT/ab-paired.log"
  tee "$OUT/ab.md" < "$OUT/ab-paired.md"
  exit 0
fi
python3 - "$OUT" "${names[@]}" <<'PY' | tee "$OUT/ab.md"
import json, pathlib, sys
out, names = pathlib.Path(sys.argv[1]), sys.argv[2:]
runs = {}
for n in names:
    try:
        runs[n] = {r["config"]: r for r in json.loads((out / f"ab-{n}.json").read_text())["results"]}
    except (OSError, ValueError, KeyError) as e:
        print(f"variant {n}: no results ({e})")
configs = [c for c in next(iter(runs.values()), {})]
print("| config | " + " | ".join(runs) + " |")
print("|---|" + "---:|" * len(runs))
for c in configs:
    cells = []
    for n in runs:
        us = ((runs[n].get(c) or {}).get("specc") or {}).get("device_us")
        cells.append(f"{us:.2f}" if us else "-")
    print(f"| {c} | " + " | ".join(cells) + " |")
# Whether each timed configuration matched the reference, eager and in a
# graph (bench_move.py's checks before it times a call).
def exact(r):
    checks = [v for k in ("check_eager", "check_graph")
              for v in ((r.get("specc") or {}).get(k) or {"missing": False}).values()]
    return all(v is True for v in checks)
print()
for n, rs in runs.items():
    print(f"{n}: {sum(exact(r) for r in rs.values())} of {len(rs)} configurations exact (eager and graph)")
PY
