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
    # The order ab_paired times: round r calls names[(r + i) % 3], i = 0..2.
    order = [(r, names[(r + i) % 3]) for r in range(rounds) for i in range(3)]
    # A time that names its call: 100 * runtime index + round.
    calls_us = [100.0 * names.index(n) + r for r, n in order]
    by = ab_paired.paired(calls_us, names, rounds)
    for k, n in enumerate(names):
        assert by[n] == [100.0 * k + r for r in range(rounds)]
    # Each runtime went first, second and third in turn.
    firsts = [order[3 * r][1] for r in range(rounds)]
    assert firsts == ["base", "a", "b", "base", "a"]


def test_lib_argument(tmp_path):
    lib = tmp_path / "libspecc_runtime.so"
    lib.write_bytes(b"")
    assert ab_paired.parse_lib(f"main={lib}") == ("main", str(lib))
    for bad in ("main", "=x", f"main={tmp_path / 'missing.so'}"):
        with pytest.raises(argparse.ArgumentTypeError):
            ab_paired.parse_lib(bad)
