"""specc.sglang (the adapter for sglang's move_accept_tokens_to_target_kvcache)
on torch CUDA tensors, bit-exact against an independent reference.

The numpy twin of this file is test_sglang.py (CPU path). Here every tensor is
a torch CUDA tensor, laid out as sglang's are, and the expected result is
computed from CPU copies taken before the call, in plain torch/Python, as
docs/semantics.md defines it: the target of entry (i, j) is
req_to_token[req_pool_indices[i], seq_lens[i] + j] (targets="req_to_token") or
out_cache_loc.view(bs, -1)[i, j] (targets="window"), its source is
out_cache_loc[a] for the j-th entry a != -1 of accept_index[i]; every source
row is gathered first, then scattered onto the targets. Buffers are compared
as bytes (``.view(torch.uint8)``, so fp8 and NaN bit patterns compare exactly),
every row of every buffer, and the rows that are not targets must be unchanged.

Covered:

* MHA pools: bf16 K/V (K and V of different head dims), fp8 (float8_e4m3fn)
  K/V, FP4 pools (uint8 packed K/V plus ``k_scale_buffer``/``v_scale_buffer``
  of another row size, float8_e4m3fn or uint8 scale rows): every buffer moves,
  scales included;
* MLA pools: ``kv_buffer`` bf16 and fp8, rows of 576 and of 320 elements;
* the same pools as instances of classes named and placed like sglang's
  (MHATokenToKVPool, MHATokenToKVPoolFP4, MLATokenToKVPool,
  HybridLinearKVPool), whose own move_kv_cache must never run;
* all 64 int32/int64 combinations of req_pool_indices, req_to_token, seq_lens,
  num_correct_drafts, accept_index, out_cache_loc (MHA bf16, both target
  sources), and three combinations for every other pool kind;
* both target sources, on batches where two requests' req_to_token rows were
  handed to new requests after verify read them, so the two sources give
  different bytes (asserted) and a wrong choice fails;
* bs = 0: no error, nothing changes;
* -1 sentinels between accepted entries of a row (the contract counts the
  entries that are not -1, wherever they sit);
* CUDA-graph capture of the adapter call (after ``specc.sglang.prepare``),
  replayed with new index values copied into the captured tensors.

Marked ``gpu``: skipped, visibly, without torch or without a CUDA GPU.
"""

import itertools
import math
import types

import pytest

torch = pytest.importorskip("torch", reason="sglang GPU tests need torch")
if not torch.cuda.is_available():
    pytest.skip("sglang GPU tests need a CUDA GPU (torch.cuda.is_available() is False)",
                allow_module_level=True)

import specc  # noqa: E402
import specc.sglang as ssg  # noqa: E402
from sglang_fakes import fake_pool_classes, instance  # noqa: E402

pytestmark = pytest.mark.gpu

DEV = "cuda"
I32, I64 = torch.int32, torch.int64
INDEX_NAMES = ("rpi", "rtt", "seq", "ncd", "acc", "ocl")
ALL_COMBOS = list(itertools.product((I32, I64), repeat=len(INDEX_NAMES)))
ALL32 = (I32,) * 6
ALL64 = (I64,) * 6
# What sglang itself passes: int64 positions and lengths, int32 req_to_token
# and accept_index, int32 accept lengths.
SGLANG = (I64, I32, I64, I32, I32, I64)
SOME_COMBOS = [ALL32, ALL64, SGLANG]
TARGETS = ("req_to_token", "window")
OTHER = {"req_to_token": "window", "window": "req_to_token"}


def combo_id(combo):
    return "-".join(f"{n}{32 if d is I32 else 64}" for n, d in zip(INDEX_NAMES, combo))


# --------------------------------------------------------------------------
# Batches shaped like sglang's.

