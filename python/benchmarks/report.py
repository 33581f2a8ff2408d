#!/usr/bin/env python3
"""Tables, target verdicts and the Markdown report of ``bench_move.py``.

Needs neither torch nor a GPU: ``bench_move.py`` calls it while it runs, and it
runs standalone on the JSON that ``bench_move.py --out`` wrote::

    python3 python/benchmarks/report.py bench.json               # tables on stdout
    python3 python/benchmarks/report.py bench.json --md bench.md # and the Markdown file

The targets (all times in microseconds, "device" = kernels only, per call):

=========  ===============================================================
dev<=lim   bs <= 32: specc device <= max(4, 1.15 x floor + 2)
<=sgl      every bs: specc device <= sglang device
512 x60    bs = 512: sglang device / specc device >= 60
512 lim    bs = 512: specc device <= 1.15 x floor + 4
chain<=5   chains, every bs: specc device <= 5
graph      bs <= 32: specc graph replay <= empty-kernel graph replay + 5 (the
           median per-pair difference of the replays in turns where measured)
host       bs <= 32: specc host us per eager call <= empty torch op + 5
span x5    bs <= 32: sglang eager span / specc eager span >= 5 (the median
           of the per-pair ratios of the paired span where there is one)
=========  ===============================================================
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

# name, short column title, description, kind ("max": value <= limit passes;
# "min": value (a speedup) >= limit passes)
TARGETS: List[Tuple[str, str, str, str]] = [
    ("dev_small", "dev<=lim", "bs<=32: specc device <= max(4, 1.15*floor+2)", "max"),
    ("dev_vs_sgl", "<=sgl", "specc device <= sglang device (every bs)", "max"),
    ("x512", "512 x60", "bs=512: sglang device / specc device >= 60", "min"),
    ("floor512", "512 lim", "bs=512: specc device <= 1.15*floor+4", "max"),
    ("chain5", "chain<=5", "chain: specc device <= 5 us (every bs)", "max"),
    ("graph", "graph", "bs<=32: specc graph replay <= empty graph + 5 (paired where measured)",
     "max"),
    ("host", "host", "bs<=32: specc host per eager call <= empty torch op + 5", "max"),
    ("span", "span x5", "bs<=32: sglang eager span / specc eager span >= 5 (paired where measured)",
     "min"),
]


def _get(d: Optional[Dict[str, Any]], key: str) -> Optional[float]:
    if not d:
        return None
    v = d.get(key)
    return None if v is None else float(v)


def _target(applies: bool, value: Optional[float], limit: Optional[float],
            kind: str) -> Dict[str, Any]:
    if not applies:
        return {"applies": False}
    if value is None or limit is None:
        return {"applies": True, "value": value, "limit": limit, "pass": None}
    ok = value <= limit if kind == "max" else value >= limit
    return {"applies": True, "value": value, "limit": limit, "pass": bool(ok)}


def evaluate_targets(r: Dict[str, Any], floor: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The verdict of every target for one result row (see the module doc)."""
    sp, sg = r.get("specc") or {}, r.get("sglang") or {}
    bs, chain = int(r["bs"]), r.get("kind") == "chain"
    small = bs <= 32
    fl = r.get("floor_us")
    dev, sdev = _get(sp, "device_us"), _get(sg, "device_us")
    empty_graph = _get(floor, "empty_graph_us")
    empty_op = r.get("empty_op_host_us", floor.get("empty_op_host_us"))
    x = None if dev is None or sdev is None or dev <= 0 else sdev / dev
    span, sspan = _get(sp, "span_us"), _get(sg, "span_us")
    xspan = None if span is None or sspan is None or span <= 0 else sspan / span
    paired = _get(r.get("paired_span"), "x")
    if paired is not None:
        xspan = paired
    out = {
        "dev_small": _target(small, dev, None if fl is None else max(4.0, 1.15 * fl + 2.0), "max"),
        "dev_vs_sgl": _target(True, dev, sdev, "max"),
        "x512": _target(bs == 512, x, 60.0, "min"),
        "floor512": _target(bs == 512, dev, None if fl is None else 1.15 * fl + 4.0, "max"),
        "chain5": _target(chain, dev, 5.0, "max"),
        "graph": graph_target(small, sp, empty_graph),
        "host": _target(small, _get(sp, "host_us"),
                        None if empty_op is None else float(empty_op) + 5.0, "max"),
        "span": _target(small, xspan, 5.0, "min"),
    }
    return out


