#!/usr/bin/env python3
"""Side-by-side timing of the KV move after speculative decoding on one GPU.

Compared in one process, on the same inputs and the same KV buffers:

* **specc** through its Python API (``specc.move_accept_tokens_to_target_kvcache``;
  ``torch.ops.specc.move_accept_tokens_to_target_kvcache`` too, host time only,
  when it is registered).
* **sglang's Triton path** (docs/semantics.md, "Target slots" to "The move"), call for call as sglang's
  ``move_accept_tokens_to_target_kvcache`` issues it: two zero-filled int64
  allocations, the ``seq_lens + num_correct_drafts + 1`` end offsets, then the
  three Triton launches ``assign_extend_cache_locs``,
  ``fill_accept_out_cache_loc`` and ``copy_all_layer_kv_cache_tiled``. The
  buffer-address and row-stride tensors are built once per pool, outside the
  timed region, as sglang caches them. The Triton kernels are not part of this
  repository: their source is read at run time from sglang's own files in
  ``--sglang-src`` (``cache_locs.py``, ``eagle.py``, ``cache_move.py`` from the
  sglang wheel), cut out by name with ``ast`` and executed in a namespace that
  holds only ``triton``, ``tl`` and ``torch``. Without that folder the columns
  are skipped and specc is still measured. The copy kernel's tile
  (``BYTES_PER_TILE``, ``num_warps``) follows sglang's heuristic from its
  ``memory_pool.py`` (thresholds parsed from any file of ``--sglang-src`` that
  defines them, else built in); ``--tile-config fixed512`` uses 512 B / 4 warps.
* **the floor**: the bytes that must move (read and write of every row whose
  source differs from its target, in every buffer) over the device-to-device
  copy bandwidth measured in the same run (a copy's device time, checked
  against the events' span of the same copy: ``settle_copy_time``), plus one
  empty kernel (``torch.cuda._sleep(0)``) measured the same way.

Per configuration (KV layout x chain/tree x batch size), per path:

(a) **device** time per call, kernels only: torch.profiler with
    ``ProfilerActivity.CUDA`` (CUPTI) records every kernel, memset and memcpy;
    a call is bracketed by two marker kernels on the stream and its device time
    is the sum of the durations between them (launch gaps excluded). L2 is
    flushed before each call. Median over ``--reps`` calls.

The flush writes zeros over ``--flush-mib`` MiB, so the call finds the L2
full of dirty lines, whose write-backs its own lines force (as after the
kernels that run before it in a server). ``--flush-kind clean`` reads the
flush buffer after writing it: the call then finds clean lines, which cost
nothing to evict (what ``ncu --cache-control all`` leaves). The targets are
judged on the default, ``dirty``.
(b) **graph**: one CUDA-graph replay (one graph per input set) from idle:
    synchronize, flush L2, synchronize, record an event, replay, record an
    event. Median over ``--reps`` replays.
(c) **span**: the same around one eager call: what a call costs when the GPU
    waits for it (host launch gaps included). Median over ``--reps`` calls.
(c') **paired span**: at bs <= 32, the spans of specc and of sglang's path
    measured again in turns (a specc call, then a sglang call, in alternating
    order), so that both see the same GPU and host state; the ratio is the
    median of the per-pair ratios. The span target is judged on it (rows
    whose sglang kernels compiled late have none and use the two spans).
    Likewise specc's graph replays in turns with the empty kernel's one-node
    graph (f): the graph target is judged on the median per-pair difference.
(d) **host**: ``time.perf_counter_ns`` around the Python call only, no
    synchronisation inside the timed region (one every ``--sync-every`` calls
    outside it, so that the launch queue never fills). Median over
    ``--host-reps`` calls; also for an empty in-place op (``x.add_(1)`` on a
    one-element CUDA tensor), measured right beside it.
(e) the floor above, and (f) a one-node CUDA graph of the empty kernel
    replayed as in (b): the reference of the graph target.

Where one measurement would take longer than ``--budget-s`` (sglang's copy
kernel at large batches takes milliseconds to tens of milliseconds per call),
it takes ``budget / time per call`` calls, at least ``--min-reps``; the tables
mark such medians with ``*`` and the notes list them.

The issue's targets (PASS/MISS per row, see report.py): device time at bs <= 32
<= max(4 us, 1.15 x floor + 2 us); never above sglang's; at bs 512 >= 60x less
than sglang and <= 1.15 x floor + 4 us; chains <= 5 us at any bs; graph replay
at bs <= 32 <= empty graph + 5 us; host us per eager call at bs <= 32 <= empty
torch op + 5 us; eager span at bs <= 32 >= 5x less than sglang.

Correctness first. Each layout is checked on a chain and a tree case (every row
of every buffer, specc and sglang, against the pure-torch ``reference`` of
``tests/gpu_cases.py``); a layout where specc differs is not timed. Each timed
configuration checks one eager call and one graph replay of every path before
it is timed: every target row equals its source row as it was, the bytes of
every other row are unchanged (per-buffer checksum), and specc's status record
is clean.

Fairness: every path rotates among ``--sets`` input sets of the same shapes but
different index values; KV buffers hold random bytes; both paths move the same
buffers. Inputs come from ``make_case`` of ``tests/gpu_cases.py`` (random slot
permutations; a tree has ``--tree-drafts`` draft tokens per request, a chain
``W``); pools hold just the slots the inputs use plus a margin. In a chain every
target equals its source (sglang's caller skips the move then): both paths run
it anyway, and the floor counts no bytes for it.

Triton compiles. sglang's kernels specialize on the batch size (``constexpr``
bounds), and ``copy_all_layer_kv_cache_tiled`` holds every location of a tile in
registers: its compile takes seconds up to ``num_locs_upper`` = 512 (bs 128 at
W = 4), about 400 s at 2048 (bs 512: the copy compiles of run ccd83dd took 410 s,
results/bench_move-ccd83dd.txt; nearly all of it in ptxas) and
more at 8192 (bs 2048; not measured yet). So the run compiles every specialization it
will need up front, in parallel worker processes (this file with
``--compile-worker``, niced, into the run's ``TRITON_CACHE_DIR``), and the main
process loads them from the cache. A configuration whose kernels are not
compiled yet when it comes is measured for specc at once and for sglang at the
end of the run; whatever has not compiled ``--compile-budget-s`` after the start
is given up, and its sglang cells say so. The compile time of every
specialization is reported. With a cold cache the default run therefore has no
sglang numbers at bs >= 512; to get them, fill a cache first
(``--compile-only --triton-cache-dir DIR --compile-budget-s 580``, a separate
command) and run with the same ``--triton-cache-dir DIR``.

Output: the tables on stdout (one per layout, printed as it completes, with
progress lines on stderr), ``--out`` JSON, ``--md`` Markdown and ``--png`` a
plot (``plot_bench.py``), all rewritten after each layout and at the end.

Usage (on the GPU host, from the repository root)::

    python3 python/benchmarks/bench_move.py --sglang-src .bench --out bench.json \\
        --md bench.md --png bench.png
    # sglang at bs >= 512 too: fill a Triton cache first (up to ~10 min), then run with it
    python3 python/benchmarks/bench_move.py --compile-only --triton-cache-dir build-triton-cache \\
        --compile-budget-s 580
    python3 python/benchmarks/bench_move.py --triton-cache-dir build-triton-cache --out bench.json ...

``--extract-only`` checks the sglang sources and prints the plan; it needs
neither torch nor a GPU.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import functools
import gc
import hashlib
import json
import os
import pathlib
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = pathlib.Path(__file__).resolve().parent
PYTHON_DIR = HERE.parent
REPO_ROOT = PYTHON_DIR.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import report  # noqa: E402  (this folder; no torch needed)

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

KERNEL_FILE = "sglang_move_kernels.py"  # the extracted kernels, in the run's work dir
MARK = "spin_kernel"  # torch.cuda._sleep's kernel: the call markers and the empty kernel


@dataclass(frozen=True)
class Layout:
    """One KV pool shape: `kinds` row shapes (K then V for MHA, one for MLA),
    each repeated over `layers` buffers, in sglang's buffer order."""

    name: str
    desc: str
    layers: int
    row_shapes: Tuple[Tuple[int, ...], ...]
    dtype: str  # attribute of torch

    @property
    def itemsize(self) -> int:
        return 2 if self.dtype in ("bfloat16", "float16") else 4 if self.dtype == "float32" else 1

    def row_bytes(self, itemsize: Optional[int] = None) -> List[int]:
        itemsize = itemsize or self.itemsize
        out = []
        for shape in self.row_shapes:
            n = 1
            for d in shape:
                n *= d
            out += [n * itemsize] * self.layers
        return out


LAYOUTS = {
    "llama8b": Layout("llama8b", "Llama-3 8B: 32 layers MHA, K and V rows 8 heads x 128 x bf16 "
                      "(2048 B), 64 buffers", 32, ((8, 128), (8, 128)), "bfloat16"),
    "llama70b-tp8": Layout("llama70b-tp8", "Llama-3 70B at TP 8: 80 layers, K and V rows 1 head "
                           "x 128 x bf16 (256 B), 160 buffers", 80, ((1, 128), (1, 128)), "bfloat16"),
    "qwen32b": Layout("qwen32b", "Qwen 32B: 64 layers MHA, K and V rows 8 heads x 128 x bf16 "
                      "(2048 B), 128 buffers", 64, ((8, 128), (8, 128)), "bfloat16"),
    "mla": Layout("mla", "DeepSeek MLA: 61 layers, one row 512+64 x fp8 (576 B) per layer, "
                  "61 buffers", 61, ((1, 576),), "float8_e4m3fn"),
    # Earlier runs' layouts, still available with --layouts.
    "mha-bf16": Layout("mha-bf16", "32 layers MHA, K and V rows 8 heads x 128 x bf16 (2048 B)",
                       32, ((8, 128), (8, 128)), "bfloat16"),
    "mla-576": Layout("mla-576", "61 layers MLA, one row 512+64 x fp8 (576 B)",
                      61, ((1, 576),), "float8_e4m3fn"),
    "mha-fp8": Layout("mha-fp8", "32 layers MHA, K and V rows 1 head x 64 x fp8 (64 B)",
                      32, ((1, 64), (1, 64)), "float8_e4m3fn"),
}
DEFAULT_LAYOUTS = ["llama8b", "llama70b-tp8", "qwen32b", "mla"]
DEFAULT_BS = [1, 8, 32, 128, 512, 2048]
# Rows whose eager spans (against sglang's) and graph replays (against the
# empty kernel's graph) are also measured in turns: the targets' sizes.
PAIRED_SPAN_MAX_BS = 32


def log(msg: str) -> None:
    """Progress goes to stderr, flushed, so that stdout holds the report."""
    print(msg, file=sys.stderr, flush=True)


def out(msg: str = "") -> None:
    print(msg, flush=True)


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
# The Triton specializations a run needs (no torch needed)
# --------------------------------------------------------------------------

# Index dtypes and pool_len of the inputs, per kind. The GPU run takes them
# from a tiny make_case(); --extract-only (no torch) assumes these.
ASSUMED_CASE = {"rpi": "int64", "r2t": "int32", "seq": "int64", "end": "int64",
                "ncd": "int64", "acc": "int32", "ocl": "int64"}


def assumed_case_info(tree: bool, w: int, tree_drafts: int) -> Dict[str, Any]:
    nd = tree_drafts if tree else w
    return dict(ASSUMED_CASE, pool_len=64 + nd + 8, window=nd, assumed=True)