def make_case(seed, bs=8, w=4, d=6, slots=160, pool_len=40, reuse=(1, 5), dtypes=ALL64):
    """bs requests whose verify windows hold d fresh slots each, with tree
    paths of 1..w accepted tokens (request 0 accepts w, the last one 1). The
    rows of the requests in `reuse` were handed to new requests after verify:
    req_to_token no longer names the slots of their windows."""
    g = torch.Generator().manual_seed(seed)
    max_reqs = bs + 3
    fresh = (torch.randperm(slots - 1, generator=g) + 1).tolist()  # slot 0: sglang's pad slot
    reuse = tuple(i for i in reuse if i < bs)
    assert (bs + len(reuse)) * d <= len(fresh)
    rtt = torch.randint(1, slots, (max_reqs, pool_len), generator=g, dtype=torch.int64)
    rows = torch.randperm(max_reqs, generator=g)[:bs]
    seq_lens = torch.randint(0, pool_len - d + 1, (bs,), generator=g, dtype=torch.int64)
    ocl = torch.zeros(bs * d, dtype=torch.int64)
    accept = torch.full((bs, w), -1, dtype=torch.int64)
    ncd = torch.zeros(bs, dtype=torch.int64)
    for i in range(bs):
        r, s = int(rows[i]), int(seq_lens[i])
        window = torch.tensor([fresh.pop() for _ in range(d)], dtype=torch.int64)
        rtt[r, s:s + d] = window
        ocl[i * d:(i + 1) * d] = window
        a = w if i == 0 else 1 if i == bs - 1 else int(torch.randint(1, w + 1, (1,), generator=g))
        rest = (torch.randperm(d - 1, generator=g)[:a - 1] + 1).sort().values
        path = torch.cat([torch.zeros(1, dtype=torch.int64), rest])
        accept[i, :a] = i * d + path
        ncd[i] = a - 1
    for i in reuse:
        r, s = int(rows[i]), int(seq_lens[i])
        rtt[r, s:s + d] = torch.tensor([fresh.pop() for _ in range(d)], dtype=torch.int64)
    rpi_t, rtt_t, seq_t, ncd_t, acc_t, ocl_t = dtypes
    batch = types.SimpleNamespace(
        req_pool_indices=rows.to(rpi_t).to(DEV),
        seq_lens=seq_lens.to(seq_t).to(DEV),
        out_cache_loc=ocl.to(ocl_t).to(DEV),
        req_to_token_pool=types.SimpleNamespace(req_to_token=rtt.to(rtt_t).to(DEV)))
    return types.SimpleNamespace(batch=batch, accept_index=accept.to(acc_t).to(DEV),
                                 num_correct_drafts=ncd.to(ncd_t).to(DEV), bs=bs, w=w, d=d,
                                 slots=slots, reuse=reuse)


def empty_case(w=4, slots=160, pool_len=40, dtypes=ALL64):
    """bs = 0: every per-request tensor empty, req_to_token as always."""
    rpi_t, rtt_t, seq_t, ncd_t, acc_t, ocl_t = dtypes
    g = torch.Generator().manual_seed(77)
    rtt = torch.randint(1, slots, (3, pool_len), generator=g, dtype=torch.int64)
    batch = types.SimpleNamespace(
        req_pool_indices=torch.zeros(0, dtype=rpi_t, device=DEV),
        seq_lens=torch.zeros(0, dtype=seq_t, device=DEV),
        out_cache_loc=torch.zeros(0, dtype=ocl_t, device=DEV),
        req_to_token_pool=types.SimpleNamespace(req_to_token=rtt.to(rtt_t).to(DEV)))
    return types.SimpleNamespace(batch=batch,
                                 accept_index=torch.full((0, w), -1, dtype=acc_t, device=DEV),
                                 num_correct_drafts=torch.zeros(0, dtype=ncd_t, device=DEV),
                                 bs=0, w=w, slots=slots)


def index_tensors(case):
    b = case.batch
    return [b.req_pool_indices, b.req_to_token_pool.req_to_token, b.seq_lens,
            case.num_correct_drafts, case.accept_index, b.out_cache_loc]


