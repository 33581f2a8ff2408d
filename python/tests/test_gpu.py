"""The KV move on real GPU tensors, bit-exact against a pure-torch reference.

Marked `gpu`: skipped, visibly, without torch or a CUDA GPU. scripts/device.sh
runs them on the GPU host, on the cubin path and again with SPECC_FORCE_PTX=1.
"""

import os
import types

import pytest

torch = pytest.importorskip("torch", reason="GPU tests need torch")

import specc  # noqa: E402
from gpu_cases import capture_move, make_case, reference  # noqa: E402

pytestmark = pytest.mark.gpu


def run_and_compare(args, buffers, *, targets="req_to_token", written_twice_free=False, **kw):
    """Moves, then compares every buffer with the reference. With window
    targets the request-table arguments are passed as None. With
    `written_twice_free`, the rows that two entries target (their content is
    outside the contract: pieces of either source) are left out of the
    comparison; every other row must be exact."""
    want, tgt, src = reference(args, buffers, targets=targets)
    call = dict(args)
    if targets == "window":
        call.update(req_pool_indices=None, req_to_token=None, seq_lens=None)
    specc.move_accept_tokens_to_target_kvcache(**call, kv_buffers=buffers, check=True,
                                               targets=targets, **kw)
    torch.cuda.synchronize()
    keep = None
    if written_twice_free:
        tl = tgt.tolist()
        twice = sorted({x for x in tl if tl.count(x) > 1})
        keep = torch.ones(buffers[0].shape[0], dtype=torch.bool, device=buffers[0].device)
        keep[twice] = False
    for i, (got, exp) in enumerate(zip(buffers, want)):
        if keep is not None:
            got, exp = got[keep], exp[keep]
        assert torch.equal(got, exp), f"buffer {i} differs"
    return tgt, src


def test_backend_matches_request():
    b = specc.backend(0)
    if os.environ.get("SPECC_FORCE_PTX") == "1":
        assert b == "ptx"
    else:
        assert b.startswith("cubin") or b == "ptx"


@pytest.mark.parametrize("bs", [1, 3, 64, 517, 4096])
@pytest.mark.parametrize("w", [2, 4, 9])
@pytest.mark.parametrize("tree", [False, True])
def test_random(bs, w, tree):
    args, bufs = make_case(bs, w, tree=tree, layers=2, k_row=128, v_row=96, seed=bs * 31 + w)
    tgt, src = run_and_compare(args, bufs)
    status = specc.last_status()
    assert status[:6] == (0, 0, 0, 0, 0, int((tgt != src).sum()))
    # Trees in sglang's layout keep every hazard inside its request.
    assert status[6] == ((1 if tree else 0) if status[5] else 0)


