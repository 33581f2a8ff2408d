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
    # Unchecked: the same, and the status says why.
    bufs2 = [b.copy() for b in before]
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs2)
    assert specc.last_status()[0] != 0
    assert "accept_index" in specc.status_message(specc.last_status())
    for got, want in zip(bufs2, bufs):
        assert np.array_equal(got, want)


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