def graph_target(applies: bool, sp: Dict[str, Any], empty_graph: Optional[float]) -> Dict[str, Any]:
    """specc's graph replay against the empty kernel's graph + 5 us: the
    median per-pair difference where the two were replayed in turns (value:
    the difference, limit 5), else the two separate medians."""
    pair = _get(sp.get("graph_pair"), "diff_us")
    if pair is not None:
        return _target(applies, pair, 5.0, "max")
    return _target(applies, _get(sp, "graph_us"),
                   None if empty_graph is None else empty_graph + 5.0, "max")


def target_cell(name: str, t: Optional[Dict[str, Any]]) -> str:
    """'0.83 PASS' (value / limit, for upper bounds), '72x PASS' (speedup, for
    lower bounds), 'n/a MISS'... '' where the target does not apply."""
    if not t or not t.get("applies"):
        return ""
    kind = next(k for n, _, _, k in TARGETS if n == name)
    v, lim, ok = t.get("value"), t.get("limit"), t.get("pass")
    if ok is None:
        return "n/a"
    word = "PASS" if ok else "MISS"
    if kind == "min":
        return f"{v:.1f}x {word}" if v < 100 else f"{v:.0f}x {word}"
    return f"{v / lim:.2f} {word}" if lim else f"- {word}"


def summarize_targets(results: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, int]]:
    summary = {n: {"PASS": 0, "MISS": 0, "n/a": 0} for n, _, _, _ in TARGETS}
    for r in results:
        for n, t in (r.get("targets") or {}).items():
            if n not in summary or not t.get("applies"):
                continue
            summary[n]["n/a" if t.get("pass") is None else ("PASS" if t["pass"] else "MISS")] += 1
    return summary


# --------------------------------------------------------------------------
# Plain-text tables
# --------------------------------------------------------------------------

def _num(x: Optional[float], prec: int = 1) -> str:
    if x is None:
        return "-"
    if abs(x) >= 10000:
        return f"{x:.0f}"
    return f"{x:.{prec}f}"


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None or b <= 0 else a / b


def _x(v: Optional[float]) -> str:
    """A speedup in a narrow column."""
    if v is None:
        return "-"
    return f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:.0f}"


def _cell(d: Dict[str, Any], key: str, nominal: Dict[str, int], prec: int = 1) -> str:
    """A measured value, with '*' when it took fewer calls than nominal (time
    budget), so the reader knows which medians are from fewer samples."""
    v = _get(d, key)
    s = _num(v, prec)
    n = d.get(key.replace("_us", "_n"))
    if v is not None and n is not None and n < nominal.get(key, 0):
        s += "*"
    return s


MEAS_COLS = [  # title, width
    ("kind bs", 11), ("acc", 6), ("moved", 6), ("MB", 8), ("floor", 7),
    ("dev sp", 8), ("dev sg", 9), ("x", 6),
    ("graph sp", 9), ("graph sg", 9), ("g-e", 6), ("span sp", 8), ("span sg", 9), ("x", 6), ("pair x", 7),
    ("host sp", 8), ("host sg", 8), ("op", 5), ("t.op", 6), ("kern", 5), ("chk", 4),
]


