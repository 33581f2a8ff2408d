"""The move benchmark's verdicts: the span target (report.py) is judged on
the spans measured in turns where a row has them, else on the two separate
medians; a first sglang call counts as compiled in the process only past
Triton's own start (bench_move.compiled_here). Needs neither torch nor a GPU."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))

import report  # noqa: E402


def _row(**extra):
    r = {"bs": 8, "kind": "tree", "floor_us": 1.0,
         "specc": {"device_us": 5.0, "span_us": 40.0, "graph_us": 30.0, "host_us": 10.0},
         "sglang": {"device_us": 12.0, "span_us": 180.0}}
    r.update(extra)
    return r


FLOOR = {"empty_graph_us": 28.0, "empty_op_host_us": 9.0}


def test_span_from_separate_medians_without_a_pair():
    t = report.evaluate_targets(_row(), FLOOR)["span"]
    assert t["applies"] and t["value"] == 180.0 / 40.0 and t["pass"] is False


def test_span_from_the_paired_ratio():
    t = report.evaluate_targets(_row(paired_span={"specc_us": 30.0, "sglang_us": 170.0,
                                                  "x": 5.6, "n": 100}), FLOOR)["span"]
    assert t["value"] == 5.6 and t["pass"] is True
    cells = report.measurement_cells(_row(paired_span={"x": 5.6}), {})
    assert "5.60" in cells


def test_span_target_only_up_to_bs_32():
    t = report.evaluate_targets(_row(bs=128, paired_span={"x": 9.0}), FLOOR)["span"]
    assert t == {"applies": False}


def test_first_triton_launch_is_not_a_compile():
    """The first sglang call of a process: its first stage pays Triton's
    start; a slow later stage still shows a cache miss."""
    import bench_move

    start = {"assign_extend_cache_locs": 606.0, "fill_accept_out_cache_loc": 3.0,
             "copy_all_layer_kv_cache_tiled": 3.0}
    assert not bench_move.compiled_here(start, 200, first_in_process=True)
    assert bench_move.compiled_here(start, 200, first_in_process=False)
    miss = dict(start, copy_all_layer_kv_cache_tiled=900.0)
    assert bench_move.compiled_here(miss, 200, first_in_process=True)


def test_graph_target_from_the_replays_in_turns():
    """Without a pair: specc's replay against the empty graph's + 5 us; with
    one: the median per-pair difference against 5 us."""
    t = report.evaluate_targets(_row(), FLOOR)["graph"]
    assert t["value"] == 30.0 and t["limit"] == 33.0 and t["pass"] is True
    sp = dict(_row()["specc"], graph_pair={"empty_us": 16.0, "us": 27.0, "diff_us": 6.5, "n": 100})
    t = report.evaluate_targets(_row(specc=sp), FLOOR)["graph"]
    assert t["value"] == 6.5 and t["limit"] == 5.0 and t["pass"] is False
    assert "6.5" in report.measurement_cells(_row(specc=sp), {})
