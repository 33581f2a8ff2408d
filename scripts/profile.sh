#!/usr/bin/env bash
# Hardware-counter profile (ncu) of the fused move kernel on sglang-shaped
# cases, for reading where a call's time goes: per case, the speed-of-light,
# launch, occupancy, warp-state and memory sections, and the per-instruction
# stall samples of the SASS. Needs the wheel installed by scripts/device.sh
# (PYTHONPATH=/tmp/specc-site). Writes $OUT/profile-<case>.{txt,sass.csv}.
# Usage: scripts/profile.sh "tree 1" "tree 32" "chain 512" ...
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$root/device-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-/tmp/specc-site}
cd "$root/python"
for c in "$@"; do
  set -- $c
  kind=$1 bs=$2 layers=${3:-32} row=${4:-2048}
  name="$kind-$bs-$layers-$row"
  flag=""; [ "$kind" = chain ] && flag=--chain
  rep=/tmp/profile-$name
  ncu --clock-control none --launch-skip 1 --launch-count 1 -k regex:move \
    --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats \
    --section SourceCounters --import-source no -f -o "$rep" \
    python3 benchmarks/profile_case.py --bs "$bs" --layers "$layers" --row "$row" $flag --calls 1 \
    > "$OUT/profile-$name.log" 2>&1
  ncu --import "$rep.ncu-rep" --page details > "$OUT/profile-$name.txt" 2>&1
  ncu --import "$rep.ncu-rep" --page source --print-source sass --csv > "$OUT/profile-$name.sass.csv" 2>&1
  echo "profile $name: $(grep -E 'Duration' "$OUT/profile-$name.txt" | head -1)"
done