def measurement_cells(r: Dict[str, Any], nominal: Dict[str, int]) -> List[str]:
    sp, sg = r.get("specc") or {}, r.get("sglang") or {}
    kern = f"{sp.get('kernels_per_call', '-')}/{sg.get('kernels_per_call', '-')}"
    sgl_note = sg.get("status")  # 'deferred', 'not compiled ...', 'skipped ...'
    def sgc(key: str) -> str:
        if sgl_note and _get(sg, key) is None:
            return {"deferred": "defer"}.get(sgl_note.split(":")[0], "-")
        return _cell(sg, key, nominal)
    return [
        f"{r['kind']} {r['bs']}", _num(r.get("accepted_rows"), 0), _num(r.get("moving_rows"), 0),
        _num(r.get("bytes_moved", 0) / 1e6, 1), _num(r.get("floor_us")),
        _cell(sp, "device_us", nominal), sgc("device_us"),
        _x(_ratio(_get(sg, "device_us"), _get(sp, "device_us"))),
        _cell(sp, "graph_us", nominal), sgc("graph_us"), _num(_get(sp.get("graph_pair"), "diff_us")),
        _cell(sp, "span_us", nominal), sgc("span_us"),
        _x(_ratio(_get(sg, "span_us"), _get(sp, "span_us"))),
        _x(_get(r.get("paired_span"), "x")),
        _cell(sp, "host_us", nominal), sgc("host_us"), _num(r.get("empty_op_host_us")),
        _cell(r.get("torch_op") or {}, "host_us", nominal), kern, r.get("check", ""),
    ]


def format_line(cols: Sequence[Tuple[str, int]], cells: Sequence[str]) -> str:
    """One line of a plain-text table: the first column left-aligned, the
    others right-aligned to their widths."""
    out = []
    for i, ((_, w), c) in enumerate(zip(cols, cells)):
        out.append(f"{c:<{w}}" if i == 0 else f"{c:>{w}}")
    return " ".join(out).rstrip()


def _text_table(cols: List[Tuple[str, int]], rows: List[List[str]]) -> List[str]:
    return [format_line(cols, [c for c, _ in cols])] + [format_line(cols, r) for r in rows]


TARGET_COLS = [("kind bs", 11)] + [(t, 10) for _, t, _, _ in TARGETS]


def target_cells(r: Dict[str, Any]) -> List[str]:
    return [f"{r['kind']} {r['bs']}"] + [target_cell(n, (r.get("targets") or {}).get(n))
                                        for n, _, _, _ in TARGETS]


def target_table(data: Dict[str, Any], layout: str) -> List[str]:
    """The PASS/MISS table of one layout."""
    rows = layout_rows(data.get("results", []), layout)
    return _text_table(TARGET_COLS, [target_cells(r) for r in rows]) if rows else []


def layout_rows(results: Sequence[Dict[str, Any]], layout: str) -> List[Dict[str, Any]]:
    return [r for r in results if r.get("layout") == layout]


def text_tables(data: Dict[str, Any], layout: str) -> List[str]:
    """The measurement table and the target table of one layout."""
    rows = layout_rows(data.get("results", []), layout)
    if not rows:
        return []
    nominal = data.get("header", {}).get("nominal_reps", {})
    desc = data.get("layouts", {}).get(layout, "")
    out = [f"== {layout}: {desc}" if desc else f"== {layout}"]
    out += _text_table(MEAS_COLS, [measurement_cells(r, nominal) for r in rows])
    out.append("")
    out += target_table(data, layout)
    return out


LEGEND = [
    "us per call, medians over calls rotated among the input sets; sp = specc, sg = sglang's path.",
    "acc = accepted rows, moved = rows whose source differs from the target, MB = bytes read+written",
    "  for the moved rows of every buffer; floor = MB / copy bandwidth + one empty kernel (device time).",
    "dev = device time of one call, kernels/memsets only (CUPTI via torch.profiler), L2 flushed before;",
    "graph = one CUDA-graph replay from idle after an L2 flush (events); span = one eager call from idle",
    "  after an L2 flush (events: launch gaps included); host = wall time of the Python call only;",
    "  op = x.add_(1) host time, t.op = torch.ops.specc host time; kern = kernels per call sp/sg;",
    "  x = sglang/specc; pair x = median sglang/specc ratio of the spans measured in turns (bs <= 32);",
    "  g-e = median difference of specc's graph replays and the empty graph's, replayed in turns;",
    "  * = fewer calls than nominal (time budget, see notes).",
    "targets: value/limit for upper bounds (<= 1.00 passes), speedup for lower bounds; blank = n/a here.",
]


