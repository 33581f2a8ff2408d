#!/usr/bin/env python3
"""Side-by-side timing of the KV move after speculative decoding on one GPU.

What is measured, per configuration (KV layout x chain/tree x batch size):

* **sglang's Triton path** (DESIGN.md section 3), call for call as sglang's
  ``move_accept_tokens_to_target_kvcache`` issues it: two zero-filled int64
  allocations, the ``seq_lens + num_correct_drafts + 1`` end offsets, then the
  three Triton launches ``assign_extend_cache_locs``,
  ``fill_accept_out_cache_loc`` and ``copy_all_layer_kv_cache_tiled``. The
  buffer-address and row-stride tensors are built once per pool, outside the
  timed region, as sglang caches them. The Triton kernels are not part of this
  repository: their source is read at run time from sglang's own files in
  ``--sglang-src`` (``cache_locs.py``, ``eagle.py``, ``cache_move.py`` from the
  sglang wheel), cut out by name with ``ast`` and executed in a namespace that
  holds only ``triton``, ``tl`` and ``torch``. Without that folder the column
  is skipped and specc is still measured. The copy kernel's tile
  (``BYTES_PER_TILE``, ``num_warps``) follows sglang's own heuristic, which
  lives in its ``memory_pool.py`` rather than in ``cache_move.py``: its
  thresholds are parsed from any file of ``--sglang-src`` that defines them,
  else built in; ``--tile-config fixed512`` uses 512 B / 4 warps instead.
* **specc** through its Python API, on the same inputs and buffers.
* **the floor**: the bytes a move must touch (read and write of every moved
  row of every buffer) over the device-to-device copy bandwidth measured here
  with a large ``copy_``, plus one kernel launch measured the same way as the
  paths (a one-kernel CUDA graph).

Each path is timed (a) eagerly, with CUDA events around one call after an L2
flush (``triton.testing.do_bench``, median), which includes host launch gaps
whenever the host cannot stay ahead of the GPU, and (b) as CUDA-graph replays,
one graph per input set, which is how sglang runs it while serving. A second
table gives back-to-back wall time per call (no flush, one sync at the end),
the throughput a serving loop would see.

Fairness rules: every path rotates among ``--sets`` input sets of the same
shapes but different index values (so L2-resident indices flatter nobody); KV
buffers hold random bytes, never zeros; both paths move the same buffers.
Before anything is timed, each layout is checked on a chain case and a tree
case: specc and sglang against the pure-torch ``reference`` of
``tests/gpu_cases.py`` over every row of every buffer. A layout whose specc
result differs from the reference is not timed; an sglang mismatch is reported
and timed anyway. Each timed configuration also re-checks the target rows
after one eager call and one graph replay of each path.

Inputs come from ``make_case`` of ``tests/gpu_cases.py`` (random slot
permutations; a tree has ``--tree-drafts`` draft tokens per request, a chain
``W``); pools hold just the slots the inputs use plus a margin. In a chain
every target equals its source (sglang's caller skips the move then); both
paths run it anyway, and its floor counts the rows all the same.

Triton's first-call cost is taken with a fresh ``TRITON_CACHE_DIR`` (set
before Triton is imported): the first call of each kernel, synchronised,
minus a warm call of the same kernel, i.e. compile, launcher build and module
load. It is recorded wherever a new specialization appears (sglang's kernels
specialize on the batch size through their ``constexpr`` bounds).

Usage (on the GPU host, from the repository root or ``python/``)::

    python3 python/benchmarks/bench_move.py --sglang-src .bench --out bench.json

``--extract-only`` checks the sglang sources and prints what would be used; it
needs neither torch nor a GPU.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import itertools
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = pathlib.Path(__file__).resolve().parent
PYTHON_DIR = HERE.parent
REPO_ROOT = PYTHON_DIR.parent

# The three sglang kernels of the move and the sglang file each lives in.
SGLANG_KERNELS = {
    "assign_extend_cache_locs": "cache_locs.py",
    "fill_accept_out_cache_loc": "eagle.py",
    "copy_all_layer_kv_cache_tiled": "cache_move.py",
}

# sglang picks the copy kernel's tile from the first buffer's row stride. The
# logic lives in sglang's memory_pool.py (MHATokenToKVPool /
# MLATokenToKVPool._init_kv_copy_and_warmup), not in cache_move.py; these are
# its thresholds, used when no file in --sglang-src defines them.
SGLANG_TILE_CONSTANTS = {
    "STRIDE_THRESHOLD_LARGE": 8192,
    "STRIDE_THRESHOLD_MEDIUM": 4096,
    "TILE_SIZE_LARGE": 512,
    "TILE_SIZE_MEDIUM": 256,
    "TILE_SIZE_SMALL": 128,
    "NUM_WARPS_LARGE_TILE": 8,
    "NUM_WARPS_SMALL_TILE": 4,
}


@dataclass(frozen=True)
class Layout:
    """One KV pool shape: `kinds` row shapes (K then V for MHA, one for MLA),
    each repeated over `layers` buffers, in sglang's buffer order."""

    name: str
    desc: str
    layers: int
    row_shapes: Tuple[Tuple[int, ...], ...]
    dtype: str  # attribute of torch

    def row_bytes(self, itemsize: int) -> List[int]:
        out = []
        for shape in self.row_shapes:
            n = 1
            for d in shape:
                n *= d
            out += [n * itemsize] * self.layers
        return out


