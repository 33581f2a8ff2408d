//===- KVCacheOps.td - kvcache operations -----------------*- tablegen -*-===//
//
// The three stages of move_accept_tokens_to_target_kvcache as ops on memrefs.
// Each op's description is its specification: the lowerings in
// lib/Conversion implement exactly what is written here.
//
//===----------------------------------------------------------------------===//

#ifndef KVCACHE_OPS
#define KVCACHE_OPS

include "KVCache/IR/KVCacheDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def KVCache_AssignTargetsOp : KVCache_Op<"assign_targets"> {
  let summary = "segmented gather of the target slots of the accepted tokens";
  let description = [{
    For `bs` requests, with `acc_i = num_correct_drafts[i] + 1` accepted tokens
    for request `i` and `off_i = acc_0 + ... + acc_{i-1}` (an exclusive prefix
    sum), writes

    ```
    targets[off_i + j] = req_to_token[req_pool_indices[i], seq_lens[i] + j]   for j < acc_i
    targets[k]         = 0                                                    for k >= off_bs
    ```

    so every entry of `targets` is written. `targets` must hold at least
    `off_bs` entries (at most `bs * W` in a real call).

    Operands: `req_pool_indices`, `seq_lens`, `num_correct_drafts` are rank-1
    memrefs of `bs` entries; `req_to_token` is the `[max_reqs, pool_len]`
    table; `targets` is rank 1. Each may hold i32 or i64 values; loads are
    sign-extended to i64 and stores truncate to the element type of `targets`.

    `checked` adds bounds checks: `req_pool_indices[i]` in `[0, max_reqs)`,
    `num_correct_drafts[i] >= 0`, `seq_lens[i] >= 0`,
    `seq_lens[i] + acc_i <= pool_len` and `off_bs <= size(targets)`. A
    violation is recorded in `status` (a `memref<4xi64>` holding the error
    code, the offending request or entry, the value and the bound; codes are
    listed in `KVCache/KVCacheABI.h`) unless an earlier violation is already
    recorded; the offending request writes nothing out of bounds. A checked
    op requires a `status` buffer; `status[0] == 0` means no violation.

    Example:

    ```mlir
    kvcache.assign_targets %rpi, %req_to_token, %seq_lens, %ncd into %tgt
        checked status(%st : memref<4xi64>)
        : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi32> into memref<?xi64>
    ```
  }];
  let arguments = (ins
    Arg<AnyMemRef, "request row of each request", [MemRead]>:$req_pool_indices,
    Arg<AnyMemRef, "slot of each token position of each request row", [MemRead]>:$req_to_token,
    Arg<AnyMemRef, "committed tokens of each request", [MemRead]>:$seq_lens,
    Arg<AnyMemRef, "accepted drafts of each request", [MemRead]>:$num_correct_drafts,
    Arg<AnyMemRef, "target slots (output)", [MemWrite]>:$targets,
    UnitAttr:$checked,
    Arg<Optional<AnyMemRef>, "error record (output)", [MemRead, MemWrite]>:$status);
  let assemblyFormat = [{
    $req_pool_indices `,` $req_to_token `,` $seq_lens `,` $num_correct_drafts
    `into` $targets (`checked` $checked^)? (`status` `(` $status^ `:` type($status) `)`)?
    attr-dict `:` type($req_pool_indices) `,` type($req_to_token) `,`
    type($seq_lens) `,` type($num_correct_drafts) `into` type($targets)
  }];
  let hasVerifier = 1;
}

def KVCache_CompactSourcesOp : KVCache_Op<"compact_sources", [AttrSizedOperandSegments]> {
  let summary = "compacting gather of the source slots, dropping sentinels";
  let description = [{
    Walks `accept_index` (`[bs, W]`) in row-major order. The k-th entry that
    is not `sentinel`, with value `a`, gives `sources[k] = out_cache_loc[a]`.
    Entries of `sources` past the number of such entries are set to 0, so
    every entry is written. `sources` must hold `bs * W` entries.

    `sentinel` is an attribute (sglang pads with -1) and must be negative,
    so that it never names a position of `out_cache_loc`.

    `checked` adds bounds checks: every non-sentinel value in
    `[0, size(out_cache_loc))`, and the number of non-sentinel entries of
    row `i` equal to `counts[i] + 1` (`counts` is `num_correct_drafts`, the
    fact that keeps the sources aligned with the targets of
    `kvcache.assign_targets`). Violations are recorded in `status` as for
    `kvcache.assign_targets`; an out-of-bounds position is never read.
    `counts` is required by, and only used by, a checked op.

    Example:

    ```mlir
    kvcache.compact_sources %accept_index, %out_cache_loc into %src sentinel -1
        counts(%ncd : memref<?xi32>) checked status(%st : memref<4xi64>)
        : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
    ```
  }];
  let arguments = (ins
    Arg<AnyMemRef, "positions of the accepted tokens, sentinel-padded", [MemRead]>:$accept_index,
    Arg<AnyMemRef, "slot of each verified draft token", [MemRead]>:$out_cache_loc,
    Arg<AnyMemRef, "source slots (output)", [MemWrite]>:$sources,
    DefaultValuedAttr<I64Attr, "-1">:$sentinel,
    Arg<Optional<AnyMemRef>, "accepted drafts per request, for checks", [MemRead]>:$counts,
    UnitAttr:$checked,
    Arg<Optional<AnyMemRef>, "error record (output)", [MemRead, MemWrite]>:$status);
  let assemblyFormat = [{
    $accept_index `,` $out_cache_loc `into` $sources `sentinel` $sentinel
    (`counts` `(` $counts^ `:` type($counts) `)`)?
    (`checked` $checked^)? (`status` `(` $status^ `:` type($status) `)`)?
    attr-dict `:` type($accept_index) `,` type($out_cache_loc) `into` type($sources)
  }];
  let hasVerifier = 1;
}

