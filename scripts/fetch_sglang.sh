#!/usr/bin/env bash
# Fills .bench/ (git-ignored) with the sglang sources that the benchmark and
# the real-sglang tests read, from sglang's wheel on PyPI (needs the network,
# so run it where PyPI is reachable; a GPU host gets the folder through
# `carry`):
#   .bench/{cache_locs,eagle,cache_move,memory_pool}.py   bench_move.py's
#       --sglang-src: the three Triton kernels and the copy tile heuristic
#   .bench/sglang/srt/    the files of the package's srt/ tree that
#       python/tests/test_sglang.py reads: spec_utils.py, memory_pool.py and
#       every file that names the move (so that the test's search for its
#       importers sees them all), in their places
# No sglang code enters the repository; the benchmark executes the kernels
# from these files at run time.
# Usage: scripts/fetch_sglang.sh [VERSION]   (default 0.5.23)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:-0.5.23}
dest=$root/.bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "sglang==$version"
wheel=$(ls "$tmp"/sglang-"$version"-*.whl)
rm -rf "$dest/sglang"
mkdir -p "$dest/sglang"
python3 - "$wheel" "$dest" <<'PY'
import pathlib, sys, zipfile
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
flat = {
    "sglang/kernels/ops/speculative/cache_locs.py": "cache_locs.py",
    "sglang/kernels/ops/speculative/eagle.py": "eagle.py",
    "sglang/kernels/ops/kvcache/cache_move.py": "cache_move.py",
    "sglang/srt/mem_cache/memory_pool.py": "memory_pool.py",
}
found = set()
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name in flat:
            (dest / flat[name]).write_bytes(z.read(name))
            found.add(name)
        if name.startswith("sglang/srt/") and name.endswith(".py"):
            data = z.read(name)
            if (name.endswith(("/speculative/spec_utils.py", "/mem_cache/memory_pool.py"))
                    or b"move_accept_tokens_to_target_kvcache" in data):
                out = dest / name
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)
missing = sorted(set(flat) - found)
if missing:
    sys.exit(f"fetch_sglang: not in {wheel}: {', '.join(missing)}")
PY
echo "fetch_sglang: sglang $version in $dest ($(du -sh "$dest" | cut -f1))"