LAYOUTS = {
    "mha-bf16": Layout("mha-bf16", "32 layers MHA, K and V rows 8 heads x 128 x bf16 (2048 B)",
                       32, ((8, 128), (8, 128)), "bfloat16"),
    "mla-576": Layout("mla-576", "61 layers MLA, one row 512+64 x fp8 (576 B)",
                      61, ((1, 576),), "float8_e4m3fn"),
    "mha-fp8": Layout("mha-fp8", "32 layers MHA, K and V rows 1 head x 64 x fp8 (64 B)",
                      32, ((1, 64), (1, 64)), "float8_e4m3fn"),
}


def log(msg: str) -> None:
    """Progress goes to stderr so stdout holds only the report."""
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# sglang sources (no torch needed)
# --------------------------------------------------------------------------

@dataclass
class KernelSource:
    name: str
    file: str
    first_line: int
    last_line: int
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


def extract_jit_function(path: pathlib.Path, name: str) -> KernelSource:
    """The source of the top-level `@triton.jit` function `name` in `path`,
    decorators included, exactly as written there."""
    src = path.read_text()
    for node in ast.parse(src, filename=str(path)).body:
        if not (isinstance(node, ast.FunctionDef) and node.name == name):
            continue
        decorators = [ast.get_source_segment(src, d) or "" for d in node.decorator_list]
        if not any(re.match(r"triton\.jit\b", d) for d in decorators):
            raise ValueError(f"{path}:{node.lineno}: {name} is not decorated with @triton.jit")
        body = ast.get_source_segment(src, node)
        if body is None:
            raise ValueError(f"{path}: no source segment for {name}")
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        text = "".join(f"@{d}\n" for d in decorators) + body + "\n"
        return KernelSource(name, path.name, first, node.end_lineno or node.lineno, text)
    raise ValueError(f"{path}: no top-level function named {name}")


def extract_sglang_kernels(src_dir: pathlib.Path) -> Dict[str, KernelSource]:
    """All three kernels, or ValueError/OSError saying what is missing."""
    if not src_dir.is_dir():
        raise FileNotFoundError(f"sglang source folder {src_dir} does not exist")
    return {name: extract_jit_function(src_dir / fname, name)
            for name, fname in SGLANG_KERNELS.items()}


def find_tile_constants(src_dir: pathlib.Path) -> Tuple[Dict[str, int], str]:
    """sglang's copy-tile thresholds: parsed from a file of `src_dir` that
    defines them (e.g. a copy of memory_pool.py), else the built-in values."""
    pattern = re.compile(r"_KV_COPY_([A-Z_]+)\s*=\s*(\d+)")
    if src_dir.is_dir():
        for f in sorted(src_dir.glob("*.py")):
            found = {k: int(v) for k, v in pattern.findall(f.read_text())}
            if set(SGLANG_TILE_CONSTANTS) <= set(found):
                return {k: found[k] for k in SGLANG_TILE_CONSTANTS}, f"parsed from {f.name}"
    return dict(SGLANG_TILE_CONSTANTS), (
        "sglang memory_pool.py _init_kv_copy_and_warmup thresholds (built in: "
        "not defined in cache_move.py or elsewhere in --sglang-src)")


