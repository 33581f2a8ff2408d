"""Summarizes ncu's SASS source page of one kernel (CSV, from `ncu -i REP
--page source --print-source sass --csv`): the warp-state samples by stall
reason, the same per stretch of code between block barriers (the kernel's
phases), and the instructions with the most samples. Used by
stall_profile.sh."""

import collections
import csv
import sys
from typing import Dict, List

from code_size import ends_stretch


def number(s: str) -> float:
    try:
        return float((s or "0").replace(",", ""))
    except ValueError:
        return 0.0


def read(path: str) -> List[Dict[str, str]]:
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    # ncu prints the kernel's name (and sometimes notes) before the table.
    start = next((i for i, l in enumerate(lines) if l.startswith('"Address"')), None)
    return [] if start is None else list(csv.DictReader(lines[start:]))


def reasons(rows: List[Dict[str, str]]) -> List[str]:
    return [c for c in rows[0] if c.startswith("stall_") and "Not Issued" not in c]


def phases(rows: List[Dict[str, str]]) -> List[Dict]:
    """Stretches of code that end at a barrier, an exit or a return."""
    out, cur = [], None
    base = int(rows[0]["Address"], 16)
    for r in rows:
        if cur is None:
            cur = {"from": int(r["Address"], 16) - base, "executed": 0.0,
                   "stalls": collections.Counter()}
        cur["to"] = int(r["Address"], 16) - base
        cur["executed"] += number(r["Instructions Executed"])
        for c in reasons(rows):
            cur["stalls"][c[len("stall_"):]] += number(r[c])
        if ends_stretch(r["Source"]):
            out.append(cur)
            cur = None
    if cur:
        out.append(cur)
    return out


def main(path: str, top: int = 25) -> None:
    rows = read(path)
    if not rows:
        print("no SASS table in", path)
        return
    why = reasons(rows)
    total = collections.Counter()
    for r in rows:
        for c in why:
            total[c[len("stall_"):]] += number(r[c])
    print(f"{len(rows)} instructions, {sum(total.values()):.0f} samples:",
          ", ".join(f"{k}={v:.0f}" for k, v in total.most_common() if v))
    print("by phase (offset range, warp instructions executed, samples):")
    for p in phases(rows):
        n = sum(p["stalls"].values())
        if n >= 5 or p["executed"]:
            print(f"  {p['from']:#7x}-{p['to']:#7x} {p['executed']:9.0f} {n:6.0f}  " +
                  " ".join(f"{k}={v:.0f}" for k, v in p["stalls"].most_common(5) if v))
    key = "Warp Stall Sampling (All Samples)"
    hot = sorted(rows, key=lambda r: -number(r[key]))[:top]
    hot.sort(key=lambda r: int(r["Address"], 16))
    print(f"top {top} instructions by samples, in address order:")
    for r in hot:
        mine = sorted(((number(r[c]), c[len("stall_"):]) for c in why), reverse=True)[:2]
        print(f"  {r['Address']:>18} {number(r[key]):5.0f}  {r['Source'][:56]:56} " +
              " ".join(f"{k}={v:.0f}" for v, k in mine if v))


if __name__ == "__main__":
    main(sys.argv[1])