def KVCache_MoveRowsOp : KVCache_Op<"move_rows", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "move KV rows from source slots to target slots in every buffer";
  let description = [{
    `buffers` is a `[B, 3]` table of i64 describing B KV buffers, one row per
    buffer: (base address, row size in bytes, number of slots). Buffer `b`
    holds row `s` at bytes `[addr_b + s * rowbytes_b, addr_b + (s+1) * rowbytes_b)`.
    Row sizes may differ between buffers (K and V of different head dims,
    fp8 rows of 64 bytes, MLA pools of one buffer per layer).

    For every buffer `b` and every `i < size(targets)`, row `targets[i]` of
    `b` becomes what row `sources[i]` of `b` held before the op began:

    ```
    old = copy of every buffer
    buf_b[targets[i]] = old_b[sources[i]]     for all b, i
    ```

    Entries with `sources[i] == targets[i]` (the zero padding of the two slot
    lists, and every entry of a chain-shaped draft) change nothing and are
    skipped. Targets must be distinct; with duplicates, such a row ends up
    holding one of its sources and no other row changes.

    `overlap` states what the caller guarantees:
    * `gather_then_scatter` (default): any overlap is allowed; a row that is
      both a source and another entry's target (topk > 1 trees) is read
      before it is overwritten. Implementations may use `workspace` (i8,
      at least `kvcache::getMoveWorkspaceBytes(size(targets))` bytes, contents
      on entry irrelevant) to classify those rows; it is required.
    * `disjoint`: no source is another entry's target; rows are copied
      directly and `workspace` must be absent.

    `checked` verifies, before any row is written, that every moved slot lies
    in `[0, slots_b)` of every buffer and that no earlier op recorded an error
    in `status`; on any violation (recorded or found) no buffer is changed.
    A GPU lowering also records an error, and changes nothing, when more
    rows form or feed cycles of moves (row a to b, b to a) than it can
    stage at once; chains of any length are always moved exactly.

    Example:

    ```mlir
    kvcache.move_rows %buffers, %src, %tgt overlap <gather_then_scatter>
        workspace(%ws : memref<?xi8>) checked status(%st : memref<4xi64>)
        : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
    ```
  }];
  let arguments = (ins
    Arg<AnyMemRef, "table of (address, row bytes, slots) per buffer", [MemRead]>:$buffers,
    Arg<AnyMemRef, "source slot of each entry", [MemRead]>:$sources,
    Arg<AnyMemRef, "target slot of each entry", [MemRead]>:$targets,
    DefaultValuedAttr<KVCache_OverlapPolicyAttr,
                      "::mlir::kvcache::OverlapPolicy::GatherThenScatter">:$overlap,
    Arg<Optional<AnyMemRef>, "scratch for hazard classification", [MemRead, MemWrite]>:$workspace,
    UnitAttr:$checked,
    Arg<Optional<AnyMemRef>, "error record (in/out)", [MemRead, MemWrite]>:$status);
  let assemblyFormat = [{
    $buffers `,` $sources `,` $targets `overlap` $overlap
    (`workspace` `(` $workspace^ `:` type($workspace) `)`)?
    (`checked` $checked^)? (`status` `(` $status^ `:` type($status) `)`)?
    attr-dict `:` type($buffers) `,` type($sources) `,` type($targets)
  }];
  let hasVerifier = 1;
}