def kv_copy_config(first_row_bytes: int, mode: str, consts: Dict[str, int]) -> Dict[str, int]:
    """`bytes_per_tile`, `byte_tiles`, `num_warps` of the copy kernel launch.

    mode 'sglang' follows sglang's stride heuristic (it looks at the first
    buffer's row bytes only); 'fixed512' is BYTES_PER_TILE=512, num_warps=4.
    """
    if mode == "fixed512":
        tile, warps = 512, 4
    else:
        c = consts
        if first_row_bytes >= c["STRIDE_THRESHOLD_LARGE"]:
            tile = c["TILE_SIZE_LARGE"]
        elif first_row_bytes >= c["STRIDE_THRESHOLD_MEDIUM"]:
            tile = c["TILE_SIZE_MEDIUM"]
        else:
            tile = c["TILE_SIZE_SMALL"]
        warps = c["NUM_WARPS_SMALL_TILE"] if tile <= c["TILE_SIZE_MEDIUM"] else c["NUM_WARPS_LARGE_TILE"]
    return {"bytes_per_tile": tile, "byte_tiles": -(-first_row_bytes // tile), "num_warps": warps}


def next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


# --------------------------------------------------------------------------
# Report formatting (no torch needed)
# --------------------------------------------------------------------------

def _f(x: Optional[float], width: int, prec: int = 1) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:>{width}.{prec}f}"


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None or b <= 0 else a / b


MAIN_HEAD = (f"{'config':<26}{'rows':>6}{'MB':>8} |{'sgl eag':>9}{'specc eag':>10}{'x':>6} |"
             f"{'sgl graph':>10}{'specc gr':>9}{'x':>6} |{'floor':>8}{'sp/floor':>9} | chk")


def main_row(r: Dict[str, Any]) -> str:
    s, p = r["sglang"], r["specc"]
    return (f"{r['config']:<26}{r['moving_rows']:>6.0f}{r['bytes_moved'] / 1e6:>8.1f} |"
            f"{_f(s.get('eager_us'), 9)}{_f(p.get('eager_us'), 10)}"
            f"{_f(_ratio(s.get('eager_us'), p.get('eager_us')), 6, 2)} |"
            f"{_f(s.get('graph_us'), 10)}{_f(p.get('graph_us'), 9)}"
            f"{_f(_ratio(s.get('graph_us'), p.get('graph_us')), 6, 2)} |"
            f"{_f(r['floor_us'], 8)}{_f(_ratio(p.get('graph_us'), r['floor_us']), 9, 2)} | {r['check']}")


B2B_HEAD = (f"{'config':<26}|{'sgl eager':>10}{'specc eager':>12}{'x':>6} |"
            f"{'sgl graph':>10}{'specc graph':>12}{'x':>6}")


def b2b_row(r: Dict[str, Any]) -> str:
    s, p = r["sglang"], r["specc"]
    return (f"{r['config']:<26}|{_f(s.get('b2b_eager_us'), 10)}{_f(p.get('b2b_eager_us'), 12)}"
            f"{_f(_ratio(s.get('b2b_eager_us'), p.get('b2b_eager_us')), 6, 2)} |"
            f"{_f(s.get('b2b_graph_us'), 10)}{_f(p.get('b2b_graph_us'), 12)}"
            f"{_f(_ratio(s.get('b2b_graph_us'), p.get('b2b_graph_us')), 6, 2)}")


def git_commit() -> Tuple[str, Optional[bool]]:
    """HEAD of the checkout this file sits in, and whether tracked files differ."""
    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "diff", "--quiet", "HEAD"],
                               capture_output=True).returncode != 0
        return head, dirty
    except (OSError, subprocess.CalledProcessError):
        return "unknown", None


# --------------------------------------------------------------------------
# GPU part
# --------------------------------------------------------------------------

torch: Any = None
triton: Any = None
tl: Any = None


def import_gpu_stack() -> None:
    """Imported late, after TRITON_CACHE_DIR is set, so that Triton's cache is
    the fresh one from its first use on."""
    global torch, triton, tl
    import torch as _torch
    import triton as _triton
    import triton.language as _tl
    import triton.testing  # noqa: F401  (do_bench)
    torch, triton, tl = _torch, _triton, _tl


def load_sglang_kernels(sources: Dict[str, KernelSource], workdir: pathlib.Path) -> Dict[str, Any]:
    """Executes the extracted kernel sources in a namespace holding only
    triton, tl and torch. The text is also written to a file and compiled
    under that file name, because triton.jit reads a kernel's source back
    through `inspect`."""
    text = "\n\n".join(k.text for k in sources.values())
    path = workdir / "sglang_move_kernels.py"
    path.write_text(text)
    namespace: Dict[str, Any] = {"__name__": "sglang_move_kernels", "__file__": str(path),
                                 "triton": triton, "tl": tl, "torch": torch}
    exec(compile(text, str(path), "exec"), namespace)
    return {name: namespace[name] for name in sources}


@dataclass
class InputSet:
    """One call's index tensors (on the GPU, sglang dtypes) and its moved rows."""

    args: Dict[str, Any]
    tgt: Any  # int64 [moving rows], on the GPU
    src: Any

    @property
    def bs(self) -> int:
        return int(self.args["accept_index"].shape[0])

    @property
    def size(self) -> int:
        return int(self.args["accept_index"].numel())

    @property
    def pool_len(self) -> int:
        return int(self.args["req_to_token"].shape[1])


def make_inputs(bs: int, w: int, tree: bool, num_draft: int, sets: int, seed: int) -> List[InputSet]:
    """`sets` index sets of identical shapes and different values."""
    from gpu_cases import make_case, reference

    out = []
    for k in range(sets):
        args, _ = make_case(bs, w, tree=tree, num_draft=num_draft, layers=0, device="cuda",
                            seed=seed + 7919 * k)
        _, tgt, src = reference(args, [])
        out.append(InputSet(args, tgt.cuda(), src.cuda()))
    shapes = {tuple(tuple(v.shape) for v in s.args.values()) for s in out}
    assert len(shapes) == 1, "input sets must share their shapes"
    return out


def slots_needed(sets: Sequence[InputSet], margin: int = 64) -> int:
    return max(int(s.args["req_to_token"].max()) for s in sets) + 1 + margin


