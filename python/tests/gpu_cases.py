"""Random inputs shaped like sglang's, and a pure-torch reference.

A request r owns a row of req_to_token; its draft tokens were written to the
slots at positions seq_len .. seq_len + num_draft of that row, which are also
its out_cache_loc segment. topk = 1 drafts are chains (accepted path 0..acc-1,
so every target equals its source); topk > 1 drafts are trees (the accepted
path is an increasing list of nodes starting at the root, so a target is
another entry's source).
"""

from __future__ import annotations

import torch


def make_case(bs, w, *, tree, num_draft=None, layers=2, k_row=64, v_row=None,
              mla=False, rpi_dtype=torch.int64, ncd_dtype=torch.int64,
              acc_dtype=torch.int32, ocl_dtype=torch.int64, device="cuda",
              seed=0, slots_extra=64):
    g = torch.Generator().manual_seed(seed)
    num_draft = num_draft or (max(8, w) if tree else w)
    max_reqs = bs + 3
    pool_len = 64 + num_draft + 8
    slots = 1 + max_reqs * pool_len + slots_extra
    perm = torch.randperm(slots - 1, generator=g) + 1  # slot 0 is the pad slot
    req_to_token = perm[: max_reqs * pool_len].reshape(max_reqs, pool_len).to(torch.int32)
    rows = torch.randperm(max_reqs, generator=g)[:bs]
    seq_lens = torch.randint(0, 64, (bs,), generator=g)
    acc_len = torch.randint(1, w + 1, (bs,), generator=g)
    accept = torch.full((bs, w), -1, dtype=torch.int64)
    ocl = torch.zeros(bs * num_draft, dtype=torch.int64)
    for i in range(bs):
        r, s, a = int(rows[i]), int(seq_lens[i]), int(acc_len[i])
        ocl[i * num_draft:(i + 1) * num_draft] = req_to_token[r, s:s + num_draft].to(torch.int64)
        if tree:
            rest = torch.randperm(num_draft - 1, generator=g)[: a - 1] + 1
            path = torch.cat([torch.zeros(1, dtype=torch.int64), rest.sort().values])
        else:
            path = torch.arange(a)
        accept[i, :a] = i * num_draft + path
    v_row = v_row or k_row
    sizes = [k_row] * layers if mla else [k_row] * layers + [v_row] * layers
    buffers = [torch.randint(0, 256, (slots, n), dtype=torch.uint8, generator=g) for n in sizes]
    args = dict(
        req_pool_indices=rows.to(rpi_dtype), req_to_token=req_to_token,
        seq_lens=seq_lens.to(rpi_dtype), num_correct_drafts=(acc_len - 1).to(ncd_dtype),
        accept_index=accept.to(acc_dtype), out_cache_loc=ocl.to(ocl_dtype))
    args = {k: v.to(device) for k, v in args.items()}
    return args, [b.to(device) for b in buffers]


def reference(args, buffers, skip=(), targets="req_to_token"):
    """Gather all, then scatter: the definition, in plain torch ops, per
    request; requests in `skip` (bad input) move nothing."""
    acc = args["num_correct_drafts"].long().cpu() + 1
    bs = len(acc)
    accept = args["accept_index"].long().cpu()
    ocl = args["out_cache_loc"].long().cpu()
    tgts, srcs = [], []
    for i in range(bs):
        if i in skip:
            continue
        a = int(acc[i])
        if targets == "window":
            d = len(ocl) // bs
            tgts.append(ocl[i * d:i * d + a])
        else:
            r = int(args["req_pool_indices"][i])
            s0 = int(args["seq_lens"][i])
            tgts.append(args["req_to_token"].cpu()[r, s0:s0 + a].long())
        row = accept[i]
        srcs.append(ocl[row[row != -1]])
    empty = torch.zeros(0, dtype=torch.long)
    tgt = torch.cat(tgts) if tgts else empty
    src = torch.cat(srcs) if srcs else empty
    out = [b.clone() for b in buffers]
    if len(tgt):
        dev = buffers[0].device if buffers else "cpu"
        t, s = tgt.to(dev), src.to(dev)
        for o, b in zip(out, buffers):
            o[t] = b[s]
    return out, tgt, src


def capture_move(move):
    """Runs ``move`` once on a side stream (the warm-up outside capture that
    sglang does too), then captures it in a CUDA graph on the current device
    and stream; returns the graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        move()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        move()
    return graph
