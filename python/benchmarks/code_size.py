"""The SASS of one kernel of a cubin, in stretches that end at a block
barrier, an exit or a return: each stretch's offsets and instruction count,
and where the first global load is. After an L2 flush a small batch's time
is largely the fetch of the instructions it runs (results/ab-9cb0ca6.md),
so these counts predict a change's cost before the GPU times it.

Usage: code_size.py CUBIN [--function NAME] [--cuobjdump PATH]
       code_size.py CUBIN --compare OTHER_CUBIN
cuobjdump: --cuobjdump, $SPECC_CUOBJDUMP, `cuobjdump` on PATH, or the copy
that Triton's wheel carries (triton/backends/nvidia/bin).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
from typing import List, Optional, Tuple

DEFAULT_FUNCTION = "move_accept_tokens__i64_i64_i64_i64_i64_i64"
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def find_cuobjdump(given: Optional[str]) -> str:
    for c in (given, os.environ.get("SPECC_CUOBJDUMP"), shutil.which("cuobjdump")):
        if c:
            return c
    try:
        import triton  # noqa: F401
        c = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
        if os.path.exists(c):
            return c
    except ImportError:
        pass
    sys.exit("code_size: no cuobjdump (give --cuobjdump or $SPECC_CUOBJDUMP)")


def sass(cubin: str, function: str, tool: str) -> List[Tuple[int, str]]:
    out = subprocess.run([tool, "-sass", "-fun", function, cubin], check=True,
                         capture_output=True, text=True).stdout
    return parse(out)


def parse(text: str) -> List[Tuple[int, str]]:
    return [(int(m.group(1), 16), m.group(2)) for m in map(LINE.search, text.splitlines()) if m]


def ends_stretch(ins: str) -> bool:
    """Whether SASS instruction `ins` ends a stretch: a block barrier, an
    exit or a return (stall_report.py splits its phases the same way)."""
    return "BAR.SYNC" in ins or re.search(r"\bEXIT\b", ins) is not None or "RET." in ins


def stretches(code: List[Tuple[int, str]]) -> List[dict]:
    out, cur = [], None
    for off, ins in code:
        if cur is None:
            cur = {"from": off, "count": 0, "first_load": None, "calls": 0}
        cur["to"] = off
        cur["count"] += 1
        if cur["first_load"] is None and "LDG" in ins:
            cur["first_load"] = off
        cur["calls"] += "CALL" in ins
        if ends_stretch(ins):
            cur["ends"] = next(t for t in ins.split() if not t.startswith("@"))
            out.append(cur)
            cur = None
    if cur:
        cur["ends"] = "end"
        out.append(cur)
    return out


def report(code: List[Tuple[int, str]], head: int = 24) -> List[str]:
    lines = [f"{len(code)} instructions; first global load at "
             f"{next((o for o, i in code if 'LDG' in i), -1):#x} "
             f"(instruction {next((k for k, (o, i) in enumerate(code) if 'LDG' in i), -1)})",
             "| from | to | instructions | first load | calls | ends at |",
             "|---:|---:|---:|---:|---:|---|"]
    for s in stretches(code)[:head]:
        fl = f"{s['first_load']:#x}" if s["first_load"] is not None else "-"
        lines.append(f"| {s['from']:#x} | {s['to']:#x} | {s['count']} | {fl} | {s['calls']} | {s['ends']} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubin")
    ap.add_argument("--function", default=DEFAULT_FUNCTION)
    ap.add_argument("--cuobjdump")
    ap.add_argument("--compare", help="a second cubin, reported after the first")
    opts = ap.parse_args()
    tool = find_cuobjdump(opts.cuobjdump)
    for c in [opts.cubin] + ([opts.compare] if opts.compare else []):
        print(f"## {c}: {opts.function}")
        print("\n".join(report(sass(c, opts.function, tool))))
        print()


if __name__ == "__main__":
    main()
