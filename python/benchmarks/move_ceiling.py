"""How fast the bare row copy of a call can be, on this GPU: the bytes the
benchmark's configurations move, copied by small hand-written CUDA kernels
that do nothing else (no validation, no hazard check: the moving (target,
source) pairs are resolved on the host), beside specc's own call on the
same inputs and buffers.

It answers two questions about the `512 lim` target (bench_move.py):
whether the scattered rows of a pool can be copied near the sequential
copy bandwidth that the floor assumes, and what the copy's speed depends
on (threads resident per SM, 16-byte loads in flight per thread).

The register kernels (CuPy, compiled by NVRTC at start-up): work item = (moving
entry, buffer, 16-byte column), item k of a thread's U items at index
t + k * stride (grid-stride), all U loads issued before the U stores.
The grid is either two blocks of 256 threads per SM (16 warps per SM,
the fused kernel's residency at 128 registers) or eight (full
residency). On sm_90 the bulk kernels (--bulk K ...) move whole rows
instead: lane 0 of each warp copies a row with one cp.async.bulk each
way through a ring of K row slots in shared memory, at 8 or 16 warps
per SM. The staged and serial models (--staged-delays) ask what a move
could gain by reading its sources while it validates: each block loads
as many of its rows as its shared memory holds (cp.async) before a
stand-in validation of D us and a grid-wide barrier, and writes them
after it; the serial model copies everything after the same wait; the
L2 model prefetches rows into L2 (--l2-mib in all) before the wait and
copies everything after it, as the fused kernel's waiting blocks do. Device
time: CUDA events around one launch after an L2 flush (256 MiB of zeros
written, as bench_move.py does by default, or read back with
--flush-kind clean), the launch queued behind a spin kernel so that the host's
launch cost is not timed; median of --reps, minus the same for an empty
kernel. Each kernel is first checked byte-exact against torch's
indexing.

Usage (GPU host): python3 benchmarks/move_ceiling.py [--layouts ...] [--bs ...]
"""

import argparse
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.append(str(pathlib.Path(__file__).resolve().parents[1]))  # an installed specc first
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

import torch  # noqa: E402

import bench_move  # noqa: E402
from bench_move import (LAYOUTS, SpeccPath, make_buffers, make_inputs,  # noqa: E402
                        slots_needed)

bench_move.torch = torch  # its GPU stack is imported late (import_gpu_stack)

# How each source below is built (-D values); tests/test_ceiling_kernels.py
# compiles the same builds for sm_90 without a GPU, reading these literals.
UNROLLS = (1, 4, 8)  # SOURCE: 16-byte loads in flight per thread
BULK_SLOTS = (4, 8)  # BULK_SOURCE: row slots per warp (--bulk's default)
STAGED_UNROLL = 4  # STAGED_SOURCE

SOURCE = r"""
extern "C" __global__ void copy_rows(const long long* __restrict__ tgt,
                                     const long long* __restrict__ src, int moving,
                                     const long long* __restrict__ bases, int row_vectors,
                                     long long row_bytes, long long items) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < items;
       t += stride * UNROLL) {
    uint4 v[UNROLL];
    char* to[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      long long it = t + k * stride;
      to[k] = nullptr;
      if (it < items) {
        int c = (int)(it % row_vectors);
        long long rest = it / row_vectors;
        int e = (int)(rest % moving);
        int b = (int)(rest / moving);
        char* base = (char*)bases[b];
        v[k] = *(const uint4*)(base + src[e] * row_bytes + 16 * c);
        to[k] = base + tgt[e] * row_bytes + 16 * c;
      }
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k)
      if (to[k]) *(uint4*)to[k] = v[k];
  }
}
extern "C" __global__ void empty() {}
"""

