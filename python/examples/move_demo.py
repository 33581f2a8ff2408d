"""The main job of specc's quick start: run the KV move on random,
sglang-shaped batches and check every byte against a plain reference.

Uses the GPU (torch tensors) when torch sees one, else the CPU path (numpy
arrays). Trees (topk > 1, sources that are other entries' targets) and
chains, int32 and int64 indices, K and V rows of different sizes.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import specc  # noqa: E402


def make_case(rng, bs, w, tree, idx_dtype, layers, k_row, v_row):
    num_draft = max(8, w) if tree else w
    max_reqs, pool_len = bs + 3, 64 + num_draft + 8
    slots = 1 + max_reqs * pool_len + 64
    req_to_token = (rng.permutation(slots - 1)[: max_reqs * pool_len] + 1).astype(np.int32)
    req_to_token = req_to_token.reshape(max_reqs, pool_len)
    rows = rng.permutation(max_reqs)[:bs]
    seq_lens = rng.integers(0, 64, bs)
    acc = rng.integers(1, w + 1, bs)
    accept = np.full((bs, w), -1, dtype=np.int64)
    ocl = np.zeros(bs * num_draft, dtype=np.int64)
    for i in range(bs):
        r, s, a = rows[i], seq_lens[i], acc[i]
        ocl[i * num_draft:(i + 1) * num_draft] = req_to_token[r, s:s + num_draft]
        path = (np.concatenate([[0], np.sort(rng.permutation(num_draft - 1)[: a - 1] + 1)])
                if tree else np.arange(a))
        accept[i, :a] = i * num_draft + path
    bufs = [rng.integers(0, 256, (slots, n), dtype=np.uint8)
            for n in [k_row] * layers + [v_row] * layers]
    args = dict(req_pool_indices=rows.astype(idx_dtype), req_to_token=req_to_token,
                seq_lens=seq_lens.astype(idx_dtype), num_correct_drafts=(acc - 1).astype(idx_dtype),
                accept_index=accept.astype(idx_dtype), out_cache_loc=ocl.astype(idx_dtype))
    return args, bufs


def reference(args, bufs):
    tgt = np.concatenate([args["req_to_token"][r, s:s + n + 1] for r, s, n in
                          zip(args["req_pool_indices"], args["seq_lens"],
                              args["num_correct_drafts"])] or [np.zeros(0, np.int32)])
    flat = args["accept_index"].reshape(-1)
    src = args["out_cache_loc"][flat[flat != -1]]
    out = []
    for b in bufs:
        o = b.copy()
        o[tgt.astype(np.int64)] = b[src.astype(np.int64)]
        out.append(o)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--cases", type=int, default=24)
    opts = ap.parse_args()
    torch = None
    if opts.device in ("auto", "cuda"):
        try:
            import torch as _torch
            torch = _torch if _torch.cuda.is_available() else None
        except ImportError:
            torch = None
        if opts.device == "cuda" and torch is None:
            print("no CUDA GPU visible to torch", file=sys.stderr)
            return 1
    rng = np.random.default_rng(2026)
    backend = specc.backend(0) if torch else specc.backend(-1)
    moved = 0
    for c in range(opts.cases):
        bs = int(rng.choice([1, 7, 64, 300]))
        w = int(rng.integers(2, 10))
        args, bufs = make_case(rng, bs, w, tree=bool(c % 2), idx_dtype=[np.int64, np.int32][c % 3 == 0],
                               layers=int(rng.integers(1, 5)), k_row=int(rng.choice([64, 96, 256, 20])),
                               v_row=int(rng.choice([64, 48, 128, 33])))
        want = reference(args, bufs)
        if torch:
            targs = {k: torch.from_numpy(v).cuda() for k, v in args.items()}
            tbufs = [torch.from_numpy(b).cuda() for b in bufs]
            specc.move_accept_tokens_to_target_kvcache(**targs, kv_buffers=tbufs, check=True)
            got = [b.cpu().numpy() for b in tbufs]
        else:
            specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
            got = bufs
        for g, e in zip(got, want):
            if not np.array_equal(g, e):
                print(f"MISMATCH in case {c} (bs={bs}, W={w})")
                return 1
        moved += int((args["num_correct_drafts"].astype(np.int64) + 1).sum())
    print(f"specc KV move on {backend}: {opts.cases} random batches ({moved} accepted tokens, "
          "chains and trees) match the reference bit for bit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
