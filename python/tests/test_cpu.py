"""The Python API on the CPU path (numpy arrays): runs everywhere, CI too."""

import numpy as np
import pytest

import specc


def _case_arrays(case):
    dt = np.int64 if case["index_dtype"] == "int64" else np.int32
    bs, w = case["bs"], case["W"]
    args = dict(
        req_pool_indices=np.array(case["req_pool_indices"], dtype=dt).reshape(bs),
        req_to_token=np.array(case["req_to_token"], dtype=np.int32),
        seq_lens=np.array(case["seq_lens"], dtype=dt).reshape(bs),
        num_correct_drafts=np.array(case["num_correct_drafts"], dtype=dt).reshape(bs),
        accept_index=np.array(case["accept_index"], dtype=dt).reshape(bs, w),
        out_cache_loc=np.array(case["out_cache_loc"], dtype=dt).reshape(-1),
    )
    bufs = [np.frombuffer(bytes.fromhex("".join(rows)), dtype=np.uint8)
            .reshape(len(rows), -1).copy() for rows in case["buffers_before"]]
    after = [np.frombuffer(bytes.fromhex("".join(rows)), dtype=np.uint8)
             .reshape(len(rows), -1) for rows in case["expected_buffers_after"]]
    return args, bufs, after


def test_import_needs_no_gpu():
    assert callable(specc.move_accept_tokens_to_target_kvcache)
    assert specc.backend(-1) == "cpu"


def test_vectors(vectors):
    for case in vectors:
        args, bufs, after = _case_arrays(case)
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
        status = specc.last_status()
        moved = sum(t != s for t, s in zip(case["expected_tgt"], case["expected_src"]))
        assert status[:6] == (0, 0, 0, 0, 0, moved), case["name"]
        for got, want in zip(bufs, after):
            assert np.array_equal(got, want), case["name"]


def _targets_of(args, i):
    acc = int(args["num_correct_drafts"][i]) + 1
    row = int(args["req_pool_indices"][i])
    seq = int(args["seq_lens"][i])
    return [int(x) for x in args["req_to_token"][row, seq:seq + acc]]


def test_bad_request_is_skipped_the_others_move(vectors):
    case = next(c for c in vectors if c["name"] == "tree_bs2_w4_d8")
    args, bufs, after = _case_arrays(case)
    before = [b.copy() for b in bufs]
    args["accept_index"][0, 1] = len(args["out_cache_loc"]) + 5
    with pytest.raises(specc.InputError) as err:
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    assert "accept_index" in str(err.value)
    assert err.value.status[0] == 4 and err.value.status[4] == 1
    # Request 0 moved nothing; request 1 moved as in the valid case (its
    # rows do not overlap request 0's in this case).
    bad, good = _targets_of(args, 0), _targets_of(args, 1)
    for got, was, want in zip(bufs, before, after):
        assert np.array_equal(got[bad], was[bad])
        assert np.array_equal(got[good], want[good])
    # Unchecked: the same, the status says why, and check() reports it once.
    bufs2 = [b.copy() for b in before]
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs2)
    assert specc.last_status()[0] != 0
    assert "accept_index" in specc.status_message(specc.last_status())
    for got, want in zip(bufs2, bufs):
        assert np.array_equal(got, want)
    with pytest.raises(specc.InputError, match="earlier call.*accept_index") as err:
        specc.check()
    assert err.value.earlier and err.value.calls == 1 and err.value.skipped == 1
    assert err.value.status[0] == 4
    specc.check()  # reported once


def test_violation_is_raised_by_the_next_call(vectors):
    """The default call never waits, and a violation is never silent: the
    next call does its own work, then raises the earlier call's error."""
    case = next(c for c in vectors if c["name"] == "tree_bs2_w4_d8")
    args, bufs, after = _case_arrays(case)
    bad = {k: (v.copy() if v is not None else v) for k, v in args.items()}
    bad["num_correct_drafts"][1] = -1
    specc.move_accept_tokens_to_target_kvcache(**bad, kv_buffers=[b.copy() for b in bufs])
    with pytest.raises(specc.InputError, match=r"earlier call.*num_correct_drafts\[1\] = -1") as err:
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
    assert err.value.earlier and err.value.status[:2] == (2, 1)
    for got, want in zip(bufs, after):  # the reporting call did its own move
        assert np.array_equal(got, want)
    args, bufs, after = _case_arrays(case)
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
    specc.check()