# --------------------------------------------------------------------------
# The definition, from CPU copies.

def pairs(case, targets):
    """(targets, sources) of every accepted entry, in request then path order,
    read from CPU copies of the index tensors."""
    b = case.batch
    ocl = b.out_cache_loc.cpu().tolist()
    accept = case.accept_index.cpu().tolist()
    ncd = case.num_correct_drafts.cpu().tolist()
    bs = len(ncd)
    if targets == "req_to_token":
        rpi = b.req_pool_indices.cpu().tolist()
        seq = b.seq_lens.cpu().tolist()
        rtt = b.req_to_token_pool.req_to_token.cpu().tolist()
    tgt, src = [], []
    for i in range(bs):
        acc = ncd[i] + 1
        if targets == "window":
            d = len(ocl) // bs
            t = ocl[i * d:i * d + acc]
        else:
            t = rtt[rpi[i]][seq[i]:seq[i] + acc]
        s = [ocl[a] for a in accept[i] if a != -1]
        assert len(t) == len(s) == acc, "the test's own case breaks the count invariant"
        tgt += t
        src += s
    assert len(set(tgt)) == len(tgt), "the test's own case has duplicate targets"
    return tgt, src


def as_bytes(t):
    """The buffer's bytes, [slots, row_bytes], on the CPU (a copy)."""
    return t.detach().contiguous().view(torch.uint8).reshape(t.shape[0], -1).cpu().clone()


def reference(before, tgt, src):
    """Gather every source row, then scatter onto the targets (byte rows)."""
    out = [b.clone() for b in before]
    if tgt:
        t = torch.tensor(tgt, dtype=torch.int64)
        s = torch.tensor(src, dtype=torch.int64)
        gathered = [b.index_select(0, s).clone() for b in before]
        for o, v in zip(out, gathered):
            o[t] = v
    return out


def assert_buffers(bufs, want, before, tgt, what=""):
    """Every row of every buffer as `want`; the rows outside the targets as
    `before`."""
    untouched = torch.ones(before[0].shape[0] if before else 0, dtype=torch.bool)
    if tgt:
        untouched[torch.tensor(tgt, dtype=torch.int64)] = False
    for k, (buf, exp, old) in enumerate(zip(bufs, want, before)):
        got = as_bytes(buf)
        assert got.shape == exp.shape
        if not torch.equal(got, exp):
            bad = (got != exp).any(dim=1).nonzero().flatten().tolist()
            raise AssertionError(f"{what}buffer {k} ({buf.dtype}, row {tuple(buf.shape[1:])}): "
                                 f"{len(bad)} rows differ from the reference, e.g. {bad[:8]}")
        assert torch.equal(got[untouched], old[untouched]), f"{what}buffer {k}: a row outside " \
                                                            "the targets changed"


# --------------------------------------------------------------------------
# Pools shaped like sglang's, on the GPU.

def rand_rows(g, slots, shape, dtype):
    """[slots, *shape] of `dtype` holding random bytes (any bit pattern)."""
    elem = torch.empty(0, dtype=dtype).element_size()
    nbytes = math.prod(shape) * elem
    raw = torch.randint(0, 256, (slots, nbytes), generator=g, dtype=torch.uint8)
    return raw.view(dtype).reshape((slots,) + tuple(shape)).to(DEV)


F8 = torch.float8_e4m3fn
BF16 = torch.bfloat16
U8 = torch.uint8