BULK_SOURCE = r"""
// Bulk asynchronous copies (sm_90): lane 0 of each warp moves whole rows
// through a ring of K row slots in shared memory, one cp.async.bulk per row
// each way. A slot is refilled once the store that read it has read it
// (bulk_group accounting), so up to K rows per warp are in flight whatever
// the registers hold.
extern "C" __global__ void bulk_rows(const long long* __restrict__ tgt,
                                     const long long* __restrict__ src, int moving,
                                     const long long* __restrict__ bases,
                                     long long row_bytes, long long rows_total) {
  extern __shared__ __align__(128) unsigned char stage[];
  __shared__ __align__(8) unsigned long long bars[32 * K];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane != 0) return;
  long long gw = (long long)blockIdx.x * (blockDim.x / 32) + warp;
  long long nw = (long long)gridDim.x * (blockDim.x / 32);
  long long n = gw < rows_total ? (rows_total - gw + nw - 1) / nw : 0;
  unsigned slots = (unsigned)__cvta_generic_to_shared(stage + (size_t)warp * K * row_bytes);
  unsigned bar = (unsigned)__cvta_generic_to_shared(bars + warp * K);
  for (int k = 0; k < K; ++k)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar + 8 * k));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  unsigned rb = (unsigned)row_bytes;
  auto load = [&](long long i) {
    long long r = gw + i * nw;
    int e = (int)(r % moving);
    long long b = r / moving;
    const char* from = (const char*)bases[b] + src[e] * row_bytes;
    unsigned s = (unsigned)(i % K);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(bar + 8 * s), "r"(rb) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(slots + s * rb), "l"(from), "r"(rb), "r"(bar + 8 * s) : "memory");
  };
  for (long long i = 0; i < n && i < K; ++i) load(i);
  for (long long i = 0; i < n; ++i) {
    unsigned s = (unsigned)(i % K);
    unsigned parity = (unsigned)((i / K) & 1);
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(bar + 8 * s), "r"(parity) : "memory");
    long long r = gw + i * nw;
    int e = (int)(r % moving);
    long long b = r / moving;
    char* to = (char*)bases[b] + tgt[e] * row_bytes;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 :: "l"(to), "r"(slots + s * rb), "r"(rb) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (i >= 1 && i - 1 + K < n) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      load(i - 1 + K);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
"""