def test_trap_mode_stops_the_process(vectors, tmp_path):
    """SPECC_TRAP=1: the first violation stops the process like a failed
    assertion (SIGILL on the CPU), after valid calls ran normally."""
    import signal
    import subprocess
    import sys

    script = tmp_path / "trap.py"
    script.write_text(
        "import numpy as np, specc\n"
        "n = np.array([0, -1], dtype=np.int64)\n"
        "acc = np.array([[0, -1], [1, -1]], dtype=np.int64)\n"
        "ocl = np.array([0, 1, 2, 3], dtype=np.int64)\n"
        "buf = np.zeros((8, 16), dtype=np.uint8)\n"
        "specc.move_accept_tokens_to_target_kvcache(None, None, None, np.zeros(2, np.int64),\n"
        "    acc, ocl, [buf], targets='window')\n"
        "print('valid call ran', flush=True)\n"
        "specc.move_accept_tokens_to_target_kvcache(None, None, None, n, acc, ocl, [buf],\n"
        "    targets='window')\n"
        "print('not reached', flush=True)\n")
    import os

    import pathlib

    package = str(pathlib.Path(specc.__file__).resolve().parents[1])
    env = dict(os.environ, SPECC_TRAP="1",
               PYTHONPATH=os.pathsep.join([package, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode in (-signal.SIGILL, -signal.SIGTRAP), (proc.returncode, proc.stderr)
    assert "valid call ran" in proc.stdout and "not reached" not in proc.stdout


def test_failed_allocation_leaves_the_mover_usable(vectors):
    """An injected scratch allocation failure: the grown call raises
    OutOfMemoryError and changes nothing; calls that fit still work, and the
    grown call works once memory is there."""
    from specc import _runtime as rt

    small = next(c for c in vectors if c["name"] == "tree_bs2_w4_d8")
    args, bufs, after = _case_arrays(small)
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    bs, w = 3000, 4  # past any scratch the thread's mover holds yet
    big = dict(req_pool_indices=np.arange(bs, dtype=np.int64),
               req_to_token=np.arange(bs * 8, dtype=np.int64).reshape(bs, 8),
               seq_lens=np.zeros(bs, dtype=np.int64),
               num_correct_drafts=np.zeros(bs, dtype=np.int64),
               accept_index=np.full((bs, w), -1, dtype=np.int64),
               out_cache_loc=np.arange(bs * w, dtype=np.int64) + bs * 8)
    big["accept_index"][:, 0] = np.arange(bs) * w
    pool = [np.random.default_rng(1).integers(0, 255, (bs * 12, 16), dtype=np.uint8)]
    before = pool[0].copy()
    rt.library().specc_testing_fail_allocations(1)
    try:
        with pytest.raises(specc.OutOfMemoryError, match="injected"):
            specc.move_accept_tokens_to_target_kvcache(**big, kv_buffers=pool)
    finally:
        rt.library().specc_testing_fail_allocations(0)
    assert np.array_equal(pool[0], before)
    args, bufs, after = _case_arrays(small)
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    for got, want in zip(bufs, after):
        assert np.array_equal(got, want)
    specc.move_accept_tokens_to_target_kvcache(**big, kv_buffers=pool, check=True)
    want = before.copy()
    want[np.arange(bs) * 8] = before[bs * 8 + np.arange(bs) * w]
    assert np.array_equal(pool[0], want)


def test_two_runtime_copies_side_by_side(vectors, tmp_path):
    """Two copies of the runtime library loaded at once (what the paired A/B
    benchmark does with two kernel images): each moves exactly through its
    own mover, and each keeps its own globals (an allocation failure
    injected into one copy leaves the other's allocations alone)."""
    import shutil

    from specc import _runtime as rt
    from specc.api import _call_args, _kv_buffer

    libs = []
    for name in ("a", "b"):
        path = tmp_path / f"libspecc_runtime_{name}.so"
        shutil.copy(rt.library()._name, path)
        libs.append(rt.load(str(path)))
    case = next(c for c in vectors if c["name"] == "tree_bs2_w4_d8")
    for lib in libs:
        args, bufs, after = _case_arrays(case)
        call, device = _call_args(**args, targets="req_to_token")
        m = rt.Mover(device, lib=lib)
        m.set_buffers([_kv_buffer(b, i) for i, b in enumerate(bufs)])
        m.move(call, sync=True)
        assert m.read_status()[0] == 0
        for got, want in zip(bufs, after):
            assert np.array_equal(got, want)
    libs[0].specc_testing_fail_allocations(1)
    try:
        with pytest.raises(specc.OutOfMemoryError, match="injected"):
            rt.Mover(rt.DEVICE_CPU, 1 << 16, lib=libs[0])
        rt.Mover(rt.DEVICE_CPU, 1 << 16, lib=libs[1])
    finally:
        libs[0].specc_testing_fail_allocations(0)
    rt.Mover(rt.DEVICE_CPU, 1 << 16, lib=libs[0])


@pytest.mark.parametrize("mutate, message", [
    (lambda a: a.update(req_to_token=a["req_to_token"].astype(np.int16)), "req_to_token must be int32 or int64"),
    (lambda a: a.update(seq_lens=a["seq_lens"][:-1]), "seq_lens has"),
    (lambda a: a.update(accept_index=a["accept_index"].reshape(-1)), "accept_index must have rank 2"),
    (lambda a: a.update(out_cache_loc=a["out_cache_loc"].astype(np.float32)), "out_cache_loc must be int32 or int64"),
    (lambda a: a.update(accept_index=np.asfortranarray(np.tile(a["accept_index"], (1, 2))[:, ::2])), "accept_index must be contiguous"),
])
def test_host_validation(vectors, mutate, message):
    case = next(c for c in vectors if c["name"] == "tree_bs2_w4_d8")
    args, bufs, _ = _case_arrays(case)
    before = [b.copy() for b in bufs]
    mutate(args)
    with pytest.raises((TypeError, ValueError), match=message):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
    for got, want in zip(bufs, before):
        assert np.array_equal(got, want)


def test_gpu_mover_without_driver_says_so():
    import os
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("a GPU is present")
    from specc import _runtime as rt
    with pytest.raises(specc.NoDriverError, match="CUDA driver|libcuda"):
        rt.Mover(0)


def test_buffers_that_must_not_be_written_are_refused(vectors):
    case = next(c for c in vectors if c["name"] == "tree_bs2_w4_d8")
    args, bufs, _ = _case_arrays(case)
    readonly = bufs[0].copy()
    readonly.flags.writeable = False
    frozen = np.frombuffer(bytes(bufs[0].tobytes()), dtype=np.uint8).reshape(bufs[0].shape)
    objects = np.empty(bufs[0].shape[0], dtype=object)
    for bad, message in ((readonly, "read-only"), (frozen, "read-only"),
                         (objects, "Python objects"), (b"abc", "torch tensor or a numpy")):
        before = [b.copy() for b in bufs]
        with pytest.raises((TypeError, ValueError), match=message):
            specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=[bad] + bufs[1:])
        for got, want in zip(bufs, before):
            assert np.array_equal(got, want)
        if isinstance(bad, np.ndarray) and bad.dtype != object:
            assert np.array_equal(bad, before[0])


# Buffers sharing memory (the same array twice, two overlapping views of
# one allocation) would make a move depend on the order of the buffers'
# moves: refused before anything moves, buffers adjacent in memory accepted.
def test_overlapping_buffers_are_refused(vectors):
    case = next(c for c in vectors if c["name"] == "tree_bs2_w4_d8")
    args, bufs, after = _case_arrays(case)
    slots, row = bufs[0].shape
    pool = np.zeros((2 * slots, row), dtype=bufs[0].dtype)
    pool[:slots] = bufs[0]
    pool[slots:] = bufs[0]
    for overlapping in ([bufs[0], bufs[0]], [pool[:slots], pool[slots - 1:2 * slots - 1]]):
        before = [b.copy() for b in overlapping]
        with pytest.raises(ValueError, match="overlap in memory"):
            specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=overlapping)
        for got, want in zip(overlapping, before):
            assert np.array_equal(got, want)
    # Adjacent, not overlapping: both move exactly.
    adjacent = [pool[:slots], pool[slots:]]
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=adjacent, check=True)
    for got in adjacent:
        assert np.array_equal(got, after[0])