def make_buffers(layout: Layout, slots: int, seed: int) -> List[Any]:
    """The pool's buffers in sglang's order (all K, then all V), random bytes."""
    dtype = getattr(torch, layout.dtype, torch.uint8)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    bufs = []
    for shape in layout.row_shapes:
        for _ in range(layout.layers):
            b = torch.empty((slots, *shape), dtype=dtype, device="cuda")
            b.view(torch.uint8).random_(0, 256, generator=gen)
            bufs.append(b)
    return bufs


def rows_u8(b: Any) -> Any:
    """A buffer as [slots, row bytes] uint8: compares bytes (fp8/bf16 NaNs too)."""
    return b.view(torch.uint8).reshape(b.shape[0], -1)


def _sync_clock() -> float:
    torch.cuda.synchronize()
    return time.perf_counter()


class SglangPath:
    """sglang's move for one pool, built as sglang builds it: the addresses and
    strides once per pool, everything else per call."""

    def __init__(self, kernels: Dict[str, Any], bufs: List[Any], config: Dict[str, int]):
        self.assign = kernels["assign_extend_cache_locs"]
        self.fill = kernels["fill_accept_out_cache_loc"]
        self.copy = kernels["copy_all_layer_kv_cache_tiled"]
        self.config = config
        self.copy_grid = (len(bufs), config["byte_tiles"])
        ptrs = [b.data_ptr() for b in bufs]
        try:  # sglang keeps the addresses as uint64; same bits as int64 here.
            self.data_ptrs = torch.tensor(ptrs, dtype=torch.uint64, device="cuda")
        except (TypeError, RuntimeError):
            self.data_ptrs = torch.tensor(ptrs, dtype=torch.int64, device="cuda")
        self.strides = torch.tensor([rows_u8(b).shape[1] for b in bufs], dtype=torch.int64,
                                    device="cuda")

    def __call__(self, inp: InputSet, stage_ms: Optional[Dict[str, float]] = None) -> None:
        """One move, as sglang's move_accept_tokens_to_target_kvcache does it.
        With `stage_ms`, each launch is bracketed by syncs and its wall time
        recorded (used for the first-call cost only, never for the timings)."""
        a, bs, size = inp.args, inp.bs, inp.size
        size_upper = next_power_of_2(size)
        cfg = self.config
        tgt = torch.zeros(size, dtype=torch.int64, device="cuda")
        src = torch.zeros(size, dtype=torch.int64, device="cuda")
        end = a["seq_lens"] + a["num_correct_drafts"] + 1
        if stage_ms is not None:
            t0 = _sync_clock()
        self.assign[(bs,)](a["req_pool_indices"], a["req_to_token"], a["seq_lens"], end, tgt,
                           inp.pool_len, next_power_of_2(bs))
        if stage_ms is not None:
            t1 = _sync_clock()
            stage_ms["assign_extend_cache_locs"] = (t1 - t0) * 1e3
        self.fill[(size,)](a["accept_index"], a["out_cache_loc"], src, size_upper)
        if stage_ms is not None:
            t2 = _sync_clock()
            stage_ms["fill_accept_out_cache_loc"] = (t2 - t1) * 1e3
        self.copy[self.copy_grid](self.data_ptrs, self.strides, tgt, src, size, size_upper,
                                  BYTES_PER_TILE=cfg["bytes_per_tile"], num_warps=cfg["num_warps"],
                                  num_stages=2)
        if stage_ms is not None:
            stage_ms["copy_all_layer_kv_cache_tiled"] = (_sync_clock() - t2) * 1e3


class SpeccPath:
    def __init__(self, specc: Any, bufs: List[Any]):
        self.specc, self.bufs = specc, bufs

    def __call__(self, inp: InputSet) -> None:
        self.specc.move_accept_tokens_to_target_kvcache(**inp.args, kv_buffers=self.bufs)


