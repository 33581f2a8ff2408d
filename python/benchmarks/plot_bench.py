#!/usr/bin/env python3
"""Device time per call against the batch size, log-log, one panel per KV
layout: specc, sglang's Triton path and the floor, from ``bench_move.py``'s
JSON. Pure Python (zlib + struct): no matplotlib, no numpy.

    python3 python/benchmarks/plot_bench.py bench.json bench.png [--kind tree|chain]
           [--metric device_us|graph_us|span_us]
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import struct
import sys
import zlib
from typing import Any, Dict, List, Optional, Sequence, Tuple

Color = Tuple[int, int, int]

# 5x7 glyphs, rows top to bottom ('#' = ink). Lower case is drawn as upper case.
_FONT_ROWS = {
    "A": [" ### ", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"],
    "B": ["#### ", "#   #", "#   #", "#### ", "#   #", "#   #", "#### "],
    "C": [" ### ", "#   #", "#    ", "#    ", "#    ", "#   #", " ### "],
    "D": ["#### ", "#   #", "#   #", "#   #", "#   #", "#   #", "#### "],
    "E": ["#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#####"],
    "F": ["#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#    "],
    "G": [" ### ", "#   #", "#    ", "# ###", "#   #", "#   #", " ####"],
    "H": ["#   #", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"],
    "I": [" ### ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
    "J": ["  ###", "   # ", "   # ", "   # ", "   # ", "#  # ", " ##  "],
    "K": ["#   #", "#  # ", "# #  ", "##   ", "# #  ", "#  # ", "#   #"],
    "L": ["#    ", "#    ", "#    ", "#    ", "#    ", "#    ", "#####"],
    "M": ["#   #", "## ##", "# # #", "# # #", "#   #", "#   #", "#   #"],
    "N": ["#   #", "#   #", "##  #", "# # #", "#  ##", "#   #", "#   #"],
    "O": [" ### ", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "],
    "P": ["#### ", "#   #", "#   #", "#### ", "#    ", "#    ", "#    "],
    "Q": [" ### ", "#   #", "#   #", "#   #", "# # #", "#  # ", " ## #"],
    "R": ["#### ", "#   #", "#   #", "#### ", "# #  ", "#  # ", "#   #"],
    "S": [" ####", "#    ", "#    ", " ### ", "    #", "    #", "#### "],
    "T": ["#####", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  "],
    "U": ["#   #", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "],
    "V": ["#   #", "#   #", "#   #", "#   #", "#   #", " # # ", "  #  "],
    "W": ["#   #", "#   #", "#   #", "# # #", "# # #", "# # #", " # # "],
    "X": ["#   #", "#   #", " # # ", "  #  ", " # # ", "#   #", "#   #"],
    "Y": ["#   #", "#   #", " # # ", "  #  ", "  #  ", "  #  ", "  #  "],
    "Z": ["#####", "    #", "   # ", "  #  ", " #   ", "#    ", "#####"],
    "0": [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
    "1": ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
    "2": [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
    "3": ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
    "4": ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
    "5": ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
    "6": ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
    "7": ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
    "8": [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
    "9": [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
    " ": ["     "] * 7,
    "-": ["     ", "     ", "     ", "#####", "     ", "     ", "     "],
    "_": ["     ", "     ", "     ", "     ", "     ", "     ", "#####"],
    ".": ["     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "],
    ",": ["     ", "     ", "     ", "     ", " ##  ", "  #  ", " #   "],
    ":": ["     ", " ##  ", " ##  ", "     ", " ##  ", " ##  ", "     "],
    "/": ["     ", "    #", "   # ", "  #  ", " #   ", "#    ", "     "],
    "=": ["     ", "     ", "#####", "     ", "#####", "     ", "     "],
    "+": ["     ", "  #  ", "  #  ", "#####", "  #  ", "  #  ", "     "],
    "(": ["   # ", "  #  ", " #   ", " #   ", " #   ", "  #  ", "   # "],
    ")": [" #   ", "  #  ", "   # ", "   # ", "   # ", "  #  ", " #   "],
    "<": ["    #", "   # ", "  #  ", " #   ", "  #  ", "   # ", "    #"],
    ">": ["#    ", " #   ", "  #  ", "   # ", "  #  ", " #   ", "#    "],
    "*": ["     ", "  #  ", "# # #", " ### ", "# # #", "  #  ", "     "],
    "%": ["##   ", "##  #", "   # ", "  #  ", " #   ", "#  ##", "   ##"],
    "?": [" ### ", "#   #", "    #", "   # ", "  #  ", "     ", "  #  "],
}

WHITE: Color = (255, 255, 255)
BLACK: Color = (0, 0, 0)
GRID: Color = (225, 225, 225)
AXIS: Color = (90, 90, 90)
SERIES = [  # label, key, color, dashed
    ("specc", "specc", (31, 119, 180), False),
    ("sglang", "sglang", (214, 39, 40), False),
    ("floor", "floor", (110, 110, 110), True),
]


class Canvas:
    """An RGB pixel buffer with the few drawing operations a plot needs."""

    def __init__(self, width: int, height: int, bg: Color = WHITE):
        self.w, self.h = width, height
        self.px = bytearray(bytes(bg) * (width * height))

    def set(self, x: int, y: int, c: Color) -> None:
        if 0 <= x < self.w and 0 <= y < self.h:
            i = 3 * (y * self.w + x)
            self.px[i:i + 3] = bytes(c)

    def rect(self, x0: int, y0: int, x1: int, y1: int, c: Color) -> None:
        for y in range(max(0, min(y0, y1)), min(self.h, max(y0, y1) + 1)):
            for x in range(max(0, min(x0, x1)), min(self.w, max(x0, x1) + 1)):
                self.set(x, y, c)

    def line(self, x0: float, y0: float, x1: float, y1: float, c: Color, width: int = 1,
             dash: int = 0) -> None:
        n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        r = width // 2
        for k in range(n + 1):
            if dash and (k // dash) % 2 == 1:
                continue
            t = k / n
            x, y = round(x0 + (x1 - x0) * t), round(y0 + (y1 - y0) * t)
            if r == 0:
                self.set(x, y, c)
            else:
                self.rect(x - r, y - r, x + r - (1 - width % 2), y + r - (1 - width % 2), c)

    def disc(self, cx: float, cy: float, radius: int, c: Color) -> None:
        for dy in range(-radius, radius + 1):
            for dx in range(-radius, radius + 1):
                if dx * dx + dy * dy <= radius * radius + radius:
                    self.set(round(cx) + dx, round(cy) + dy, c)

    def text(self, x: int, y: int, s: str, c: Color = BLACK, scale: int = 2,
             anchor: str = "left") -> int:
        """Draws `s` with its top at y; anchor 'left', 'center' or 'right' on x.
        Returns the width drawn."""
        s = s.upper()
        width = len(s) * 6 * scale - scale
        if anchor == "center":
            x -= width // 2
        elif anchor == "right":
            x -= width
        for i, ch in enumerate(s):
            rows = _FONT_ROWS.get(ch, _FONT_ROWS["?"])
            for ry, row in enumerate(rows):
                for rx, bit in enumerate(row):
                    if bit == "#":
                        self.rect(x + (6 * i + rx) * scale, y + ry * scale,
                                  x + (6 * i + rx) * scale + scale - 1, y + ry * scale + scale - 1, c)
        return width

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(self.px[3 * self.w * y:3 * self.w * (y + 1)])
                       for y in range(self.h))

        def chunk(kind: bytes, data: bytes) -> bytes:
            return (struct.pack(">I", len(data)) + kind + data
                    + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
        return (b"\x89PNG\r\n\x1a\n"
                + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def _fmt_tick(v: float) -> str:
    if v >= 1000 and v == int(v):
        e = int(round(math.log10(v)))
        return f"1E{e}" if 10 ** e == v else f"{v:.0f}"
    if v >= 1:
        return f"{v:.0f}"
    return f"{v:g}"


def series_of(data: Dict[str, Any], layout: str, kind: str,
              metric: str) -> Dict[str, List[Tuple[float, float]]]:
    out: Dict[str, List[Tuple[float, float]]] = {k: [] for _, k, _, _ in SERIES}
    for r in data.get("results", []):
        if r.get("layout") != layout or r.get("kind") != kind:
            continue
        bs = float(r["bs"])
        for _, key, _, _ in SERIES:
            if key == "floor":
                v = r.get("floor_us") if metric == "device_us" else r.get(f"floor_{metric}")
            else:
                v = (r.get(key) or {}).get(metric)
            if v is not None and v > 0:
                out[key].append((bs, float(v)))
    for k in out:
        out[k].sort()
    return out


def draw_panel(cv: Canvas, x0: int, y0: int, w: int, h: int, title: str,
               series: Dict[str, List[Tuple[float, float]]], ylabel: str) -> None:
    left, right, top, bottom = 88, 16, 36, 52
    px0, px1, py0, py1 = x0 + left, x0 + w - right, y0 + top, y0 + h - bottom
    cv.text(x0 + w // 2, y0 + 8, title, BLACK, 2, "center")
    pts = [p for s in series.values() for p in s]
    if not pts:
        cv.rect(px0, py0, px1, py0, AXIS)
        cv.text((px0 + px1) // 2, (py0 + py1) // 2, "no data", AXIS, 2, "center")
        return
    xs = sorted({p[0] for p in pts})
    ys = [p[1] for p in pts]
    lx0, lx1 = math.log10(xs[0]), math.log10(xs[-1])
    if lx1 - lx0 < 1e-9:
        lx0, lx1 = lx0 - 0.5, lx1 + 0.5
    pad = 0.04 * (lx1 - lx0)
    lx0, lx1 = lx0 - pad, lx1 + pad
    ly0, ly1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    if ly1 - ly0 < 1:
        ly1 = ly0 + 1

    def X(v: float) -> float:
        return px0 + (math.log10(v) - lx0) / (lx1 - lx0) * (px1 - px0)

    def Y(v: float) -> float:
        return py1 - (math.log10(v) - ly0) / (ly1 - ly0) * (py1 - py0)

    # grid and ticks: decades (and 2, 5 between them) on y, the batch sizes on x
    for e in range(ly0, ly1 + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** e
            if not (10.0 ** ly0 <= v <= 10.0 ** ly1):
                continue
            y = Y(v)
            cv.line(px0, y, px1, y, GRID if m == 1 else (240, 240, 240))
            if m == 1 or ly1 - ly0 <= 2:
                cv.text(px0 - 6, int(y) - 7, _fmt_tick(v), AXIS, 2, "right")
    for v in xs:
        x = X(v)
        cv.line(x, py0, x, py1, GRID)
        cv.text(int(x), py1 + 6, _fmt_tick(v), AXIS, 2, "center")
    cv.line(px0, py0, px0, py1, AXIS, 2)
    cv.line(px0, py1, px1, py1, AXIS, 2)
    cv.text((px0 + px1) // 2, py1 + 28, "batch size", AXIS, 2, "center")
    cv.text(x0 + 4, py0 - 24, ylabel, AXIS, 2)
    for _, key, color, dashed in SERIES:
        s = series.get(key) or []
        for (a, b), (c, d) in zip(s, s[1:]):
            cv.line(X(a), Y(b), X(c), Y(d), color, 3, dash=8 if dashed else 0)
        for a, b in s:
            if dashed:
                cv.rect(int(X(a)) - 3, int(Y(b)) - 3, int(X(a)) + 3, int(Y(b)) + 3, color)
            else:
                cv.disc(X(a), Y(b), 4, color)
    # legend, top left inside the axes
    lx, ly = px0 + 12, py0 + 8
    for label, key, color, dashed in SERIES:
        if not series.get(key):
            continue
        cv.line(lx, ly + 7, lx + 28, ly + 7, color, 3, dash=6 if dashed else 0)
        cv.text(lx + 36, ly, label, BLACK, 2)
        ly += 20


def plot(data: Dict[str, Any], path: str, kind: str = "tree", metric: str = "device_us") -> str:
    """Writes the PNG; returns the path."""
    layouts = list(data.get("layout_order") or [])
    for r in data.get("results", []):
        if r.get("layout") not in layouts:
            layouts.append(r["layout"])
    n = max(1, len(layouts))
    cols = 1 if n == 1 else 2
    rows = -(-n // cols)
    pw, ph = 620, 440
    title_h = 56
    cv = Canvas(cols * pw, rows * ph + title_h)
    h = data.get("header", {})
    what = {"device_us": "device time per call (kernels only)", "graph_us": "CUDA-graph replay",
            "span_us": "eager call span"}.get(metric, metric)
    cv.text(cv.w // 2, 10, f"KV move, {kind}: {what}, us", BLACK, 2, "center")
    cv.text(cv.w // 2, 32, f"{h.get('gpu', '')} commit {str(h.get('commit', ''))[:12]} "
            f"{str(h.get('date_utc', ''))[:10]}", AXIS, 2, "center")
    for i, layout in enumerate(layouts):
        r, c = divmod(i, cols)
        draw_panel(cv, c * pw, title_h + r * ph, pw, ph, layout,
                   series_of(data, layout, kind, metric), "us")
    p = pathlib.Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_bytes(cv.png())
    tmp.replace(p)
    return str(p)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json")
    ap.add_argument("png")
    ap.add_argument("--kind", default="tree", choices=["tree", "chain"])
    ap.add_argument("--metric", default="device_us", choices=["device_us", "graph_us", "span_us"])
    a = ap.parse_args(argv)
    data = json.loads(pathlib.Path(a.json).read_text())
    print(f"wrote {plot(data, a.png, a.kind, a.metric)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