@pytest.mark.parametrize("row", [64, 12, 20, 33, 576, 1024, 2048, 8192])
def test_row_sizes(row):
    args, bufs = make_case(97, 5, tree=True, layers=3, k_row=row, v_row=max(row // 2, 1), seed=row)
    run_and_compare(args, bufs)


@pytest.mark.parametrize("rpi,ncd,acc,ocl", [
    (torch.int64, torch.int64, torch.int64, torch.int64),
    (torch.int32, torch.int32, torch.int32, torch.int32),
    (torch.int64, torch.int32, torch.int32, torch.int64),
    (torch.int32, torch.int64, torch.int64, torch.int32),
])
def test_index_dtypes(rpi, ncd, acc, ocl):
    args, bufs = make_case(33, 6, tree=True, rpi_dtype=rpi, ncd_dtype=ncd, acc_dtype=acc,
                           ocl_dtype=ocl, seed=7)
    run_and_compare(args, bufs)


@pytest.mark.parametrize("layers", [1, 24, 128])
def test_layers_and_mla(layers):
    args, bufs = make_case(40, 4, tree=True, layers=layers, k_row=576, mla=True, seed=layers)
    run_and_compare(args, bufs)
    args, bufs = make_case(40, 4, tree=True, layers=layers, k_row=256, v_row=128, seed=layers + 1)
    run_and_compare(args, bufs)


def test_bs0():
    args, bufs = make_case(0, 4, tree=True)
    run_and_compare(args, bufs)


def test_long_request():
    # One request accepting more tokens than a thread block has threads.
    args, bufs = make_case(3, 1500, tree=False, num_draft=1500, seed=5)
    run_and_compare(args, bufs)


def test_rows_outside_targets_unchanged_and_bf16():
    args, _ = make_case(64, 4, tree=True)
    slots = int(args["req_to_token"].max()) + 65
    bufs = [torch.randn(slots, 8, 128, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
    run_and_compare(args, bufs)


def test_bad_request_moves_nothing_the_others_move():
    args, bufs = make_case(16, 4, tree=True, seed=3)
    args["req_pool_indices"][5] = args["req_to_token"].shape[0] + 10
    want, _, _ = reference(args, bufs, skip={5})
    with pytest.raises(specc.InputError, match="req_pool_indices"):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    assert specc.last_status()[4] == 1
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)
    args, bufs = make_case(16, 4, tree=True, seed=4)
    args["out_cache_loc"][3] = bufs[0].shape[0] + 7  # slot past the pool
    args["accept_index"][0, 1] = 3
    args["accept_index"][0, 2:] = -1
    args["num_correct_drafts"][0] = 1
    want, _, _ = reference(args, bufs, skip={0})
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)  # no sync
    assert specc.last_status()[0] == 7 and specc.last_status()[4] == 1
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)
    # Nobody waited for that call: check() reports it, once.
    with pytest.raises(specc.InputError, match="earlier call.*slot") as err:
        specc.check()
    assert err.value.earlier and err.value.status[0] == 7 and err.value.skipped == 1
    specc.check()


def test_serving_loop_bad_request_at_step_37():
    """100 steps of CUDA-graph replay with new inputs each step and a bad
    request (accept_index past out_cache_loc) at step 37: every other
    request's rows are right at every step, the bad request's rows are
    untouched, and specc.check() raises the error during the loop without
    any synchronising call (torch's sync debug mode turns one into an
    error)."""
    bs, w, steps, bad_step, bad_req = 16, 4, 100, 37, 5
    static, bufs = make_case(bs, w, tree=True, seed=1000)
    inputs, inits = [], []
    for step in range(steps):
        args, init = make_case(bs, w, tree=True, seed=1001 + step)
        if step == bad_step:
            args["accept_index"][bad_req, 1] = args["out_cache_loc"].numel() + 3
        inputs.append(args)
        inits.append(init)
    specc.prepare(0, bs * w, bufs)
    graph = capture_move(
        lambda: specc.move_accept_tokens_to_target_kvcache(**static, kv_buffers=bufs))
    torch.cuda.synchronize()
    specc.check()
    snapshots, raised = [], []
    torch.cuda.set_sync_debug_mode("error")
    try:
        for step in range(steps):
            for k in static:
                static[k].copy_(inputs[step][k])
            for b, init in zip(bufs, inits[step]):
                b.copy_(init)
            graph.replay()
            snapshots.append([b.clone() for b in bufs])
            try:
                specc.check()
            except specc.InputError as e:
                raised.append((step, e))
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    assert len(raised) == 1, [step for step, _ in raised]
    step, err = raised[0]
    assert bad_step <= step < steps and err.earlier
    assert err.status[0] in (4, 5) and err.skipped == 1 and "accept_index" in str(err)
    for step in range(steps):
        skip = {bad_req} if step == bad_step else set()
        want, _, _ = reference(inputs[step], inits[step], skip=skip)
        for i, (got, exp) in enumerate(zip(snapshots[step], want)):
            assert torch.equal(got, exp), f"step {step}, buffer {i}"
    specc.check(wait=True)


def test_host_validation_before_launch():
    args, bufs = make_case(8, 4, tree=True)
    with pytest.raises(ValueError, match="another device"):
        specc.move_accept_tokens_to_target_kvcache(**{**args, "seq_lens": args["seq_lens"].cpu()},
                                                   kv_buffers=bufs)
    with pytest.raises(ValueError, match="contiguous"):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=[bufs[0][:, ::2]])
    with pytest.raises(TypeError, match="req_to_token must be int32 or int64"):
        specc.move_accept_tokens_to_target_kvcache(
            **{**args, "req_to_token": args["req_to_token"].float()}, kv_buffers=bufs)


def test_non_default_stream():
    args, bufs = make_case(200, 4, tree=True, seed=11)
    want, _, _ = reference(args, bufs)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
    s.synchronize()
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)


def _captured(args, bufs):
    """Static copies of the index tensors and a CUDA graph of one move on
    them and `bufs` (the mover prepared for their batch first)."""
    static = {k: v.clone() for k, v in args.items()}
    specc.prepare(0, static["accept_index"].numel(), bufs)
    graph = capture_move(
        lambda: specc.move_accept_tokens_to_target_kvcache(**static, kv_buffers=bufs))
    return static, graph


def test_cuda_graph_replay_with_new_indices():
    bs, w = 128, 5
    args, bufs = make_case(bs, w, tree=True, seed=21)
    static, graph = _captured(args, bufs)
    for seed in (22, 23, 24):
        new, _ = make_case(bs, w, tree=True, seed=seed)
        # Same pool geometry: reuse req_to_token's shape, fresh index values.
        for k in static:
            static[k].copy_(new[k])
        for b in bufs:
            b.random_(0, 256)
        want, _, _ = reference(static, bufs)
        graph.replay()
        torch.cuda.synchronize()
        for got, exp in zip(bufs, want):
            assert torch.equal(got, exp)
        assert specc.last_status()[0] == 0


def test_graph_keeps_its_pool_after_another_is_registered():
    """A graph captured on pool A replays on pool A after pool B (other
    buffers, fewer of them, a smaller scratch need) was registered and moved
    on the same thread and device: the captured table and workspace stay."""
    bs, w = 16, 4
    args, bufs_a = make_case(bs, w, tree=True, seed=31)
    other, bufs_b = make_case(bs, w, tree=True, layers=1, seed=32)
    static, graph = _captured(args, bufs_a)
    torch.cuda.synchronize()
    # Pool B, eagerly, on the same thread and device; then a larger batch on
    # B, so that the scratch grows too.
    want_b, _, _ = reference(other, bufs_b)
    specc.move_accept_tokens_to_target_kvcache(**other, kv_buffers=bufs_b, check=True)
    big, bufs_big = make_case(4 * bs, w, tree=True, layers=1, seed=33)
    specc.move_accept_tokens_to_target_kvcache(**big, kv_buffers=bufs_big, check=True)
    for got, exp in zip(bufs_b, want_b):
        assert torch.equal(got, exp)
    before_b = [b.clone() for b in bufs_b]
    before_big = [b.clone() for b in bufs_big]
    for b in bufs_a:
        b.random_(0, 256)
    want_a, _, _ = reference(static, bufs_a)
    graph.replay()
    torch.cuda.synchronize()
    for got, exp in zip(bufs_a, want_a):
        assert torch.equal(got, exp)
    for got, exp in zip(bufs_b + bufs_big, before_b + before_big):
        assert torch.equal(got, exp)


