"""Runs one KV-move configuration a few times, for a profiler to watch
(`ncu --clock-control none -k regex:. python3 profile_case.py ...`).

The first call loads the kernels; the next --calls calls are the ones worth
reading. Inputs are random and sglang-shaped (tests/gpu_cases.py).
"""

import argparse
import pathlib
import sys

sys.path.append(str(pathlib.Path(__file__).resolve().parents[1]))  # an installed specc first
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

import torch  # noqa: E402

import specc  # noqa: E402
from gpu_cases import make_case  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bs", type=int, default=1)
    ap.add_argument("--w", type=int, default=4)
    ap.add_argument("--chain", action="store_true")
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--row", type=int, default=2048, help="K and V row bytes")
    ap.add_argument("--calls", type=int, default=3)
    opts = ap.parse_args()
    args, bufs = make_case(opts.bs, opts.w, tree=not opts.chain, layers=opts.layers,
                           k_row=opts.row, v_row=opts.row)
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    for _ in range(opts.calls):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
    torch.cuda.synchronize()
    print("status", specc.last_status())


if __name__ == "__main__":
    main()