def capture(fn: Callable[[], None]) -> Any:
    """A CUDA graph of one call (warmed up on a side stream, as torch asks)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    return g


def rotating(fns: Sequence[Callable[[], None]]) -> Callable[[], None]:
    it = itertools.cycle(fns)
    return lambda: next(it)()


class Timer:
    def __init__(self, warmup_ms: float, rep_ms: float, b2b_iters: int):
        self.warmup_ms, self.rep_ms, self.b2b_iters = warmup_ms, rep_ms, b2b_iters

    def events_us(self, fn: Callable[[], None]) -> float:
        """Median GPU time of one call, events around it, L2 flushed before."""
        return 1e3 * triton.testing.do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms,
                                             return_mode="median")

    def wall_us(self, fn: Callable[[], None]) -> float:
        """Host wall time per call of back-to-back calls, one sync at the end."""
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(self.b2b_iters):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / self.b2b_iters * 1e6


def targets_moved(bufs: List[Any], inp: InputSet, run: Callable[[], None]) -> bool:
    """Runs one move and checks every target row against its source row as it
    was before (rows outside the targets are checked by the full check)."""
    u8 = [rows_u8(b) for b in bufs]
    want = [b[inp.src] for b in u8]
    run()
    torch.cuda.synchronize()
    return all(torch.equal(b[inp.tgt], w) for b, w in zip(u8, want))


def first_calls(path: SglangPath, inp: InputSet, label: str, record: List[Dict[str, Any]]) -> None:
    """One cold and one warm call, stage by stage; the difference is the
    first-call cost (compile or cache load, module load, launcher build).
    Both calls move rows: callers that check a single move restore first."""
    cold: Dict[str, float] = {}
    warm: Dict[str, float] = {}
    path(inp, cold)
    path(inp, warm)
    record.append({"where": label, "cold_ms": cold, "warm_ms": warm,
                   "first_call_ms": {k: max(cold[k] - warm[k], 0.0) for k in cold}})


def full_check(layout: Layout, tree: bool, args: argparse.Namespace, specc: Any,
               sgl_kernels: Optional[Dict[str, Any]], tile_mode: str, consts: Dict[str, int],
               compile_log: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Every row of every buffer after one move, both paths, against the
    pure-torch reference (gather all, then scatter)."""
    from gpu_cases import reference

    kind = "tree" if tree else "chain"
    inp = make_inputs(args.check_bs, args.w, tree, args.tree_drafts if tree else args.w, 1,
                      seed=100 + tree)[0]
    bufs = make_buffers(layout, slots_needed([inp]), seed=5)
    u8 = [rows_u8(b) for b in bufs]
    orig = [x.clone() for x in u8]
    want, _, _ = reference(inp.args, orig)
    res: Dict[str, Any] = {"layout": layout.name, "kind": kind, "bs": args.check_bs, "w": args.w}

    try:
        t0 = time.perf_counter()
        specc.prepare(0, inp.size, bufs)
        SpeccPath(specc, bufs)(inp)
        torch.cuda.synchronize()
        res["specc_first_call_ms"] = (time.perf_counter() - t0) * 1e3
        res["specc_matches_reference"] = all(torch.equal(x, w) for x, w in zip(u8, want))
    except Exception as e:  # the layout is then not timed; the others still are
        res["specc_error"] = f"{type(e).__name__}: {e}"
        res["specc_matches_reference"] = False
    specc_out = [x.clone() for x in u8]

    if sgl_kernels is not None:
        def restore() -> None:
            for x, o in zip(u8, orig):
                x.copy_(o)
        path = SglangPath(sgl_kernels, bufs, kv_copy_config(u8[0].shape[1], tile_mode, consts))
        try:
            first_calls(path, inp, f"check {layout.name} {kind} bs={args.check_bs}", compile_log)
            restore()  # first_calls moved twice; check one move from the original bytes
            path(inp)
            torch.cuda.synchronize()
            res["sglang_matches_reference"] = all(torch.equal(x, w) for x, w in zip(u8, want))
            res["sglang_identical_to_specc"] = all(torch.equal(x, s) for x, s in zip(u8, specc_out))
        except Exception as e:  # report, do not crash: specc is still measured
            res["sglang_error"] = f"{type(e).__name__}: {e}"
    return res


def bench_config(layout: Layout, tree: bool, bs: int, sets: List[InputSet], args: argparse.Namespace,
                 specc: Any, sgl_kernels: Optional[Dict[str, Any]], tile_mode: str,
                 consts: Dict[str, int], timer: Timer, floor: Dict[str, float],
                 compile_log: List[Dict[str, Any]]) -> Dict[str, Any]:
    kind = "tree" if tree else "chain"
    slots = slots_needed(sets)
    itemsize = torch.empty(0, dtype=getattr(torch, layout.dtype, torch.uint8)).element_size()
    row_bytes = layout.row_bytes(itemsize)
    pool_bytes = slots * sum(row_bytes)
    moving = sum(len(s.tgt) for s in sets) / len(sets)
    moved_bytes = 2 * moving * sum(row_bytes)
    r: Dict[str, Any] = {
        "config": f"{layout.name} {kind} bs={bs}", "layout": layout.name, "kind": kind, "bs": bs,
        "w": args.w, "num_draft": args.tree_drafts if tree else args.w, "size": bs * args.w,
        "sets": len(sets), "slots": slots, "buffers": len(row_bytes),
        "row_bytes": sorted(set(row_bytes)), "pool_bytes": pool_bytes,
        "moving_rows": moving, "bytes_moved": moved_bytes,
        "floor_us": moved_bytes / floor["copy_Bps"] * 1e6 + floor["launch_graph_us"],
        "floor_eager_us": moved_bytes / floor["copy_Bps"] * 1e6 + floor["launch_eager_us"],
        "sglang": {}, "specc": {}, "check": "",
    }
    if pool_bytes > args.max_gib * 2**30:
        r["check"] = f"skipped: pool {pool_bytes / 2**30:.1f} GiB > --max-gib"
        return r
    bufs = make_buffers(layout, slots, seed=bs * 2 + tree)
    flags = []

    def measure(res: Dict[str, Any], call: Callable[[InputSet], None]) -> bool:
        """Checks one eager call and one graph replay, then times both ways.
        Returns whether both checks passed."""
        res["check_eager"] = targets_moved(bufs, sets[0], lambda: call(sets[0]))
        graphs = [capture(lambda x=x: call(x)) for x in sets]
        res["check_graph"] = targets_moved(bufs, sets[1], graphs[1].replay)
        eager = rotating([lambda x=x: call(x) for x in sets])
        replay = rotating([g.replay for g in graphs])
        res["eager_us"] = timer.events_us(eager)
        res["graph_us"] = timer.events_us(replay)
        res["b2b_eager_us"] = timer.wall_us(eager)
        res["b2b_graph_us"] = timer.wall_us(replay)
        return res["check_eager"] and res["check_graph"]

    sp = SpeccPath(specc, bufs)
    try:
        specc.prepare(0, sets[0].size, bufs)  # before capture, as in serving
        if not measure(r["specc"], sp):
            flags.append("SPECC-WRONG")
    except Exception as e:
        r["specc"]["error"] = f"{type(e).__name__}: {e}"
        flags.append("specc-error")

    if sgl_kernels is not None:
        cfg = kv_copy_config(row_bytes[0], tile_mode, consts)
        r["sglang"]["kv_copy_config"] = cfg
        try:
            path = SglangPath(sgl_kernels, bufs, cfg)
            first_calls(path, sets[0], r["config"], compile_log)  # compiles what is new
            if not measure(r["sglang"], path):
                flags.append("sgl-mismatch")
        except Exception as e:  # a Triton failure must not hide the specc numbers
            r["sglang"]["error"] = f"{type(e).__name__}: {e}"
            flags.append("sgl-error")
    r["check"] = " ".join(flags) or "ok"
    return r