def test_custom_op():
    args, bufs = make_case(10, 4, tree=True, seed=9)
    want, _, _ = reference(args, bufs)
    torch.ops.specc.move_accept_tokens_to_target_kvcache(*args.values(), bufs, True)
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)


def test_binding_is_the_expected_one():
    """SPECC_EXPECT_NATIVE=1 (the device script, on the installed wheel):
    torch tensors take the native binding; SPECC_NATIVE=0: the ctypes one."""
    expect = os.environ.get("SPECC_EXPECT_NATIVE")
    if expect is None:
        pytest.skip("SPECC_EXPECT_NATIVE not set: either binding may serve")
    assert specc.native_binding() == (expect == "1")


def test_custom_op_window_and_errors():
    args, bufs = make_case(12, 4, tree=True, seed=31)
    d = args["out_cache_loc"].numel() // 12
    want, _, _ = reference(args, bufs, targets="window")
    op = torch.ops.specc.move_accept_tokens_to_target_kvcache
    op(None, None, None, args["num_correct_drafts"], args["accept_index"],
       args["out_cache_loc"], bufs, True, "window")
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)
    assert d > 0
    bad = dict(args)
    bad["num_correct_drafts"] = args["num_correct_drafts"].clone()
    bad["num_correct_drafts"][2] = -1
    before = [b.clone() for b in bufs]
    want, _, _ = reference(bad, bufs, skip={2})
    with pytest.raises(ValueError, match="num_correct_drafts"):
        op(*bad.values(), bufs, True)
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)
    with pytest.raises((TypeError, ValueError), match="int32 or int64"):
        op(*{**args, "seq_lens": args["seq_lens"].float()}.values(), before, False)


def test_torch_compile_fullgraph():
    """The op traced by torch.compile(fullgraph=True): its fake kernel lets
    tracing through, the compiled graph moves exactly what eager does."""
    args, bufs = make_case(24, 4, tree=True, seed=41)
    want, _, _ = reference(args, bufs)

    @torch.compile(fullgraph=True)
    def step(rpi, rtt, seq, ncd, acc, ocl, kv):
        torch.ops.specc.move_accept_tokens_to_target_kvcache(rpi, rtt, seq, ncd, acc, ocl, kv)

    step(*args.values(), bufs)
    torch.cuda.synchronize()
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)
    args, _ = make_case(24, 4, tree=True, seed=42)
    want, _, _ = reference(args, bufs)
    step(*args.values(), bufs)
    torch.cuda.synchronize()
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)


def test_pool_registered_once_and_guarded():
    """specc.Pool: registered once, exact, and refused (nothing written)
    once a buffer is resized in place."""
    args, bufs = make_case(20, 4, tree=True, seed=51)
    pool = specc.Pool(bufs)
    for seed in (52, 53):
        want, _, _ = reference(args, bufs)
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=pool, check=True)
        for got, exp in zip(bufs, want):
            assert torch.equal(got, exp)
        args, _ = make_case(20, 4, tree=True, seed=seed)
    if not specc.native_binding():
        return
    bufs[1].resize_(4, bufs[1].shape[1])
    with pytest.raises(ValueError, match="resized or re-pointed"):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=pool)


@pytest.mark.parametrize("mla", [False, True])
def test_sglang_adapter(mla):
    args, bufs = make_case(50, 4, tree=True, layers=6, k_row=256, v_row=128, mla=mla, seed=13)
    want, _, _ = reference(args, bufs)
    pool = (types.SimpleNamespace(kv_buffer=bufs) if mla else
            types.SimpleNamespace(k_buffer=bufs[:6], v_buffer=bufs[6:]))
    batch = types.SimpleNamespace(
        seq_lens=args["seq_lens"], req_pool_indices=args["req_pool_indices"],
        out_cache_loc=args["out_cache_loc"],
        req_to_token_pool=types.SimpleNamespace(req_to_token=args["req_to_token"]))
    allocator = types.SimpleNamespace(get_kvcache=lambda: pool)
    specc.move_accept_tokens_sglang(batch, args["accept_index"], args["num_correct_drafts"],
                                    allocator, check=True)
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)


def _crossed(bs, w, seed, upto=None):
    """Every accepted position of the first `upto` requests (default: all)
    reads another of their entries' targets: swaps, cycles. The other
    requests keep their own sources."""
    args, bufs = make_case(bs, w, tree=True, seed=seed)
    _, tgt, _ = reference(args, bufs)
    ocl = args["out_cache_loc"].clone()
    flat = args["accept_index"].reshape(-1).long()
    keep = flat[flat != -1]
    m = len(tgt) if upto is None else int((args["accept_index"][:upto] != -1).sum())
    g = torch.Generator().manual_seed(seed)
    ocl[keep[:m]] = tgt[:m].to(ocl.device)[torch.randperm(m, generator=g)].to(ocl.dtype)
    args["out_cache_loc"] = ocl
    return args, bufs


# 256 entries: staged in one chunk by every block; 1200, 1600 (only the
# first two requests crossed) and 2400 (the first 250): the planner block's
# depth plan, chunk by chunk. Up to 2048 entries the planner finds the
# hazard with its shared-memory table, then plans with the workspace's.
@pytest.mark.parametrize("bs,upto", [(64, None), (300, None), (400, 2), (600, 250)])
def test_crossed_sources(bs, upto):
    args, bufs = _crossed(bs, 4, seed=bs, upto=upto)
    run_and_compare(args, bufs)
    assert specc.last_status()[6] == 2  # the staged path


