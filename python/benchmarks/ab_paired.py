"""Kernel images timed in turns, in one process: the device time per call of
two or more runtime builds (each built around one kernel image, as
scripts/ab.sh builds them), on the same inputs and buffers, their calls
interleaved call by call. A GPU's state drifts between runs (main against
itself moved up to 0.2 us on one configuration between two runs); taken in
turns, the drift falls on every image alike and cancels out of the
differences.

Each runtime library is loaded as its own copy (specc._runtime.load) and
drives its own mover (ctypes binding). For each configuration (layout,
chain or tree, bs, window or req_to_token targets):

1. every runtime moves every input set once and must move it exactly:
   each target row becomes its source row as it was, every other row of
   every buffer keeps its checksum, the status is clean and counts the
   moving entries (bench_move.check_move);
2. then rounds: in each, one call of every runtime, the order rotated from
   round to round, each call after an L2 flush and between marker kernels
   (bench_move.Meter.device: kernels-only device time, CUPTI through
   torch.profiler), the input sets taken in turn;
3. per runtime, the median device time per call; per variant (every
   runtime after the first), the median over rounds of its call's time
   minus the first runtime's call's time in the same round.

A configuration is timed only if every runtime moved it exactly.

With --warmth, each runtime is also timed in two warmer arms, in the same
turns: `NAME@code`, whose call follows (after the flush, outside the
markers) one call of the same runtime on a decoy input set of the same
shape whose moving rows lie two slots or more from every timed set's, so
that the call finds its code (and the buffer table and the workspace's
control words) in the caches but its rows and index tensors cold; and
`NAME@all`, whose call follows a call on its own input set, so that it
finds everything warm. `NAME - NAME@code` is then what fetching the code
after the flush costs a call, and `NAME@code - NAME@all` what its data's
misses cost. One runtime suffices in that mode.

Usage (GPU host):
  python3 benchmarks/ab_paired.py --lib main=/tmp/image-rt-main/lib/libspecc_runtime.so \\
      --lib pa3=/tmp/image-rt-pa3/lib/libspecc_runtime.so [--layouts ...] [--bs ...] \\
      [--kinds chain tree] [--targets window] [--rounds 100] [--warmth] [--out ab-paired.json]
"""

from __future__ import annotations

import argparse
import functools
import json
import pathlib
import statistics
import sys
from typing import Any, Dict, Iterable, List, Optional

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.append(str(pathlib.Path(__file__).resolve().parents[1]))  # an installed specc first
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

import bench_move  # noqa: E402
from bench_move import (LAYOUTS, Meter, check_move, make_buffers, make_inputs,  # noqa: E402
                        slots_needed)
from specc import _runtime as rt  # noqa: E402
from specc.api import _call_args, _kv_buffer  # noqa: E402


def parse_lib(text: str) -> tuple:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"--lib takes NAME=PATH, got {text!r}")
    if not pathlib.Path(path).is_file():
        raise argparse.ArgumentTypeError(f"--lib {name}: no file {path}")
    return name, path


def schedule(names: List[str], rounds: int) -> List[tuple]:
    """The order of the interleaved calls: (round, runtime) pairs, every
    runtime once a round, round r starting with runtime r mod K."""
    k = len(names)
    return [(r, names[(r + i) % k]) for r in range(rounds) for i in range(k)]


def paired(calls_us: List[float], names: List[str], rounds: int) -> Dict[str, List[float]]:
    """Per-call times of a run in schedule() order, by runtime, indexed by
    round."""
    by: Dict[str, List[float]] = {n: [0.0] * rounds for n in names}
    for (r, n), t in zip(schedule(names, rounds), calls_us, strict=True):
        by[n][r] = t
    return by


def moving_slots(tgt: Any, src: Any) -> set:
    """The slots whose rows a call reads or writes: the target and the
    source of every entry whose source differs from its target."""
    return {int(x) for t, r in zip(tgt, src) if int(t) != int(r) for x in (t, r)}


