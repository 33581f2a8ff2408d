"""The KV moves that compute-sanitizer checks on a GPU host (scripts/device.sh,
and scripts/ab.sh for a kernel variant): every plan of the fused kernel
(small batches a thread per (request, column), local batches, the planner
block's plan), trees and chains, rows shared between requests, window
targets, bad requests among good ones and bad first requests of a large
batch. Each move is compared with the reference. Run from python/:
  compute-sanitizer --tool memcheck python3 tests/sanitize_cases.py
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import specc  # noqa: E402
import torch  # noqa: E402
from gpu_cases import make_case, reference  # noqa: E402
from test_gpu import _crossed, _window_crossed, run_and_compare  # noqa: E402


def run(args, bufs, skip=(), check=True):
    want, _, _ = reference(args, bufs, skip=skip)
    try:
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=check)
    except specc.InputError:
        assert skip, "unexpected InputError"
    torch.cuda.synchronize()
    assert all(torch.equal(a, b) for a, b in zip(bufs, want))
    return specc.last_status()


def main():
    # bs 4, 8 and 20 at W = 5 (8 lanes a request): validated a thread per
    # (request, column); bs * W = 480: every block plans alone (up to 1024
    # entries), a thread per request; 1500 and 3000: one planner block, the
    # others wait.
    for bs, tree in ((4, True), (8, True), (20, False), (96, False), (96, True), (300, True),
                     (600, False), (600, True)):
        args, bufs = make_case(bs, 5, tree=tree, layers=2, k_row=160, v_row=20, seed=1)
        run(args, bufs)
    # A batch that fills the grid (bs x ceil(buffers / 2) x row slices above its
    # threads): move tasks of four buffers, the last group short.
    args, bufs = make_case(400, 4, tree=True, layers=3, k_row=2048, seed=3)
    run(args, bufs)
    # MLA-like rows, a 64-draft tree.
    args, bufs = make_case(40, 9, tree=True, num_draft=64, layers=3, k_row=576, mla=True, seed=2)
    run(args, bufs)
    # Rows shared between requests: staged in one chunk (local, 256 entries) and
    # in depth order after the planner block's plan (1200 entries; 2800, the
    # first 250 requests crossed).
    for bs, upto in ((64, None), (300, None), (700, 250)):
        args, bufs = _crossed(bs, 4, seed=bs, upto=upto)
        assert run(args, bufs)[6] == 2
    # Crossed sources in a small batch of one warp (bs 8 at W = 4).
    args, bufs = _crossed(8, 4, seed=8)
    run(args, bufs)
    # Window targets (each request's first acc slots of its own verify window):
    # small batches whose out_cache_loc fits in a block's shared memory and one
    # that does not (a 64-draft tree), a larger local batch, the planner's plan.
    for bs, w, draft in ((1, 4, None), (8, 4, None), (20, 5, None), (16, 4, 64), (96, 4, None),
                         (600, 4, None)):
        args, bufs = make_case(bs, w, tree=True, num_draft=draft, layers=2, k_row=160, seed=5)
        run_and_compare(args, bufs, targets="window")
    for bs in (8, 64, 700):
        run_and_compare(*_window_crossed(bs, 4, seed=bs + 1), targets="window")
    # One bad request among the others, on both plans.
    for bs in (16, 400, 700):
        args, bufs = make_case(bs, 4, tree=True, seed=7)
        args["req_pool_indices"][3] = args["req_to_token"].shape[0] + 1
        st = run(args, bufs, skip={3})
        assert st[0] == 1 and st[4] == 1, st
    # Bad first requests of a large batch, which the blocks waiting for the
    # verdict read before validation has judged them (prefetchSources), at the
    # extremes of their types, with both target sources: the GPU test's cases.
    from test_gpu import test_large_batch_bad_first_requests as bad_first
    for kind, targets in (("pool_negative", "req_to_token"), ("seq_max", "req_to_token"),
                          ("slot_max", "req_to_token"), ("index_max", "window"),
                          ("slot_negative", "window"), ("drafts_max", "window")):
        bad_first(kind, targets)
    print("sanitized run ok")


if __name__ == "__main__":
    main()