# kind: (family, layers, builder of the fields for `slots` rows)
POOL_KINDS = {
    # MHATokenToKVPool, bf16; K and V of different head dims.
    "mha_bf16": ("mha", 2, dict(k=((2, 64), BF16), v=((2, 32), BF16))),
    # MHATokenToKVPool with fp8 K/V.
    "mha_fp8": ("mha", 2, dict(k=((4, 64), F8), v=((4, 48), F8))),
    # MHATokenToKVPoolFP4: two FP4 values per byte, one scale per 16 values.
    "mha_fp4_scale_fp8": ("mha", 2, dict(k=((2, 64), U8), v=((2, 64), U8),
                                         ks=((2, 8), F8), vs=((2, 8), F8))),
    "mha_fp4_scale_u8": ("mha", 3, dict(k=((3, 32), U8), v=((3, 32), U8),
                                        ks=((3, 4), U8), vs=((3, 4), U8))),
    # MLATokenToKVPool: latent + rope, one head.
    "mla_bf16_576": ("mla", 3, dict(kv=((1, 576), BF16))),
    "mla_fp8_576": ("mla", 3, dict(kv=((1, 576), F8))),
    "mla_bf16_320": ("mla", 2, dict(kv=((1, 320), BF16))),
    "mla_fp8_320": ("mla", 2, dict(kv=((1, 320), F8))),
}
EXPECTED_BUFFERS = {k: layers * len(spec) for k, (_, layers, spec) in POOL_KINDS.items()}


def make_pool_fields(kind, slots=160, seed=1):
    family, layers, spec = POOL_KINDS[kind]
    g = torch.Generator().manual_seed(seed)

    def layer_list(key):
        shape, dtype = spec[key]
        return [rand_rows(g, slots, shape, dtype) for _ in range(layers)]

    if family == "mha":
        fields = dict(k_buffer=layer_list("k"), v_buffer=layer_list("v"))
        if "ks" in spec:
            fields.update(k_scale_buffer=layer_list("ks"), v_scale_buffer=layer_list("vs"))
        return fields
    return dict(kv_buffer=layer_list("kv"))


def all_buffers(fields):
    """Every buffer sglang's move of such a pool moves, in the adapter's order."""
    out = []
    for name in ("k_buffer", "v_buffer", "k_scale_buffer", "v_scale_buffer", "kv_buffer"):
        if fields.get(name) is not None:
            out += list(fields[name])
    return out


def allocator(pool):
    return types.SimpleNamespace(get_kvcache=lambda: pool)


def refill(bufs, seed):
    """New random bytes in every buffer, in place (same tensors)."""
    g = torch.Generator().manual_seed(seed)
    for b in bufs:
        view = b.view(torch.uint8)
        view.copy_(torch.randint(0, 256, tuple(view.shape), generator=g, dtype=torch.uint8))


# --------------------------------------------------------------------------
# One adapter call, checked.

def run_and_check(case, fields, targets, pool=None, check=True, **kw):
    """Runs the adapter on `case` over the pool made of `fields` and checks
    every buffer against the reference; returns (tgt, src)."""
    pool = types.SimpleNamespace(**fields) if pool is None else pool
    bufs = all_buffers(fields)
    planned = list(ssg.pool_kv_buffers(pool))
    assert len(planned) == len(bufs) and all(a is b for a, b in zip(planned, bufs)), \
        "the adapter does not move every buffer of the pool"
    before = [as_bytes(b) for b in bufs]
    tgt, src = pairs(case, targets)
    want = reference(before, tgt, src)
    if case.bs:
        # The reused rows make the two target sources disagree: a wrong choice
        # of source fails below.
        otgt, osrc = pairs(case, OTHER[targets])
        other = reference(before, otgt, osrc)
        assert any(not torch.equal(a, b) for a, b in zip(want, other)), \
            "the case does not tell the two target sources apart"
        # Every buffer, scales included, has rows that must change.
        for k, (exp, old) in enumerate(zip(want, before)):
            assert not torch.equal(exp, old), f"buffer {k} would not change: weak case"
    ssg.move_accept_tokens(case.batch, case.accept_index, case.num_correct_drafts,
                           allocator(pool), targets=targets, check=check, **kw)
    torch.cuda.synchronize()
    assert_buffers(bufs, want, before, tgt)
    status = specc.last_status()
    assert status[0] == 0, status
    assert status[4] == 0 and status[5] == sum(t != s for t, s in zip(tgt, src)), status
    return tgt, src