def test_buffer_shrunk_in_place_is_validated_again(vectors):
    case = next(c for c in vectors if c["name"] == "tree_bs2_w4_d8")
    args, bufs, after = _case_arrays(case)
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    # The same object, now with 2 slots: the cached (address, rows) must not
    # be reused; the targets are outside the smaller buffer, so the call
    # reports them and writes nothing past its end.
    bufs[0].resize((2, bufs[0].shape[1]), refcheck=False)
    with pytest.raises(specc.InputError, match="outside"):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)


def test_two_threads_move_at_once(vectors):
    """Each thread gets its own mover: two moves at the same time on two
    pools, both exact, many times over."""
    import threading

    cases = [c for c in vectors if c["bs"] > 1][:2]
    assert len(cases) == 2
    failures = []

    def worker(case):
        try:
            for _ in range(200):
                args, bufs, after = _case_arrays(case)
                specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
                for got, want in zip(bufs, after):
                    if not np.array_equal(got, want):
                        failures.append(case["name"])
                        return
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(f"{case['name']}: {e!r}")

    threads = [threading.Thread(target=worker, args=(c,)) for c in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_prepare_grows_the_same_mover(vectors):
    """prepare() with more entries grows the thread's mover in place (graphs
    captured on it keep their scratch); a failed growth leaves it usable."""
    from specc import _runtime as rt
    from specc import api

    small = next(c for c in vectors if c["name"] == "tree_bs2_w4_d8")
    args, bufs, after = _case_arrays(small)
    specc.prepare(-1, 8, bufs)
    key = api._key(-1, 0)
    first = api._movers[key]
    specc.prepare(-1, 50_000, bufs)
    assert api._movers[key] is first and first.capacity >= 50_000
    rt.library().specc_testing_fail_allocations(1)
    try:
        with pytest.raises(specc.OutOfMemoryError, match="injected"):
            specc.prepare(-1, 60_000, bufs)
    finally:
        rt.library().specc_testing_fail_allocations(0)
    assert api._movers[key] is first and first.capacity < 60_000
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    for got, want in zip(bufs, after):
        assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="max_entries"):
        first.reserve(-1)
