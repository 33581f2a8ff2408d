"""The paired A/B benchmark's bookkeeping (benchmarks/ab_paired.py): which
call of an interleaved run belongs to which runtime and round, and its
--lib argument. Needs neither torch nor a GPU (its timing runs on a GPU
host, through scripts/ab.sh with SPECC_AB_PAIRED=1)."""

import argparse
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))

import ab_paired  # noqa: E402


def test_calls_map_back_to_their_runtime_and_round():
    names = ["base", "a", "b"]
    rounds = 5
    order = ab_paired.schedule(names, rounds)
    # Every runtime once a round, the first one rotating.
    assert all(sorted(n for r, n in order if r == k) == sorted(names) for k in range(rounds))
    assert [order[3 * r][1] for r in range(rounds)] == ["base", "a", "b", "base", "a"]
    # A time that names its call (100 x runtime index + round) comes back to
    # its runtime and round.
    calls_us = [100.0 * names.index(n) + r for r, n in order]
    by = ab_paired.paired(calls_us, names, rounds)
    for k, n in enumerate(names):
        assert by[n] == [100.0 * k + r for r in range(rounds)]
    with pytest.raises(ValueError):
        ab_paired.paired(calls_us[:-1], names, rounds)


def test_lib_argument(tmp_path):
    lib = tmp_path / "libspecc_runtime.so"
    lib.write_bytes(b"")
    assert ab_paired.parse_lib(f"main={lib}") == ("main", str(lib))
    for bad in ("main", "=x", f"main={tmp_path / 'missing.so'}"):
        with pytest.raises(argparse.ArgumentTypeError):
            ab_paired.parse_lib(bad)


def test_decoy_rows_avoid_the_timed_rows():
    # Entries whose source is their target touch no row.
    assert ab_paired.moving_slots([5, 6, 7], [5, 9, 2]) == {6, 9, 7, 2}
    assert ab_paired.moving_slots([3, 4], [3, 4]) == set()
    taken = {10, 20}
    # 11 is next to 10: a row shorter than a line shares it with its
    # neighbour, so the first candidate is refused; 13 and 30 are clear.
    assert ab_paired.first_disjoint(taken, [{11, 40}, {13, 30}]) == 1
    assert ab_paired.first_disjoint(taken, [{20}, {9}, {21}]) is None
    assert ab_paired.first_disjoint(taken, [{12}], gap=3) is None
    assert ab_paired.first_disjoint(taken, [{12}], gap=2) == 0
    # A chain moves nothing: any decoy avoids it.
    assert ab_paired.first_disjoint(set(), [{1, 2}]) == 0