# --------------------------------------------------------------------------
# The tests.

@pytest.mark.parametrize("targets", TARGETS)
@pytest.mark.parametrize("combo", ALL_COMBOS, ids=[combo_id(c) for c in ALL_COMBOS])
def test_index_dtypes_all_combinations(combo, targets):
    seed = ALL_COMBOS.index(combo)
    case = make_case(seed=100 + seed, dtypes=combo)
    for t, dt in zip(index_tensors(case), combo):
        assert t.dtype == dt and t.is_cuda
    run_and_check(case, make_pool_fields("mha_bf16", seed=200 + seed), targets)


@pytest.mark.parametrize("targets", TARGETS)
@pytest.mark.parametrize("combo", SOME_COMBOS, ids=[combo_id(c) for c in SOME_COMBOS])
@pytest.mark.parametrize("kind", list(POOL_KINDS))
def test_pool_kinds(kind, combo, targets):
    k = list(POOL_KINDS).index(kind) * 10 + SOME_COMBOS.index(combo)
    case = make_case(seed=300 + k, dtypes=combo)
    fields = make_pool_fields(kind, seed=400 + k)
    assert len(all_buffers(fields)) == EXPECTED_BUFFERS[kind]
    run_and_check(case, fields, targets)


def test_two_sources_disagree_and_each_gives_its_own_bytes():
    """The reused rows: the req_to_token source writes fresh slots the window
    source leaves alone, and the other way round; each call must give its own
    source's bytes, not the other's."""
    for targets in TARGETS:
        case = make_case(seed=500)
        fields = make_pool_fields("mha_fp4_scale_fp8", seed=501)
        bufs = all_buffers(fields)
        before = [as_bytes(b) for b in bufs]
        tgt, src = pairs(case, targets)
        otgt, osrc = pairs(case, OTHER[targets])
        assert tgt != otgt and src == osrc  # only the targets differ
        assert set(tgt) != set(otgt)
        wrong = reference(before, otgt, osrc)
        run_and_check(case, fields, targets)
        assert any(not torch.equal(as_bytes(b), w) for b, w in zip(bufs, wrong))


@pytest.mark.parametrize("targets", TARGETS)
@pytest.mark.parametrize("combo", [ALL32, ALL64], ids=["all32", "all64"])
@pytest.mark.parametrize("kind", ["mha_bf16", "mha_fp4_scale_fp8", "mla_fp8_576"])
def test_bs0_changes_nothing(kind, combo, targets):
    case = empty_case(dtypes=combo)
    fields = make_pool_fields(kind, seed=600)
    bufs = all_buffers(fields)
    before = [as_bytes(b) for b in bufs]
    run_and_check(case, fields, targets)
    for b, old in zip(bufs, before):
        assert torch.equal(as_bytes(b), old)
    assert specc.last_status()[:6] == (0, 0, 0, 0, 0, 0)


def test_default_targets_is_window_and_the_api_alias_is_req_to_token():
    case = make_case(seed=700, dtypes=SGLANG)
    for call, targets in ((ssg.move_accept_tokens, "window"),
                          (specc.move_accept_tokens_sglang, "req_to_token")):
        fields = make_pool_fields("mla_bf16_576", seed=701)
        bufs = all_buffers(fields)
        before = [as_bytes(b) for b in bufs]
        tgt, src = pairs(case, targets)
        want = reference(before, tgt, src)
        call(case.batch, case.accept_index, case.num_correct_drafts,
             allocator(types.SimpleNamespace(**fields)), check=True)
        torch.cuda.synchronize()
        assert_buffers(bufs, want, before, tgt, what=f"{call.__name__}: ")