def config_jobs(info: Dict[str, Any], bs: int, w: int, cfg: Dict[str, int],
                row_bytes: int, targets: str = "req_to_token") -> List[Dict[str, Any]]:
    """The three kernel specializations sglang's path compiles for one batch
    size, kind (`info`), copy tile (`cfg`) and target source: what
    SglangPath.__call__ passes."""
    size = bs * w
    d = {k: info[k] for k in ASSUMED_CASE}
    if targets == "window":  # (arange, window, zeros_like(ncd + 1), ncd + 1)
        a_dt = {"rpi": "int64", "r2t": d["ocl"], "seq": d["ncd"], "end": d["ncd"]}
        a_len = info["window"]
    else:
        a_dt = {k: d[k] for k in ("rpi", "r2t", "seq", "end")}
        a_len = info["pool_len"]
    assign = {"kernel": "assign_extend_cache_locs",
              "params": {"bs_upper": next_power_of_2(bs), "pool_len": a_len, "dtypes": a_dt}}
    fill = {"kernel": "fill_accept_out_cache_loc",
            "params": {"size_upper": next_power_of_2(size),
                       "dtypes": {k: d[k] for k in ("acc", "ocl")}}}
    copy = {"kernel": "copy_all_layer_kv_cache_tiled",
            "params": {"size": size, "size_upper": next_power_of_2(size),
                       "bytes_per_tile": cfg["bytes_per_tile"], "num_warps": cfg["num_warps"],
                       "row_bytes": row_bytes}}
    for j in (assign, fill, copy):
        p = {k: v for k, v in j["params"].items() if k != "row_bytes"}  # not specialized on
        j["key"] = j["kernel"].split("_")[0] + ":" + json.dumps(p, sort_keys=True, separators=(",", ":"))
        j["bs"] = bs
    return [assign, fill, copy]


def job_label(job: Dict[str, Any]) -> str:
    p = job["params"]
    if job["kernel"].startswith("assign"):
        return f"assign bs_upper={p['bs_upper']} pool_len={p['pool_len']}"
    if job["kernel"].startswith("fill"):
        return f"fill size_upper={p['size_upper']}"
    return (f"copy num_locs={p['size']} upper={p['size_upper']} tile={p['bytes_per_tile']} "
            f"warps={p['num_warps']}")


def group_jobs(jobs: Sequence[Dict[str, Any]], first_bs: Optional[int] = None) -> List[List[Dict[str, Any]]]:
    """Worker processes: every copy specialization alone (the slow ones), the
    assign/fill ones of a batch size together; those of `first_bs` (the
    checks') first, then smallest first."""
    seen: set = set()
    copies: List[List[Dict[str, Any]]] = []
    small: Dict[int, List[Dict[str, Any]]] = {}
    for j in jobs:
        if j["key"] in seen:
            continue
        seen.add(j["key"])
        if j["kernel"].startswith("copy"):
            copies.append([j])
        else:
            small.setdefault(j["bs"], []).append(j)
    groups = list(small.values()) + copies
    groups.sort(key=lambda g: (g[0]["bs"] != first_bs, g[0]["bs"], g[0]["kernel"].startswith("copy")))
    return groups


def plan_jobs(args: argparse.Namespace, infos: Dict[bool, Dict[str, Any]],
              consts: Dict[str, int]) -> Tuple[List[Dict[str, Any]], Dict[Tuple[str, bool, int], List[str]]]:
    """Every job of the run and, per (layout, tree, bs), the keys it needs."""
    jobs: List[Dict[str, Any]] = []
    needs: Dict[Tuple[str, bool, int], List[str]] = {}
    kinds = sorted({k == "tree" for k in args.kinds} | {False, True})  # the checks do both
    for name in args.layouts:
        layout = LAYOUTS[name]
        rb = layout.row_bytes()
        cfg = kv_copy_config(rb[0], args.tile_config, consts)
        for tree in kinds:
            for bs in sorted(set(args.bs) | {args.check_bs}):
                js = config_jobs(infos[tree], bs, args.w, cfg, rb[0], args.targets)
                jobs += js
                needs[(name, tree, bs)] = [j["key"] for j in js]
    return jobs, needs


# --------------------------------------------------------------------------
# Parallel compile workers
# --------------------------------------------------------------------------

class CompilePool:
    """Compiles the jobs in worker processes (this file, --compile-worker),
    at most `procs` at a time, each in its own session so that a worker and
    the ptxas it runs can be ended together; whatever is unfinished at
    `deadline` (time.monotonic) is ended and marked 'timeout'."""

    def __init__(self, groups: List[List[Dict[str, Any]]], workdir: pathlib.Path, procs: int,
                 deadline: float):
        self.groups, self.workdir, self.deadline = groups, workdir, deadline
        self.sem = threading.Semaphore(max(1, procs))
        self.cv = threading.Condition()
        self.state: Dict[str, Dict[str, Any]] = {}
        for g in groups:
            for j in g:
                self.state[j["key"]] = {"status": "queued", "label": job_label(j),
                                        "kernel": j["kernel"], "bs": j["bs"]}
        self.procs: Dict[int, subprocess.Popen] = {}
        self.stopped = False
        self.threads: List[threading.Thread] = []
        self.t0 = time.monotonic()

    def start(self) -> None:
        threading.Thread(target=self._dispatch, daemon=True).start()
        threading.Thread(target=self._watchdog, daemon=True).start()

    def _dispatch(self) -> None:
        """Starts the groups in order, one per free slot, until the deadline."""
        for i, g in enumerate(self.groups):
            got = False
            while not (self.stopped or time.monotonic() >= self.deadline):
                if self.sem.acquire(timeout=0.5):
                    got = True
                    break
            if got and not (self.stopped or time.monotonic() >= self.deadline):
                t = threading.Thread(target=self._run_group, args=(i, g), daemon=True)
                t.start()
                self.threads.append(t)
                continue
            if got:
                self.sem.release()
            for rest in self.groups[i:]:
                for j in rest:
                    self._set(j["key"], status="timeout", error="not started before the deadline")
            return

    def _set(self, key: str, **kw: Any) -> None:
        with self.cv:
            self.state[key].update(kw)
            self.cv.notify_all()

    def _run_group(self, i: int, group: List[Dict[str, Any]]) -> None:
        """One worker process for `group` (holds one slot, released at the end)."""
        try:
            spec = self.workdir / f"compile-job-{i}.json"
            spec.write_text(json.dumps({"kernel_file": str(self.workdir / KERNEL_FILE), "jobs": group}))
            err = open(self.workdir / f"compile-job-{i}.err", "w")
            started = time.monotonic()
            for j in group:
                self._set(j["key"], status="running", started_s=started - self.t0)
            try:
                p = subprocess.Popen([sys.executable, str(pathlib.Path(__file__).resolve()),
                                      "--compile-worker", str(spec)],
                                     stdout=subprocess.PIPE, stderr=err, text=True,
                                     start_new_session=True,
                                     env=dict(os.environ, PYTHONUNBUFFERED="1"))
            except OSError as e:
                for j in group:
                    self._set(j["key"], status="failed", error=f"worker not started: {e}")
                return
            with self.cv:
                self.procs[p.pid] = p
                late = self.stopped
            if late:  # stop() ran between the start and the registration
                self._kill(p)
            assert p.stdout is not None
            for line in p.stdout:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("key") in self.state:
                    if msg.get("ok"):
                        self._set(msg["key"], status="ready", compile_s=msg.get("s"),
                                  done_s=time.monotonic() - self.t0)
                    else:
                        self._set(msg["key"], status="failed", error=msg.get("error"))
            rc = p.wait()
            err.close()
            with self.cv:
                self.procs.pop(p.pid, None)
            tail = ""
            try:
                tail = (self.workdir / f"compile-job-{i}.err").read_text()[-600:]
            except OSError:
                pass
            for j in group:
                st = self.state[j["key"]]["status"]
                if st in ("running", "queued"):
                    if time.monotonic() >= self.deadline - 0.5:
                        self._set(j["key"], status="timeout",
                                  error=f"unfinished {self.deadline - self.t0:.0f} s after the start")
                    elif self.stopped:
                        self._set(j["key"], status="timeout",
                                  error=f"unfinished when the run ended, "
                                        f"{time.monotonic() - self.t0:.0f} s after the start")
                    else:
                        self._set(j["key"], status="failed", error=f"worker rc={rc}: {tail.strip()}")
        finally:
            self.sem.release()

    def _watchdog(self) -> None:
        while not self.stopped:
            left = self.deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(left, 1.0))
        self.stop()

    def stop(self) -> None:
        """Ends every worker still running (they are ours: one session each)."""
        with self.cv:
            self.stopped = True
            procs = list(self.procs.values())
        for p in procs:
            self._kill(p)

    @staticmethod
    def _kill(p: subprocess.Popen) -> None:
        """SIGKILL to the worker's own session (the worker and its ptxas)."""
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def status(self, keys: Sequence[str]) -> str:
        """'ready' if every key is, else 'failed'/'timeout' if one is, else 'pending'."""
        with self.cv:
            return self.status_locked(keys)

    def wait(self, keys: Sequence[str], until: float) -> str:
        with self.cv:
            while True:
                st = self.status_locked(keys)
                if st != "pending" or time.monotonic() >= until:
                    return st
                self.cv.wait(timeout=min(1.0, max(0.01, until - time.monotonic())))

    def status_locked(self, keys: Sequence[str]) -> str:
        sts = [self.state[k]["status"] for k in keys]
        if all(s == "ready" for s in sts):
            return "ready"
        for bad in ("failed", "timeout"):
            if bad in sts:
                return bad
        return "pending"

    def why(self, keys: Sequence[str]) -> str:
        with self.cv:
            bad = [(k, self.state[k]) for k in keys if self.state[k]["status"] != "ready"]
        return "; ".join(f"{s['label']}: {s['status']}" + (f" ({s['error']})" if s.get("error") else "")
                         for _, s in bad)

    def summary(self) -> Dict[str, Dict[str, Any]]:
        with self.cv:
            return {k: dict(v) for k, v in self.state.items()}


# --------------------------------------------------------------------------
# Small helpers (no torch needed)
# --------------------------------------------------------------------------

def git_commit() -> Tuple[str, Optional[bool]]:
    """HEAD of the checkout this file sits in, and whether tracked files differ."""
    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "diff", "--quiet", "HEAD"],
                               capture_output=True, timeout=30).returncode != 0
        return head, dirty
    except (OSError, subprocess.SubprocessError):
        return "unknown", None