def _window_crossed(bs, w, seed):
    """Window targets where every request's accepted drafts read slots that
    the next request writes (the first acc slots of its verify window):
    rows shared between requests, read before they are overwritten."""
    args, bufs = make_case(bs, w, tree=True, seed=seed)
    acc = args["num_correct_drafts"].long().cpu() + 1
    d = args["out_cache_loc"].numel() // bs
    accept = args["accept_index"].cpu().clone()
    for i in range(bs):
        j = (i + 1) % bs
        for k in range(1, int(acc[i])):
            accept[i, k] = j * d + (k - 1) % int(acc[j])
    args["accept_index"] = accept.to(args["accept_index"].device)
    return args, bufs


# A small batch (shared-memory window), a local batch of 300 requests and
# one for the planner block (700).
@pytest.mark.parametrize("bs", [8, 64, 300, 700])
def test_window_crossed(bs):
    args, bufs = _window_crossed(bs, 4, seed=bs + 1)
    run_and_compare(args, bufs, targets="window")
    assert specc.last_status()[4] == 0


def _path_by_rule(args, tgt, src):
    """The path the kernel must take (status field 6), by the rule in
    docs/semantics.md: nothing moves -> 0; one request of at most four
    entries -> 1; a moving target written twice, or
    a moving entry reading a row that another request's entry or an earlier
    entry of its own request writes -> 2 (staged); else 1 (per request)."""
    acc = (args["num_correct_drafts"].long().cpu() + 1).tolist()
    req = [i for i, a in enumerate(acc) for _ in range(a)]
    moving = [e for e in range(len(tgt)) if int(tgt[e]) != int(src[e])]
    if not moving:
        return 0
    # One request whose entries fit one group of four: every pattern moves
    # per request (its group is loaded whole before any of it is stored).
    if len(acc) == 1 and args["accept_index"].shape[1] <= 4:
        return 1
    writer = {}
    for e in moving:
        if int(tgt[e]) in writer:
            return 2
        writer[int(tgt[e])] = e
    for e in moving:
        w = writer.get(int(src[e]))
        if w is not None and (req[w] != req[e] or w < e):
            return 2
    return 1