STAGED_SOURCE = r"""
// Staged (sm_80+): a model of a move that reads its sources while it is
// still validating. Block k owns rows [k R / G, (k + 1) R / G) of the R
// (buffer, moving entry) rows. Its thread 0 reads the global timer first;
// then every thread issues cp.async loads (16 bytes each, no register held
// until they land) of as many of the block's rows as its shared memory
// holds (`cap_rows`); then thread 0 spins until `delay_ns` have passed
// since its first reading (a stand-in for validation and the verdict, which
// the loads overlap) and arrives at a grid-wide barrier (every block is
// resident: the grid is sized so). After the barrier the block stores the
// staged rows and copies the rest through registers, UNROLL 16-byte loads
// in flight per thread. With cap_rows = 0 it is the serial model: the
// whole copy after the barrier. With prefetch_l2 it is the L2 model: the
// block's first cap_rows rows are brought into L2 (prefetch.global.L2, one
// per 128-byte line, nothing held in the SM) before the wait, and every
// row is copied through registers after the barrier. Index arithmetic in
// 32 bits (R and the pieces per block fit): a 64-bit division is a
// subroutine call.
extern "C" __global__ void staged_rows(const long long* __restrict__ tgt,
                                       const long long* __restrict__ src, unsigned moving,
                                       const long long* __restrict__ bases, unsigned row_vectors,
                                       long long row_bytes, unsigned rows_total,
                                       unsigned cap_rows, long long delay_ns,
                                       unsigned* counter, unsigned arrive_target,
                                       unsigned prefetch_l2) {
  extern __shared__ __align__(16) uint4 stage[];
  unsigned long long t0 = 0;
  if (threadIdx.x == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  unsigned lo = (unsigned)((unsigned long long)rows_total * blockIdx.x / gridDim.x);
  unsigned hi = (unsigned)((unsigned long long)rows_total * (blockIdx.x + 1) / gridDim.x);
  unsigned ahead = hi - lo < cap_rows ? hi - lo : cap_rows;
  // Rows held in shared memory until the stores (none in the L2 model).
  unsigned staged = prefetch_l2 ? 0 : ahead;
  unsigned pieces = staged * row_vectors;
  if (prefetch_l2) {
    unsigned lines = (unsigned)((row_bytes + 127) / 128) + 1;  // a row may straddle one more
    for (unsigned p = threadIdx.x; p < ahead * lines; p += blockDim.x) {
      unsigned r = lo + p / lines, l = p % lines;
      unsigned e = r % moving, b = r / moving;
      unsigned long long row = (unsigned long long)bases[b] + src[e] * row_bytes;
      unsigned long long at = (row & ~127ull) + 128ull * l;
      if (at < row + row_bytes) asm volatile("prefetch.global.L2 [%0];" :: "l"(at));
    }
  }
  for (unsigned p = threadIdx.x; p < pieces; p += blockDim.x) {
    unsigned r = lo + p / row_vectors, c = p % row_vectors;
    unsigned e = r % moving, b = r / moving;
    const char* from = (const char*)bases[b] + src[e] * row_bytes + 16 * c;
    unsigned to = (unsigned)__cvta_generic_to_shared(stage + p);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(to), "l"(from) : "memory");
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
  if (threadIdx.x == 0) {
    unsigned long long t;
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < (unsigned long long)delay_ns);
    __threadfence();
    atomicAdd(counter, 1u);
    while (*(volatile unsigned*)counter - arrive_target > 0x80000000u) {}
  }
  __syncthreads();
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  for (unsigned p = threadIdx.x; p < pieces; p += blockDim.x) {
    unsigned r = lo + p / row_vectors, c = p % row_vectors;
    unsigned e = r % moving, b = r / moving;
    *(uint4*)((char*)bases[b] + tgt[e] * row_bytes + 16 * c) = stage[p];
  }
  unsigned rest = (hi - lo - staged) * row_vectors;
  unsigned first = (lo + staged) * row_vectors;
  for (unsigned p = threadIdx.x; p < rest; p += blockDim.x * UNROLL) {
    uint4 v[UNROLL];
    char* to[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      unsigned q = p + k * blockDim.x;
      to[k] = nullptr;
      if (q < rest) {
        unsigned r = (first + q) / row_vectors, c = (first + q) % row_vectors;
        unsigned e = r % moving, b = r / moving;
        char* base = (char*)bases[b];
        v[k] = *(const uint4*)(base + src[e] * row_bytes + 16 * c);
        to[k] = base + tgt[e] * row_bytes + 16 * c;
      }
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k)
      if (to[k]) *(uint4*)to[k] = v[k];
  }
}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layouts", nargs="+", default=["llama70b-tp8", "mla", "llama8b", "qwen32b"])
    ap.add_argument("--bs", type=int, nargs="+", default=[512])
    ap.add_argument("--w", type=int, default=4)
    ap.add_argument("--tree-drafts", type=int, default=8)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--flush-kind", choices=["dirty", "clean"], default="dirty")
    ap.add_argument("--bulk", type=int, nargs="*", default=list(BULK_SLOTS),
                    help="row slots per warp of the bulk-copy kernels (sm_90), none to skip")
    ap.add_argument("--no-specc", action="store_true", help="time the hand kernels only")
    ap.add_argument("--staged-delays", type=float, nargs="*", default=[0.0, 3.5, 6.6],
                    help="us of stand-in validation for the staged and serial models "
                         "(sm_80+), none to skip")
    ap.add_argument("--l2-mib", type=int, default=24,
                    help="MiB of source rows the L2 model prefetches (the fused kernel's budget)")
    ap.add_argument("--staged-kib", type=int, default=110,
                    help="shared memory per block of the staged model (two blocks per SM)")
    args = ap.parse_args()

    import cupy as cp

    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    kernels = {u: cp.RawModule(code=SOURCE, options=("-DUNROLL=%d" % u,)) for u in UNROLLS}
    bulk = {}
    if props.major >= 9 and args.bulk:
        bulk = {k: cp.RawModule(code=BULK_SOURCE, options=("-DK=%d" % k, "-std=c++17"))
                for k in args.bulk}
    staged_fn = None
    if props.major >= 8 and args.staged_delays:
        staged_fn = cp.RawModule(code=STAGED_SOURCE, options=("-DUNROLL=%d" % STAGED_UNROLL,)).get_function(
            "staged_rows")
        staged_fn.max_dynamic_shared_size_bytes = args.staged_kib * 1024
    arrivals = torch.zeros(1, dtype=torch.int32, device="cuda")
    empty = kernels[1].get_function("empty")
    cache = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def flush():
        cache.zero_()
        if args.flush_kind == "clean":
            flush.sink = cache.view(torch.int64).sum()

    def timed(launch, spin: int = 40000) -> float:
        """`spin` cycles of a spin kernel run before the launch's events, so
        that the launch is queued before the GPU gets there: more than the
        host takes to make the call."""
        ts = []
        for _ in range(args.reps):
            flush()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(spin)
            a.record()
            launch()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) * 1e3)
        return statistics.median(ts)

    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)  # noqa
    base_us = timed(lambda: empty((1,), (32,), (), stream=stream))
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    big2 = torch.empty_like(big)
    copy_gbs = 2 * big.numel() / (timed(lambda: big2.copy_(big)) * 1e-6) / 1e9
    del big, big2
    print(f"# {props.name}, {sms} SMs; copy_ {copy_gbs:.0f} GB/s (read+write, 1 GiB); "
          f"empty kernel {base_us:.2f} us (events); flush {args.flush_kind}")
    specc = None
    if not args.no_specc:
        try:
            import specc as specc_mod
            specc = specc_mod
        except ImportError as e:
            print(f"# specc not importable ({e}): hand kernels only")
    print("| layout | bs | moved rows | MB | floor us | kernel | us | GB/s | x floor |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    for name in args.layouts:
        layout = LAYOUTS[name]
        for bs in args.bs:
            inp = make_inputs(bs, args.w, True, args.tree_drafts, 1, 1234, targets="window")[0]
            bufs = make_buffers(layout, slots_needed([inp]), 99)
            row_bytes = layout.row_bytes()
            assert len(set(row_bytes)) == 1 and row_bytes[0] % 16 == 0, "one 16-byte row size"
            rb = row_bytes[0]
            mv = inp.tgt != inp.src
            src = inp.src[mv].contiguous()
            moving = int(src.numel())
            # The hand kernels copy the call's moving sources to as many
            # other random slots, none of them a source or a target of the
            # call: a request's entries may read a row that a later entry
            # writes (specc moves them in order), and these kernels keep
            # no order.
            used = set(inp.tgt.tolist()) | set(inp.src.tolist()) | {0}
            pool = torch.randperm(bufs[0].shape[0], generator=torch.Generator().manual_seed(5))
            fresh = [x for x in pool.tolist() if x not in used][:moving]
            tgt = torch.tensor(fresh, dtype=torch.int64, device="cuda")
            rows = [b.view(torch.uint8).reshape(b.shape[0], -1) for b in bufs]
            mb = 2 * moving * rb * len(bufs) / 1e6
            floor_us = mb * 1e3 / copy_gbs
            bases = torch.tensor([b.data_ptr() for b in bufs], dtype=torch.int64, device="cuda")
            items = moving * (rb // 16) * len(bufs)
            snap = [r.clone() for r in rows]
            want = [r.clone() for r in rows]
            for w_ in want:
                w_[tgt] = w_[src]
            # specc's own call, on the call's targets.
            want_specc = [r.clone() for r in rows]
            for w_ in want_specc:
                w_[inp.tgt] = w_[inp.src]

            def restore() -> None:
                for r, s_ in zip(rows, snap):
                    r.copy_(s_)

            def exact(launch, want=want) -> bool:
                """One launch on the buffers as they were, compared with
                `want`; the buffers are put back either way."""
                launch()
                torch.cuda.synchronize()
                ok = all(torch.equal(r, w_) for r, w_ in zip(rows, want))
                restore()
                return ok

            def row(label, us):
                gbs = mb * 1e6 / (us * 1e-6) / 1e9 if us > 0 else float("nan")
                print(f"| {name} | {bs} | {moving} | {mb:.1f} | {floor_us:.1f} | {label} | "
                      f"{us:.1f} | {gbs:.0f} | {us / floor_us:.2f} |", flush=True)

            def kernel(label, fn, grid, block, argv, smem=0):
                """One hand kernel: checked exact on the buffers as they
                were, then timed (the buffers put back after)."""
                argv = tuple(cp.asarray(a) if isinstance(a, torch.Tensor) else a for a in argv)

                def launch():
                    fn((grid,), (block,), argv, stream=stream, shared_mem=smem)

                if exact(launch):
                    row(label, timed(launch) - base_us)
                    restore()
                else:
                    row(label + " WRONG", 0)

            for u in UNROLLS:
                fn = kernels[u].get_function("copy_rows")
                for per_sm in (2, 8):
                    block = 256
                    grid = min(sms * per_sm, max(1, -(-items // (block * u))))
                    argv = (tgt, src, cp.int32(moving), bases, cp.int32(rb // 16),
                            cp.int64(rb), cp.int64(items))
                    kernel(f"hand u{u}, {per_sm * block // 32} warps/SM", fn, grid, block, argv)
            for k_, mod in bulk.items():
                fn = mod.get_function("bulk_rows")
                for per_sm, block in ((2, 256), (1, 256), (4, 128)):
                    smem = (block // 32) * k_ * rb
                    if smem * per_sm > 200 * 1024:
                        continue
                    fn.max_dynamic_shared_size_bytes = smem
                    grid = min(sms * per_sm, max(1, -(-moving * len(bufs) // (block // 32))))
                    argv = (tgt, src, cp.int32(moving), bases, cp.int64(rb),
                            cp.int64(moving * len(bufs)))
                    kernel(f"bulk K{k_}, {per_sm * block // 32} warps/SM ({per_sm} x {block})",
                           fn, grid, block, argv, smem)
            if staged_fn is not None:
                smem = args.staged_kib * 1024
                grid = 2 * sms
                rows_total = moving * len(bufs)
                cap = smem // rb
                share = -(-rows_total // grid)
                # The L2 model's budget, shared by the grid's blocks.
                cap_l2 = (args.l2_mib << 20) // (grid * rb)
                for delay in args.staged_delays:
                    for label, cap_rows, l2 in (("staged", cap, 0), ("serial", 0, 0),
                                                ("l2", cap_l2, 1)):
                        argv = [cp.asarray(tgt), cp.asarray(src), cp.uint32(moving),
                                cp.asarray(bases), cp.uint32(rb // 16), cp.int64(rb),
                                cp.uint32(rows_total), cp.uint32(cap_rows),
                                cp.int64(int(delay * 1e3)), cp.asarray(arrivals), None,
                                cp.uint32(l2)]

                        def launch(argv=argv):
                            # The barrier waits for this launch's arrivals:
                            # the counter only grows, by `grid` a launch.
                            launch.epoch += 1
                            argv[-2] = cp.uint32((launch.epoch * grid) & 0xFFFFFFFF)
                            staged_fn((grid,), (256,), tuple(argv), stream=stream,
                                      shared_mem=smem)

                        launch.epoch = int(arrivals.item()) // grid
                        frac = min(1.0, cap_rows / share) if share else 1.0
                        name_ = (f"{label} {delay:g} us, {frac:.0%} of rows "
                                 + ("in L2 ahead" if l2 else "staged"))
                        if exact(launch):
                            row(name_, timed(launch) - base_us)
                            restore()
                        else:
                            row(name_ + " WRONG", 0)
            if specc is not None:
                # The call as bench_move.py makes it (its argument order).
                call = SpeccPath(specc, bufs, "window").bind(inp)
                ok = exact(call, want_specc)
                row("specc" if ok else "specc WRONG", timed(call, spin=2_000_000) - base_us)
            del bufs, rows, snap, want, want_specc
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