def driver_version() -> str:
    """The NVIDIA driver's version: nvidia-smi, else /proc, else 'unknown'."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        v = r.stdout.strip().splitlines()
        if r.returncode == 0 and v and v[0].strip():
            return v[0].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        m = re.search(r"Kernel Module\s+(?:for\s+\S+\s+)?([\d.]+)",
                      pathlib.Path("/proc/driver/nvidia/version").read_text())
        if m:
            return m.group(1)
    except OSError:
        pass
    return "unknown"


def _median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs))


def relpath(p: str) -> str:
    try:
        return str(pathlib.Path(p).resolve().relative_to(REPO_ROOT))
    except ValueError:
        return pathlib.Path(p).name


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
    torch, triton, tl = _torch, _triton, _tl


def write_kernel_file(sources: Dict[str, KernelSource], workdir: pathlib.Path) -> pathlib.Path:
    path = workdir / KERNEL_FILE
    path.write_text("\n\n".join(k.text for k in sources.values()))
    return path


def load_kernel_file(path: pathlib.Path) -> Dict[str, Any]:
    """Executes the extracted kernel sources in a namespace holding only
    triton, tl and torch. They are compiled under their file's name because
    triton.jit reads a kernel's source back through `inspect`; the main
    process and the compile workers load the same file, so that their Triton
    cache keys agree."""
    text = path.read_text()
    namespace: Dict[str, Any] = {"__name__": "sglang_move_kernels", "__file__": str(path),
                                 "triton": triton, "tl": tl, "torch": torch}
    exec(compile(text, str(path), "exec"), namespace)
    return {name: namespace[name] for name in SGLANG_KERNELS}


def ptr_tensor(ptrs: List[int]) -> Any:
    try:  # sglang keeps the addresses as uint64; same bits as int64 here.
        return torch.tensor(ptrs, dtype=torch.uint64, device="cuda")
    except (TypeError, RuntimeError):
        return torch.tensor(ptrs, dtype=torch.int64, device="cuda")


def compile_launch(kernels: Dict[str, Any], job: Dict[str, Any]) -> None:
    """One launch of `job`'s specialization on tiny inputs that touch nothing
    outside them (grid 1): the same argument types, alignments, integer values,
    constexprs and options as SglangPath.__call__ passes, hence the same Triton
    cache entry (kernel and launcher)."""
    p, dev = job["params"], "cuda"
    dt = {k: getattr(torch, v) for k, v in p.get("dtypes", {}).items()}
    if job["kernel"] == "assign_extend_cache_locs":
        rpi = torch.zeros(1, dtype=dt["rpi"], device=dev)
        r2t = torch.zeros((1, p["pool_len"]), dtype=dt["r2t"], device=dev)
        seq = torch.zeros(1, dtype=dt["seq"], device=dev)
        end = torch.zeros(1, dtype=dt["end"], device=dev)  # = seq: no token to gather
        tgt = torch.zeros(1, dtype=torch.int64, device=dev)
        kernels[job["kernel"]][(1,)](rpi, r2t, seq, end, tgt, p["pool_len"], p["bs_upper"])
    elif job["kernel"] == "fill_accept_out_cache_loc":
        acc = torch.full((1,), -1, dtype=dt["acc"], device=dev)  # -1: nothing stored
        ocl = torch.zeros(1, dtype=dt["ocl"], device=dev)
        src = torch.zeros(1, dtype=torch.int64, device=dev)
        kernels[job["kernel"]][(1,)](acc, ocl, src, p["size_upper"])
    else:
        buf = torch.zeros(max(16, p["row_bytes"]), dtype=torch.uint8, device=dev)
        ptrs = ptr_tensor([buf.data_ptr()])
        strides = torch.tensor([p["row_bytes"]], dtype=torch.int64, device=dev)
        tgt = torch.zeros(p["size"], dtype=torch.int64, device=dev)  # slot 0 onto slot 0
        src = torch.zeros(p["size"], dtype=torch.int64, device=dev)
        kernels[job["kernel"]][(1, 1)](ptrs, strides, tgt, src, p["size"], p["size_upper"],
                                       BYTES_PER_TILE=p["bytes_per_tile"],
                                       num_warps=p["num_warps"], num_stages=2)


def compile_worker(spec_path: str) -> int:
    """--compile-worker: compiles the jobs of one spec file into
    $TRITON_CACHE_DIR, one JSON line per job on stdout."""
    try:
        os.nice(10)  # the main process measures host times meanwhile
    except OSError:
        pass
    spec = json.loads(pathlib.Path(spec_path).read_text())
    import_gpu_stack()
    kernels = load_kernel_file(pathlib.Path(spec["kernel_file"]))
    torch.zeros(1, device="cuda")
    for job in spec["jobs"]:
        t0 = time.perf_counter()
        try:
            compile_launch(kernels, job)
            torch.cuda.synchronize()
            print(json.dumps({"key": job["key"], "ok": True, "s": time.perf_counter() - t0}), flush=True)
        except Exception as e:  # reported; the others still compile
            print(json.dumps({"key": job["key"], "ok": False, "error": f"{type(e).__name__}: {e}"[:500]}),
                  flush=True)
    return 0


@dataclass
class InputSet:
    """One call's index tensors (on the GPU, sglang dtypes), the same on the
    CPU (for the reference), and its target and source slots."""

    args: Dict[str, Any]
    args_cpu: Dict[str, Any]
    tgt: Any  # int64 [accepted rows], on the GPU
    src: Any
    moving: int  # rows whose source differs from the target

    @property
    def bs(self) -> int:
        return int(self.args["accept_index"].shape[0])

    @property
    def size(self) -> int:
        return int(self.args["accept_index"].numel())

    @property
    def pool_len(self) -> int:
        return int(self.args["req_to_token"].shape[1])


def make_inputs(bs: int, w: int, tree: bool, num_draft: int, sets: int, seed: int,
                targets: str = "req_to_token") -> List[InputSet]:
    """`sets` index sets of identical shapes and different values, made and
    resolved (targets, sources) on the CPU, then copied to the GPU."""
    from gpu_cases import make_case, reference

    res = []
    for k in range(sets):
        args, _ = make_case(bs, w, tree=tree, num_draft=num_draft, layers=0, device="cpu",
                            seed=seed + 7919 * k)
        _, tgt, src = reference(args, [], targets=targets)
        res.append(InputSet({n: v.cuda() for n, v in args.items()}, args, tgt.cuda(), src.cuda(),
                            int((tgt != src).sum())))
    shapes = {tuple(tuple(v.shape) for v in s.args.values()) for s in res}
    assert len(shapes) == 1, "input sets must share their shapes"
    return res


def case_info(tree: bool, w: int, tree_drafts: int) -> Dict[str, Any]:
    """pool_len and index dtypes of make_case's inputs (sglang's path
    specializes on them), from a tiny case on the CPU."""
    from gpu_cases import make_case

    a, _ = make_case(1, w, tree=tree, num_draft=tree_drafts if tree else w, layers=0, device="cpu")
    end = a["seq_lens"] + a["num_correct_drafts"] + 1
    name = lambda t: str(t.dtype).replace("torch.", "")  # noqa: E731
    return {"pool_len": int(a["req_to_token"].shape[1]), "rpi": name(a["req_pool_indices"]),
            "r2t": name(a["req_to_token"]), "seq": name(a["seq_lens"]), "end": name(end),
            "ncd": name(a["num_correct_drafts"]), "acc": name(a["accept_index"]),
            "ocl": name(a["out_cache_loc"]),
            "window": int(a["out_cache_loc"].numel()) // int(a["accept_index"].shape[0])}


def slots_needed(sets: Sequence[InputSet], margin: int = 64) -> int:
    return max(int(s.args_cpu["req_to_token"].max()) for s in sets) + 1 + margin


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

    def __init__(self, kernels: Dict[str, Any], bufs: List[Any], config: Dict[str, int],
                 targets: str = "req_to_token"):
        self.targets = targets
        self.assign = kernels["assign_extend_cache_locs"]
        self.fill = kernels["fill_accept_out_cache_loc"]
        self.copy = kernels["copy_all_layer_kv_cache_tiled"]
        self.config = config
        self.copy_grid = (len(bufs), config["byte_tiles"])
        self.data_ptrs = ptr_tensor([b.data_ptr() for b in bufs])
        self.strides = torch.tensor([rows_u8(b).shape[1] for b in bufs], dtype=torch.int64,
                                    device="cuda")

    def __call__(self, inp: InputSet, stage_ms: Optional[Dict[str, float]] = None) -> None:
        """One move, as sglang's move_accept_tokens_to_target_kvcache does it.
        With `stage_ms`, each launch is bracketed by syncs and its wall time
        recorded (used for the first-call cost only, never for the timings).
        compile_launch() must pass the same argument kinds."""
        a, bs, size = inp.args, inp.bs, inp.size
        size_upper = next_power_of_2(size)
        cfg = self.config
        tgt = torch.zeros(size, dtype=torch.int64, device="cuda")
        src = torch.zeros(size, dtype=torch.int64, device="cuda")
        if self.targets == "window":
            # sglang 0.5.23's fill_front_out_cache_loc_func: the first
            # num_correct_drafts + 1 slots of each request's verify window.
            num_front = a["num_correct_drafts"] + 1
            window = a["out_cache_loc"].view(bs, -1)
            rows = torch.arange(bs, device="cuda")
            starts = torch.zeros_like(num_front)
            if stage_ms is not None:
                t0 = _sync_clock()
            self.assign[(bs,)](rows, window, starts, num_front, tgt, window.shape[1],
                               next_power_of_2(bs))
        else:
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


def positional(inp: InputSet, targets: str = "req_to_token") -> Tuple[Any, ...]:
    """The six index arguments in the API's order; with window targets the
    three request-table ones are None, as sglang 0.5.23's callers pass them."""
    a = inp.args
    if targets == "window":
        return (None, None, None, a["num_correct_drafts"], a["accept_index"], a["out_cache_loc"])
    return (a["req_pool_indices"], a["req_to_token"], a["seq_lens"], a["num_correct_drafts"],
            a["accept_index"], a["out_cache_loc"])


class SpeccPath:
    """specc.move_accept_tokens_to_target_kvcache; bind() gives the call with
    its arguments bound positionally, as a caller makes it (the host timing
    then holds no wrapper of ours)."""

    def __init__(self, specc: Any, bufs: List[Any], targets: str = "req_to_token"):
        self.move, self.bufs, self.targets = specc.move_accept_tokens_to_target_kvcache, bufs, targets
        self.kw = {} if targets == "req_to_token" else {"targets": targets}

    def __call__(self, inp: InputSet) -> None:
        self.move(*positional(inp, self.targets), self.bufs, **self.kw)

    def bind(self, inp: InputSet) -> Callable[[], None]:
        return functools.partial(self.move, *positional(inp, self.targets), self.bufs, **self.kw)


class TorchOpPath(SpeccPath):
    """torch.ops.specc.move_accept_tokens_to_target_kvcache, positional."""

    def __init__(self, op: Any, bufs: List[Any], targets: str = "req_to_token"):
        self.move, self.bufs, self.targets = op, bufs, targets

    def __call__(self, inp: InputSet) -> None:
        self.move(*self._args(inp))

    def bind(self, inp: InputSet) -> Callable[[], None]:
        return functools.partial(self.move, *self._args(inp))

    def _args(self, inp: InputSet) -> Tuple[Any, ...]:
        # The schema's trailing (check, targets), positional.
        tail = () if self.targets == "req_to_token" else (False, self.targets)
        return (*positional(inp, self.targets), self.bufs, *tail)


def specc_status(specc: Any) -> Optional[List[int]]:
    """specc's status record of the last call (code, entry, value, bound,
    skipped, moved, path, 0), or None where the API has none."""
    f = getattr(specc, "last_status", None)
    return None if f is None else [int(v) for v in f()]


def status_clean(st: Optional[List[int]]) -> bool:
    return st is None or (st[0] == 0 and (len(st) < 5 or st[4] == 0))


def torch_op() -> Any:
    try:
        return torch.ops.specc.move_accept_tokens_to_target_kvcache
    except (AttributeError, RuntimeError):
        return None


def capture(fn: Callable[[], None]) -> Any:
    """A CUDA graph of one call (warmed up on a side stream, as torch asks:
    the tests' capture_move), synchronized."""
    from gpu_cases import capture_move

    g = capture_move(fn)
    torch.cuda.synchronize()
    return g


def device_events(prof: Any) -> List[Tuple[float, float, str]]:
    """(start us, duration us, name) of every device-side activity (kernel,
    memset, memcpy) the profiler recorded, in stream order."""
    cuda = torch.autograd.DeviceType.CUDA
    evs = []
    for e in prof.events():
        if e.device_type != cuda or getattr(e, "is_user_annotation", False):
            continue
        evs.append((float(e.time_range.start), float(e.time_range.end - e.time_range.start), e.name))
    evs.sort(key=lambda t: t[0])
    return evs