@pytest.mark.parametrize("targets", TARGETS)
def test_sentinels_between_accepted_entries(targets):
    """accept_index rows with -1 between accepted entries: the j-th entry that
    is not -1 is the j-th source (docs/semantics.md, section 3)."""
    case = make_case(seed=800, w=4, dtypes=SGLANG)
    acc = case.accept_index.cpu()
    spread = torch.full((case.bs, 2 * case.w), -1, dtype=acc.dtype)
    for i in range(case.bs):
        kept = [int(a) for a in acc[i] if a != -1]
        for j, a in enumerate(kept):
            spread[i, 2 * j + (i % 2)] = a  # odd requests start with a sentinel
    case.accept_index = spread.to(DEV)
    run_and_check(case, make_pool_fields("mha_fp8", seed=801), targets)


@pytest.mark.parametrize("targets", TARGETS)
@pytest.mark.parametrize("cls_name, kind", [
    ("MHATokenToKVPool", "mha_bf16"),
    ("MHATokenToKVPool", "mha_fp8"),
    ("MHATokenToKVPoolFP4", "mha_fp4_scale_fp8"),
    ("MLATokenToKVPool", "mla_fp8_576"),
    ("HybridLinearKVPool", "mha_fp4_scale_u8"),
])
def test_sglang_pool_classes(cls_name, kind, targets):
    S = fake_pool_classes()
    fields = make_pool_fields(kind, seed=900)
    if cls_name == "HybridLinearKVPool":
        pool = instance(S.HybridLinearKVPool,
                         full_kv_pool=instance(S.MHATokenToKVPoolFP4, layer_num=3, **fields))
    elif cls_name == "MLATokenToKVPool":
        pool = instance(S.MLATokenToKVPool, kv_scale_buffer=None, **fields)
    else:
        pool = instance(getattr(S, cls_name), kv_cache_layout="nhd", use_hnd=False, **fields)
    run_and_check(make_case(seed=901, dtypes=SGLANG), fields, targets, pool=pool)


@pytest.mark.parametrize("targets", TARGETS)
@pytest.mark.parametrize("kind", ["mha_fp4_scale_fp8", "mla_bf16_576"])
def test_cuda_graph_capture_replays_new_indices(kind, targets):
    """sglang captures the move in a CUDA graph: specc.sglang.prepare() loads
    the kernels, sizes the scratch and registers the pool's buffers before
    capture; each replay then moves the index values copied into the captured
    tensors, on the buffers' current bytes."""
    bs, w = 8, 4
    static = make_case(seed=1000, bs=bs, w=w, dtypes=SGLANG)
    fields = make_pool_fields(kind, seed=1001)
    alloc = allocator(types.SimpleNamespace(**fields))
    bufs = all_buffers(fields)
    ssg.prepare(alloc, torch.cuda.current_device(), bs * w)

    def step():
        ssg.move_accept_tokens(static.batch, static.accept_index, static.num_correct_drafts,
                               alloc, targets=targets)

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up outside capture, as sglang does
        step()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    specc.check()
    captured = pairs(static, targets)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    torch.cuda.synchronize()
    specc.check()

    for seed in (1002, 1003, 1004):
        new = make_case(seed=seed, bs=bs, w=w, dtypes=SGLANG)
        for dst, val in zip(index_tensors(static), index_tensors(new)):
            assert dst.shape == val.shape and dst.dtype == val.dtype
            dst.copy_(val)
        refill(bufs, seed + 50)
        torch.cuda.synchronize()
        tgt, src = pairs(static, targets)
        assert (tgt, src) != captured  # the replay must read the new values
        otgt, osrc = pairs(static, OTHER[targets])
        before = [as_bytes(b) for b in bufs]
        want = reference(before, tgt, src)
        assert any(not torch.equal(a, b) for a, b in
                   zip(want, reference(before, otgt, osrc)))
        graph.replay()
        torch.cuda.synchronize()
        assert_buffers(bufs, want, before, tgt, what=f"replay {seed}: ")
        specc.check()
    assert specc.last_status()[0] == 0
    specc.check(wait=True)
