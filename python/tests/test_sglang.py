"""specc.sglang: the adapter for sglang's call, the pools it moves or refuses,
and install()/uninstall() against stub sglang packages; the detection also
against the real sglang 0.5.23 sources when .bench/sglang is there.

Runs on the CPU path (numpy arrays): no GPU, no torch, no sglang needed.
"""

import ast
import importlib
import importlib.util
import logging
import pathlib
import sys
import textwrap
import types

import numpy as np
import pytest

import specc
import specc.sglang as ssg
from specc import api
from sglang_fakes import MEMORY_POOL_MODULE, fake_pool_classes, instance

BENCH = pathlib.Path(__file__).resolve().parents[2] / ".bench" / "sglang"


# --------------------------------------------------------------------------
# Inputs shaped like sglang's, and the definition (docs/semantics.md) in numpy.

def make_case(seed=0, bs=3, w=4, d=6, slots=160, reuse=(1,), dtype=np.int64):
    """bs requests with tree paths over windows of d drafts. The rows of the
    requests in `reuse` were handed to new requests after verify read them:
    req_to_token no longer names the slots of their windows."""
    rng = np.random.default_rng(seed)
    max_reqs, pool_len = bs + 2, 40
    fresh = iter(rng.permutation(np.arange(1, slots)))  # slot 0 is sglang's pad slot
    req_to_token = rng.integers(1, slots, size=(max_reqs, pool_len)).astype(np.int32)
    rows = rng.permutation(max_reqs)[:bs]
    seq_lens = rng.integers(0, pool_len - d, size=bs)
    ocl = np.zeros(bs * d, dtype=np.int64)
    accept = np.full((bs, w), -1, dtype=np.int64)
    acc = np.zeros(bs, dtype=np.int64)
    for i in range(bs):
        window = [int(next(fresh)) for _ in range(d)]
        req_to_token[rows[i], seq_lens[i]:seq_lens[i] + d] = window
        ocl[i * d:(i + 1) * d] = window
        a = int(rng.integers(2, w + 1))
        path = np.concatenate([[0], np.sort(rng.permutation(np.arange(1, d))[:a - 1])])
        accept[i, :a] = i * d + path
        acc[i] = a
    for i in reuse:
        req_to_token[rows[i], seq_lens[i]:seq_lens[i] + d] = [int(next(fresh)) for _ in range(d)]
    batch = types.SimpleNamespace(
        req_pool_indices=rows.astype(dtype), seq_lens=seq_lens.astype(dtype),
        out_cache_loc=ocl.astype(dtype),
        req_to_token_pool=types.SimpleNamespace(req_to_token=req_to_token))
    return batch, accept.astype(dtype), (acc - 1).astype(dtype)


def pairs(batch, accept_index, num_correct_drafts, targets, skip=()):
    ocl = batch.out_cache_loc.astype(np.int64)
    bs = len(num_correct_drafts)
    tgt, src = [], []
    for i in range(bs):
        if i in skip:
            continue
        a = int(num_correct_drafts[i]) + 1
        if targets == "window":
            d = len(ocl) // bs
            tgt += list(ocl[i * d:i * d + a])
        else:
            r, s = int(batch.req_pool_indices[i]), int(batch.seq_lens[i])
            tgt += list(batch.req_to_token_pool.req_to_token[r, s:s + a])
        row = accept_index[i]
        src += list(ocl[row[row != -1]])
    return np.array(tgt, dtype=np.int64), np.array(src, dtype=np.int64)


def reference(buffers, batch, accept_index, num_correct_drafts, targets, skip=()):
    """Gather every source row, then scatter onto the targets; requests in
    `skip` (bad input) move nothing."""
    tgt, src = pairs(batch, accept_index, num_correct_drafts, targets, skip)
    out = [b.copy() for b in buffers]
    for o, b in zip(out, buffers):
        o[tgt] = b[src]
    return out