def short_name(name: str) -> str:
    """A kernel's name without template arguments and parameter lists."""
    n = re.sub(r"\(.*", "", name)
    depth, outp = 0, []
    for ch in n:
        depth += ch == "<"
        if depth == 0:
            outp.append(ch)
        depth -= ch == ">"
    n = "".join(outp).replace("void ", "").strip()
    return n.split("::")[-1] or name[:40]


class Meter:
    """The four ways of timing a call; see the module doc."""

    def __init__(self, args: argparse.Namespace):
        self.reps, self.host_reps, self.min_reps = args.reps, args.host_reps, args.min_reps
        self.budget_s, self.sync_every = args.budget_s, args.sync_every
        self.cache = torch.empty(args.flush_mib << 20, dtype=torch.uint8, device="cuda")
        self.clean = args.flush_kind == "clean"
        self.has_marker = hasattr(torch.cuda, "_sleep")
        # The one-node graph of the empty kernel (measure_floor), replayed in
        # turns with each small batch's graphs.
        self.empty_graph: Any = None

    def flush(self) -> None:
        self.cache.zero_()
        if self.clean:
            # Reads every line back: the dirty ones are written back now
            # (the sum is kept, so that the read is not optimized away).
            self.sink = self.cache.view(torch.int64).sum()

    @staticmethod
    def mark() -> None:
        torch.cuda._sleep(0)

    def n(self, nominal: int, per_call_s: float) -> int:
        """`nominal` calls, or fewer (at least min_reps) past the time budget."""
        if nominal * per_call_s <= self.budget_s:
            return nominal
        return max(min(self.min_reps, nominal), min(nominal, int(self.budget_s / max(per_call_s, 1e-9))))

    def device(self, fns: Sequence[Callable[[], None]], n: int,
               before: Optional[Sequence[Optional[Callable[[], None]]]] = None) -> Dict[str, Any]:
        """Kernels-only device time per call (see the module doc, (a)).
        `before[i % k]`, where given, runs after the flush and before the
        first marker: what it leaves in the caches, the call finds there,
        and its own kernels are not counted."""
        from torch.profiler import ProfilerActivity, profile

        if not self.has_marker:
            raise RuntimeError("torch.cuda._sleep is missing: no marker kernel")
        k = len(fns)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(n):
                f = fns[i % k]
                self.flush()
                pre = before[i % k] if before else None
                if pre is not None:
                    pre()
                self.mark()
                f()
                self.mark()
                if i % 8 == 7:
                    torch.cuda.synchronize()
            torch.cuda.synchronize()
        evs = device_events(prof)
        marks = [j for j, e in enumerate(evs) if MARK in e[2]]
        if len(marks) != 2 * n:
            raise RuntimeError(f"profiler: {len(marks)} marker kernels for {n} calls "
                               f"({len(evs)} device events)")
        per, cnt = [], []
        for c in range(n):
            seg = evs[marks[2 * c] + 1:marks[2 * c + 1]]
            per.append(sum(d for _, d, _ in seg))
            cnt.append(len(seg))
        first = evs[marks[0] + 1:marks[1]]
        return {"us": _median(per), "min_us": min(per), "n": n, "calls_us": per,
                "kernels_per_call": int(_median(cnt)),
                "kernels": [f"{short_name(nm)} {d:.1f}" for _, d, nm in first]}

    def device_empty(self, n: int) -> float:
        """Device time of the empty kernel itself (no markers: it is one)."""
        from torch.profiler import ProfilerActivity, profile

        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(n):
                self.flush()
                self.mark()
                if i % 8 == 7:
                    torch.cuda.synchronize()
            torch.cuda.synchronize()
        d = [dur for _, dur, nm in device_events(prof) if MARK in nm]
        if len(d) != n:
            raise RuntimeError(f"profiler: {len(d)} empty kernels recorded for {n}")
        return _median(d)

    def span(self, fns: Sequence[Callable[[], None]], n: int) -> Dict[str, Any]:
        """Events around one call from idle after an L2 flush ((b), (c))."""
        k = len(fns)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            f = fns[i % k]
            torch.cuda.synchronize()
            self.flush()
            torch.cuda.synchronize()
            starts[i].record()
            f()
            ends[i].record()
        torch.cuda.synchronize()
        t = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
        return {"us": _median(t), "min_us": min(t), "n": n}

    def span_pair(self, a: Sequence[Callable[[], None]], b: Sequence[Callable[[], None]],
                  n: int) -> Dict[str, Any]:
        """Spans as in span(), of two paths taken in turns: call i of each
        path runs back to back with the other's, in alternating order (a b,
        b a, ...), so that both see the same GPU, clocks and host state. Gives
        each path's median and the medians of the n per-pair ratios b/a and
        differences b - a."""
        ka, kb = len(a), len(b)
        ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(n)]
        for i in range(n):
            order = ((0, a[i % ka]), (1, b[i % kb]))
            for which, f in (order if i % 2 == 0 else order[::-1]):
                torch.cuda.synchronize()
                self.flush()
                torch.cuda.synchronize()
                ev[i][2 * which].record()
                f()
                ev[i][2 * which + 1].record()
        torch.cuda.synchronize()
        ta = [e[0].elapsed_time(e[1]) * 1e3 for e in ev]
        tb = [e[2].elapsed_time(e[3]) * 1e3 for e in ev]
        return {"a_us": _median(ta), "b_us": _median(tb), "n": n,
                "ratio": _median([y / x for x, y in zip(ta, tb) if x > 0]),
                "diff_us": _median([y - x for x, y in zip(ta, tb)])}

    def host(self, fns: Sequence[Callable[[], None]], n: int) -> Dict[str, Any]:
        """Wall time of the Python call only ((d))."""
        k = len(fns)
        clock = time.perf_counter_ns
        for f in fns:  # warm
            f()
        torch.cuda.synchronize()
        t = [0] * n
        gc_was = gc.isenabled()
        gc.disable()
        try:
            for i in range(n):
                f = fns[i % k]
                t0 = clock()
                f()
                t[i] = clock() - t0
                if i % self.sync_every == self.sync_every - 1:
                    torch.cuda.synchronize()
            torch.cuda.synchronize()
        finally:
            if gc_was:
                gc.enable()
        return {"us": _median(t) / 1e3, "min_us": min(t) / 1e3, "n": n}


def call_time_s(fn: Callable[[], None]) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def _bytesum(x: Any) -> Any:
    """Sum of a [rows, bytes] uint8 tensor's bytes as int32 words (a checksum)."""
    if x.shape[-1] % 4 == 0 and x.is_contiguous():
        return x.view(torch.int32).sum(dtype=torch.int64)
    return x.sum(dtype=torch.int64)


def check_move(bufs: List[Any], inp: InputSet, run: Callable[[], None]) -> Dict[str, bool]:
    """Runs one move; every target row must equal its source row as it was, and
    the checksum of every buffer's other rows must not change."""
    u8 = [rows_u8(b) for b in bufs]
    want = [b[inp.src] for b in u8]
    tu = torch.unique(inp.tgt)
    before = torch.stack([_bytesum(b) - _bytesum(b[tu]) for b in u8])
    run()
    torch.cuda.synchronize()
    targets = all(torch.equal(b[inp.tgt], w) for b, w in zip(u8, want))
    after = torch.stack([_bytesum(b) - _bytesum(b[tu]) for b in u8])
    return {"targets": bool(targets), "others": bool(torch.equal(before, after))}


def first_calls(path: SglangPath, inp: InputSet, label: str,
                record: List[Dict[str, Any]]) -> Dict[str, float]:
    """One cold and one warm call, stage by stage; the difference is the
    first-call cost in this process (cache load, module load, or a compile)."""
    cold: Dict[str, float] = {}
    warm: Dict[str, float] = {}
    path(inp, cold)
    path(inp, warm)
    fc = {k: max(cold[k] - warm[k], 0.0) for k in cold}
    record.append({"where": label, "cold_ms": cold, "warm_ms": warm, "first_call_ms": fc})
    return fc


