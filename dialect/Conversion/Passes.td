//===- Passes.td - kvcache lowering passes ----------------*- tablegen -*-===//
//
// The two lowerings of the kvcache dialect: to GPU kernels (then NVVM, PTX,
// cubin through upstream passes) and to host loops (then LLVM, a host object).
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_CONVERSION_PASSES
#define SPECC_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def KVCacheToGPU : Pass<"kvcache-to-gpu", "ModuleOp"> {
  let summary = "Lower kvcache ops to GPU kernels with bare-pointer parameters";
  let description = [{
    Every kvcache op inside a `func.func @F` becomes one or two `gpu.func`
    kernels in the `gpu.module` named by `module-name` (created when
    missing), and the host functions are removed: the specc runtime launches
    the kernels, following the `kvcache.launch` attribute each kernel carries
    (block size, grid rule, dynamic shared memory, tile bytes).

    Kernel parameters are bare `!llvm.ptr<1>` pointers with `llvm.align` and
    `llvm.noalias` attributes, followed by i64 scalars, never memref
    descriptors. Addresses are computed in 64-bit arithmetic.

    * `kvcache.assign_targets` -> `@F_assign_targets` (one block of
      `scan-block-size` threads): each thread takes one request per round; a
      block-wide exclusive scan (warp shuffles, then one warp over the warp
      totals) gives `off_i`, a carry chains the rounds; the request writes its
      `acc_i` targets; the block then zero-fills `[off_bs, size)`.
        params: (rpi, req_to_token, seq_lens, ncd, targets, status,
                 bs, max_reqs, pool_len, size)
    * `kvcache.compact_sources` -> `@F_compact_sources` (one block): each
      thread counts the non-sentinel entries of one row, the same block scan
      gives the row's first output position, the thread writes the row's
      sources; then the tail is zero-filled.
        params: (accept_index, out_cache_loc, counts, sources, status,
                 bs, W, n_out_cache_loc)
    * `kvcache.move_rows` (gather_then_scatter) -> `@F_move_plan` (one block)
      and `@F_move_copy`. The plan checks every moved slot, maps each moved
      target to the entry writing it (an open-addressing table in the
      workspace), gives each entry its depth (the length of the chain "my
      source is written by j, whose source is written by k, ..."; pointer
      jumping; infinite on cycles) and writes the move list: entries of
      depth >= 1, deepest first, then the others. The copy runs one block
      per (row tile of `tile-bytes`, buffer): it moves the depth >= 1 entries
      in chunks through shared memory (read chunk, barrier, write chunk,
      barrier), then copies the depth-0 entries directly. A row is read
      before the entry overwriting it writes, and blocks own disjoint bytes,
      so the result is exactly gather-then-scatter; only rows on or feeding
      a cycle must fit one chunk (else an error and no write). Rows whose
      base and size are multiples of 16 bytes move as 16-byte vectors,
      other rows byte by byte.
        plan params: (buffers, sources, targets, workspace, status, n, B)
        copy params: (buffers, sources, targets, workspace, status, n)
      With `disjoint`, the copy kernel alone runs, reading every entry.
    * `kvcache.move_accepted_tokens` -> `@F` (the function's own name: the
      entry point, launched once per call; `block` = `copy-block-size`,
      grid by the work `bs x ceil(buffers / 2) x row vectors`, clamped to
      the blocks that fit at once). Plan: each request is validated on its own (a bad
      one is skipped) and writes its (target, source) pairs; a verdict says
      whether every hazard stays inside its request. Batches of at most
      `4 x block` entries are planned by every block in shared memory: up
      to `block` lanes (L lanes a request, L the power of two >= W <= 32)
      with a thread per (request, column) whose request's lanes combine
      their columns by warp ballots (short straight-line code: a small
      batch's latency is mostly the fetch of the instructions it runs;
      with window targets, out_cache_loc, up to `3 x block` slots, is copied
      into shared memory by cp.async beside the first loads, so that both
      slots of every entry are read from there after one barrier: one
      memory round trip instead of two), larger ones with a thread per
      request in rounds of `block`;
      larger ones are validated by every block, a chunk of `block` requests
      at a time taken from a counter in the workspace, and planned there by
      the block that validates the last chunk, while the others wait for
      its verdict (relaxed polls, then one acquire fence: an acquire load
      per poll would invalidate the L1 of the SM it shares with a working
      block). While a block that drew no chunk waits, its warps 1 to 7
      read the first requests' inputs unvalidated (every index bounded, so
      that no address leaves its tensor or a buffer's first min_slots
      rows) and prefetch into L2 every line of each moving entry's source
      row in every buffer, within 24 MiB counted as (W + 1) / 2 entries of
      a request moving every buffer's widest row: the move takes the
      lowest requests first, and a prefetch changes no byte. A large batch's
      hazards are found as the entries are made: each moving entry of a
      chunk compares its source with its request's earlier
      targets (warp shuffles) and claims its target as written and its
      source as read in the workspace's claim table (one 64-bit word per
      slot, tagged with the launch, changed by compare-and-swap only, so
      that of two claims on a slot the second sees the first: a target
      written twice, or a slot written by one request and read by another,
      marks the block suspect). When no block is suspect the planner skips
      its check. Otherwise, or when the batch makes no claims (more than
      2^21 requests, slots past 2^32, W > 32), the planner prefetches the
      lists into L1 and, up to `8 x block` entries whose slots fit in 31
      bits, checks them with a hash table of i32 keys in shared memory;
      larger batches, and any it finds unsafe (whose depth plan needs it),
      with the workspace's table.
      A batch that moves nothing skips the hazard check, and so does a
      batch of one request whose entries fit one group of four (the move
      loads a group, in every buffer of a task, before it stores any of it,
      on the byte path as well). A small batch's
      check has no loop: its table's keys are cleared during validation,
      each lane inserts its own moving entry's target (writer i * 32 + j)
      and, after one barrier, looks up its source. During a local batch's
      validation, block 0 prefetches the buffer table into L2, so that the
      move's first read of it (a memory round trip after an L2 flush) runs
      under validation and the check; a small batch that moves also has the
      warps without request columns prefetch into L2, before the check,
      the moving sources' rows of the block's buffers (`bid`, `bid` +
      grid, ..., up to 32, whose table rows the last warp copied into
      shared memory during validation: the blocks cover every buffer even
      when one request's work makes the grid far smaller than the buffer
      count), so that the move's row loads find them there. Move: a
      safe batch runs one thread per (request, two buffers, 16-byte slice),
      or per (request, four buffers, slice) when the grid cannot hold a
      thread per two-buffer task (grid thread x takes the x-th such pair,
      then every grid-th after it); otherwise every moving entry's 16 bytes
      are staged in registers per (buffer, column) block, in depth order for
      large batches. The status record is written whole by one block; with
      a `report` operand, that block also updates the report on a violation
      (volatile system-scope stores between fences: the runtime maps it in
      host memory) and traps when its `trap` field is set. Nothing follows
      the move: the control words carry an epoch (the block that draws a
      launch's last claim ticket starts the next one, the planner zeroes the
      totals it reads, a verdict counts only with the waiter's epoch), so no
      block counts out at its end.
        params: (req_pool_indices, req_to_token, seq_lens [req_to_token
                 only], num_correct_drafts, accept_index, out_cache_loc,
                 buffers, workspace, status, [report], bs, accept_width,
                 [max_reqs, pool_len], num_out_cache_loc, num_buffers,
                 row_vectors, min_slots), by name in the manifest.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
  let options = [
    Option<"moduleName", "module-name", "std::string", "\"specc_kernels\"",
           "Name of the gpu.module that receives the kernels">,
    Option<"scanBlockSize", "scan-block-size", "int64_t", "512",
           "Threads of the one-block kernels (a multiple of 32, at most 1024)">,
    Option<"copyBlockSize", "copy-block-size", "int64_t", "256",
           "Threads of a row-move block">,
    Option<"tileBytes", "tile-bytes", "int64_t", "64",
           "Bytes of each row a row-move block owns (a multiple of 16)">,
    Option<"stagingBytes", "staging-bytes", "int64_t", "98304",
           "Dynamic shared memory of a row-move block for overlapping rows">,
  ];
}