def legend_sentences() -> List[str]:
    """LEGEND with its continuation lines joined (for Markdown bullets)."""
    out: List[str] = []
    for line in LEGEND:
        if line.startswith("  ") and out:
            out[-1] += " " + line.strip()
        else:
            out.append(line.strip())
    return out


def target_legend() -> List[str]:
    return [f"  {t:<9} {d}" for _, t, d, _ in TARGETS]


def summary_lines(data: Dict[str, Any]) -> List[str]:
    s = summarize_targets(data.get("results", []))
    return [f"  {t:<9} PASS {s[n]['PASS']:>3}  MISS {s[n]['MISS']:>3}  n/a {s[n]['n/a']:>3}   {d}"
            for n, t, d, _ in TARGETS]


def header_lines(data: Dict[str, Any]) -> List[str]:
    h, f = data.get("header", {}), data.get("floor", {})
    out = [
        f"bench_move | {h.get('gpu', '?')} (driver {h.get('driver', '?')}) | torch {h.get('torch', '?')}"
        f" | triton {h.get('triton', '?')} | CUDA {h.get('cuda', '?')} | python {h.get('python', '?')}"
        f" | {h.get('date_utc', '?')} | commit {h.get('commit', '?')}"
        f"{' (dirty)' if h.get('git_dirty') else ''} | specc {h.get('specc_backend', '?')}",
    ]
    if f:
        out.append(
            f"floor: copy {_num((f.get('copy_Bps') or 0) / 1e9, 0)} GB/s (read+write{copy_note(f)}); empty kernel: "
            f"device {_num(f.get('empty_device_us'), 2)} us, graph replay {_num(f.get('empty_graph_us'), 2)} us, "
            f"eager span {_num(f.get('empty_span_us'), 2)} us; x.add_(1) host "
            f"{_num(f.get('empty_op_host_us'), 2)} us")
    return out


#: How the floor's copy is timed when nothing is amiss (bench_move writes it
#: into the floor's "copy_how"; any other value is shown in the report).
COPY_TIMED_PLAINLY = "device time (CUPTI)"


def copy_note(floor: Dict[str, Any]) -> str:
    """How the copy behind the floor was timed, where it was not its plain
    device time (bench_move.settle_copy_time): "" or "; " and the reason."""
    how = floor.get("copy_how")
    return f"; {how}" if how and how != COPY_TIMED_PLAINLY else ""


def full_text(data: Dict[str, Any]) -> str:
    lines = header_lines(data) + [""] + LEGEND + target_legend() + [""]
    for layout in data.get("layout_order") or sorted({r["layout"] for r in data.get("results", [])}):
        t = text_tables(data, layout)
        if t:
            lines += t + [""]
    lines.append("targets over all rows:")
    lines += summary_lines(data)
    notes = data.get("notes") or []
    if notes:
        lines += ["", "notes:"] + [f"  {n}" for n in notes]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------

def _md_table(head: Sequence[str], rows: List[List[str]], left: int = 1) -> List[str]:
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---"] * left + ["---:"] * (len(head) - left)) + "|"]
    out += ["| " + " | ".join(c if c else " " for c in r) + " |" for r in rows]
    return out