def measure_floor(timer: Timer, copy_gib: float) -> Dict[str, float]:
    """Device-to-device copy bandwidth (read + write counted) and the time of
    one tiny kernel, eager and as a one-kernel CUDA graph."""
    n = int(copy_gib * 2**30)
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    a.random_(0, 256)
    b = torch.empty_like(a)
    copy_ms = triton.testing.do_bench(lambda: b.copy_(a), warmup=timer.warmup_ms,
                                      rep=max(timer.rep_ms, 200), return_mode="median")
    del a, b
    torch.cuda.empty_cache()
    x = torch.zeros(1, device="cuda")
    g = capture(lambda: x.add_(1))
    return {
        "copy_bytes": n, "copy_ms": copy_ms, "copy_Bps": 2 * n / (copy_ms * 1e-3),
        "launch_graph_us": timer.events_us(g.replay),
        "launch_eager_us": timer.events_us(lambda: x.add_(1)),
    }


def summarize_compile(log_: List[Dict[str, Any]]) -> List[str]:
    lines = []
    if not log_:
        return lines
    first = log_[0]
    per = ", ".join(f"{k} {v:.0f}" for k, v in first["first_call_ms"].items())
    lines.append(f"Triton first call, cold cache (first call minus warm call, ms), "
                 f"at {first['where']}: {per}")
    totals: Dict[str, float] = {}
    counts: Dict[str, int] = {}
    for e in log_:
        for k, v in e["first_call_ms"].items():
            if v > 5.0:  # a new specialization was compiled (or loaded)
                totals[k] = totals.get(k, 0.0) + v
                counts[k] = counts.get(k, 0) + 1
    if totals:
        lines.append("  whole run, calls that compiled (>5 ms): " + ", ".join(
            f"{k} {totals[k] / 1e3:.2f} s over {counts[k]}" for k in totals))
    return lines