def KVCacheOutlineCold : Pass<"kvcache-outline-cold", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Move the rarely taken branches of the kernels into device functions";
  let description = [{
    The kernels of kvcache-to-gpu mark the branches that a common call never
    takes (a large batch's chunked validation, planning and wait for the
    planner's verdict; the report of a violation; the staged move of a batch
    with hazards across requests; the byte path of rows that are not 16-byte
    aligned) with `kvcache.cold`. This
    pass moves the then-region of each such `scf.if` into an internal
    `llvm.func` of the same `gpu.module` (`passthrough = ["noinline"]`,
    named `<kernel>__cold<N>`; the values the region uses from above become
    its arguments, constants are cloned into it) and calls it there with
    `llvm.call`. A cold branch yields no value.

    Why: ptxas lays every branch out where it stands in the control flow,
    whatever its weights, and a call runs from an L2 cache that the previous
    work has flushed, so each instruction-cache miss along the taken path is
    a memory round trip. Out of line, the common path is one short run of
    instructions that the fetch unit streams. A cold branch costs a call
    (its live values pass through the parameter space) when it is taken,
    and the call sites cost the kernel registers (ptxas keeps the calling
    convention's registers free).

    Fails, where the branch is, if a marked branch cannot be outlined.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def KVCacheToLoops : Pass<"kvcache-to-loops", "ModuleOp"> {
  let summary = "Lower kvcache ops to sequential host loops";
  let description = [{
    Rewrites each kvcache op into `scf.for` loops over its memrefs, for
    execution on the host (the CPU path, and the executed tests):

    * `kvcache.assign_targets`: `off = 0; for i: for j < acc_i:
      targets[off++] = req_to_token[rpi[i], seq_lens[i] + j]`, then zeros.
    * `kvcache.compact_sources`: `k = 0; for i, j: if a != sentinel:
      sources[k++] = out_cache_loc[a]`, then zeros.
    * `kvcache.move_rows`: per buffer, every moved row is copied into a
      temporary (`memref.alloc`), then every temporary row is written to its
      target: gather-then-scatter by construction.
    * `kvcache.move_accepted_tokens`: `status` is zeroed; each request is
      checked in the order of the op's description, stops at its first
      failed check and is then skipped (the record keeps the batch's first
      violation); a valid request writes its (target, source) pairs into a
      plan (`memref.alloc`, `(0, 0)` for every other entry). Then `skipped`,
      `moved` and `path` (a quadratic search for rows shared between
      requests) are stored, and per buffer the rows of the moving entries of
      all valid requests are gathered into one temporary, then scattered to
      their targets. `workspace` is not used. With a `report`, a call
      that found a violation updates it (sequence odd, fields, sequence
      even) and, when its `trap` field is set, executes `llvm.intr.trap`
      before any row moves.

    Checked ops test every bound before the access it guards and record the
    first violation in `status`; a checked move tests every slot of every
    entry before its first write and does nothing when `status` holds an
    error.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect"];
}

#endif // SPECC_CONVERSION_PASSES