@dataclass
class Ctx:
    args: argparse.Namespace
    specc: Any
    sgl_kernels: Optional[Dict[str, Any]]
    consts: Dict[str, int]
    meter: Any
    floor: Dict[str, Any]
    pool: Optional[CompilePool]
    needs: Dict[Tuple[str, bool, int], List[str]]
    t0: float
    deadline: float
    compile_log: List[Dict[str, Any]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    inproc_compile_seen: bool = False
    triton_started: bool = False

    def sglang_state(self, layout: str, tree: bool, bs: int, wait: bool = False) -> str:
        """'ready' (compiled, or to compile here), 'pending', 'failed',
        'timeout' or 'none' (no sglang sources). A worker failure at a small
        size falls back to compiling in this process (seconds)."""
        if self.sgl_kernels is None:
            return "none"
        if self.pool is None:
            return "ready"
        keys = self.needs[(layout, tree, bs)]
        st = self.pool.wait(keys, self.deadline) if wait else self.pool.status(keys)
        if st == "failed" and self.inproc_ok(bs * self.args.w) and not self.inproc_compile_seen:
            self.notes.append(f"{layout} {'tree' if tree else 'chain'} bs={bs}: compile worker "
                              f"failed ({self.pool.why(keys)[:300]}); compiling in the main process")
            return "ready"
        return st

    def inproc_ok(self, size: int) -> bool:
        return next_power_of_2(size) <= self.args.inproc_max_size_upper

    def watch_first_call(self, where: str, fc: Dict[str, float]) -> None:
        """A first call that took compile time although the workers compiled
        it: the cache was missed, so larger sizes must not run here."""
        first = not self.triton_started
        self.triton_started = True
        if first and fc:
            name, ms = next(iter(fc.items()))
            self.notes.append(f"{where}: the process's first Triton launch ({name}) took "
                              f"{ms:.0f} ms more than the next one (Triton's start in this "
                              "process; not counted as a compile)")
        if self.pool is not None and compiled_here(fc, self.args.inproc_compile_ms, first):
            self.inproc_compile_seen = True
            self.notes.append(f"{where}: sglang's first call took "
                              + ", ".join(f"{k} {v:.0f} ms" for k, v in fc.items())
                              + " in the main process: the precompiled kernels were not picked "
                              f"up; sglang is skipped where next_power_of_2(bs*W) > "
                              f"{self.args.inproc_max_size_upper}")


def compiled_here(fc: Dict[str, float], threshold_ms: float, first_in_process: bool) -> bool:
    """Whether a first call's extra time per stage (cold minus warm call, in
    launch order) shows a compile in this process. The process's first Triton
    launch also pays Triton's start (about 0.5 s: every compile worker's first
    job takes that much longer than its second); on that call the first
    stage is not counted, the others still show a miss."""
    stages = list(fc.values())[1:] if first_in_process else list(fc.values())
    return any(v > threshold_ms for v in stages)


def full_check(ctx: Ctx, layout: Layout, tree: bool) -> Dict[str, Any]:
    """Every row of every buffer after one move, both paths, against the
    pure-torch reference (gather all, then scatter)."""
    from gpu_cases import reference

    args = ctx.args
    kind = "tree" if tree else "chain"
    inp = make_inputs(args.check_bs, args.w, tree, args.tree_drafts if tree else args.w, 1,
                      seed=100 + tree, targets=args.targets)[0]
    bufs = make_buffers(layout, slots_needed([inp]), seed=5)
    u8 = [rows_u8(b) for b in bufs]
    orig = [x.clone() for x in u8]
    want, _, _ = reference(inp.args_cpu, orig, targets=args.targets)
    res: Dict[str, Any] = {"layout": layout.name, "kind": kind, "bs": args.check_bs, "w": args.w}
    specc = ctx.specc
    try:
        t0 = time.perf_counter()
        specc.prepare(0, inp.size, bufs)
        SpeccPath(specc, bufs, args.targets)(inp)
        torch.cuda.synchronize()
        res["specc_first_call_ms"] = (time.perf_counter() - t0) * 1e3
        res["specc_status"] = specc_status(specc)
        res["specc_matches_reference"] = (all(torch.equal(x, w) for x, w in zip(u8, want))
                                          and status_clean(res["specc_status"]))
    except Exception as e:  # the layout is then not timed; the others still are
        res["specc_error"] = f"{type(e).__name__}: {e}"
        res["specc_matches_reference"] = False
    specc_out = [x.clone() for x in u8]

    if ctx.sgl_kernels is not None:
        st = ctx.sglang_state(layout.name, tree, args.check_bs, wait=True)
        if st != "ready":
            res["sglang_error"] = "not compiled: " + (ctx.pool.why(
                ctx.needs[(layout.name, tree, args.check_bs)]) if ctx.pool else st)
        else:
            def restore() -> None:
                for x, o in zip(u8, orig):
                    x.copy_(o)
            path = SglangPath(ctx.sgl_kernels, bufs,
                              kv_copy_config(u8[0].shape[1], args.tile_config, ctx.consts),
                              args.targets)
            try:
                where = f"check {layout.name} {kind} bs={args.check_bs}"
                ctx.watch_first_call(where, first_calls(path, inp, where, ctx.compile_log))
                restore()  # first_calls moved twice; check one move from the original bytes
                path(inp)
                torch.cuda.synchronize()
                res["sglang_matches_reference"] = all(torch.equal(x, w) for x, w in zip(u8, want))
                res["sglang_identical_to_specc"] = all(torch.equal(x, s) for x, s in zip(u8, specc_out))
            except Exception as e:  # report, do not crash: specc is still measured
                res["sglang_error"] = f"{type(e).__name__}: {e}"
    return res


def new_row(ctx: Ctx, layout: Layout, tree: bool, bs: int, sets: List[InputSet]) -> Dict[str, Any]:
    args, floor = ctx.args, ctx.floor
    kind = "tree" if tree else "chain"
    slots = slots_needed(sets)
    itemsize = torch.empty(0, dtype=getattr(torch, layout.dtype, torch.uint8)).element_size()
    row_bytes = layout.row_bytes(itemsize)
    accepted = sum(len(s.tgt) for s in sets) / len(sets)
    moving = sum(s.moving for s in sets) / len(sets)
    moved_bytes = 2 * moving * sum(row_bytes)
    copy_us = moved_bytes / floor["copy_Bps"] * 1e6
    r: Dict[str, Any] = {
        "config": f"{layout.name} {kind} bs={bs}", "layout": layout.name, "kind": kind, "bs": bs,
        "w": args.w, "num_draft": args.tree_drafts if tree else args.w, "size": bs * args.w,
        "sets": len(sets), "slots": slots, "buffers": len(row_bytes),
        "row_bytes": sorted(set(row_bytes)), "pool_bytes": slots * sum(row_bytes),
        "accepted_rows": accepted, "moving_rows": moving, "bytes_moved": moved_bytes,
        "floor_copy_us": copy_us,
        "floor_us": copy_us + floor["empty_device_us"],
        "floor_graph_us": copy_us + floor["empty_graph_us"],
        "floor_span_us": copy_us + floor["empty_span_us"],
        "specc": {}, "sglang": {}, "torch_op": {}, "flags": [], "check": "",
    }
    return r


# Device memory in use beyond PyTorch's reservations (CUDA contexts, the
# compile workers, anything freed by PyTorch but still held) is noted when it
# has grown by this much since the last note: a configuration that runs out
# of memory then says what else held the device.
OUTSIDE_TORCH_NOTE_BYTES = 2 << 30


class StackLimit:
    """The CUDA context's per-thread stack limit (CU_LIMIT_STACK_SIZE), read
    and reset through the driver API. A kernel whose stack is larger than the
    limit raises it when launched, and the driver then holds local memory for
    that stack in every thread the GPU can run at once (about 24 GiB for 96 KB
    a thread on an H100) until the limit is set again. sglang's Triton copy
    kernel, specialized for 2048 locations (bs 512, W = 4), spills to a stack
    of about 113 KiB: the reservation it leaves would count against every
    later configuration (it made Qwen-32B's bs 2048 run out of an H100's 80
    GB). specc's kernels use no stack."""

    CU_LIMIT_STACK_SIZE = 0

    def __init__(self, lib: Any = None) -> None:
        """`lib`: the driver library (default: libcuda, loaded here)."""
        import ctypes
        self.ctypes = ctypes
        self.error = ""
        self.lib, self.base = lib, 0
        if lib is None:
            try:
                self.lib = ctypes.CDLL("libcuda.so.1")
            except OSError as e:
                self.error = f"libcuda not loaded: {e}"
                return
        self.base = self.get()  # the limit before any kernel of ours ran

    def get(self) -> int:
        v = self.ctypes.c_size_t()
        rc = self.lib.cuCtxGetLimit(self.ctypes.byref(v), self.CU_LIMIT_STACK_SIZE)
        if rc != 0:
            self.error = f"cuCtxGetLimit failed ({rc})"
            return 0
        return v.value

    def reset(self) -> int:
        """Sets the limit back to its first value when a kernel raised it;
        returns the limit it found (0 when it could not be read). Without a
        first value (its read failed) nothing is set: a limit of 0 would
        not be the context's own."""
        if self.lib is None:
            return 0
        found = self.get()
        if found > self.base > 0:
            rc = self.lib.cuCtxSetLimit(self.CU_LIMIT_STACK_SIZE, self.ctypes.c_size_t(self.base))
            if rc != 0:
                self.error = f"cuCtxSetLimit failed ({rc})"
        return found


def note_memory(r: Dict[str, Any], notes: List[str], stack: Optional[StackLimit] = None) -> None:
    """Records, after a configuration and the cache's release, the device
    memory in use (driver view, every process), PyTorch's reservations in
    this process and the difference; notes the difference when it grew.
    With `stack`: first gives back the local memory that kernels with a
    stack larger than the context's limit made the driver reserve, and notes
    how much that was and the stack that asked for it."""
    free, total = torch.cuda.mem_get_info()
    held = total - free
    stack_found = stack.reset() if stack is not None else 0
    free, total = torch.cuda.mem_get_info()
    used, reserved = total - free, torch.cuda.memory_reserved()
    outside = used - reserved
    r["memory"] = {"device_used_gib": used / 2**30, "torch_reserved_gib": reserved / 2**30,
                   "outside_torch_gib": outside / 2**30}
    if stack is not None and stack_found > stack.base > 0:
        released = held - used
        r["memory"].update(stack_limit_bytes=stack_found, stack_released_gib=released / 2**30)
        if released >= OUTSIDE_TORCH_NOTE_BYTES:
            notes.append(f"{r['config']}: a kernel of it raised the stack to {stack_found} bytes a "
                         f"thread, and the driver held {released / 2**30:.1f} GiB of local memory "
                         f"for it (specc's kernels use no stack); given back (stack limit reset to "
                         f"{stack.base} bytes) before the next configuration")
    if stack is not None and stack.error and not getattr(note_memory, "stack_error", False):
        note_memory.stack_error = True
        notes.append(f"stack limit not reset: {stack.error}")
    last = getattr(note_memory, "noted", 0)
    if outside - last >= OUTSIDE_TORCH_NOTE_BYTES:
        note_memory.noted = outside
        notes.append(f"{r['config']}: after it, {outside / 2**30:.1f} GiB of device memory in use "
                     f"outside this process's PyTorch reservations (in use {used / 2**30:.1f} GiB, "
                     f"reserved by PyTorch {reserved / 2**30:.1f} GiB)")


def eager_calls(call: Callable[[InputSet], None], sets: List[InputSet]) -> List[Callable[[], None]]:
    """One argument-free call per input set (bound positionally where the
    path can: the timings then hold no wrapper of ours)."""
    bind = getattr(call, "bind", None)
    return [bind(x) if bind else functools.partial(call, x) for x in sets]


def measure_path(ctx: Ctx, res: Dict[str, Any], call: Callable[[InputSet], None],
                 sets: List[InputSet], bufs: List[Any], read_status: bool,
                 time_if_wrong: bool = False, pair_graph: bool = False) -> bool:
    """Checks one eager call and one graph replay, then times the path the four
    ways (a wrong path only with `time_if_wrong`); with `pair_graph`, its
    replays also in turns with the empty kernel's graph (res["graph_pair"]).
    Returns whether both checks passed."""
    m, args = ctx.meter, ctx.args
    ce = check_move(bufs, sets[0], lambda: call(sets[0]))
    res["check_eager"] = ce
    ok = ce["targets"] and ce["others"]
    if read_status:
        st = specc_status(ctx.specc)
        res["status"] = st
        ok = ok and status_clean(st)
    eager = eager_calls(call, sets)
    est = min(call_time_s(f) for f in eager[:2])
    res["est_call_us"] = est * 1e6
    graphs = [capture(f) for f in eager]
    cg = check_move(bufs, sets[1], graphs[1].replay)
    res["check_graph"] = cg
    ok = ok and cg["targets"] and cg["others"]
    if not ok and not time_if_wrong:
        return False
    replays = [g.replay for g in graphs]
    h = m.host(eager, m.n(m.host_reps, est))
    res.update(host_us=h["us"], host_min_us=h["min_us"], host_n=h["n"])
    s = m.span(eager, m.n(m.reps, est + 2e-4))
    res.update(span_us=s["us"], span_min_us=s["min_us"], span_n=s["n"])
    g = m.span(replays, m.n(m.reps, est + 2e-4))
    res.update(graph_us=g["us"], graph_min_us=g["min_us"], graph_n=g["n"])
    if pair_graph and m.empty_graph is not None:
        p = m.span_pair([m.empty_graph.replay], replays, m.n(m.reps, est + 4e-4))
        res["graph_pair"] = {"empty_us": p["a_us"], "us": p["b_us"], "diff_us": p["diff_us"],
                             "n": p["n"]}
    if not args.no_profiler:
        try:
            d = m.device(eager, m.n(m.reps, est + 1e-4))
            res.update(device_us=d["us"], device_min_us=d["min_us"], device_n=d["n"],
                       kernels_per_call=d["kernels_per_call"], kernels=d["kernels"])
        except Exception as e:  # the other columns stand
            res["device_error"] = f"{type(e).__name__}: {e}"
    del graphs
    return ok


def set_check(r: Dict[str, Any]) -> None:
    r["check"] = " ".join(r["flags"]) or "ok"


def measure_sglang(ctx: Ctx, r: Dict[str, Any], layout: Layout, tree: bool, sets: List[InputSet],
                   bufs: List[Any], specc_eager: Optional[List[Callable[[], None]]] = None) -> None:
    """sglang's path for one row; with `specc_eager` (specc's calls on the
    same buffers) also the paired span of the two (Meter.span_pair)."""
    args = ctx.args
    cfg = kv_copy_config(layout.row_bytes()[0], args.tile_config, ctx.consts)
    sg = r["sglang"]
    sg["kv_copy_config"] = cfg
    if ctx.inproc_compile_seen and not ctx.inproc_ok(r["size"]):
        sg["status"] = ("skipped: a first call compiled in the main process (the precompiled "
                        "kernels were not found in the cache); this size would take minutes")
        return
    try:
        path = SglangPath(ctx.sgl_kernels, bufs, cfg, args.targets)
        fc = first_calls(path, sets[0], r["config"], ctx.compile_log)
        ctx.watch_first_call(r["config"], fc)
        sg.pop("status", None)
        if not measure_path(ctx, sg, path, sets, bufs, read_status=False, time_if_wrong=True):
            r["flags"].append("sgl-mismatch")
        if specc_eager and r["bs"] <= PAIRED_SPAN_MAX_BS and "span_us" in sg:
            est = (sg.get("est_call_us", 0.0) + (r["specc"].get("est_call_us") or 0.0)) * 1e-6
            p = ctx.meter.span_pair(specc_eager, eager_calls(path, sets),
                                    ctx.meter.n(ctx.meter.reps, est + 4e-4))
            r["paired_span"] = {"specc_us": p["a_us"], "sglang_us": p["b_us"], "x": p["ratio"],
                                "n": p["n"]}
    except Exception as e:  # a Triton failure must not hide the specc numbers
        sg["error"] = f"{type(e).__name__}: {e}"
        sg["status"] = "error"
        r["flags"].append("sgl-error")


def bench_config(ctx: Ctx, layout: Layout, tree: bool, bs: int, sets: List[InputSet],
                 deferred: List[Tuple[Dict[str, Any], Layout, bool, List[InputSet]]]) -> Dict[str, Any]:
    args = ctx.args
    r = new_row(ctx, layout, tree, bs, sets)
    if r["pool_bytes"] > args.max_gib * 2**30:
        r["check"] = f"skipped: pool {r['pool_bytes'] / 2**30:.1f} GiB > --max-gib"
        return r
    bufs = make_buffers(layout, r["slots"], seed=bs * 2 + tree)
    # The pool registered once, as a serving loop (and the sglang adapter)
    # holds it: calls then do no per-buffer work on the host.
    pool = ctx.specc.Pool(bufs) if hasattr(ctx.specc, "Pool") else bufs
    sp = SpeccPath(ctx.specc, pool, args.targets)
    specc_eager = None
    try:
        ctx.specc.prepare(0, sets[0].size, pool)  # before capture, as in serving
        if measure_path(ctx, r["specc"], sp, sets, bufs, read_status=True,
                        pair_graph=bs <= PAIRED_SPAN_MAX_BS):
            specc_eager = eager_calls(sp, sets)
        else:
            r["flags"].append("SPECC-WRONG")
    except Exception as e:
        r["specc"]["error"] = f"{type(e).__name__}: {e}"
        r["flags"].append("specc-error")

    op = torch_op()
    if op is not None:
        try:
            path = TorchOpPath(op, bufs, args.targets)
            c = check_move(bufs, sets[0], lambda: path(sets[0]))
            r["torch_op"]["check_eager"] = c
            if not (c["targets"] and c["others"]):
                r["flags"].append("op-wrong")
            est = call_time_s(lambda: path(sets[1]))
            r["torch_op"]["est_call_us"] = est * 1e6
            h = ctx.meter.host([path.bind(x) for x in sets], ctx.meter.n(ctx.meter.host_reps, est))
            r["torch_op"].update(host_us=h["us"], host_n=h["n"])
        except Exception as e:
            r["torch_op"]["error"] = f"{type(e).__name__}: {e}"
    x = torch.zeros(1, device="cuda")
    r["empty_op_host_us"] = ctx.meter.host([functools.partial(x.add_, 1)], ctx.meter.host_reps)["us"]

    state = ctx.sglang_state(layout.name, tree, bs)
    if state in ("ready", "pending") and time.monotonic() - ctx.t0 > args.time_limit_s:
        r["sglang"]["status"] = f"skipped: past --time-limit-s {args.time_limit_s:.0f}"
    elif state == "ready":
        measure_sglang(ctx, r, layout, tree, sets, bufs, specc_eager)
    elif state == "none":
        r["sglang"]["status"] = "no sglang sources"
    elif state == "pending":
        r["sglang"]["status"] = "deferred"
        deferred.append((r, layout, tree, sets))
    else:
        r["sglang"]["status"] = f"not compiled: {ctx.pool.why(ctx.needs[(layout.name, tree, bs)])}"
    set_check(r)
    r["targets"] = report.evaluate_targets(r, ctx.floor)
    del bufs, sp
    return r


def run_deferred(ctx: Ctx, r: Dict[str, Any], layout: Layout, tree: bool,
                 sets: List[InputSet]) -> None:
    """sglang for a configuration whose kernels compiled after its specc turn."""
    keys = ctx.needs[(layout.name, tree, r["bs"])]
    assert ctx.pool is not None
    st = ctx.sglang_state(layout.name, tree, r["bs"], wait=True)
    if st != "ready":
        r["sglang"]["status"] = f"not compiled: {ctx.pool.why(keys)}"
    elif time.monotonic() - ctx.t0 > ctx.args.time_limit_s:
        r["sglang"]["status"] = f"skipped: past --time-limit-s {ctx.args.time_limit_s:.0f}"
    else:
        log(f"timing sglang {r['config']} (compiled late) ...")
        bufs = make_buffers(layout, r["slots"], seed=r["bs"] * 2 + tree)  # the same bytes
        measure_sglang(ctx, r, layout, tree, sets, bufs)
        del bufs
        torch.cuda.empty_cache()
    set_check(r)
    r["targets"] = report.evaluate_targets(r, ctx.floor)


#: How far a copy's device time may exceed the events' span of the same copy
#: before it counts as a bad measurement (the span holds the kernel, so a
#: sound device time is below it: 0.5 to 3 % below in every run so far).
COPY_SPAN_SLACK = 0.01


def settle_copy_time(device: Callable[[], float], span: Callable[[], float]) -> Dict[str, Any]:
    """The copy's time for the floor: its device time (CUPTI), checked against
    the events' span of the same copy. A device time above the span cannot be
    the copy's (one run's first copies measured 15 % above their span, and
    its floors came out low enough that the call beat them); it is measured
    again once, after the span's copies, and if it still exceeds the span the
    span is the copy's time. Every measurement is kept in the result."""
    d, s = device(), span()
    out: Dict[str, Any] = {"copy_device_us": d, "copy_span_us": s,
                           "copy_how": report.COPY_TIMED_PLAINLY, "copy_us": d}
    if d > s * (1 + COPY_SPAN_SLACK):
        again = device()
        out.update(copy_device_first_us=d, copy_device_us=again)
        if again > s * (1 + COPY_SPAN_SLACK):
            out.update(copy_us=s, copy_how=(
                f"events around one copy: its device time twice exceeded that span "
                f"({d:.1f} and {again:.1f} us against {s:.1f})"))
        else:
            out.update(copy_us=again, copy_how=(
                f"device time (CUPTI), measured a second time: the first "
                f"({d:.1f} us) exceeded the events' span ({s:.1f} us)"))
    return out


def copy_bandwidth(meter: Meter, args: argparse.Namespace) -> Dict[str, Any]:
    """A large device-to-device copy_, read + write counted."""
    n = int(args.copy_gib * 2**30)
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    a.random_(0, 256)
    b = torch.empty_like(a)
    # A few copies before any is timed, so that none of the timed ones runs
    # while the card's clocks are still rising.
    for _ in range(5):
        b.copy_(a)
    torch.cuda.synchronize()
    f: Dict[str, Any] = {"copy_bytes": n}
    span = lambda: meter.span([lambda: b.copy_(a)], 20)["us"]  # noqa: E731

    def device() -> float:
        d = meter.device([lambda: b.copy_(a)], 20)
        if d["us"] <= 0:
            raise RuntimeError(f"no device activity recorded for the copy: {d['kernels']}")
        return d["us"]

    try:
        if args.no_profiler:
            raise RuntimeError("--no-profiler")
        t = settle_copy_time(device, span)
    except Exception as e:
        f["copy_device_error"] = f"{type(e).__name__}: {e}"
        s = span()
        t = {"copy_span_us": s, "copy_us": s, "copy_how": "events around one copy (no profiler)"}
    copy_us = t.pop("copy_us")
    f.update(t)
    f["copy_Bps"] = 2 * n / (copy_us * 1e-6)
    return f


def measure_floor(meter: Meter, args: argparse.Namespace) -> Dict[str, Any]:
    """Copy bandwidth and the empty kernel, each the way the paths are
    measured: device time, graph replay, eager span, host."""
    f = copy_bandwidth(meter, args)
    torch.cuda.empty_cache()
    empty = Meter.mark
    try:
        if args.no_profiler:
            raise RuntimeError("--no-profiler")
        f["empty_device_us"] = meter.device_empty(max(100, args.reps))
    except Exception as e:
        f["empty_device_error"] = f"{type(e).__name__}: {e}"
        f["empty_device_us"] = 0.0
    g = capture(empty)
    meter.empty_graph = g
    f["empty_graph_us"] = meter.span([g.replay], max(100, args.reps))["us"]
    f["empty_span_us"] = meter.span([empty], max(100, args.reps))["us"]
    f["empty_host_us"] = meter.host([empty], args.host_reps)["us"]
    x = torch.zeros(1, device="cuda")
    op = functools.partial(x.add_, 1)
    f["empty_op_host_us"] = meter.host([op], args.host_reps)["us"]
    f["empty_op_span_us"] = meter.span([op], max(100, args.reps))["us"]
    f["empty_kernel"] = "torch.cuda._sleep(0) (spin_kernel, 1 thread, no cycles)"
    return f


def reps_notes(results: List[Dict[str, Any]], nominal: Dict[str, int], budget: float) -> List[str]:
    lines = []
    for r in results:
        for path in ("specc", "sglang", "torch_op"):
            d = r.get(path) or {}
            red = [f"{k[:-3]} {d[k[:-3] + '_n']}" for k in ("device_us", "graph_us", "span_us", "host_us")
                   if d.get(k[:-3] + "_n") is not None and d[k[:-3] + "_n"] < nominal[k]]
            if red:
                lines.append(f"{r['config']} {path}: fewer calls ({budget:g} s budget per measurement, "
                             f"{d.get('est_call_us', 0):.0f} us per call): " + ", ".join(red))
    return lines


def compile_lines(pool: Optional[CompilePool], log_: List[Dict[str, Any]],
                  fresh: bool = True) -> List[str]:
    lines = []
    if pool is not None:
        s = pool.summary()
        by: Dict[str, List[str]] = {}
        for v in sorted(s.values(), key=lambda v: (v["kernel"], v["bs"], v["label"])):
            t = (f"{v['compile_s']:.1f} s" if v["status"] == "ready" and v.get("compile_s") is not None
                 else v["status"])
            by.setdefault(v["kernel"], []).append(f"{v['label'].split(' ', 1)[1]}: {t}")
        lines.append("Triton compiles of sglang's kernels (parallel niced worker processes, "
                     + ("fresh cache" if fresh else "--triton-cache-dir: cache hits take ~1 s")
                     + "; seconds per specialization, launch included):")
        for k, v in by.items():
            lines.append(f"  {k}: " + "; ".join(v))
    slow = [e for e in log_ if any(x > 5.0 for x in e["first_call_ms"].values())]
    if log_:
        e = log_[0]
        lines.append("sglang first call in the main process (load from the cache), at "
                     f"{e['where']}: " + ", ".join(f"{k} {v:.0f} ms" for k, v in e["first_call_ms"].items()))
    if len(slow) > 1:
        lines.append(f"  first calls over 5 ms at {len(slow)} configurations, the slowest "
                     + max((f"{max(e['first_call_ms'].values()):.0f} ms at {e['where']}" for e in slow),
                           key=lambda s: float(s.split()[0])))
    return lines


def write_outputs(data: Dict[str, Any], args: argparse.Namespace, final: bool = False,
                  png: bool = True) -> None:
    """JSON and Markdown (cheap: after every configuration), the PNG (after
    every layout and at the end)."""
    data["header"]["wall_s"] = time.monotonic() - data["_t0"]
    data["header"]["finished"] = final
    clean = {k: v for k, v in data.items() if not k.startswith("_")}
    if args.out:
        p = pathlib.Path(args.out)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(clean, indent=1, default=str))
        tmp.replace(p)
    if args.md:
        try:
            report.write_markdown(clean, args.md)
        except Exception as e:  # the JSON is what matters
            log(f"markdown not written: {type(e).__name__}: {e}")
    if args.png and png:
        try:
            import plot_bench
            plot_bench.plot(clean, args.png, kind=args.plot_kind)
        except Exception as e:
            log(f"plot not written: {type(e).__name__}: {e}")
    if final:
        log("wrote " + ", ".join(x for x in (args.out, args.md, args.png) if x))


