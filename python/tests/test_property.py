"""A randomized property test of the Python API: malformed arguments never
change a KV buffer, and the next valid call is still exact.

Each round builds a valid sglang-shaped case, breaks it one way at random
(dtype, shape, rank, device, strides, an out-of-range value, a count, the
target source, a missing tensor), calls the move and checks that:
  * the call is refused with an error of the expected kind (host checks:
    TypeError / ValueError before any launch; device checks: InputError with
    check=True), or, for a value only the device sees, that the waiting call
    raises InputError;
  * every KV buffer is byte-identical to before (the broken request is the
    batch's only one, so nothing may move);
  * the next valid call, on the same buffers, moves exactly what the
    reference says.
Runs on numpy arrays (the CPU path, in CI), and on torch tensors on the CPU
and the GPU where torch and a GPU are there.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import specc

ROUNDS = 400
TRACE = os.environ.get("SPECC_PROPERTY_TRACE") == "1"
INT64_MAX = 2**63 - 1


class Numpy:
    name = "numpy"

    def asarray(self, a, dtype):
        return np.ascontiguousarray(np.asarray(a, dtype=dtype))

    def to_numpy(self, x):
        return np.asarray(x)

    def copy(self, x):
        return x.copy()

    def equal(self, a, b):
        return np.array_equal(a, b)

    def float32(self, x):
        return x.astype(np.float32)

    def int16(self, x):
        return x.astype(np.int16)

    def strided(self, x):
        """The same values, every other element of a buffer twice as long."""
        big = np.zeros((x.shape[0] * 2,) + x.shape[1:], dtype=x.dtype)
        big[::2] = x
        return big[::2]

    def other_device(self, x):
        return None


class Torch:
    def __init__(self, device):
        import torch

        self.torch, self.device = torch, device
        self.name = f"torch-{device}"

    def asarray(self, a, dtype):
        return self.torch.as_tensor(np.asarray(a, dtype=dtype), device=self.device).contiguous()

    def to_numpy(self, x):
        return x.cpu().numpy()

    def copy(self, x):
        return x.clone()

    def equal(self, a, b):
        return bool(self.torch.equal(a, b))

    def float32(self, x):
        return x.float()

    def int16(self, x):
        return x.to(self.torch.int16)

    def strided(self, x):
        big = self.torch.zeros((x.shape[0] * 2,) + tuple(x.shape[1:]), dtype=x.dtype,
                               device=x.device)
        big[::2] = x
        return big[::2]

    def other_device(self, x):
        return x.cpu() if self.device == "cuda" else None


def backends():
    out = [pytest.param(Numpy, id="numpy")]
    try:
        import torch
    except ImportError:
        return out + [pytest.param(None, id="torch", marks=pytest.mark.skip(
            reason="torch is not installed"))]
    out.append(pytest.param(lambda: Torch("cpu"), id="torch-cpu"))
    out.append(pytest.param(lambda: Torch("cuda"), id="torch-cuda", marks=[
        pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]))
    return out


def make_case(rng, xp):
    """A valid case: bs requests, W columns, trees or chains; returns the
    arguments, the buffers and the window flag."""
    bs = int(rng.integers(1, 5))
    w = int(rng.integers(2, 5))
    drafts = w + int(rng.integers(0, 4))
    max_reqs, pool_len = bs + 2, 24 + drafts
    slots = 1 + max_reqs * pool_len + 8
    perm = rng.permutation(slots - 1) + 1
    r2t = perm[:max_reqs * pool_len].reshape(max_reqs, pool_len)
    rows = rng.permutation(max_reqs)[:bs]
    seq = rng.integers(0, pool_len - drafts, bs)
    acc = rng.integers(1, w + 1, bs)
    accept = np.full((bs, w), -1)
    ocl = np.zeros(bs * drafts, dtype=np.int64)
    for i in range(bs):
        ocl[i * drafts:(i + 1) * drafts] = r2t[rows[i], seq[i]:seq[i] + drafts]
        path = np.concatenate([[0], np.sort(rng.permutation(drafts - 1)[:acc[i] - 1] + 1)])
        accept[i, :acc[i]] = i * drafts + path
    dt = lambda: np.int32 if rng.integers(0, 2) else np.int64  # noqa: E731
    args = dict(req_pool_indices=xp.asarray(rows, dt()), req_to_token=xp.asarray(r2t, dt()),
                seq_lens=xp.asarray(seq, dt()), num_correct_drafts=xp.asarray(acc - 1, dt()),
                accept_index=xp.asarray(accept, dt()), out_cache_loc=xp.asarray(ocl, dt()))
    row_sizes = [int(rng.choice([16, 24, 48, 64])) for _ in range(int(rng.integers(1, 4)))]
    bufs = [xp.asarray(rng.integers(0, 256, (slots, n)), np.uint8) for n in row_sizes]
    window = bool(rng.integers(0, 2))
    return args, bufs, window


def reference(xp, args, bufs, window):
    """Gather, then scatter, in numpy."""
    a = {k: xp.to_numpy(v).astype(np.int64) for k, v in args.items()}
    bs = len(a["num_correct_drafts"])
    tgt, src = [], []
    for i in range(bs):
        n = int(a["num_correct_drafts"][i]) + 1
        if window:
            d = len(a["out_cache_loc"]) // bs
            tgt += list(a["out_cache_loc"][i * d:i * d + n])
        else:
            r, s = int(a["req_pool_indices"][i]), int(a["seq_lens"][i])
            tgt += list(a["req_to_token"][r, s:s + n])
        row = a["accept_index"][i]
        src += list(a["out_cache_loc"][row[row != -1]])
    out = []
    for b in bufs:
        x = xp.to_numpy(b).copy()
        x[tgt] = xp.to_numpy(b)[src]
        out.append(x)
    return out


def call(args, bufs, window, check=True):
    kw = dict(args)
    if window:
        kw.update(req_pool_indices=None, req_to_token=None, seq_lens=None)
    specc.move_accept_tokens_to_target_kvcache(**kw, kv_buffers=bufs, check=check,
                                               targets="window" if window else "req_to_token")


HOST = (TypeError, ValueError)


def break_case(rng, xp, args, bufs, window):
    """Breaks one thing; returns (args, bufs, window, targets override, the
    errors allowed, what was done). The batch is cut to its first request
    when the break is a value only the device can see, so that nothing may
    move."""
    names = list(args)
    if window:
        names = names[3:]
    kind = rng.choice(["dtype", "rank", "extent", "strides", "kv_strides", "value", "count",
                       "targets", "missing", "device", "window_len", "kv_type"])
    a, b = dict(args), list(bufs)
    name = str(rng.choice(names))
    if kind == "dtype":
        a[name] = xp.float32(a[name]) if rng.integers(0, 2) else xp.int16(a[name])
        return a, b, window, None, HOST, f"{name} of another dtype"
    if kind == "rank":
        a[name] = a[name].reshape((1,) + tuple(a[name].shape))
        return a, b, window, None, HOST, f"{name} of another rank"
    if kind == "extent":
        for n in ("seq_lens", "req_pool_indices", "accept_index") if not window else ("accept_index",):
            if name == n or n == "accept_index":
                a[n] = a[n][:-1] if a[n].shape[0] > 1 else xp.asarray(
                    np.concatenate([xp.to_numpy(a[n])] * 2), xp.to_numpy(a[n]).dtype)
                return a, b, window, None, HOST, f"{n} of another batch size"
    if kind == "strides" and a[name].shape[0] < 2:  # one element is contiguous anyway
        kind, name = "strides", "req_to_token" if not window else "accept_index"
        if a[name].shape[0] < 2:
            a[name] = xp.float32(a[name])
            return a, b, window, None, HOST, f"{name} of another dtype"
    if kind == "strides":
        a[name] = xp.strided(a[name])
        return a, b, window, None, HOST, f"{name} not contiguous"
    if kind == "kv_strides":
        i = int(rng.integers(0, len(b)))
        b[i] = xp.strided(b[i])
        return a, b, window, None, HOST, f"kv_buffers[{i}] not contiguous"
    if kind == "targets":
        return a, b, window, "row_major", HOST, "an unknown target source"
    if kind == "missing":
        if window:
            a["out_cache_loc"] = None
        else:
            a["seq_lens"] = None
        return a, b, window, None, HOST + (AttributeError,), "a missing tensor"
    if kind == "device":
        moved = xp.other_device(a[name])
        if moved is None:
            kind = "value"
        else:
            a[name] = moved
            return a, b, window, None, HOST, f"{name} on another device"
    if kind == "window_len" and window:
        ocl = xp.to_numpy(a["out_cache_loc"])
        a["out_cache_loc"] = xp.asarray(np.concatenate([ocl, ocl[:1]]), ocl.dtype)
        if len(ocl) % a["num_correct_drafts"].shape[0] == 0 and a["num_correct_drafts"].shape[0] > 1:
            return a, b, window, None, HOST, "len(out_cache_loc) not a multiple of bs"
    if kind == "kv_type":
        b[0] = list(range(4))
        return a, b, window, None, HOST, "a KV buffer that is not an array"
    # A value only the device sees: first request only.
    one = {k: (v[:1] if k in ("req_pool_indices", "seq_lens", "num_correct_drafts",
                              "accept_index") else v) for k, v in args.items()}
    if window:
        bs = args["num_correct_drafts"].shape[0]
        d = args["out_cache_loc"].shape[0] // bs
        one["out_cache_loc"] = args["out_cache_loc"][:d]
        one["accept_index"] = xp.asarray(np.minimum(xp.to_numpy(one["accept_index"]), d - 1)
                                         * (xp.to_numpy(one["accept_index"]) >= 0)
                                         + -1 * (xp.to_numpy(one["accept_index"]) < 0),
                                         xp.to_numpy(args["accept_index"]).dtype)
        # Keep the row's accepted count (positions are re-based into the window).
        acc = xp.to_numpy(one["accept_index"])[0]
        n = int((acc != -1).sum())
        acc[:n] = np.arange(n)
        one["accept_index"] = xp.asarray(acc[None, :], xp.to_numpy(args["accept_index"]).dtype)
    a = {k: (xp.copy(v) if v is not None else v) for k, v in one.items()}
    choices = ["accept_past", "accept_neg", "drafts_neg", "drafts_big", "slot_past"]
    if not window:
        choices += ["row_past", "seq_past", "seq_huge"]
    what = str(rng.choice(choices))
    big = lambda x, v: xp.asarray(  # noqa: E731 - set element 0 of x to v, widening to int64
        np.concatenate([[v], xp.to_numpy(x).reshape(-1)[1:]]).reshape(x.shape), np.int64)
    if what == "accept_past":
        acc = xp.to_numpy(a["accept_index"]).astype(np.int64)
        acc[0, 0] = a["out_cache_loc"].shape[0] + int(rng.integers(0, 2**40))
        a["accept_index"] = xp.asarray(acc, np.int64)
    elif what == "accept_neg":
        acc = xp.to_numpy(a["accept_index"]).astype(np.int64)
        acc[0, 0] = -2 - int(rng.integers(0, 100))
        a["accept_index"] = xp.asarray(acc, np.int64)
    elif what == "drafts_neg":
        a["num_correct_drafts"] = big(a["num_correct_drafts"], -1)
    elif what == "drafts_big":
        a["num_correct_drafts"] = big(a["num_correct_drafts"], int(rng.choice([INT64_MAX, 99])))
    elif what == "slot_past":
        ocl = xp.to_numpy(a["out_cache_loc"]).astype(np.int64)
        ocl[int(xp.to_numpy(a["accept_index"])[0, 0])] = min(x.shape[0] for x in b) + int(
            rng.integers(0, 2**40))
        a["out_cache_loc"] = xp.asarray(ocl, np.int64)
    elif what == "row_past":
        a["req_pool_indices"] = big(a["req_pool_indices"], a["req_to_token"].shape[0])
    elif what == "seq_past":
        a["seq_lens"] = big(a["seq_lens"], a["req_to_token"].shape[1])
    else:
        a["seq_lens"] = big(a["seq_lens"], INT64_MAX - 1)
    return a, b, window, None, (specc.InputError,), f"out-of-range value ({what})"


@pytest.mark.parametrize("backend", backends())
def test_malformed_arguments_change_nothing(backend):
    xp = backend()
    rng = np.random.default_rng(20261201)
    seen = set()
    for rnd in range(ROUNDS):
        args, bufs, window = make_case(rng, xp)
        bad_args, bad_bufs, bad_window, targets, errors, what = break_case(
            rng, xp, args, bufs, window)
        before = [xp.copy(x) for x in bufs]
        if TRACE:
            print(f"{xp.name} round {rnd}: {what}", flush=True)
        kw = dict(bad_args)
        if bad_window:
            kw.update(req_pool_indices=None, req_to_token=None, seq_lens=None)
        try:
            specc.move_accept_tokens_to_target_kvcache(
                **kw, kv_buffers=bad_bufs, check=True,
                targets=targets or ("window" if bad_window else "req_to_token"))
        except errors:
            pass
        else:
            pytest.fail(f"round {rnd}: {what}: no error")
        seen.add(what.split(" (")[0])
        for i, (got, was) in enumerate(zip(bufs, before)):
            assert xp.equal(got, was), f"round {rnd}: {what} changed kv_buffers[{i}]"
        # Nothing pending, and the next valid call is exact.
        specc.check(wait=True)
        want = reference(xp, args, bufs, window)
        call(args, bufs, window)
        for i, (got, exp) in enumerate(zip(bufs, want)):
            assert np.array_equal(xp.to_numpy(got), exp), \
                f"round {rnd}: the valid call after {what}: kv_buffers[{i}] wrong"
    assert len(seen) >= 8, seen