def first_disjoint(taken: set, candidates: Iterable[set], gap: int = 2) -> Optional[int]:
    """Index of the first candidate slot set none of whose slots lies
    within `gap - 1` of a slot in `taken` (rows shorter than a cache line
    share lines with their neighbours), or None."""
    near = {t + d for t in taken for d in range(-gap + 1, gap)}
    for k, c in enumerate(candidates):
        if not (c & near):
            return k
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", type=parse_lib, action="append", required=True,
                    help="NAME=PATH of a runtime library; the first is the base")
    ap.add_argument("--layouts", nargs="+", choices=list(LAYOUTS), default=["llama8b"])
    ap.add_argument("--bs", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--kinds", nargs="+", choices=["chain", "tree"], default=["chain", "tree"])
    ap.add_argument("--w", type=int, default=4)
    ap.add_argument("--tree-drafts", type=int, default=8)
    ap.add_argument("--sets", type=int, default=4, help="input sets, taken in turn")
    ap.add_argument("--targets", choices=["req_to_token", "window"], default="window")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--flush-mib", type=int, default=256)
    ap.add_argument("--flush-kind", choices=["dirty", "clean"], default="dirty")
    ap.add_argument("--warmth", action="store_true",
                    help="also time each runtime with its code warm (NAME@code) and with "
                         "everything warm (NAME@all)")
    ap.add_argument("--decoy-tries", type=int, default=64,
                    help="--warmth: decoy input sets drawn at most, for one whose rows "
                         "avoid the timed sets'")
    ap.add_argument("--out", type=pathlib.Path)
    args = ap.parse_args()
    import torch

    bench_move.torch = torch  # its GPU stack is imported late (import_gpu_stack)
    libnames = [n for n, _ in args.lib]
    if len(libnames) < (1 if args.warmth else 2) or len(set(libnames)) != len(libnames) \
            or any("@" in n for n in libnames):
        ap.error("give at least two --lib (one with --warmth), with distinct names "
                 "without '@'")
    arms = ["", "@code", "@all"] if args.warmth else [""]
    names = [n + a for n in libnames for a in arms]
    libs = {n: rt.load(p) for n, p in args.lib}
    meter = Meter(argparse.Namespace(reps=args.rounds, host_reps=0, min_reps=1, budget_s=1e9,
                                     sync_every=8, flush_mib=args.flush_mib,
                                     flush_kind=args.flush_kind))
    stream = torch.cuda.current_stream().cuda_stream
    props = torch.cuda.get_device_properties(0)
    out: Dict[str, Any] = {"gpu": props.name, "libs": dict(args.lib), "rounds": args.rounds,
                           "targets": args.targets, "flush": args.flush_kind,
                           "warmth": args.warmth, "results": []}
    base = names[0]
    print(f"# {props.name}; {args.rounds} rounds of {len(names)} calls, order rotated; "
          f"targets {args.targets}; L2 flush {args.flush_kind}; device us per call")
    print("| config | " + " | ".join(names) + " | "
          + " | ".join(f"{n} - {base} (paired)" for n in names[1:]) + " | exact |")
    print("|---|" + "---:|" * (2 * len(names) - 1) + "---|")
    for layout_name in args.layouts:
        layout = LAYOUTS[layout_name]
        for kind in args.kinds:
            tree = kind == "tree"
            for bs in args.bs:
                config = f"{layout_name} {kind} bs={bs}"
                nd = args.tree_drafts if tree else args.w
                sets = make_inputs(bs, args.w, tree, nd, args.sets, seed=1000 * bs + tree,
                                   targets=args.targets)
                decoy = None
                if args.warmth:
                    taken = set().union(*(moving_slots(x.tgt.cpu(), x.src.cpu()) for x in sets))
                    for t in range(args.decoy_tries):  # drawn one at a time
                        c = make_inputs(bs, args.w, tree, nd, 1, seed=500009 + 104729 * t + bs,
                                        targets=args.targets)[0]
                        if first_disjoint(taken, [moving_slots(c.tgt.cpu(), c.src.cpu())]) == 0:
                            decoy = c
                            break
                    if decoy is None:
                        print(f"| {config} | no decoy of {args.decoy_tries} avoids the timed "
                              "rows: not timed |", flush=True)
                        continue
                bufs = make_buffers(layout, slots_needed(sets + ([decoy] if decoy else [])),
                                    seed=bs * 2 + tree)
                desc = [_kv_buffer(b, i) for i, b in enumerate(bufs)]
                calls: Dict[str, List[Any]] = {}
                exact: Dict[str, bool] = {}
                movers = {}
                decoys: Dict[str, Any] = {}
                for n in libnames:
                    m = movers[n] = rt.Mover(0, sets[0].size, lib=libs[n])
                    m.set_buffers(desc)
                    calls[n] = []
                    ok = True
                    for inp in sets + ([decoy] if decoy else []):
                        call, _ = _call_args(*(inp.args[a] for a in rt.ARG_NAMES),
                                             targets=args.targets)
                        f = functools.partial(m.move, call, stream)
                        c = check_move(bufs, inp, f)
                        st = m.read_status(stream)
                        ok &= c["targets"] and c["others"] and st[0] == 0 and st[4] == 0 \
                            and st[5] == inp.moving
                        calls[n].append(f)
                    if decoy:
                        decoys[n] = calls[n].pop()
                    for a in arms:
                        exact[n + a] = ok
                row: Dict[str, Any] = {"config": config, "exact": exact}
                if decoy:
                    row["decoy_moving"] = decoy.moving
                if all(exact.values()):
                    order = schedule(names, args.rounds)
                    lib_of = {n + a: n for n in libnames for a in arms}
                    fns = [calls[lib_of[n]][r % len(sets)] for r, n in order]
                    before = [None if "@" not in n
                              else decoys[lib_of[n]] if n.endswith("@code")
                              else calls[lib_of[n]][r % len(sets)] for r, n in order]
                    d = meter.device(fns, len(fns), before=before if args.warmth else None)
                    by = paired(d["calls_us"], names, args.rounds)
                    row["median_us"] = {n: statistics.median(by[n]) for n in names}
                    row["paired_diff_us"] = {
                        n: statistics.median(a - b for a, b in zip(by[n], by[base]))
                        for n in names[1:]}
                    cells = [f"{row['median_us'][n]:.2f}" for n in names]
                    cells += [f"{row['paired_diff_us'][n]:+.2f}" for n in names[1:]]
                else:
                    cells = ["-"] * (2 * len(names) - 1)
                wrong = [n for n in names if not exact[n]]
                print(f"| {config} | " + " | ".join(cells) + " | "
                      + ("yes" if not wrong else "NO: " + ", ".join(wrong)) + " |", flush=True)
                out["results"].append(row)
                del movers, calls, bufs
                torch.cuda.empty_cache()
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))
    return 0 if all(all(r["exact"].values()) for r in out["results"]) else 1


if __name__ == "__main__":
    sys.exit(main())