def run_gpu(args: argparse.Namespace, workdir: pathlib.Path, cache_dir: str,
            cache_is_fresh: bool) -> int:
    t_start = time.monotonic()
    deadline = t_start + args.compile_budget_s
    # sglang's kernels first: the compile workers start before anything else.
    src_dir = pathlib.Path(args.sglang_src)
    consts, consts_src = find_tile_constants(src_dir)
    notes: List[str] = []
    sources: Optional[Dict[str, KernelSource]] = None
    try:
        sources = extract_sglang_kernels(src_dir)
        write_kernel_file(sources, workdir)
    except Exception as e:  # missing folder, changed sources
        notes.append(f"sglang columns skipped: {type(e).__name__}: {e}")
    try:
        import_gpu_stack()
    except ImportError as e:
        print(f"bench_move: needs torch and triton ({e}); --extract-only runs without them",
              file=sys.stderr)
        return 2
    sys.path.insert(0, str(PYTHON_DIR / "tests"))  # gpu_cases: make_case, reference
    infos = {t: case_info(t, args.w, args.tree_drafts) for t in (False, True)}
    jobs, needs = plan_jobs(args, infos, consts)
    pool: Optional[CompilePool] = None
    if sources is not None and args.compile_procs > 0:
        groups = group_jobs(jobs, args.check_bs)
        pool = CompilePool(groups, workdir, args.compile_procs, deadline)
        pool.start()
        log(f"compiling {sum(len(g) for g in groups)} sglang kernel specializations in "
            f"{len(groups)} worker processes (at most {args.compile_procs} at a time, "
            f"budget {args.compile_budget_s:.0f} s) ...")
    try:
        return _run_gpu(args, workdir, cache_dir, cache_is_fresh, t_start, deadline, consts,
                        consts_src, sources, notes, infos, needs, pool)
    finally:
        if pool is not None:
            pool.stop()