# Small local batches (4 to 36 entries at W = 4), checked by every block's
# shared-memory table: crossed sources in all or half of the requests, and
# plain trees; every verdict follows the rule, every move is exact.
@pytest.mark.parametrize("bs", [1, 2, 3, 8, 9])
@pytest.mark.parametrize("crossed", ["all", "half", "none"])
def test_small_batch_hazards(bs, crossed):
    for seed in range(4):
        if crossed == "none":
            args, bufs = make_case(bs, 4, tree=True, seed=300 + seed)
        else:
            upto = None if crossed == "all" else max(1, bs // 2)
            args, bufs = _crossed(bs, 4, seed=200 + 10 * bs + seed, upto=upto)
        tgt, src = run_and_compare(args, bufs)
        st = specc.last_status()
        assert st[0] == 0 and st[6] == _path_by_rule(args, tgt, src), (seed, st)


# Small batches (a thread per request column, L lanes a request, L the
# power of two >= W) at widths from 1 to 32, their lanes filling one warp
# or a little more: crossed sources (swaps, cycles, reads of another
# request's target) in all or some requests, two requests sharing their
# targets (a row written twice), and plain trees. Every verdict follows the
# rule, every move is exact.
@pytest.mark.parametrize("bs,w", [(1, 32), (2, 16), (3, 8), (4, 8), (5, 8), (8, 3),
                                  (10, 3), (16, 2), (17, 2), (32, 1), (33, 1)])
@pytest.mark.parametrize("kind", ["all", "some", "shared", "none"])
def test_small_batch_widths(bs, w, kind):
    paths = set()
    for seed in range(6):
        seed += 1000 * bs + 10 * w
        if kind in ("all", "some"):
            args, bufs = _crossed(bs, w, seed=seed,
                                  upto=None if kind == "all" else max(1, bs // 2))
        else:
            args, bufs = make_case(bs, w, tree=True, seed=seed)
        if kind == "shared" and bs > 1:
            # The last request writes the first one's rows (same pool row and
            # length) from its own sources: targets written twice, whose rows
            # end up holding pieces of either source (outside the contract),
            # every other row exact.
            for name in ("req_pool_indices", "seq_lens"):
                args[name][-1] = args[name][0]
            tgt, src = run_and_compare(args, bufs, written_twice_free=True)
        else:
            tgt, src = run_and_compare(args, bufs)
        st = specc.last_status()
        want = _path_by_rule(args, tgt, src)
        assert st[0] == 0 and st[6] == want, (seed, st, want)
        paths.add(want)
    if kind == "none":
        assert paths <= {0, 1}
    elif kind == "all" and w > 1:
        assert 2 in paths, paths


# Past 2048 entries the planner checks with the workspace's table, its
# probes a batch of a thread's entries at a time: plain trees (every hazard
# inside its request), a few requests crossed (the last ones, and some near
# the middle), and a random half of the requests with order hazards of their
# own. Every verdict follows the rule, every move is exact.
@pytest.mark.parametrize("bs", [600, 2100])
@pytest.mark.parametrize("kind", ["plain", "crossed", "inside"])
def test_workspace_table_verdicts(bs, kind):
    args, bufs = _large_case(bs, kind, seed=bs + len(kind))
    tgt, src = run_and_compare(args, bufs)
    st = specc.last_status()
    want = _path_by_rule(args, tgt, src)
    assert want == (1 if kind == "plain" else 2)
    assert st[0] == 0 and st[6] == want, st


def _large_case(bs, kind, seed):
    """A batch of W = 4 trees: `plain`; `crossed`, four requests (the last
    two, two near the middle) reading other entries' targets; `inside`, a
    random half of the requests reading at entry 3 the row their entry 1
    writes; `shared`, the last request writing the first one's rows."""
    if kind == "crossed":
        args, bufs = _crossed(bs, 4, seed=seed, upto=None)
        # Only a few requests keep crossed sources: the others get their own.
        plain, _ = make_case(bs, 4, tree=True, seed=seed)
        ocl = args["out_cache_loc"].view(bs, -1)
        keep = torch.ones(bs, dtype=torch.bool)
        keep[[bs // 2 - 1, bs // 2, bs - 2, bs - 1]] = False
        ocl[keep] = plain["out_cache_loc"].view(bs, -1)[keep]
    else:
        args, bufs = make_case(bs, 4, tree=kind != "inside", seed=seed, slots_extra=bs)
    if kind == "inside":
        # Requests in a random half read, at entry 3, the row that their
        # entry 1 writes (written before read).
        g = torch.Generator().manual_seed(seed)
        rt, ocl = args["req_to_token"], args["out_cache_loc"]
        used = set(rt.flatten().tolist()) | set(ocl.tolist())
        spare = [x for x in range(1, bufs[0].shape[0]) if x not in used]
        d = ocl.shape[0] // bs
        for n, r in enumerate(torch.randperm(bs, generator=g)[: bs // 2].tolist()):
            row, s0 = int(args["req_pool_indices"][r]), int(args["seq_lens"][r])
            args["num_correct_drafts"][r] = 3
            args["accept_index"][r] = torch.arange(r * d, r * d + 4,
                                                   dtype=args["accept_index"].dtype)
            ocl[r * d + 1] = spare[n]
            ocl[r * d + 3] = rt[row, s0 + 1]
    if kind == "shared":
        for name in ("req_pool_indices", "seq_lens"):
            args[name][-1] = args[name][0]
    return args, bufs


# Past the local capacity every block claims the slots of its moving entries
# in a table in the workspace (its words tagged with 1 + the launch's epoch
# mod 254), which a launch whose verdict moves zeroes for the next one of
# its size; one that stops early leaves it. 260 launches on one workspace:
# every tag in use, some twice; sizes in the pattern 300, 300, 600, so that
# a launch meets the table its predecessor of the same size cleared, or
# the lists of a larger launch over it; plain, crossed, inside and shared
# batches in turn. Every verdict follows the rule, every move is exact (the
# rows written twice aside).
def test_claims_across_launches():
    kinds = ("plain", "crossed", "plain", "inside", "plain", "shared")
    wants = {k: set() for k in kinds}
    for n in range(260):
        bs, kind = (300, 300, 600)[n % 3], kinds[(n // 2) % len(kinds)]
        args, bufs = _large_case(bs, kind, seed=5000 + n)
        tgt, src = run_and_compare(args, bufs, written_twice_free=kind == "shared")
        st = specc.last_status()
        want = _path_by_rule(args, tgt, src)
        assert st[0] == 0 and st[6] == want, (n, kind, st)
        wants[kind].add(want)
    # The cases are what they say: plain trees keep their hazards inside
    # their requests; crossed and inside ones (a few requests each, which
    # may draw paths that cross nothing) mostly do not.
    assert wants["plain"] == {1} and 2 in wants["crossed"] and 2 in wants["inside"], wants


# One request, in entry order: entry 1 reads the row its last entry writes
# (a later write), the last entry reads the row entry 1 writes (an earlier
# write), or the two swap their rows (a cycle). A request of at most four
# entries (one group) is moved by threads that each load the whole group,
# in every buffer of their task, before they store any of it, so every
# pattern is exact on the per-request path: with 16-byte rows, unaligned
# rows (the byte path, out of line) and rows of two lengths. With five
# entries (two groups) an earlier write is staged.
@pytest.mark.parametrize("case", ["later", "earlier", "swap"])
@pytest.mark.parametrize("w", [3, 4, 5])
@pytest.mark.parametrize("rows", [(64, 64), (20, 20), (64, 96)])
def test_one_request_order(case, w, rows):
    args, bufs = make_case(1, w, tree=False, k_row=rows[0], v_row=rows[1], seed=41 + w)
    args["num_correct_drafts"][0] = w - 1
    args["accept_index"][0] = torch.arange(w, dtype=args["accept_index"].dtype)
    rt = args["req_to_token"]
    row, s0 = int(args["req_pool_indices"][0]), int(args["seq_lens"][0])
    used = set(rt.flatten().tolist())
    spare = [x for x in range(1, bufs[0].shape[0]) if x not in used][:w]
    ocl = args["out_cache_loc"]
    for j in range(1, w):               # entries 1.. move a spare row
        ocl[j] = spare[j - 1]
    last = w - 1
    if case in ("later", "swap"):
        ocl[1] = rt[row, s0 + last]
    if case in ("earlier", "swap"):
        ocl[last] = rt[row, s0 + 1]
    tgt, src = run_and_compare(args, bufs)
    st = specc.last_status()
    want = 1 if w <= 4 or case == "later" else 2
    assert st[0] == 0 and st[5] == w - 1, st
    assert st[6] == want == _path_by_rule(args, tgt, src), st


# Past the local capacity, with W > 4 (the per-request move goes four
# entries at a time): request 10's entry 5 reads the row its entry 1 writes,
# an order hazard inside one request that another block than the planner
# validated (unless it also validated the last chunk). The planner's writer
# table must find it: the verdict is the staged move.
def test_large_batch_order_hazard_inside_a_request():
    bs, w, r = 1500, 6, 10
    args, bufs = make_case(bs, w, tree=False, seed=23)
    args["num_correct_drafts"][r] = w - 1
    args["accept_index"][r] = torch.arange(r * w, (r + 1) * w, dtype=args["accept_index"].dtype)
    rt = args["req_to_token"]
    row, s0 = int(args["req_pool_indices"][r]), int(args["seq_lens"][r])
    used = set(rt.flatten().tolist())
    spare = next(x for x in range(1, bufs[0].shape[0]) if x not in used)
    ocl = args["out_cache_loc"]
    ocl[r * w + 1] = spare              # entry 1 moves spare -> its target
    ocl[r * w + 5] = rt[row, s0 + 1]    # entry 5 reads that target
    run_and_compare(args, bufs)
    st = specc.last_status()
    assert st[0] == 0 and st[5] == 2 and st[6] == 2, st


# 1025 to 2048 entries at W = 6 (not a power of two): the planner's
# shared-memory check must tell a request's entries from its neighbours'.
# Request 37 of 300: entry 2 reads the row its entry 4 writes (a later
# write: per request); entry 5 reads its entry 1's row (an earlier write:
# staged); its last entry reads the row request 38's first entry writes, or
# request 38's first entry reads the row request 37's last one writes
# (across requests: staged).
@pytest.mark.parametrize("case", ["later", "earlier", "next", "previous"])
def test_large_plan_request_bounds(case):
    bs, w, r = 300, 6, 37
    args, bufs = make_case(bs, w, tree=False, seed=61)
    rt, ocl = args["req_to_token"], args["out_cache_loc"]
    used = set(rt.flatten().tolist())
    spare = iter(x for x in range(1, bufs[0].shape[0]) if x not in used)
    for q in (r, r + 1):
        args["num_correct_drafts"][q] = w - 1
        args["accept_index"][q] = torch.arange(q * w, (q + 1) * w, dtype=args["accept_index"].dtype)
    def target(q, j):
        return rt[int(args["req_pool_indices"][q]), int(args["seq_lens"][q]) + j]
    def moves(q, j):
        ocl[q * w + j] = next(spare)
    if case == "later":
        moves(r, 4)
        ocl[r * w + 2] = target(r, 4)
    elif case == "earlier":
        moves(r, 1)
        ocl[r * w + 5] = target(r, 1)
    elif case == "next":
        moves(r + 1, 0)
        ocl[r * w + w - 1] = target(r + 1, 0)
    else:
        moves(r, w - 1)
        ocl[(r + 1) * w] = target(r, w - 1)
    tgt, src = run_and_compare(args, bufs)
    st = specc.last_status()
    want = _path_by_rule(args, tgt, src)
    assert want == (1 if case == "later" else 2)
    assert st[0] == 0 and st[6] == want, st


# 1025 to 2048 entries: the planner checks the batch with a table of i32
# keys in its shared memory; a safe batch moves request by request.
@pytest.mark.parametrize("bs", [257, 384, 512])
def test_large_plan_in_shared_memory(bs):
    args, bufs = make_case(bs, 4, tree=True, seed=bs + 7)
    t, s = run_and_compare(args, bufs)
    st = specc.last_status()
    assert st[0] == 0 and st[5] == int((t != s).sum()) > 0 and st[6] == 1, st


# When bs x ceil(buffers / 2) x row slices exceeds the grid's threads, a
# move task covers four buffers (each case here does): rows of 16 to 512
# slices (a block per row at 8 KiB), unaligned rows (the byte path), buffer
# counts that leave the last group short, and wide requests.
@pytest.mark.parametrize("row,w,layers", [
    (2048, 4, 3), (2047, 4, 3), (8192, 4, 1), (1040, 5, 5), (256, 4, 40), (2048, 50, 3)])
def test_large_batch_wide_tasks(row, w, layers):
    args, bufs = make_case(400, w, tree=True, layers=layers, k_row=row,
                           v_row=max(row // 2, 1), seed=row + w)
    t, s = run_and_compare(args, bufs)
    st = specc.last_status()
    assert st[0] == 0 and st[5] == int((t != s).sum()) > 0 and st[6] == 1, st


# Past 1024 entries every block validates chunks of 256 requests into the
# workspace and the block that validates the last chunk plans: the status
# must sum every chunk and name the lowest bad request, whichever block saw
# it; the control words must be clean for the next call, large or small.
@pytest.mark.parametrize("tree", [False, True])
def test_large_batch_counts_every_chunk(tree):
    bs = 1500  # six chunks
    args, bufs = make_case(bs, 4, tree=tree, seed=17)
    bad = [1300, 700, 260]  # chunks 5, 2 and 1
    for i in bad:
        args["req_pool_indices"][i] = args["req_to_token"].shape[0] + i
    want, tgt, src = reference(args, bufs, skip=set(bad))
    moved = int((tgt != src).sum())
    assert (moved > 0) == tree
    with pytest.raises(specc.InputError, match="req_pool_indices"):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    st = specc.last_status()
    assert (st[0], st[1], st[4], st[5]) == (1, 260, 3, moved), st
    assert st[6] == (1 if tree else 0)
    for i, (got, exp) in enumerate(zip(bufs, want)):
        assert torch.equal(got, exp), f"buffer {i} differs"
    # The next calls start from clean control words: a large good batch, a
    # small one, and the large one again.
    for n, seed in [(bs, 18), (8, 19), (bs, 20)]:
        a2, b2 = make_case(n, 4, tree=tree, seed=seed)
        t2, s2 = run_and_compare(a2, b2)
        st = specc.last_status()
        assert st[0] == 0 and st[4] == 0 and st[5] == int((t2 != s2).sum()), st


# A large launch leaves the workspace ready for the next one as it goes
# (the control words carry an epoch; no block counts out at the end): each
# launch must read its own verdict and totals, never the previous one's.
def test_large_batches_back_to_back():
    bs = 700  # 2800 entries: three chunks
    kinds = [True, True, False, True, False, True]
    cases = [make_case(bs, 4, tree=t, num_draft=8, seed=40 + k) for k, t in enumerate(kinds)]
    bufs = cases[0][1]
    want = bufs
    for args, _ in cases:
        want, _, _ = reference(args, want)
    # Queued back to back: no host synchronisation between the launches.
    for args, _ in cases:
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
    torch.cuda.synchronize()
    assert specc.last_status()[0] == 0
    for i, (got, exp) in enumerate(zip(bufs, want)):
        assert torch.equal(got, exp), f"buffer {i} differs"


def test_cuda_graph_replays_of_a_large_batch():
    bs, w = 600, 4
    args, bufs = make_case(bs, w, tree=True, seed=50)
    static, graph = _captured(args, bufs)
    for seed in (51, 52, 53):
        new, _ = make_case(bs, w, tree=True, seed=seed)
        for k in static:
            static[k].copy_(new[k])
        for b in bufs:
            b.random_(0, 256)
        once, tgt, src = reference(static, bufs)
        twice, _, _ = reference(static, once)
        # Two replays queued back to back, then one check.
        graph.replay()
        graph.replay()
        torch.cuda.synchronize()
        st = specc.last_status()
        assert st[0] == 0 and st[5] == int((tgt != src).sum()) > 0, st
        for i, (got, exp) in enumerate(zip(bufs, twice)):
            assert torch.equal(got, exp), f"seed {seed}: buffer {i} differs"


def test_cycles_past_staging_capacity_change_nothing():
    # About 2500 moved rows, all on cycles: more than one shared-memory chunk.
    args, bufs = _crossed(1024, 4, seed=5)
    before = [b.clone() for b in bufs]
    with pytest.raises(specc.InputError, match="cycles"):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    assert specc.last_status()[0] == 8
    for got, exp in zip(bufs, before):
        assert torch.equal(got, exp)


def test_adversarial_overlap():
    # Sources that are other requests' targets, swaps and cycles.
    args, bufs = make_case(64, 4, tree=True, seed=17)
    want0, tgt, _ = reference(args, bufs)
    n = len(tgt)
    perm = torch.randperm(args["out_cache_loc"].numel())
    # Point every accepted position at some other request's target slot.
    ocl = args["out_cache_loc"].clone()
    flat = args["accept_index"].reshape(-1).long()
    keep = flat[flat != -1]
    ocl[keep] = tgt.to(ocl.device)[torch.randperm(n)].to(ocl.dtype)
    args["out_cache_loc"] = ocl
    del perm, want0
    run_and_compare(args, bufs)


def test_vectors(vectors):
    for case in vectors:
        dt = torch.int64 if case["index_dtype"] == "int64" else torch.int32
        bs, w = case["bs"], case["W"]
        args = dict(
            req_pool_indices=torch.tensor(case["req_pool_indices"], dtype=dt).reshape(bs),
            req_to_token=torch.tensor(case["req_to_token"], dtype=torch.int32),
            seq_lens=torch.tensor(case["seq_lens"], dtype=dt).reshape(bs),
            num_correct_drafts=torch.tensor(case["num_correct_drafts"], dtype=dt).reshape(bs),
            accept_index=torch.tensor(case["accept_index"], dtype=dt).reshape(bs, w),
            out_cache_loc=torch.tensor(case["out_cache_loc"], dtype=dt).reshape(-1))
        args = {k: v.cuda() for k, v in args.items()}
        bufs = [torch.frombuffer(bytearray(bytes.fromhex("".join(r))), dtype=torch.uint8)
                .reshape(len(r), -1).cuda() for r in case["buffers_before"]]
        after = [torch.frombuffer(bytearray(bytes.fromhex("".join(r))), dtype=torch.uint8)
                 .reshape(len(r), -1).cuda() for r in case["expected_buffers_after"]]
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
        moved = sum(t != s for t, s in zip(case["expected_tgt"], case["expected_src"]))
        assert specc.last_status()[:6] == (0, 0, 0, 0, 0, moved), case["name"]
        for got, exp in zip(bufs, after):
            assert torch.equal(got, exp), case["name"]


def test_two_threads_on_two_streams():
    """Two threads, each on its own stream and pool, moving at once: each
    gets its own mover (per device and thread), both bit-exact."""
    import threading

    cases = [make_case(64, 4, tree=True, seed=s) for s in (31, 32)]
    wants = [reference(a, b)[0] for a, b in cases]
    errors = []

    def worker(k):
        try:
            stream = torch.cuda.Stream()
            args, bufs = cases[k]
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
                assert specc.last_status()[0] == 0
            stream.synchronize()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for (args, bufs), want in zip(cases, wants):
        for got, exp in zip(bufs, want):
            assert torch.equal(got, exp)


# Bad values at the extremes of their types: the field, the value, the code.
_EXTREMES = {
    "pool_negative": ("req_pool_indices", -1, 1),
    "drafts_max": ("num_correct_drafts", 2**63 - 1, 5),
    "seq_max": ("seq_lens", 2**63 - 1, 3),
    "index_negative": ("accept_index", -7, 4),
    "index_max": ("accept_index", 2**31 - 1, 4),
    "slot_negative": ("out_cache_loc", -3, 7),
    "slot_max": ("out_cache_loc", 2**63 - 1, 7),
}


def _violate(args, kind, i, slots):
    """Request i of a make_case batch made bad in one way (one of the kinds
    below, or of _EXTREMES); the status code the kernel reports for it."""
    a = {k: v.clone() for k, v in args.items()}
    if kind in _EXTREMES:
        field, value, code = _EXTREMES[kind]
        if field == "accept_index":
            a[field][i, 0] = value
        elif field == "out_cache_loc":
            a[field][int(a["accept_index"][i, 0])] = value
        else:
            a[field][i] = value
        return a, code
    kept = int((a["accept_index"][i] != -1).sum())
    if kind == "pool":
        a["req_pool_indices"][i] = a["req_to_token"].shape[0] + 5
        return a, 1
    if kind == "drafts":
        a["num_correct_drafts"][i] = -1
        return a, 2
    if kind == "seq":
        a["seq_lens"][i] = a["req_to_token"].shape[1]
        return a, 3
    if kind == "index":
        a["accept_index"][i, 0] = a["out_cache_loc"].numel() + 3
        return a, 4
    if kind == "count":
        a["num_correct_drafts"][i] = kept  # one more than the kept columns allow
        return a, 5
    assert kind == "slot"
    a["out_cache_loc"][int(a["accept_index"][i, 0])] = slots + 7
    return a, 7


def _expect_skipped(args, bufs, bad, code, targets="req_to_token"):
    """One call (check=False) on a batch whose request `bad` is bad: the
    status reports `code` for it, one request skipped and the other
    requests' moving entries moved; every buffer is exactly the reference
    with that request left out; check() then raises."""
    want, tgt, src = reference(args, bufs, skip={bad}, targets=targets)
    call = dict(args)
    if targets == "window":
        call.update(req_pool_indices=None, req_to_token=None, seq_lens=None)
    specc.move_accept_tokens_to_target_kvcache(**call, kv_buffers=bufs, targets=targets)
    torch.cuda.synchronize()
    st = specc.last_status()
    assert st[0] == code and st[4] == 1 and st[5] == int((tgt != src).sum()), st
    for i, (got, exp) in enumerate(zip(bufs, want)):
        assert torch.equal(got, exp), f"buffer {i} differs"
    with pytest.raises(specc.InputError):
        specc.check()


@pytest.mark.parametrize("w", [1, 3, 5, 32, 33])
@pytest.mark.parametrize("kind", ["pool", "drafts", "seq", "index", "count", "slot"])
def test_small_batch_violations(w, kind):
    """Batches of at most 256 request lanes (a power of two >= W lanes a
    request, W <= 32) are validated a thread per (request, column); W = 33
    takes the per-request rounds. Either way: the bad request is skipped and
    reported with its code, the others move exactly."""
    bs = 6
    args, bufs = make_case(bs, w, tree=True, seed=w * 7 + len(kind))
    bad, code = _violate(args, kind, 2, bufs[0].shape[0])
    _expect_skipped(bad, bufs, 2, code)


_ROWS_ONLY = {"pool", "seq", "pool_negative", "seq_max"}


# Past bs x W = 1024, the blocks that validate no chunk read the first
# requests' inputs before validation has judged them, to prefetch their
# source rows into L2 while the verdict is made (every request of these
# small rows is within that prefetch's budget). A bad request there, of
# every kind and at the extremes of its type, must be skipped and reported
# as in any batch, every other request moved exactly, with either target
# source. scripts/device.sh runs such batches under compute-sanitizer.
@pytest.mark.parametrize("kind,targets", [
    (kind, targets)
    for targets in ("req_to_token", "window")
    for kind in ("pool", "drafts", "seq", "index", "count", "slot", *_EXTREMES)
    # With window targets the request table is not read.
    if targets == "req_to_token" or kind not in _ROWS_ONLY])
def test_large_batch_bad_first_requests(kind, targets):
    bs, w, bad = 600, 4, 2
    args, bufs = make_case(bs, w, tree=True, seed=len(kind) * 5 + len(targets))
    args, code = _violate(args, kind, bad, bufs[0].shape[0])
    _expect_skipped(args, bufs, bad, code, targets)


@pytest.mark.parametrize("bs,w,draft", [(1, 1, None), (7, 3, None), (64, 4, None), (65, 4, None),
                                        (32, 8, None), (8, 32, None), (16, 4, 64), (3, 4, 300)])
def test_small_batch_window_targets(bs, w, draft):
    """Window targets on both sides of the small-batch bound (64 requests at
    W = 4), and small batches whose out_cache_loc (bs x draft slots) is too
    long for a block's shared memory: exact, nothing skipped."""
    args, bufs = make_case(bs, w, tree=True, num_draft=draft, seed=bs * 3 + w)
    run_and_compare(args, bufs, targets="window")
    assert specc.last_status()[4] == 0