def rows(rng, slots, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.integers(-1000, 1000, size=(slots,) + shape).astype(dtype)
    return rng.integers(0, 256, size=(slots,) + shape).astype(dtype)


def mha_pool(slots=160, layers=2, fp4=False, seed=1, **extra):
    rng = np.random.default_rng(seed)
    if fp4:  # MHATokenToKVPoolFP4: packed nibbles, one scale byte per 16 values
        heads, head_dim = 2, 32
        pool = dict(
            k_buffer=[rows(rng, slots, (heads, head_dim // 2), np.uint8) for _ in range(layers)],
            v_buffer=[rows(rng, slots, (heads, head_dim // 2), np.uint8) for _ in range(layers)],
            k_scale_buffer=[rows(rng, slots, (heads * head_dim // 16,), np.uint8)
                            for _ in range(layers)],
            v_scale_buffer=[rows(rng, slots, (heads * head_dim // 16,), np.uint8)
                            for _ in range(layers)])
    else:  # K and V of different head dims
        pool = dict(
            k_buffer=[rows(rng, slots, (2, 8), np.float16) for _ in range(layers)],
            v_buffer=[rows(rng, slots, (2, 4), np.float16) for _ in range(layers)])
    pool.update(extra)
    return pool


def mla_pool(slots=160, layers=3, dtype=np.uint8, dim=576, seed=2, **extra):
    # uint8 rows of 576 bytes stand for an fp8 (e4m3) latent + rope cache.
    rng = np.random.default_rng(seed)
    pool = dict(kv_buffer=[rows(rng, slots, (1, dim), dtype) for _ in range(layers)])
    pool.update(extra)
    return pool


def namespace_pool(fields):
    return types.SimpleNamespace(**fields)


def allocator(pool):
    return types.SimpleNamespace(get_kvcache=lambda: pool)


def all_buffers(fields):
    out = []
    for name in ("k_buffer", "v_buffer", "k_scale_buffer", "v_scale_buffer", "kv_buffer",
                 "kv_scale_buffer", "native_k_scale_buffer", "native_v_scale_buffer"):
        if fields.get(name) is not None:
            out += list(fields[name])
    return out


# --------------------------------------------------------------------------
# The adapter: what moves.

@pytest.mark.parametrize("targets", ["window", "req_to_token"])
@pytest.mark.parametrize("kind", ["mha", "mha_fp4", "mla_fp8", "mla_f32"])
def test_adapter_moves_every_buffer_of_the_pool(kind, targets):
    batch, accept, ncd = make_case(seed=3)
    fields = {"mha": lambda: mha_pool(), "mha_fp4": lambda: mha_pool(fp4=True),
              "mla_fp8": lambda: mla_pool(),
              "mla_f32": lambda: mla_pool(dtype=np.float32, dim=72)}[kind]()
    bufs = all_buffers(fields)
    assert len(bufs) == {"mha": 4, "mha_fp4": 8, "mla_fp8": 3, "mla_f32": 3}[kind]
    want = reference(bufs, batch, accept, ncd, targets)
    other = reference(bufs, batch, accept, ncd,
                      "req_to_token" if targets == "window" else "window")
    # The reused row makes the two target sources disagree: a wrong choice fails.
    assert any(not np.array_equal(a, b) for a, b in zip(want, other))
    ssg.move_accept_tokens(batch, accept, ncd, allocator(namespace_pool(fields)),
                           targets=targets, check=True)
    for got, exp in zip(bufs, want):
        assert np.array_equal(got, exp)
    status = specc.last_status()
    tgt, src = pairs(batch, accept, ncd, targets)
    assert status[0] == 0 and status[5] == int(np.sum(tgt != src))


def test_window_is_the_default_and_the_api_alias_keeps_req_to_token():
    batch, accept, ncd = make_case(seed=4)
    fields = mha_pool()
    bufs = all_buffers(fields)
    window = reference(bufs, batch, accept, ncd, "window")
    rtt = reference(bufs, batch, accept, ncd, "req_to_token")
    ssg.move_accept_tokens(batch, accept, ncd, allocator(namespace_pool(fields)), check=True)
    assert all(np.array_equal(g, e) for g, e in zip(bufs, window))

    fields = mha_pool()
    bufs = all_buffers(fields)
    specc.move_accept_tokens_sglang(batch, accept, ncd, allocator(namespace_pool(fields)),
                                    check=True)
    assert all(np.array_equal(g, e) for g, e in zip(bufs, rtt))


def test_window_mode_reads_no_req_to_token():
    batch, accept, ncd = make_case(seed=5)
    slim = types.SimpleNamespace(out_cache_loc=batch.out_cache_loc)  # nothing else
    fields = mla_pool()
    bufs = all_buffers(fields)
    want = reference(bufs, batch, accept, ncd, "window")
    ssg.move_accept_tokens(slim, accept, ncd, allocator(namespace_pool(fields)),
                           targets="window", check=True)
    assert all(np.array_equal(g, e) for g, e in zip(bufs, want))


def test_bad_targets_argument():
    batch, accept, ncd = make_case()
    with pytest.raises(ValueError, match="targets"):
        ssg.move_accept_tokens(batch, accept, ncd, allocator(namespace_pool(mha_pool())),
                               targets="pages")


class _Spy:
    def __init__(self, real):
        self.real, self.calls = real, []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.real(*args, **kwargs)


def test_buffer_list_is_planned_once_per_pool(monkeypatch):
    spy = _Spy(api.move_accept_tokens_to_target_kvcache)
    monkeypatch.setattr(api, "move_accept_tokens_to_target_kvcache", spy)
    pool = namespace_pool(mha_pool(fp4=True))
    for seed in (6, 7):
        batch, accept, ncd = make_case(seed=seed)
        ssg.move_accept_tokens(batch, accept, ncd, allocator(pool))
    first, second = spy.calls[0][0][6], spy.calls[1][0][6]
    assert first is second  # the same list object: api.py's own cache recognises it
    assert first is pool._specc_kv_move_plan.buffers
    assert len(first) == 8
    # New buffer lists on the pool (sglang re-creating its buffers): planned again.
    pool.k_buffer = [b.copy() for b in pool.k_buffer]
    batch, accept, ncd = make_case(seed=8)
    ssg.move_accept_tokens(batch, accept, ncd, allocator(pool))
    third = spy.calls[2][0][6]
    assert third is not first and third[0] is pool.k_buffer[0]
    assert spy.calls[2][1] == {"check": False, "targets": "window"}
    # Window mode hands api.py None for the three req_to_token inputs.
    assert spy.calls[2][0][:3] == (None, None, None)


def test_prepare_registers_the_pool_buffers():
    fields = mha_pool(fp4=True)
    alloc = allocator(namespace_pool(fields))
    ssg.prepare(alloc, -1, 64)
    assert api._movers[api._key(-1, 0)].capacity >= 64
    batch, accept, ncd = make_case(seed=13)
    bufs = all_buffers(fields)
    want = reference(bufs, batch, accept, ncd, "window")
    ssg.move_accept_tokens(batch, accept, ncd, alloc, check=True)
    assert all(np.array_equal(g, e) for g, e in zip(bufs, want))


@pytest.mark.parametrize("device", [-1, "cpu"])
def test_prepare_takes_sglang_device_strings(device):
    fields = mha_pool()
    ssg.prepare(allocator(namespace_pool(fields)), device, 32)
    assert api._movers[api._key(-1, 0)].capacity >= 32


@pytest.mark.parametrize("device, ordinal", [
    ("cuda:3", 3), ("cuda", 0), ("cpu", -1), (2, 2),
    (types.SimpleNamespace(type="cuda", index=1), 1),
    (types.SimpleNamespace(type="cpu", index=None), -1)])
def test_device_forms(device, ordinal, monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # "cuda": ordinal 0
    assert api._device_ordinal(device) == ordinal


@pytest.mark.parametrize("device", ["gpu", "cuda:x", True, 1.0])
def test_bad_device_forms(device):
    with pytest.raises((TypeError, ValueError), match="device"):
        api._device_ordinal(device)


def test_bad_request_still_isolated_through_the_adapter():
    batch, accept, ncd = make_case(seed=9)
    fields = mha_pool()
    bufs = all_buffers(fields)
    want = reference(bufs, batch, accept, ncd, "window", skip=(0,))
    accept = accept.copy()
    accept[0, 1] = len(batch.out_cache_loc) + 3
    with pytest.raises(specc.InputError, match="accept_index"):
        ssg.move_accept_tokens(batch, accept, ncd, allocator(namespace_pool(fields)),
                               check=True)
    assert all(np.array_equal(g, e) for g, e in zip(bufs, want))
    assert specc.last_status()[4] == 1


# --------------------------------------------------------------------------
# Pools refused: the type named, nothing read or written.

S = fake_pool_classes()


class UserMHAPool(S.MHATokenToKVPool):
    """A subclass outside sglang that changes how the move picks buffers."""

    def _slot_move_pointer_buffers(self):
        return list(self.k_buffer)


REFUSED = [
    ("SimpleNamespace", "HND", lambda: namespace_pool(mha_pool(use_hnd=True))),
    ("SimpleNamespace", "vectorized_5d",
     lambda: namespace_pool(mha_pool(kv_cache_layout="vectorized_5d"))),
    ("SimpleNamespace", "native FP4",
     lambda: namespace_pool(mha_pool(native_k_scale_buffer=[np.zeros((160, 4), np.uint8)],
                                     native_v_scale_buffer=[np.zeros((160, 4), np.uint8)]))),
    ("SimpleNamespace", "only one of k_scale_buffer",
     lambda: namespace_pool(mha_pool(k_scale_buffer=[np.zeros((160, 4), np.uint8)]))),
    ("SimpleNamespace", "kv_scale_buffer",
     lambda: namespace_pool(mla_pool(kv_scale_buffer=[np.zeros((160, 36), np.uint8)] * 3))),
    ("SimpleNamespace", "neither", lambda: types.SimpleNamespace(full=1)),
    ("SimpleNamespace", "composite",
     lambda: types.SimpleNamespace(full_kv_pool=namespace_pool(mha_pool()))),
    ("SimpleNamespace", "not contiguous",
     lambda: namespace_pool(dict(kv_buffer=[np.zeros((160, 2, 8), np.uint8)[:, :, ::2]]))),
    ("SimpleNamespace", "sharded",
     lambda: namespace_pool(mla_pool(layer_shard_enabled=True))),
    ("MHATokenToKVPoolMXFP8", "own", lambda: instance(S.MHATokenToKVPoolMXFP8, **mha_pool())),
    ("DSATokenToKVPool", "own", lambda: instance(S.DSATokenToKVPool, **mla_pool())),
    ("SWAKVPool", "own", lambda: instance(S.SWAKVPool, **mha_pool())),
    ("MLATokenToKVPoolFP4", "kv_scale_buffer",
     lambda: instance(S.MLATokenToKVPoolFP4,
                       **mla_pool(kv_scale_buffer=[np.zeros((160, 36), np.uint8)] * 3))),
    ("MHATokenToKVPool", "HND", lambda: instance(S.MHATokenToKVPool, **mha_pool(use_hnd=True))),
    ("UserMHAPool", "overrides _slot_move_pointer_buffers",
     lambda: instance(UserMHAPool, **mha_pool())),
    ("HybridLinearKVPool", "SWAKVPool",
     lambda: instance(S.HybridLinearKVPool, full_kv_pool=instance(S.SWAKVPool, **mha_pool()))),
]


@pytest.mark.parametrize("type_name, why, make", REFUSED, ids=[f"{t}-{w}" for t, w, _ in REFUSED])
def test_unsupported_pool_is_refused_and_nothing_changes(type_name, why, make, monkeypatch):
    spy = _Spy(api.move_accept_tokens_to_target_kvcache)
    monkeypatch.setattr(api, "move_accept_tokens_to_target_kvcache", spy)
    pool = make()
    everything = [a for v in vars(pool).values() if isinstance(v, list) for a in v]
    inner = getattr(pool, "full_kv_pool", None)
    if inner is not None:
        everything += [a for v in vars(inner).values() if isinstance(v, list) for a in v]
    before = [a.copy() for a in everything]
    batch, accept, ncd = make_case(seed=10)
    for targets in ("window", "req_to_token"):
        with pytest.raises(specc.UnsupportedPoolError, match=type_name) as err:
            ssg.move_accept_tokens(batch, accept, ncd, allocator(pool), targets=targets)
        assert why in str(err.value) and "nothing was moved" in str(err.value)
        assert isinstance(err.value, TypeError)
    assert spy.calls == []
    for a, b in zip(everything, before):
        assert np.array_equal(a, b)


SUPPORTED = [
    ("MHATokenToKVPool", lambda: instance(S.MHATokenToKVPool, **mha_pool(kv_cache_layout="nhd",
                                                                         use_hnd=False)), 4),
    ("MHATokenToKVPoolFP4", lambda: instance(S.MHATokenToKVPoolFP4, **mha_pool(fp4=True)), 8),
    ("MLATokenToKVPool", lambda: instance(S.MLATokenToKVPool, **mla_pool(kv_scale_buffer=None)),
     3),
    ("HybridLinearKVPool", lambda: instance(
        S.HybridLinearKVPool, full_kv_pool=instance(S.MHATokenToKVPoolFP4, **mha_pool(fp4=True))),
     8),
]


@pytest.mark.parametrize("name, make, count", SUPPORTED, ids=[s[0] for s in SUPPORTED])
def test_sglang_pool_classes_that_move(name, make, count):
    pool = make()
    fields = vars(pool.full_kv_pool if name == "HybridLinearKVPool" else pool)
    bufs = all_buffers(fields)
    assert len(bufs) == count
    assert ssg.pool_kv_buffers(pool) == bufs
    batch, accept, ncd = make_case(seed=11)
    want = reference(bufs, batch, accept, ncd, "window")
    # The fake classes' own moves raise: only specc's may run.
    ssg.move_accept_tokens(batch, accept, ncd, allocator(pool), check=True)
    assert all(np.array_equal(g, e) for g, e in zip(bufs, want))


@pytest.mark.parametrize("make", [
    lambda: instance(S.NoOpMHATokenToKVPool, **mha_pool(slots=1)),
    lambda: instance(S.MHATokenToKVPool, k_buffer=[], v_buffer=[], layer_num=0),
], ids=["noop", "zero-layers"])
def test_pools_whose_move_does_nothing(make, monkeypatch):
    spy = _Spy(api.move_accept_tokens_to_target_kvcache)
    monkeypatch.setattr(api, "move_accept_tokens_to_target_kvcache", spy)
    pool = make()
    before = [b.copy() for b in all_buffers(vars(pool))]
    batch, accept, ncd = make_case(seed=12)
    ssg.move_accept_tokens(batch, accept, ncd, allocator(pool))
    assert spy.calls == []
    assert all(np.array_equal(a, b) for a, b in zip(all_buffers(vars(pool)), before))


# --------------------------------------------------------------------------
# install() / uninstall() against stub sglang packages (real files, so that
# inspect and ast read them as they read sglang's).

_TARGET_CODE = {
    # sglang 0.5.23: the targets are the front of each verify window.
    "window": """
    tgt_cache_loc = torch.zeros(size, dtype=torch.int64, device=device)
    # Not from batch.req_to_token_pool.req_to_token: a finished request's row
    # may belong to another request by now (a comment: must not count).
    fill_front_out_cache_loc_func(num_correct_drafts + 1, batch.out_cache_loc, tgt_cache_loc)
""",
    # The same, written as the view the docs name.
    "window-view": """
    tgt_cache_loc = batch.out_cache_loc.view(bs, -1)[:, :1].reshape(-1)
""",
    # Before 0.5.23: the next positions of each request's req_to_token row.
    "req_to_token": """
    tgt_cache_loc = torch.zeros(size, dtype=torch.int64, device=device)
    assign_extend_cache_locs[(bs,)](
        batch.req_pool_indices,
        batch.req_to_token_pool.req_to_token,
        batch.seq_lens,
        batch.seq_lens + num_correct_drafts + 1,
        tgt_cache_loc,
        batch.req_to_token_pool.req_to_token.shape[1],
        next_power_of_2(bs),
    )
""",
    "ambiguous": """
    tgt_cache_loc = batch.out_cache_loc.view(bs, -1)
    rows = batch.req_to_token_pool.req_to_token
""",
}

_SPEC_UTILS = '''"""Stub of sglang.srt.speculative.spec_utils for specc's tests."""


def fill_front_out_cache_loc_func(*args):
    raise AssertionError("the stub's own kernels must never run")


fill_accept_out_cache_loc_func = assign_extend_cache_locs = fill_front_out_cache_loc_func


def move_accept_tokens_to_target_kvcache(
    batch,
    accept_index,
    num_correct_drafts,
    token_to_kv_pool_allocator,
):
    """Move accepted tokens to their targets (this docstring names
    req_to_token and out_cache_loc.view(bs, -1): strings do not count)."""
    raise AssertionError("sglang's original move ran")
    bs = len(batch.seq_lens)
    size = bs * accept_index.shape[1]
{target_code}
    accept_out_cache_loc = torch.zeros(size, dtype=torch.int64, device=device)
    fill_accept_out_cache_loc_func(accept_index, batch.out_cache_loc, accept_out_cache_loc, size)
    token_to_kv_pool_allocator.get_kvcache().move_kv_cache(tgt_cache_loc, accept_out_cache_loc)
'''

_IMPORTER = '''"""Stub of {name}: imports the move by name, as sglang's workers do."""

from sglang.srt.speculative.spec_utils import (
    GrammarTree,
    move_accept_tokens_to_target_kvcache,
)


def after_verify(batch, accept_index, accept_lens, allocator):
    move_accept_tokens_to_target_kvcache(batch, accept_index, accept_lens - 1, allocator)
'''

_ALIASED = '''from sglang.srt.speculative.spec_utils import (
    move_accept_tokens_to_target_kvcache as _move,
)


def after_verify(batch, accept_index, accept_lens, allocator):
    _move(batch, accept_index, accept_lens - 1, allocator)
'''


def _purge_sglang():
    for name in [n for n in sys.modules if n == "sglang" or n.startswith("sglang.")]:
        del sys.modules[name]


@pytest.fixture
def stub_sglang(tmp_path, monkeypatch):
    """make(form) writes a stub sglang package whose spec_utils has `form`'s
    targets, and puts it on sys.path."""
    ssg.uninstall()
    _purge_sglang()

    def make(form):
        spec = tmp_path / form / "sglang" / "srt" / "speculative"
        spec.mkdir(parents=True)
        (tmp_path / form / "sglang" / "__init__.py").write_text('__version__ = "0.0-stub"\n')
        (tmp_path / form / "sglang" / "srt" / "__init__.py").write_text("")
        (spec / "__init__.py").write_text("")
        (spec / "spec_utils.py").write_text(
            _SPEC_UTILS.replace("{target_code}", textwrap.indent(
                textwrap.dedent(_TARGET_CODE[form]), "    ").rstrip("\n"))
            + "\n\nclass GrammarTree:\n    pass\n")
        for mod in ("eagle_worker_common", "ngram_worker", "late_worker"):
            (spec / f"{mod}.py").write_text(_IMPORTER.format(name=mod))
        (spec / "dflash_worker.py").write_text(_ALIASED)
        monkeypatch.syspath_prepend(str(tmp_path / form))
        importlib.invalidate_caches()
        return spec

    yield make
    ssg.uninstall()
    _purge_sglang()


def _modules():
    base = "sglang.srt.speculative."
    return {m: sys.modules[base + m] for m in
            ("spec_utils", "eagle_worker_common", "ngram_worker", "dflash_worker")
            if base + m in sys.modules}


@pytest.mark.parametrize("form, expected", [
    ("window", "window"), ("window-view", "window"), ("req_to_token", "req_to_token")])
def test_install_patches_every_holder_detects_the_form_and_uninstalls(
        stub_sglang, form, expected, caplog):
    stub_sglang(form)
    spec_utils = importlib.import_module("sglang.srt.speculative.spec_utils")
    original = spec_utils.move_accept_tokens_to_target_kvcache
    assert ssg.detect_targets(original)[0] == expected
    importlib.import_module("sglang.srt.speculative.dflash_worker")  # loaded before install

    caplog.set_level(logging.INFO, logger="specc.sglang")
    report = ssg.install()
    lines = [r for r in caplog.records if r.name == "specc.sglang"]
    assert len(lines) == 1 and f"targets={expected}" in lines[0].getMessage()
    assert report.installed and report.targets == expected
    assert set(report.modules) == {"sglang.srt.speculative." + m for m in
                                   ("spec_utils", "eagle_worker_common", "ngram_worker",
                                    "dflash_worker")}
    assert report.sglang_version == "0.0-stub" and report.skipped == ()
    mods = _modules()
    replacement = spec_utils.move_accept_tokens_to_target_kvcache
    assert replacement is not original and replacement._specc_targets == expected
    assert replacement._specc_original is original
    for name, mod in mods.items():
        attr = "_move" if name == "dflash_worker" else "move_accept_tokens_to_target_kvcache"
        assert getattr(mod, attr) is replacement, name
    assert ssg.installed() == expected

    # The call sites now run specc, with the detected target source: the
    # reused row makes the other source give other bytes.
    batch, accept, ncd = make_case(seed=20)
    other = "window" if expected == "req_to_token" else "req_to_token"
    for mod in mods.values():
        if mod is spec_utils:
            continue
        fields = mha_pool(fp4=True)
        bufs = all_buffers(fields)
        want = reference(bufs, batch, accept, ncd, expected)
        wrong = reference(bufs, batch, accept, ncd, other)
        mod.after_verify(batch, accept, ncd + 1, allocator(namespace_pool(fields)))
        assert all(np.array_equal(g, e) for g, e in zip(bufs, want))
        assert any(not np.array_equal(g, e) for g, e in zip(bufs, wrong))

    # Idempotent: nothing wrapped twice, one more line.
    again = ssg.install()
    assert again.modules == report.modules and again.targets == expected
    assert spec_utils.move_accept_tokens_to_target_kvcache is replacement
    # A module imported later takes the replacement from spec_utils.
    late = importlib.import_module("sglang.srt.speculative.late_worker")
    assert late.move_accept_tokens_to_target_kvcache is replacement
    with pytest.raises(ValueError, match="uninstall"):
        ssg.install(targets=other)

    undone = ssg.uninstall()
    assert not undone.installed
    assert set(undone.modules) == set(report.modules)
    for name, mod in mods.items():
        attr = "_move" if name == "dflash_worker" else "move_accept_tokens_to_target_kvcache"
        assert getattr(mod, attr) is original, name
    assert ssg.installed() is None
    assert "not installed" in ssg.uninstall().message
    # Reinstall works from a clean state.
    assert ssg.install().modules[0] == "sglang.srt.speculative.spec_utils"


def test_an_import_inside_a_function_gets_the_replacement(stub_sglang):
    """As sglang 0.5.23's pipeline-parallel scheduler mixin does: the name is
    imported inside the method that calls it, so the module holds nothing
    to patch and each call takes whatever spec_utils holds then."""
    spec = stub_sglang("window")
    (spec / "pp_mixin.py").write_text(
        "def resolve():\n"
        "    from sglang.srt.speculative.spec_utils import (\n"
        "        move_accept_tokens_to_target_kvcache,\n"
        "    )\n"
        "    return move_accept_tokens_to_target_kvcache\n")
    mixin = importlib.import_module("sglang.srt.speculative.pp_mixin")  # before install
    original = mixin.resolve()
    report = ssg.install()
    assert "sglang.srt.speculative.pp_mixin" not in report.modules
    got = mixin.resolve()
    assert got is not original and got._specc_original is original
    ssg.uninstall()
    assert mixin.resolve() is original


def test_install_imports_the_known_modules(stub_sglang):
    stub_sglang("window")
    assert "sglang.srt.speculative.ngram_worker" not in sys.modules
    report = ssg.install()
    assert "sglang.srt.speculative.ngram_worker" in report.modules
    assert "sglang.srt.speculative.eagle_worker_common" in report.modules
    ssg.uninstall()
    _purge_sglang()
    report = ssg.install(import_known=False)
    assert report.modules == ("sglang.srt.speculative.spec_utils",)


def test_install_reports_a_known_module_that_fails_to_import(stub_sglang):
    spec = stub_sglang("window")
    (spec / "ngram_worker.py").write_text("raise ImportError('needs a compiled extension')\n")
    report = ssg.install()
    assert report.installed
    assert [m for m, _ in report.skipped] == ["sglang.srt.speculative.ngram_worker"]
    assert "compiled extension" in report.skipped[0][1]


def test_install_refuses_code_it_cannot_read_unless_told(stub_sglang):
    stub_sglang("ambiguous")
    spec_utils = importlib.import_module("sglang.srt.speculative.spec_utils")
    original = spec_utils.move_accept_tokens_to_target_kvcache
    with pytest.raises(specc.SpeccError, match="targets="):
        ssg.install()
    assert spec_utils.move_accept_tokens_to_target_kvcache is original
    assert ssg.installed() is None
    report = ssg.install(targets="window")
    assert report.targets == "window" and "given by the caller" in report.evidence
    assert spec_utils.move_accept_tokens_to_target_kvcache._specc_targets == "window"


def test_replacement_takes_the_original_keywords(stub_sglang, monkeypatch):
    stub_sglang("window")
    ssg.install()
    spec_utils = sys.modules["sglang.srt.speculative.spec_utils"]
    seen = []
    monkeypatch.setattr(ssg, "move_accept_tokens",
                        lambda *a, **k: seen.append((a, k)))
    f = spec_utils.move_accept_tokens_to_target_kvcache
    f(1, 2, num_correct_drafts=3, token_to_kv_pool_allocator=4)
    f(1, 2, 3, 4)
    assert seen == [((1, 2, 3, 4), {"targets": "window"})] * 2
    with pytest.raises(TypeError):
        f(1, 2, 3)
    with pytest.raises(TypeError):
        f(1, 2, 3, 4, draft_token_num=5)


def test_install_without_sglang_is_a_noop(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == "sglang" else real(name, *a, **k))
    monkeypatch.setattr(ssg.logger, "handlers", [])
    monkeypatch.setattr(ssg.logger, "propagate", False)  # no handler anywhere: print
    report = ssg.install()
    assert not report.installed and report.modules == ()
    assert "sglang is not importable" in report.message
    assert "sglang is not importable" in capsys.readouterr().err
    assert ssg.installed() is None


# --------------------------------------------------------------------------
# The real sglang 0.5.23 sources (.bench/sglang, git-ignored: absent in CI).

needs_bench = pytest.mark.skipif(not BENCH.is_dir(),
                                 reason=f"sglang sources not present at {BENCH}")


@needs_bench
def test_real_sglang_0_5_23_is_the_window_form():
    source = (BENCH / "srt" / "speculative" / "spec_utils.py").read_text()
    targets, evidence = ssg.detect_targets_in_source(source)
    assert targets == "window", evidence
    assert "fill_front_out_cache_loc" in evidence
    # Its signature is the one the replacement takes.
    fn = next(n for n in ast.walk(ast.parse(source))
              if isinstance(n, ast.FunctionDef) and n.name == ssg.FUNCTION)
    assert [a.arg for a in fn.args.args] == ["batch", "accept_index", "num_correct_drafts",
                                             "token_to_kv_pool_allocator"]
    assert not fn.args.kwonlyargs and fn.args.vararg is None and fn.args.kwarg is None


@needs_bench
def test_real_importers_are_known():
    """A module that imports the move by name at its top level binds the
    original when it is imported: install() must patch it, so it must be in
    KNOWN_MODULES. An import inside a function (sglang 0.5.23's pipeline
    parallel scheduler mixin has one) resolves the name from the defining
    module at each call and gets the replacement from there."""
    top, local = set(), set()
    for path in (BENCH / "srt").rglob("*.py"):
        tree = ast.parse(path.read_text())
        rel = path.relative_to(BENCH).with_suffix("")
        name = "sglang." + ".".join(rel.parts)
        inside = set()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inside.update(id(n) for n in ast.walk(fn))
        for node in ast.walk(tree):
            if (isinstance(node, ast.ImportFrom) and node.module == ssg.DEFINING_MODULE
                    and any(a.name == ssg.FUNCTION for a in node.names)):
                (local if id(node) in inside else top).add(name)
    assert top, "no module imports the move by name"
    assert top <= set(ssg.KNOWN_MODULES), top - set(ssg.KNOWN_MODULES)
    # 0.5.23's function-local importer is found as one.
    assert "sglang.srt.managers.scheduler_pp_mixin" in local, local


@needs_bench
def test_real_pool_classes_are_judged_as_their_move_requires():
    """Mirror the real memory_pool class tree (names, bases, methods each
    defines) and check which classes the adapter accepts."""
    tree = ast.parse((BENCH / "srt" / "mem_cache" / "memory_pool.py").read_text())
    specs = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    made = {}

    def make(name):
        if name not in made:
            node = specs[name]
            bases = tuple(make(b.id) for b in node.bases
                          if isinstance(b, ast.Name) and b.id in specs) or (object,)
            body = {"__module__": MEMORY_POOL_MODULE}
            for item in node.body:
                if (isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and not item.name.startswith("__")):
                    body[item.name] = lambda self, *a, **k: None
            made[name] = type(name, bases, body)
        return made[name]

    for name in specs:
        make(name)
    mha, mla = made["MHATokenToKVPool"], made["MLATokenToKVPool"]
    accepted = set()
    for name, cls in made.items():
        if issubclass(cls, mha):
            fields = mha_pool(fp4=name.endswith("FP4"))
            if name == "PageMajorMHATokenToKVPool":
                fields["kv_cache_layout"] = "page_major_layer_major"  # fixed by its __init__
        elif issubclass(cls, mla):
            fields = mla_pool()
        elif name == "HybridLinearKVPool":
            fields = {"full_kv_pool": instance(mha, **mha_pool())}
        else:
            fields = mha_pool()
        try:
            ssg.pool_kv_buffers(instance(cls, **fields))
        except specc.UnsupportedPoolError as e:
            assert name in str(e)
            continue
        accepted.add(name)
    assert accepted == {"MHATokenToKVPool", "MHATokenToKVPoolFP4", "NoOpMHATokenToKVPool",
                        "MLATokenToKVPool", "MLATokenToKVPoolFP4", "HybridLinearKVPool"}
    # MLATokenToKVPoolFP4 is accepted above only because the mirror lacks its
    # kv_scale_buffer; a real one holds it and is refused:
    with pytest.raises(specc.UnsupportedPoolError, match="MLATokenToKVPoolFP4"):
        ssg.pool_kv_buffers(instance(made["MLATokenToKVPoolFP4"], **mla_pool(
            kv_scale_buffer=[np.zeros((160, 36), np.uint8)] * 3)))


@needs_bench
def test_real_moves_read_the_buffers_the_adapter_moves():
    """The buffer attributes each real move reads, by name."""
    tree = ast.parse((BENCH / "srt" / "mem_cache" / "memory_pool.py").read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def attrs(cls, method):
        fn = next(f for f in classes[cls].body
                  if isinstance(f, ast.FunctionDef) and f.name == method)
        return {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)}

    slot = attrs("MHATokenToKVPool", "_slot_move_pointer_buffers")
    assert {"k_buffer", "v_buffer", "k_scale_buffer", "v_scale_buffer"} <= slot
    impl = attrs("MHATokenToKVPool", "_move_kv_cache_impl")
    assert {"k_buffer", "v_buffer", "k_scale_buffer", "v_scale_buffer"} <= impl
    assert "use_hnd" in attrs("MHATokenToKVPool", "move_kv_cache")
    assert "native_k_scale_buffer" in attrs("MHATokenToKVPool", "_move_native_fp4_scales")
    mla = attrs("MLATokenToKVPool", "move_kv_cache")
    assert "kv_buffer" in mla and "kv_scale_buffer" not in mla
    assert "full_kv_pool" in attrs("HybridLinearKVPool", "move_kv_cache")