def run_gpu(args: argparse.Namespace, workdir: pathlib.Path, cache_dir: str,
            cache_is_fresh: bool) -> int:
    try:
        import_gpu_stack()
    except ImportError as e:
        print(f"bench_move: needs torch and triton ({e}); --extract-only runs without them",
              file=sys.stderr)
        return 2
    sys.path.insert(0, str(PYTHON_DIR / "tests"))  # gpu_cases: make_case, reference
    try:
        import specc
    except ImportError:
        sys.path.insert(0, str(PYTHON_DIR))
        import specc

    if not torch.cuda.is_available():
        print("bench_move: no CUDA GPU visible to torch", file=sys.stderr)
        return 2
    commit = args.commit or os.environ.get("SPECC_COMMIT")
    dirty = None
    if not commit:
        commit, dirty = git_commit()
    header: Dict[str, Any] = {
        "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "triton": triton.__version__, "python": sys.version.split()[0],
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit, "git_dirty": dirty, "specc_module": specc.__file__,
        "triton_cache_dir": cache_dir, "triton_cache_fresh": cache_is_fresh,
        "sets": args.sets, "w": args.w, "tree_drafts": args.tree_drafts,
        "timer": {"warmup_ms": args.warmup_ms, "rep_ms": args.rep_ms, "b2b_iters": args.b2b_iters},
    }
    notes: List[str] = []

    # sglang kernels: extracted from its files, or the column is skipped.
    sgl_kernels = None
    src_dir = pathlib.Path(args.sglang_src)
    consts, consts_src = find_tile_constants(src_dir)
    header["kv_copy_tile_mode"] = args.tile_config
    header["kv_copy_tile_source"] = (consts_src if args.tile_config == "sglang" else
                                     "fixed: BYTES_PER_TILE=512, num_warps=4 (--tile-config fixed512)")
    try:
        sources = extract_sglang_kernels(src_dir)
        header["sglang_kernels"] = {k: {"file": v.file, "lines": [v.first_line, v.last_line],
                                        "sha256_16": v.sha256} for k, v in sources.items()}
        sgl_kernels = load_sglang_kernels(sources, workdir)
    except Exception as e:  # missing folder, changed sources, Triton API drift
        notes.append(f"sglang column skipped: {type(e).__name__}: {e}")
        header["sglang_kernels"] = None
    if sgl_kernels is not None:
        # Triton's driver helpers are built on first use (into the cache):
        # timed apart so that the first kernel's first call excludes them.
        try:
            t0 = time.perf_counter()
            triton.runtime.driver.active.get_current_device()
            header["triton_driver_init_ms"] = (time.perf_counter() - t0) * 1e3
        except Exception as e:  # only a finer split of the first call is lost
            notes.append(f"Triton driver not initialised apart: {type(e).__name__}: {e}")
    try:
        t0 = time.perf_counter()
        header["specc_backend"] = specc.backend(0)  # creates the mover: loads the kernels
        header["specc_init_ms"] = (time.perf_counter() - t0) * 1e3
    except Exception as e:
        print(f"bench_move: specc cannot run here: {type(e).__name__}: {e}", file=sys.stderr)
        return 2

    timer = Timer(args.warmup_ms, args.rep_ms, args.b2b_iters)
    log("measuring copy bandwidth and launch floor ...")
    floor = measure_floor(timer, args.copy_gib)

    print(f"bench_move | {header['gpu']} | torch {header['torch']} | triton {header['triton']} | "
          f"python {header['python']} | {header['date_utc']} | commit {commit}"
          f"{' (dirty)' if dirty else ''} | specc {header['specc_backend']}")
    print(f"floor: D2D copy {floor['copy_Bps'] / 1e9:.0f} GB/s (read+write, "
          f"{args.copy_gib:g} GiB copy_); one launch {floor['launch_graph_us']:.2f} us in a graph, "
          f"{floor['launch_eager_us']:.2f} us eager (events)")
    print(f"specc: {pathlib.Path(specc.__file__).parent}; "
          f"sglang kernels: {'from ' + str(src_dir) if sgl_kernels else 'none'}; "
          f"copy tile: {header['kv_copy_tile_source']}")
    if "triton_driver_init_ms" in header:
        print(f"Triton driver helpers built on first use: {header['triton_driver_init_ms']:.0f} ms "
              f"(not counted in the kernels' first calls)")
    for n in notes:
        print(n)

    compile_log: List[Dict[str, Any]] = []
    checks: List[Dict[str, Any]] = []
    results: List[Dict[str, Any]] = []
    out: Dict[str, Any] = {"header": header, "floor": floor, "checks": checks,
                           "results": results, "compile": compile_log, "notes": notes}
    layouts = [LAYOUTS[n] for n in args.layouts]
    kinds = [k == "tree" for k in args.kinds]
    try:
        # Full checks first: a layout is timed only if specc equals the reference.
        timed_layouts = []
        for layout in layouts:
            ok = True
            for tree in (False, True):
                log(f"checking {layout.name} {'tree' if tree else 'chain'} against the reference ...")
                c = full_check(layout, tree, args, specc, sgl_kernels, args.tile_config, consts,
                               compile_log)
                torch.cuda.empty_cache()
                checks.append(c)
                ok &= c["specc_matches_reference"]
                if sgl_kernels is None:
                    sgl = "skipped"
                else:
                    sgl = c.get("sglang_error") or (
                        ("matches" if c.get("sglang_matches_reference") else "DIFFERS from")
                        + " reference, "
                        + ("identical to" if c.get("sglang_identical_to_specc") else "DIFFERENT from")
                        + " specc")
                spc = c.get("specc_error") or (
                    ("matches" if c["specc_matches_reference"] else "DIFFERS from") + " reference")
                print(f"check {layout.name} {c['kind']} bs={c['bs']} W={c['w']}: specc {spc}; "
                      f"sglang {sgl}")
            if ok:
                timed_layouts.append(layout)
            else:
                notes.append(f"{layout.name}: not timed, specc differs from the reference")
                print(notes[-1])
        if checks and "specc_first_call_ms" in checks[0]:
            header["specc_first_call_ms"] = checks[0]["specc_first_call_ms"]

        print()
        print(f"times in us, median over rotated {args.sets} input sets; eager = events around one "
              f"call after an L2 flush; graph = one CUDA-graph replay;\n"
              f"x = sglang/specc; rows = moved rows; MB = bytes read+written; floor = MB / copy "
              f"bandwidth + one graph launch;\nchain: every target equals its source (sglang's caller "
              f"skips the move then), both paths run it anyway")
        print(MAIN_HEAD)
        inputs: Dict[Tuple[int, bool], List[InputSet]] = {}
        for layout in timed_layouts:
            for tree in kinds:
                for bs in args.bs:
                    key = (bs, tree)
                    if key not in inputs:
                        inputs[key] = make_inputs(bs, args.w, tree,
                                                  args.tree_drafts if tree else args.w,
                                                  args.sets, seed=1000 * bs + tree)
                    log(f"timing {layout.name} {'tree' if tree else 'chain'} bs={bs} ...")
                    r = bench_config(layout, tree, bs, inputs[key], args, specc, sgl_kernels,
                                     args.tile_config, consts, timer, floor, compile_log)
                    torch.cuda.empty_cache()  # the pool just freed can be 10+ GB
                    results.append(r)
                    print(main_row(r), flush=True)
        print()
        print("back-to-back host wall time per call, us (no flush, one sync per "
              f"{args.b2b_iters} calls)")
        print(B2B_HEAD)
        for r in results:
            print(b2b_row(r))
        print()
        for line in summarize_compile(compile_log):
            print(line)
        print(f"specc: mover creation with kernel load {header['specc_init_ms']:.0f} ms; first move "
              f"(buffer registration, launch, sync) "
              f"{header.get('specc_first_call_ms', float('nan')):.1f} ms")
    finally:
        if args.out:
            pathlib.Path(args.out).write_text(json.dumps(out, indent=1, default=str))
            log(f"wrote {args.out}")
    return 0


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sglang-src", default=str(REPO_ROOT / ".bench"),
                    help="folder with sglang's cache_locs.py, eagle.py, cache_move.py")
    ap.add_argument("--out", help="write the results as JSON to this file")
    ap.add_argument("--commit", help="commit to report (default: $SPECC_COMMIT, then git)")
    ap.add_argument("--bs", type=int, nargs="+", default=[1, 8, 64, 256, 1024])
    ap.add_argument("--layouts", nargs="+", choices=sorted(LAYOUTS),
                    default=["mha-bf16", "mla-576", "mha-fp8"])
    ap.add_argument("--kinds", nargs="+", choices=["tree", "chain"], default=["tree", "chain"])
    ap.add_argument("--w", type=int, default=4, help="accept_index width (speculative steps + 1)")
    ap.add_argument("--tree-drafts", type=int, default=8, help="draft tokens per request of a tree")
    ap.add_argument("--sets", type=int, default=4, 
                    help="input sets rotated through (default 4, at least 2)")
    ap.add_argument("--check-bs", type=int, default=64, help="batch size of the full checks")
    ap.add_argument("--tile-config", choices=["sglang", "fixed512"], default="sglang",
                    help="copy-kernel tile: sglang's stride heuristic, or 512 B / 4 warps")
    ap.add_argument("--warmup-ms", type=float, default=10.0)
    ap.add_argument("--rep-ms", type=float, default=50.0)
    ap.add_argument("--b2b-iters", type=int, default=100)
    ap.add_argument("--copy-gib", type=float, default=2.0, help="size of the bandwidth copy")
    ap.add_argument("--max-gib", type=float, default=30.0, help="skip pools larger than this")
    ap.add_argument("--triton-cache-dir", help="use this Triton cache (default: a fresh temp dir)")
    ap.add_argument("--extract-only", action="store_true",
                    help="check the sglang sources and print the plan; needs no torch or GPU")
    args = ap.parse_args(argv)
    if args.sets < 2:
        ap.error("--sets must be at least 2 (rotation, and a graph replay is checked on set 1)")
    return args


