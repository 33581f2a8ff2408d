#!/usr/bin/env bash
# Where the fused kernel's warps wait, per SASS instruction, on a GPU host:
# ncu's warp-state sampling (every 32 cycles) of one call from cold caches
# (`--cache-control all` flushes L2 and the instruction caches before it)
# for a few small batches. For each case, writes to $OUT:
#   stall-<case>.txt   the kernel's warp-state section (stall reasons)
#   stall-<case>.csv   the SASS listing with each instruction's samples
#   stall-<case>.report.txt  its summary (stall_report.py)
# and prints, per case, the samples by stall reason and the instructions
# with the most samples (stall_report.py).
# Usage: python/benchmarks/stall_profile.sh RUNTIME_LIB [CASE...]
#   CASE: tree-BS or chain-BS (default: chain-1 tree-1 tree-8 tree-32)
#   SPECC_STALL_CASE_ARGS: more arguments for profile_case.py, e.g.
#   "--layers 80 --row 256" for Llama-70B TP8's rows (default: Llama-8B's)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib=$1; shift
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(chain-1 tree-1 tree-8 tree-32)
OUT=${OUT:-$here/../../device-out}
mkdir -p "$OUT"
for c in "${cases[@]}"; do
  kind=${c%-*} bs=${c#*-}
  flag=""; [ "$kind" = chain ] && flag=--chain
  rep=/tmp/stall-$c
  rm -f "$rep.ncu-rep"
  (cd "$here/.." && SPECC_NATIVE=0 SPECC_FORCE_PTX=0 SPECC_RUNTIME_LIB=$lib PYTHONPATH=. \
     ncu --clock-control none --cache-control all --section WarpStateStats --section SourceCounters \
       --warp-sampling-interval 0 -k regex:move_accept -s 2 -c 1 -o "$rep" \
       python3 benchmarks/profile_case.py --bs "$bs" $flag --calls 3 ${SPECC_STALL_CASE_ARGS:-} > "$OUT/stall-$c.log" 2>&1)
  ncu -i "$rep.ncu-rep" --page details --print-details all > "$OUT/stall-$c.txt" 2>&1
  ncu -i "$rep.ncu-rep" --page source --print-source sass --csv > "$OUT/stall-$c.csv" 2>&1
  echo "== $c"
  python3 "$here/stall_report.py" "$OUT/stall-$c.csv" > "$OUT/stall-$c.report.txt" 2>&1
  head -40 "$OUT/stall-$c.report.txt"
done