def markdown(data: Dict[str, Any]) -> str:
    h, f = data.get("header", {}), data.get("floor", {})
    nominal = h.get("nominal_reps", {})
    lines = [
        f"# bench_move: specc vs sglang's Triton path, {h.get('gpu', '?')}",
        "",
        "| | |", "|---|---|",
        f"| date (UTC) | {h.get('date_utc', '?')} |",
        f"| GPU | {h.get('gpu', '?')} |",
        f"| driver | {h.get('driver', '?')} |",
        f"| commit | {h.get('commit', '?')}{' (dirty)' if h.get('git_dirty') else ''} |",
        f"| torch / triton / CUDA / python | {h.get('torch', '?')} / {h.get('triton', '?')} / "
        f"{h.get('cuda', '?')} / {h.get('python', '?')} |",
        f"| specc backend | {h.get('specc_backend', '?')} |",
        f"| W, tree drafts, input sets | {h.get('w', '?')}, {h.get('tree_drafts', '?')}, {h.get('sets', '?')} |",
        f"| targets | {h.get('targets', 'req_to_token')} (both paths) |",
        f"| L2 flush | {h.get('flush_mib', '?')} MiB of zeros written"
        f"{', then read back (clean L2)' if h.get('flush_kind') == 'clean' else ' (dirty L2)'} |",
        f"| calls per median (nominal) | device {nominal.get('device_us', '?')}, graph "
        f"{nominal.get('graph_us', '?')}, span {nominal.get('span_us', '?')}, host "
        f"{nominal.get('host_us', '?')}; fewer (>= {h.get('min_reps', '?')}) where one measurement "
        f"would exceed {h.get('budget_s', '?')} s, marked * |",
        f"| run time | {_num(h.get('wall_s'), 0)} s{' (unfinished)' if not h.get('finished') else ''} |",
    ]
    if f:
        lines.append(
            f"| floor | copy {_num((f.get('copy_Bps') or 0) / 1e9, 0)} GB/s (read+write, "
            f"{_num((f.get('copy_bytes') or 0) / 2**30, 0)} GiB copy_{copy_note(f)}); empty kernel: device "
            f"{_num(f.get('empty_device_us'), 2)} us, graph replay {_num(f.get('empty_graph_us'), 2)} us, "
            f"eager span {_num(f.get('empty_span_us'), 2)} us; x.add_(1) host "
            f"{_num(f.get('empty_op_host_us'), 2)} us |")
    lines += ["", "Columns:", ""] + [f"- {l}" for l in legend_sentences()] + ["", "Targets:", ""]
    lines += [f"- `{t}`: {d}" for _, t, d, _ in TARGETS]
    for layout in data.get("layout_order") or sorted({r["layout"] for r in data.get("results", [])}):
        rows = layout_rows(data.get("results", []), layout)
        if not rows:
            continue
        desc = data.get("layouts", {}).get(layout, "")
        lines += ["", f"## {layout}" + (f": {desc}" if desc else ""), ""]
        lines += _md_table([c for c, _ in MEAS_COLS], [measurement_cells(r, nominal) for r in rows])
        lines += [""]
        lines += _md_table([t for t, _ in TARGET_COLS], [target_cells(r) for r in rows])
    s = summarize_targets(data.get("results", []))
    lines += ["", "## Targets over all rows", ""]
    lines += _md_table(["target", "PASS", "MISS", "n/a", "definition"],
                       [[f"`{t}`", str(s[n]["PASS"]), str(s[n]["MISS"]), str(s[n]["n/a"]), d]
                        for n, t, d, _ in TARGETS])
    notes = data.get("notes") or []
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def write_markdown(data: Dict[str, Any], path: str) -> None:
    p = pathlib.Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(markdown(data))
    tmp.replace(p)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="tables and Markdown from bench_move.py's JSON")
    ap.add_argument("json")
    ap.add_argument("--md", help="write the Markdown report here")
    ap.add_argument("--reevaluate", action="store_true",
                    help="recompute the target verdicts from the measurements")
    a = ap.parse_args(argv)
    data = json.loads(pathlib.Path(a.json).read_text())
    if a.reevaluate:
        for r in data.get("results", []):
            r["targets"] = evaluate_targets(r, data.get("floor", {}))
    sys.stdout.write(full_text(data))
    if a.md:
        write_markdown(data, a.md)
        print(f"wrote {a.md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