def extract_only(args: argparse.Namespace) -> int:
    src_dir = pathlib.Path(args.sglang_src)
    try:
        sources = extract_sglang_kernels(src_dir)
    except (OSError, ValueError, SyntaxError) as e:
        print(f"sglang column would be skipped: {e}")
        sources = {}
    for k in sources.values():
        print(f"{k.name}: {k.file} lines {k.first_line}-{k.last_line}, "
              f"{len(k.text.splitlines())} lines, sha256 {k.sha256}")
        print("   " + " | ".join(k.text.splitlines()[:2]))
    consts, why = find_tile_constants(src_dir)
    print(f"copy tile ({args.tile_config}): {why if args.tile_config == 'sglang' else 'fixed 512/4'}")
    for layout in (LAYOUTS[n] for n in args.layouts):
        itemsize = 2 if layout.dtype == "bfloat16" else 1
        rb = layout.row_bytes(itemsize)
        print(f"  {layout.name}: {layout.desc}; {len(rb)} buffers; "
              f"copy config {kv_copy_config(rb[0], args.tile_config, consts)}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.extract_only:
        return extract_only(args)
    # The cache must be chosen before Triton is first imported.
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="bench-move-"))
    fresh = args.triton_cache_dir is None
    cache_dir = str(workdir / "triton-cache") if fresh else args.triton_cache_dir
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    if "triton" in sys.modules:
        log("warning: triton was imported before TRITON_CACHE_DIR was set")
    try:
        return run_gpu(args, workdir, cache_dir, fresh)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
