"""The move benchmark's floor: the copy's device time is checked against the
events' span of the same copy (bench_move.settle_copy_time). A sound device
time stands; one above the span is measured again, and the span is used if
the second is above it too; the report says which was used
(report.copy_note). Needs neither torch nor a GPU."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_move  # noqa: E402
import report  # noqa: E402


def _calls(*values):
    it = iter(values)
    calls = []

    def f():
        calls.append(1)
        return next(it)
    return f, calls


def test_a_device_time_under_its_span_stands():
    device, dc = _calls(1410.0)
    span, sc = _calls(1430.0)
    t = bench_move.settle_copy_time(device, span)
    assert t["copy_us"] == 1410.0 and t["copy_how"] == report.COPY_TIMED_PLAINLY
    assert len(dc) == 1 and len(sc) == 1 and "copy_device_first_us" not in t
    assert report.copy_note(t) == ""


def test_a_device_time_within_the_slack_stands():
    device, dc = _calls(1435.0)
    span, _ = _calls(1430.0)
    t = bench_move.settle_copy_time(device, span)
    assert t["copy_us"] == 1435.0 and len(dc) == 1


def test_a_device_time_over_its_span_is_measured_again():
    device, dc = _calls(1645.8, 1412.0)
    span, _ = _calls(1426.4)
    t = bench_move.settle_copy_time(device, span)
    assert len(dc) == 2
    assert t["copy_us"] == 1412.0 and t["copy_device_us"] == 1412.0
    assert t["copy_device_first_us"] == 1645.8
    assert "measured a second time" in t["copy_how"]
    assert "1645.8" in report.copy_note(t)


def test_the_span_when_the_device_time_exceeds_it_twice():
    device, dc = _calls(1645.8, 1600.0)
    span, _ = _calls(1426.4)
    t = bench_move.settle_copy_time(device, span)
    assert len(dc) == 2 and t["copy_us"] == 1426.4
    assert t["copy_how"].startswith("events around one copy")
    assert report.copy_note(t).startswith("; events around one copy")


def test_the_floor_line_names_the_way_the_copy_was_timed():
    floor = {"copy_Bps": 3.0e12, "copy_bytes": 2**31,
             "copy_how": "events around one copy (no profiler)"}
    data = {"header": {}, "floor": floor, "results": []}
    text = "\n".join(report.header_lines(data))
    assert "(read+write; events around one copy (no profiler))" in text


class _Tensor:
    def random_(self, lo, hi):
        return self

    def copy_(self, other):
        return self


class _Meter:
    def __init__(self, device_us, span_us):
        self.device_us, self.span_us = list(device_us), span_us

    def device(self, fns, n):
        return {"us": self.device_us.pop(0), "kernels": []}

    def span(self, fns, n):
        return {"us": self.span_us}


def _fake_torch():
    import types
    return types.SimpleNamespace(
        empty=lambda n, dtype=None, device=None: _Tensor(), empty_like=lambda a: _Tensor(),
        uint8=None, cuda=types.SimpleNamespace(synchronize=lambda: None))


def test_copy_bandwidth_uses_the_settled_time(monkeypatch):
    import argparse
    monkeypatch.setattr(bench_move, "torch", _fake_torch())
    args = argparse.Namespace(copy_gib=2, no_profiler=False)
    f = bench_move.copy_bandwidth(_Meter([1645.8, 1412.0], 1426.4), args)
    assert f["copy_Bps"] == pytest.approx(2 * 2**31 / 1412.0e-6)
    assert f["copy_device_first_us"] == 1645.8 and f["copy_span_us"] == 1426.4
    assert "copy_us" not in f
    args.no_profiler = True
    f = bench_move.copy_bandwidth(_Meter([], 1426.4), args)
    assert f["copy_Bps"] == pytest.approx(2 * 2**31 / 1426.4e-6)
    assert f["copy_how"] == "events around one copy (no profiler)"