def KVCache_MoveAcceptedTokensOp : KVCache_Op<"move_accepted_tokens",
    [AttrSizedOperandSegments, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "the whole KV move of one verify step, per request, in one op";
  let description = [{
    The three stages (`kvcache.assign_targets`, `kvcache.compact_sources`,
    `kvcache.move_rows`) as one op, with each request handled on its own.
    `kvcache-fuse` forms it from the three ops; the specification of the
    function is `docs/semantics.md`.

    For `bs` requests, `W` columns of `accept_index`, and request `i` with
    `acc_i = num_correct_drafts[i] + 1`:

    ```
    tgt(i, j) = req_to_token[req_pool_indices[i], seq_lens[i] + j]   targets = req_to_token
    tgt(i, j) = out_cache_loc[i * D + j], D = size(out_cache_loc) / bs    targets = window
    src(i, j) = out_cache_loc[a], a the j-th non-sentinel entry of row i of accept_index
    for every buffer b, all (i, j < acc_i) at once (gather, then scatter):
        buf_b[tgt(i, j)] = old_b[src(i, j)]
    ```

    This is the composition of the three ops whenever the count invariant
    holds (row `i` of `accept_index` has exactly `acc_i` non-sentinel
    entries): the global compaction of `kvcache.compact_sources` and the
    per-request one above then give the same (target, source) pairs.

    Every bound is checked, per request, without overflow: `acc_i` in
    `[1, W]` and equal to the row's count, every non-sentinel position in
    `[0, size(out_cache_loc))`, `req_pool_indices[i]` in `[0, max_reqs)` and
    `0 <= seq_lens[i] <= pool_len - acc_i` (req_to_token), `acc_i <= D`
    (window), and every target and source slot in `[0, slots_b)` of every
    buffer. A request that breaks one moves none of its rows; every other
    request moves exactly. `status` (memref<8xi64>, fields in
    `KVCache/KVCacheABI.h`) is rewritten whole by every execution: the first
    violation by request order (or zeros), the number of skipped requests,
    the number of moved entries and the path taken.

    The optional `report` (memref<8xi64>, `KVCacheReportField`) keeps what
    `status` forgets at the next execution: each execution that finds a
    violation counts itself in it and leaves its first violation there
    (a sequence lock, readable while executions run), and executions without
    one do not touch it. When its `trap` field is nonzero, an execution that
    finds a violation stops after recording it, like a failed device
    assertion. A caller that does not wait for an execution learns of its
    violation from the report at any later time.

    Entries whose source equals their target move nothing and are skipped (a
    chain-shaped draft moves zero bytes). Targets must be distinct; with
    duplicates such a row ends up holding one of its sources, 16 bytes at a
    time, and no other row changes.

    `workspace` (i8, at least `kvcacheFusedWorkspaceBytes(bs * W)` bytes) is
    scratch of the GPU lowering; it must be zeroed once before first use.

    `req_pool_indices`, `req_to_token` and `seq_lens` are present exactly
    when `targets = <req_to_token>`. Index operands may hold i32 or i64,
    each independently.

    Example:

    ```mlir
    kvcache.move_accepted_tokens targets <req_to_token>
        rows(%rpi, %req_to_token, %seq_lens : memref<?xi64>, memref<?x?xi32>, memref<?xi64>)
        drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1
        slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
        workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
        report(%report : memref<8xi64>)
    ```
  }];
  let arguments = (ins
    KVCache_TargetSourceAttr:$targets,
    Arg<Optional<AnyMemRef>, "request row of each request", [MemRead]>:$req_pool_indices,
    Arg<Optional<AnyMemRef>, "slot of each token position of each request row", [MemRead]>:$req_to_token,
    Arg<Optional<AnyMemRef>, "committed tokens of each request", [MemRead]>:$seq_lens,
    Arg<AnyMemRef, "accepted drafts of each request", [MemRead]>:$num_correct_drafts,
    Arg<AnyMemRef, "positions of the accepted tokens, sentinel-padded", [MemRead]>:$accept_index,
    DefaultValuedAttr<I64Attr, "-1">:$sentinel,
    Arg<AnyMemRef, "slot of each verified draft token", [MemRead]>:$out_cache_loc,
    Arg<AnyMemRef, "table of (address, row bytes, slots) per buffer", [MemRead]>:$buffers,
    Arg<AnyMemRef, "scratch of the GPU lowering", [MemRead, MemWrite]>:$workspace,
    Arg<AnyMemRef, "status record (output)", [MemWrite]>:$status,
    Arg<Optional<AnyMemRef>, "violations across executions", [MemRead, MemWrite]>:$report);
  let assemblyFormat = [{
    `targets` $targets
    (`rows` `(` $req_pool_indices^ `,` $req_to_token `,` $seq_lens `:`
        type($req_pool_indices) `,` type($req_to_token) `,` type($seq_lens) `)`)?
    `drafts` `(` $num_correct_drafts `:` type($num_correct_drafts) `)`
    `accept` `(` $accept_index `:` type($accept_index) `)` `sentinel` $sentinel
    `slots` `(` $out_cache_loc `:` type($out_cache_loc) `)`
    `buffers` `(` $buffers `:` type($buffers) `)`
    `workspace` `(` $workspace `:` type($workspace) `)`
    `status` `(` $status `:` type($status) `)`
    (`report` `(` $report^ `:` type($report) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

#endif // KVCACHE_OPS