def _run_gpu(args: argparse.Namespace, workdir: pathlib.Path, cache_dir: str, cache_is_fresh: bool,
             t_start: float, deadline: float, consts: Dict[str, int], consts_src: str,
             sources: Optional[Dict[str, KernelSource]], notes: List[str],
             infos: Dict[bool, Dict[str, Any]], needs: Dict[Tuple[str, bool, int], List[str]],
             pool: Optional[CompilePool]) -> int:
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
        "gpu": torch.cuda.get_device_name(0), "driver": driver_version(),
        "torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda,
        "python": sys.version.split()[0],
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit, "git_dirty": dirty, "specc_module": relpath(specc.__file__),
        "triton_cache_fresh": cache_is_fresh, "sets": args.sets, "w": args.w,
        "tree_drafts": args.tree_drafts, "bs": args.bs, "kinds": args.kinds,
        "targets": args.targets,
        "nominal_reps": {"device_us": args.reps, "graph_us": args.reps, "span_us": args.reps,
                         "host_us": args.host_reps},
        "min_reps": args.min_reps, "budget_s": args.budget_s, "sync_every": args.sync_every,
        "flush_mib": args.flush_mib, "flush_kind": args.flush_kind, "compile_budget_s": args.compile_budget_s,
        "compile_procs": args.compile_procs, "case_info": {("tree" if k else "chain"): v
                                                            for k, v in infos.items()},
        "kv_copy_tile_mode": args.tile_config,
        "kv_copy_tile_source": (consts_src if args.tile_config == "sglang" else
                                "fixed: BYTES_PER_TILE=512, num_warps=4 (--tile-config fixed512)"),
    }
    sgl_kernels = None
    if sources is not None:
        header["sglang_kernels"] = {k: {"file": v.file, "lines": [v.first_line, v.last_line],
                                        "sha256_16": v.sha256} for k, v in sources.items()}
        try:
            sgl_kernels = load_kernel_file(workdir / KERNEL_FILE)
        except Exception as e:  # Triton API drift
            notes.append(f"sglang columns skipped: {type(e).__name__}: {e}")
            if pool is not None:
                pool.stop()
            pool = None
    else:
        header["sglang_kernels"] = None
    if sgl_kernels is not None:
        try:  # Triton's driver helpers, built on first use: timed apart
            t0 = time.perf_counter()
            triton.runtime.driver.active.get_current_device()
            header["triton_driver_init_ms"] = (time.perf_counter() - t0) * 1e3
        except Exception as e:
            notes.append(f"Triton driver not initialised apart: {type(e).__name__}: {e}")
    try:
        t0 = time.perf_counter()
        header["specc_backend"] = specc.backend(0)  # creates the mover: loads the kernels
        header["specc_init_ms"] = (time.perf_counter() - t0) * 1e3
    except Exception as e:
        print(f"bench_move: specc cannot run here: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    header["torch_op"] = torch_op() is not None
    header["native_binding"] = bool(getattr(specc, "native_binding", lambda: False)())

    meter = Meter(args)
    log("measuring copy bandwidth and the empty kernel (the profiler starts: CUPTI init) ...")
    floor = measure_floor(meter, args)
    data: Dict[str, Any] = {
        "header": header, "floor": floor, "layouts": {n: LAYOUTS[n].desc for n in args.layouts},
        "layout_order": list(args.layouts), "checks": [], "results": [], "compile": {},
        "first_calls": [], "notes": notes, "_t0": t_start,
    }
    ctx = Ctx(args, specc, sgl_kernels, consts, meter, floor, pool, needs, t_start, deadline,
              compile_log=data["first_calls"], notes=notes)
    stack = StackLimit()  # the context is current: torch and specc have used it
    header["stack_limit_bytes"] = stack.base
    for line in report.header_lines(data):
        out(line)
    out(f"sglang kernels: {'from ' + str(args.sglang_src) if sgl_kernels else 'none'}; copy tile: "
        f"{header['kv_copy_tile_source']}; torch.ops.specc: {'yes' if header['torch_op'] else 'no'}; "
        f"native binding: {'yes' if header.get('native_binding') else 'no (ctypes)'}")
    for n in notes:
        out(n)

    layouts = [LAYOUTS[n] for n in args.layouts]
    kinds = [k == "tree" for k in args.kinds]
    results: List[Dict[str, Any]] = data["results"]
    deferred: List[Tuple[Dict[str, Any], Layout, bool, List[InputSet]]] = []
    try:
        timed = []
        for layout in layouts:  # full checks first: a layout is timed only if specc is right
            ok = True
            for tree in (False, True):
                log(f"checking {layout.name} {'tree' if tree else 'chain'} against the reference ...")
                c = full_check(ctx, layout, tree)
                torch.cuda.empty_cache()
                data["checks"].append(c)
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
                out(f"check {layout.name} {c['kind']} bs={c['bs']} W={c['w']}: specc {spc}; sglang {sgl}")
            if ok:
                timed.append(layout)
            else:
                notes.append(f"{layout.name}: not timed, specc differs from the reference")
                out(notes[-1])
        if data["checks"] and "specc_first_call_ms" in data["checks"][0]:
            header["specc_first_call_ms"] = data["checks"][0]["specc_first_call_ms"]
        out()
        for line in report.LEGEND + report.target_legend():
            out(line)
        inputs: Dict[Tuple[int, bool], List[InputSet]] = {}
        nominal = header["nominal_reps"]
        for layout in timed:
            out()
            out(f"== {layout.name}: {layout.desc}")
            out(report.format_line(report.MEAS_COLS, [c for c, _ in report.MEAS_COLS]))
            for tree in kinds:
                for bs in args.bs:
                    key = (bs, tree)
                    if key not in inputs:
                        inputs[key] = make_inputs(bs, args.w, tree,
                                                  args.tree_drafts if tree else args.w,
                                                  args.sets, seed=1000 * bs + tree,
                                                  targets=args.targets)
                    log(f"[{time.monotonic() - t_start:5.0f} s] timing {layout.name} "
                        f"{'tree' if tree else 'chain'} bs={bs} ...")
                    try:
                        r = bench_config(ctx, layout, tree, bs, inputs[key], deferred)
                    except Exception as e:  # e.g. out of memory: the other configurations still run
                        r = {"config": f"{layout.name} {'tree' if tree else 'chain'} bs={bs}",
                             "layout": layout.name, "kind": "tree" if tree else "chain", "bs": bs,
                             "specc": {"error": f"{type(e).__name__}: {e}"}, "sglang": {},
                             "torch_op": {}, "flags": ["error"],
                             "check": f"error: {type(e).__name__}"}
                        r["targets"] = report.evaluate_targets(r, floor)
                    torch.cuda.empty_cache()  # the pool just freed can be 40+ GB
                    note_memory(r, notes, stack)
                    results.append(r)
                    out(report.format_line(report.MEAS_COLS, report.measurement_cells(r, nominal)))
                    write_outputs(data, args, png=False)
            out()
            for line in report.target_table(data, layout.name):
                out(line)
            data["compile"] = pool.summary() if pool else {}
            write_outputs(data, args)
        if deferred:
            log(f"[{time.monotonic() - t_start:5.0f} s] sglang for {len(deferred)} "
                f"configuration{'s' if len(deferred) > 1 else ''} whose kernels were still "
                "compiling ...")
            deferred.sort(key=lambda d: d[0]["bs"])
            for r, layout, tree, sets in deferred:
                try:
                    run_deferred(ctx, r, layout, tree, sets)
                except Exception as e:
                    r["sglang"].update(status="error", error=f"{type(e).__name__}: {e}")
                    r["flags"].append("sgl-error")
                    set_check(r)
                    torch.cuda.empty_cache()
                stack.reset()
                data["compile"] = pool.summary() if pool else {}
                write_outputs(data, args)
        out()
        out("== final tables" + (" (with the sglang columns measured after the compiles)"
                                 if deferred else ""))
        for layout in timed:
            out()
            for line in report.text_tables(data, layout.name):
                out(line)
        notes += reps_notes(results, nominal, args.budget_s)
        for r in results:
            st = (r.get("sglang") or {}).get("status")
            if st and st not in ("deferred", "no sglang sources"):
                notes.append(f"{r['config']}: sglang {st}")
            for p in ("specc", "sglang", "torch_op"):
                for k in ("error", "device_error"):
                    if (r.get(p) or {}).get(k):
                        notes.append(f"{r['config']}: {p} {k}: {r[p][k]}")
        if pool is not None:
            pool.stop()
            data["compile"] = pool.summary()
        notes += compile_lines(pool, ctx.compile_log, cache_is_fresh)
        notes.append(f"specc: mover creation with kernel load {header['specc_init_ms']:.0f} ms; first "
                     f"move (buffer registration, launch, sync) "
                     f"{header.get('specc_first_call_ms', float('nan')):.1f} ms")
        out()
        out("targets over all rows:")
        for line in report.summary_lines(data):
            out(line)
        out()
        out("notes:")
        for n in notes:
            out(f"  {n}")
        out(f"run time {time.monotonic() - t_start:.0f} s")
        write_outputs(data, args, final=True)
    finally:
        if not data["header"].get("finished"):
            data["compile"] = pool.summary() if pool else {}
            write_outputs(data, args)
    return 0


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sglang-src", default=str(REPO_ROOT / ".bench"),
                    help="folder with sglang's cache_locs.py, eagle.py, cache_move.py")
    ap.add_argument("--out", help="write the results as JSON to this file (after each layout too)")
    ap.add_argument("--md", help="write the results as Markdown to this file")
    ap.add_argument("--png", help="plot device time vs bs (plot_bench.py) to this PNG file")
    ap.add_argument("--plot-kind", choices=["tree", "chain"], default="tree")
    ap.add_argument("--commit", help="commit to report (default: $SPECC_COMMIT, then git)")
    ap.add_argument("--bs", type=int, nargs="+", default=DEFAULT_BS)
    ap.add_argument("--layouts", nargs="+", choices=list(LAYOUTS), default=DEFAULT_LAYOUTS)
    ap.add_argument("--kinds", nargs="+", choices=["chain", "tree"], default=["chain", "tree"])
    ap.add_argument("--w", type=int, default=4, help="accept_index width (speculative steps + 1)")
    ap.add_argument("--targets", choices=["req_to_token", "window"], default="req_to_token",
                    help="where the targets come from: the request-to-token table (sglang's "
                         "path before 0.5.23: assign_extend_cache_locs over req_to_token) or "
                         "each request's verify window (0.5.23: the same kernel over "
                         "out_cache_loc.view(bs, -1), after an arange, a zeros_like and an "
                         "add); specc is called with the same target source")
    ap.add_argument("--tree-drafts", type=int, default=8, help="draft tokens per request of a tree")
    ap.add_argument("--sets", type=int, default=4,
                    help="input sets rotated through (default 4, at least 2)")
    ap.add_argument("--check-bs", type=int, default=32, help="batch size of the full checks")
    ap.add_argument("--tile-config", choices=["sglang", "fixed512"], default="sglang",
                    help="copy-kernel tile: sglang's stride heuristic, or 512 B / 4 warps")
    ap.add_argument("--reps", type=int, default=100,
                    help="calls per median of the device, graph and span times")
    ap.add_argument("--host-reps", type=int, default=2000, help="calls per median of the host time")
    ap.add_argument("--min-reps", type=int, default=20,
                    help="fewest calls per median where the budget cuts them")
    ap.add_argument("--budget-s", type=float, default=1.0,
                    help="time one measurement may take before it uses fewer calls")
    ap.add_argument("--sync-every", type=int, default=16,
                    help="host timing: synchronise (outside the timed region) every N calls")
    ap.add_argument("--flush-mib", type=int, default=256, help="size of the L2 flush buffer")
    ap.add_argument("--flush-kind", choices=("dirty", "clean"), default="dirty",
                    help="leave the flushed L2 dirty (zeros written) or clean (read back)")
    ap.add_argument("--copy-gib", type=float, default=2.0, help="size of the bandwidth copy")
    ap.add_argument("--max-gib", type=float, default=64.0, help="skip pools larger than this")
    ap.add_argument("--compile-procs", type=int, default=max(1, min(12, (os.cpu_count() or 4) - 4)),
                    help="parallel Triton compile workers (0: compile in the main process, "
                         "with no budget)")
    ap.add_argument("--compile-budget-s", type=float, default=270.0,
                    help="give up on Triton compiles unfinished this long after the start")
    ap.add_argument("--time-limit-s", type=float, default=390.0,
                    help="measure no late-compiled sglang configuration past this run time")
    ap.add_argument("--inproc-max-size-upper", type=int, default=512, help=argparse.SUPPRESS)
    ap.add_argument("--inproc-compile-ms", type=float, default=500.0, help=argparse.SUPPRESS)
    ap.add_argument("--no-profiler", action="store_true",
                    help="skip the device-time column (torch.profiler/CUPTI); the floor's copy "
                         "bandwidth then comes from events")
    ap.add_argument("--compile-only", action="store_true",
                    help="only compile sglang's specializations into --triton-cache-dir (with "
                         "--compile-budget-s), for a later run with the same --triton-cache-dir")
    ap.add_argument("--triton-cache-dir",
                    help="use this Triton cache (default: a fresh temp dir); one made elsewhere "
                         "(--compile-only, then carried) is pointed at its new place first")
    ap.add_argument("--extract-only", action="store_true",
                    help="check the sglang sources and print the plan; needs no torch or GPU")
    ap.add_argument("--compile-worker", metavar="SPEC", help=argparse.SUPPRESS)
    # Options of earlier versions (do_bench-based timing), accepted and ignored.
    for old in ("--warmup-ms", "--rep-ms", "--b2b-iters"):
        ap.add_argument(old, type=float, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.compile_worker:
        return args
    if args.compile_only and not args.triton_cache_dir:
        ap.error("--compile-only needs --triton-cache-dir (a fresh temporary cache is deleted)")
    if args.sets < 2:
        ap.error("--sets must be at least 2 (rotation, and a graph replay is checked on set 1)")
    if args.min_reps < 1 or args.reps < 1 or args.host_reps < 1 or args.sync_every < 1:
        ap.error("--reps, --host-reps, --min-reps and --sync-every must be positive")
    return args


def extract_only(args: argparse.Namespace) -> int:
    src_dir = pathlib.Path(args.sglang_src)
    try:
        sources = extract_sglang_kernels(src_dir)
    except (OSError, ValueError, SyntaxError) as e:
        print(f"sglang columns would be skipped: {e}")
        sources = {}
    for k in sources.values():
        print(f"{k.name}: {k.file} lines {k.first_line}-{k.last_line}, "
              f"{len(k.text.splitlines())} lines, sha256 {k.sha256}")
        print("   " + " | ".join(k.text.splitlines()[:2]))
    consts, why = find_tile_constants(src_dir)
    print(f"copy tile ({args.tile_config}): {why if args.tile_config == 'sglang' else 'fixed 512/4'}")
    kinds = [k == "tree" for k in args.kinds]
    print(f"bs {args.bs}, kinds {args.kinds}, W {args.w}, tree drafts {args.tree_drafts}, "
          f"{args.sets} input sets, checks at bs {args.check_bs}")
    n_cfg = 0
    for layout in (LAYOUTS[n] for n in args.layouts):
        rb = layout.row_bytes()
        print(f"  {layout.name}: {layout.desc}; {len(rb)} buffers, {sum(rb)} B per slot; "
              f"copy config {kv_copy_config(rb[0], args.tile_config, consts)}")
        for tree in kinds:
            sizes = []
            for bs in args.bs:
                nd = args.tree_drafts if tree else args.w
                slots = 1 + (bs + 3) * (64 + nd + 8) + 64 + 64  # make_case's, plus the margin
                gib = slots * sum(rb) / 2**30
                sizes.append(f"bs {bs}: {gib:.2f} GiB" + (" (skipped: > --max-gib)"
                                                           if gib > args.max_gib else ""))
                n_cfg += 1
            print(f"    {'tree' if tree else 'chain'} pools (estimate): " + ", ".join(sizes))
    infos = {t: assumed_case_info(t, args.w, args.tree_drafts) for t in (False, True)}
    jobs, _ = plan_jobs(args, infos, consts)
    groups = group_jobs(jobs, args.check_bs)
    print(f"{n_cfg} configurations; {sum(len(g) for g in groups)} sglang kernel specializations "
          f"(pool_len and index dtypes assumed here; the GPU run takes them from make_case) in "
          f"{len(groups)} compile workers, at most {args.compile_procs} at a time, budget "
          f"{args.compile_budget_s:.0f} s:")
    for g in groups:
        print("  worker: " + "; ".join(job_label(j) for j in g))
    print(f"per measurement: device/graph/span {args.reps} calls, host {args.host_reps} calls, "
          f"fewer (>= {args.min_reps}) past {args.budget_s:g} s")
    print("targets:")
    for line in report.target_legend():
        print(line)
    return 0


def compile_only(args: argparse.Namespace, workdir: pathlib.Path) -> int:
    """--compile-only: every specialization of the planned run into the cache."""
    t0 = time.monotonic()
    try:
        sources = extract_sglang_kernels(pathlib.Path(args.sglang_src))
    except (OSError, ValueError, SyntaxError) as e:
        print(f"bench_move --compile-only: {e}", file=sys.stderr)
        return 2
    write_kernel_file(sources, workdir)
    consts, _ = find_tile_constants(pathlib.Path(args.sglang_src))
    import_gpu_stack()
    sys.path.insert(0, str(PYTHON_DIR / "tests"))
    infos = {t: case_info(t, args.w, args.tree_drafts) for t in (False, True)}
    jobs, _ = plan_jobs(args, infos, consts)
    groups = group_jobs(jobs, args.check_bs)
    pool = CompilePool(groups, workdir, max(1, args.compile_procs), t0 + args.compile_budget_s)
    pool.start()
    log(f"compiling {sum(len(g) for g in groups)} specializations in {len(groups)} workers into "
        f"{args.triton_cache_dir} (budget {args.compile_budget_s:.0f} s) ...")
    keys = [j["key"] for g in groups for j in g]
    try:
        while True:
            st = pool.wait(keys, t0 + args.compile_budget_s)
            if st != "failed" or all(v["status"] in ("ready", "failed", "timeout")
                                     for v in pool.summary().values()):
                break
            time.sleep(1.0)  # one failed: wait for the others all the same
    finally:
        pool.stop()
    for line in compile_lines(pool, [], fresh=False):
        out(line)
    out(f"compile-only: {time.monotonic() - t0:.0f} s")
    return 0 if all(v["status"] == "ready" for v in pool.summary().values()) else 1


def relocate_triton_cache(cache_dir: str) -> int:
    """Points a Triton cache made elsewhere (--compile-only on another host or
    in another folder) at where it is now: Triton's group files name their
    artifacts by absolute path, and an entry whose paths do not exist is a
    miss. Returns the number of group files rewritten."""
    root = pathlib.Path(cache_dir).resolve()
    fixed = 0
    for grp in root.glob("*/__grp__*.json"):
        try:
            data = json.loads(grp.read_text())
            paths = data["child_paths"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        moved = {name: str(grp.parent / pathlib.Path(old).name) for name, old in paths.items()}
        if moved != paths and all(pathlib.Path(p).exists() for p in moved.values()):
            data["child_paths"] = moved
            tmp = grp.with_suffix(".tmp")
            tmp.write_text(json.dumps(data))
            tmp.replace(grp)
            fixed += 1
    return fixed


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.compile_worker:
        return compile_worker(args.compile_worker)
    if args.extract_only:
        return extract_only(args)
    # The cache must be chosen before Triton is first imported (the workers inherit it).
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="bench-move-"))
    fresh = args.triton_cache_dir is None
    cache_dir = str(workdir / "triton-cache") if fresh else os.path.abspath(args.triton_cache_dir)
    if not fresh and os.path.isdir(cache_dir):
        n = relocate_triton_cache(cache_dir)
        if n:
            log(f"triton cache {cache_dir}: {n} entries made elsewhere now point here")
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    if "triton" in sys.modules:
        log("warning: triton was imported before TRITON_CACHE_DIR was set")
    try:
        if args.compile_only:
            return compile_only(args, workdir)
        return run_gpu(args, workdir, cache_dir, fresh)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
