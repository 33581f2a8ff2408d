#!/usr/bin/env python3
"""Compile time of specc, MLIR to cubin, per kernel source (median of repeats).

Times `specc FILE --emit=cubin --chip=CHIP` end to end (process start, parse,
lowering, NVPTX, ptxas) for each file in kernels/, and also the PTX step
alone. Prints a table and the per-kernel cost (kernels in the file's
manifest). Run on the machine that compiles; results go to
python/benchmarks/results/compile_time.md by hand, with the date and machine.
"""

import argparse
import pathlib
import statistics
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def timed(cmd, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--specc", default=str(ROOT / "build" / "bin" / "specc"))
    ap.add_argument("--chip", default="sm_90")
    ap.add_argument("--repeats", type=int, default=7)
    opts = ap.parse_args()
    print(f"{'kernel file':28} {'kernels':>7} {'ptx ms':>8} {'cubin ms':>9} {'cubin ms/kernel':>16}")
    for path in sorted((ROOT / "kernels").glob("*.mlir")):
        manifest = subprocess.run([opts.specc, str(path), "--emit=manifest"], check=True,
                                  capture_output=True, text=True).stdout
        kernels = sum(1 for line in manifest.splitlines() if line.startswith("kernel "))
        ptx = timed([opts.specc, str(path), "--emit=ptx", f"--chip={opts.chip}", "-o", "/dev/null"],
                    opts.repeats)
        cubin = timed([opts.specc, str(path), "--emit=cubin", f"--chip={opts.chip}", "-o", "/dev/null"],
                      opts.repeats)
        print(f"{path.name:28} {kernels:7d} {ptx:8.1f} {cubin:9.1f} {cubin / kernels:16.1f}")


if __name__ == "__main__":
    main()
