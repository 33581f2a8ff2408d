//===- KVCacheABI.h - facts shared by the lowering and the runtime -*- C
//-*-===//
//
// The binary contracts of the kvcache dialect that both the compiler (which
// generates code against them) and the MLIR-free runtime (which allocates and
// reads the buffers) must agree on: the status record, the buffer table and
// the move workspace. Plain C so the runtime can include it without MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef KVCACHE_KVCACHEABI_H
#define KVCACHE_KVCACHEABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Version of the binary contract between the compiler and the runtime: the
/// manifest specc writes carries it and the runtime refuses an image of any
/// other version. Bump it whenever anything in this file changes meaning.
#define KVCACHE_ABI_VERSION 8

/// Layout of the `status` record written by checked ops: memref<4xi64> for
/// the stage ops, memref<8xi64> (all fields) for kvcache.move_accepted_tokens.
enum KVCacheStatusField {
  KVCACHE_STATUS_CODE = 0,  ///< 0 = no violation, else a KVCacheStatusCode
  KVCACHE_STATUS_ENTRY = 1, ///< request, row or entry the violation is about
  KVCACHE_STATUS_VALUE = 2, ///< the offending value
  KVCACHE_STATUS_BOUND = 3, ///< the bound it broke
  KVCACHE_STATUS_FIELDS = 4,
  /// kvcache.move_accepted_tokens only: requests skipped for bad input.
  KVCACHE_STATUS_SKIPPED = 4,
  /// kvcache.move_accepted_tokens only: entries moved (source != target).
  KVCACHE_STATUS_MOVED = 5,
  /// kvcache.move_accepted_tokens only: the path the move took (a
  /// KVCacheMovePath).
  KVCACHE_STATUS_PATH = 6,
  KVCACHE_STATUS_RESERVED = 7,
  KVCACHE_MOVE_STATUS_FIELDS = 8
};

/// Layout of the `report` record of kvcache.move_accepted_tokens
/// (memref<8xi64>): violations that outlive the execution that found them,
/// so that a caller that never waits still learns of each one. Unlike
/// `status`, it is not rewritten by every execution: an execution that finds
/// no violation leaves it alone; one that finds a violation updates it as a
/// sequence lock (SEQUENCE odd while it writes, then even again, two more
/// than before), so a reader on another processor (the host, reading mapped
/// memory while kernels run) sees either a whole record or an odd count.
enum KVCacheReportField {
  /// 2 x the number of executions that found a violation (odd: an update
  /// is in progress).
  KVCACHE_REPORT_SEQUENCE = 0,
  /// The latest such execution: its status code, entry, value and bound
  /// (KVCACHE_STATUS_CODE .. KVCACHE_STATUS_BOUND) and its skipped requests.
  KVCACHE_REPORT_CODE = 1,
  KVCACHE_REPORT_ENTRY = 2,
  KVCACHE_REPORT_VALUE = 3,
  KVCACHE_REPORT_BOUND = 4,
  KVCACHE_REPORT_SKIPPED = 5,
  /// Written by the caller, read by an execution that found a violation:
  /// nonzero asks it to trap (stop like a failed device assertion) once the
  /// record is written.
  KVCACHE_REPORT_TRAP = 6,
  KVCACHE_REPORT_RESERVED = 7,
  KVCACHE_REPORT_FIELDS = 8
};

/// How kvcache.move_accepted_tokens moved the rows of a call.
enum KVCacheMovePath {
  /// Nothing to move (every source equals its target, or no request is valid).
  KVCACHE_PATH_NONE = 0,
  /// Every hazard stays inside one request: one thread per (request, buffer,
  /// 16-byte slice) gathers the request's rows in registers, then scatters.
  KVCACHE_PATH_PER_REQUEST = 1,
  /// Some row is shared between requests: moved through staging, in depth
  /// order when the batch is large (see kvcache.move_rows).
  KVCACHE_PATH_STAGED = 2,
};

/// Error codes of the status record. Stable: the runtime prints them.
enum KVCacheStatusCode {
  KVCACHE_OK = 0,
  /// req_pool_indices[entry] = value is outside [0, bound = max_reqs).
  KVCACHE_ERR_REQ_POOL_INDEX = 1,
  /// num_correct_drafts[entry] = value is negative (bound = 0).
  KVCACHE_ERR_NEGATIVE_DRAFTS = 2,
  /// seq_lens[entry] + acc = value exceeds bound = pool_len (or seq_lens < 0).
  KVCACHE_ERR_SEQ_RANGE = 3,
  /// accept_index flat entry holds value outside [0, bound =
  /// len(out_cache_loc)).
  KVCACHE_ERR_ACCEPT_INDEX = 4,
  /// Row entry of accept_index has value non-sentinel entries, bound = acc.
  KVCACHE_ERR_ACCEPT_COUNT = 5,
  /// Accepted tokens in all (value) exceed the target list size (bound).
  KVCACHE_ERR_TARGETS_OVERFLOW = 6,
  /// A moved slot (value) of entry lies outside [0, bound = slots) of a buffer.
  KVCACHE_ERR_SLOT = 7,
  /// value moved rows form or feed cycles of sources and targets, more than
  /// the GPU move can stage at once (bound).
  KVCACHE_ERR_STAGING_CAPACITY = 8,
  /// Request entry accepts value tokens, more than the bound = D slots of its
  /// verify window (targets taken from the window).
  KVCACHE_ERR_WINDOW_RANGE = 9,
};

/// Columns of the `buffers` table (memref<?x3xi64>) of kvcache.move_rows.
enum KVCacheBufferColumn {
  KVCACHE_BUFFER_ADDRESS = 0,
  KVCACHE_BUFFER_ROW_BYTES = 1,
  KVCACHE_BUFFER_SLOTS = 2,
  KVCACHE_BUFFER_COLUMNS = 3
};

/// Workspace of kvcache.move_rows (overlap = gather_then_scatter) for n
/// entries, as the GPU lowering uses it (all offsets in bytes):
///   [0, 16)                 i32 counters: moving entries, overlapping
///                           entries, entries on or feeding a cycle
///   list   = 16             i32 [n] move list: overlapping entries in
///                           non-increasing depth from the front, the other
///                           moving entries from the back
///   next   = list + 4n      i32 [2n] pointer-jumping successors (two buffers)
///   rank   = next + 8n      i32 [2n] pointer-jumping distances (two buffers)
///   hist   = rank + 8n      i32 [n + 2] entries per depth, then their offsets
///   keys   = align8(hist + 4(n + 2))   i64 [P] set of moved targets
///   values = keys + 8P      i32 [P] entry that writes each target
/// with P = the power of two >= max(64, 2n). The depth of an entry is the
/// length of the chain "my source is written by entry j, whose source is
/// written by entry k, ...": moving entries in non-increasing depth order
/// read every row before the entry that overwrites it writes.
static inline int64_t kvcacheMoveHashCapacity(int64_t n) {
  int64_t p = 64;
  while (p < 2 * n)
    p *= 2;
  return p;
}
static inline int64_t kvcacheMoveListOffset(void) { return 16; }
static inline int64_t kvcacheMoveNextOffset(int64_t n) { return 16 + 4 * n; }
static inline int64_t kvcacheMoveRankOffset(int64_t n) { return 16 + 12 * n; }
static inline int64_t kvcacheMoveHistOffset(int64_t n) { return 16 + 20 * n; }
static inline int64_t kvcacheMoveHistEndOffset(int64_t n) {
  return kvcacheMoveHistOffset(n) + 4 * (n + 2);
}
static inline int64_t kvcacheMoveKeysOffset(int64_t n) {
  return (kvcacheMoveHistEndOffset(n) + 7) / 8 * 8;
}
static inline int64_t kvcacheMoveValuesOffset(int64_t n) {
  return kvcacheMoveKeysOffset(n) + 8 * kvcacheMoveHashCapacity(n);
}
static inline int64_t kvcacheMoveWorkspaceBytes(int64_t n) {
  return kvcacheMoveValuesOffset(n) + 4 * kvcacheMoveHashCapacity(n);
}

/// The kernel parameters and host arguments a generated entry point may take,
/// by name. The lowering writes the names of an entry's parameters, in
/// order, into the manifest; the runtime binds each name to its value. This
/// list is the only place the two agree on: X(ENUM, name, kind) with kind
/// `tensor` (a data pointer; on the host a memref), `scratch` (runtime-owned
/// device memory) or `scalar` (an i64).
#define KVCACHE_FOREACH_PARAM(X)                                               \
  X(REQ_POOL_INDICES, req_pool_indices, tensor)                                \
  X(REQ_TO_TOKEN, req_to_token, tensor)                                        \
  X(SEQ_LENS, seq_lens, tensor)                                                \
  X(NUM_CORRECT_DRAFTS, num_correct_drafts, tensor)                            \
  X(ACCEPT_INDEX, accept_index, tensor)                                        \
  X(OUT_CACHE_LOC, out_cache_loc, tensor)                                      \
  X(BUFFERS, buffers, scratch)                                                 \
  X(WORKSPACE, workspace, scratch)                                             \
  X(STATUS, status, scratch)                                                   \
  X(REPORT, report, scratch)                                                   \
  X(BATCH, bs, scalar)                                                         \
  X(ACCEPT_WIDTH, accept_width, scalar)                                        \
  X(MAX_REQS, max_reqs, scalar)                                                \
  X(POOL_LEN, pool_len, scalar)                                                \
  X(NUM_OUT_CACHE_LOC, num_out_cache_loc, scalar)                              \
  X(NUM_BUFFERS, num_buffers, scalar)                                          \
  X(ROW_VECTORS, row_vectors, scalar)                                          \
  X(MIN_SLOTS, min_slots, scalar)

enum KVCacheParam {
#define KVCACHE_PARAM_ENUM(e, name, kind) KVCACHE_PARAM_##e,
  KVCACHE_FOREACH_PARAM(KVCACHE_PARAM_ENUM)
#undef KVCACHE_PARAM_ENUM
      KVCACHE_NUM_PARAMS
};

/// Where kvcache.move_accepted_tokens takes the target slots from (the
/// `targets` attribute, as the manifest writes it).
#define KVCACHE_FOREACH_TARGET_SOURCE(X)                                       \
  X(REQ_TO_TOKEN, req_to_token)                                                \
  X(WINDOW, window)

/// Workspace of kvcache.move_accepted_tokens (GPU lowering) for n = bs * W
/// entries, in bytes. It must be zero before its first use and is never
/// reset by the host: each launch past the local capacity leaves it ready
/// for the next (KVCacheFusedControl), with no count-out at its end.
///   [0, 64)              control words and totals (KVCacheFusedControl,
///                        KVCacheFusedTotal)
///   targets = 64         i64 [n] target of entry i * W + j (j < acc_i)
///   sources = 64 + 8n    i64 [n] its source; entries that move nothing hold
///                        the same value in both
///   plan    = 64 + 16n   the kvcache.move_rows workspace for n entries
///                        (depth plan of batches whose rows cross requests)
///   claims  = plan + kvcacheMoveWorkspaceBytes(n)
///                        u64 [Q] slot claims (KVCacheClaimWord), Q = the
///                        power of two >= max(64, 8n)
static inline int64_t kvcacheFusedTargetsOffset(void) { return 64; }
static inline int64_t kvcacheFusedSourcesOffset(int64_t n) {
  return 64 + 8 * n;
}
static inline int64_t kvcacheFusedPlanOffset(int64_t n) { return 64 + 16 * n; }
static inline int64_t kvcacheFusedClaimsOffset(int64_t n) {
  return kvcacheFusedPlanOffset(n) + kvcacheMoveWorkspaceBytes(n);
}
static inline int64_t kvcacheFusedClaimsCapacity(int64_t n) {
  int64_t q = 64;
  while (q < 8 * n)
    q *= 2;
  return q;
}
static inline int64_t kvcacheFusedWorkspaceBytes(int64_t n) {
  return kvcacheFusedClaimsOffset(n) + 8 * kvcacheFusedClaimsCapacity(n);
}

/// A word of the slot-claim table of a launch past the local capacity (an
/// open-addressing hash set of the slots its moving entries write or read,
/// filled during validation by every block, so that hazards across requests
/// are found where the entries are made, not by one block afterwards):
///   bits  0-31  the slot
///   bits 32-52  the request: the writer's, else the (first) reader's
///   bit  53     some entry writes the slot
///   bits 54-55  readers: 0 none, 1 all of them from the request field,
///               2 or 3 several requests
///   bits 56-63  the launch's tag, 1 + (epoch mod 254): a word with any
///               other tag, or without writer and readers, is free. In a
///               launch whose verdict moves, the blocks that waited for
///               it zero the Q words once they have it (a grid of one
///               block leaves them), so that the next launch of the same
///               n takes each word at its first compare-and-swap (which
///               expects zero). Other words (a launch that stopped early,
///               another n's lists, whatever else the memory held) are
///               free or, by a tag that repeats every 254 launches, count
///               as claims, which can only add conflicts, never hide one.
/// A claim that finds the slot written twice, written by one request and
/// read by another, or is still open after KVCACHE_CLAIM_PROBES swaps,
/// marks the launch suspect; the planner then checks the batch as if there
/// were no claims. Batches with more than 2^21 requests or slots past 2^32
/// make no claims.
enum KVCacheClaimWord {
  KVCACHE_CLAIM_REQUEST_SHIFT = 32,
  KVCACHE_CLAIM_REQUEST_BITS = 21,
  KVCACHE_CLAIM_WRITER_BIT = 53,
  KVCACHE_CLAIM_READERS_SHIFT = 54,
  KVCACHE_CLAIM_TAG_SHIFT = 56,
  KVCACHE_CLAIM_TAGS = 254,
  KVCACHE_CLAIM_PROBES = 64,
};

/// Control words of the fused workspace (i64 indices), used by launches
/// past the local capacity only. Each holds an epoch in its high 32 bits:
/// the number of such launches before this one, modulo 2^32.
///   CLAIM  epoch << 32 | tickets drawn. Block b validates chunk b of
///          requests (if there is one), then the chunks that its tickets
///          name: a block draws tickets (atomic add of 1) until it draws
///          one that names no chunk, ticket t naming chunk blocks + t.
///          So the launch draws max(chunks, blocks) tickets in all; the
///          block that draws the last one stores (epoch + 1) << 32, the
///          next launch's initial value.
///   FLAG   epoch << 32 | verdict, published by the planner (release).
///          The other blocks wait until FLAG's epoch is their own and its
///          verdict nonzero; a verdict of an earlier launch (an older
///          epoch) or a fresh workspace (all zero) reads as "not yet".
enum KVCacheFusedControl {
  KVCACHE_CTRL_CLAIM = 0,
  KVCACHE_CTRL_FLAG = 1,
};
/// Totals of the fused workspace (i64 indices, after the control words):
/// the blocks' moved entries and skipped requests; INT64_MAX minus the
/// lowest bad request (0: none; combined with atomic max); SUSPECT, the
/// blocks whose slot claims found a possible hazard; and PROGRESS,
/// which each block that validated a chunk adds once: its chunks (bits
/// 0-31), plus 2^32 if it moved anything and 2^48 if it skipped a request
/// or found a suspect claim.
/// The block whose addition completes the chunk count plans: it reads the
/// other totals (only when some block moved or skipped) and sets every
/// total back to zero for the next launch, all other blocks having added
/// theirs. Waiting blocks poll PROGRESS too: bits 0-47 equal to the chunk
/// count mean that no block moved, so the verdict is "nothing moves"; in a
/// launch that claims its slots, bits 0-31 equal to it and bits 48-63 zero
/// mean that nothing is left to check, so the verdict is "per request".
enum KVCacheFusedTotal {
  KVCACHE_TOTAL_MOVED = 2,
  KVCACHE_TOTAL_SKIPPED = 3,
  KVCACHE_TOTAL_FIRST_BAD = 4,
  KVCACHE_TOTAL_PROGRESS = 5,
  KVCACHE_TOTAL_SUSPECT = 6,
};
/// The bit fields of PROGRESS (their low bits): a block's chunks, whether
/// it moved, whether it skipped a request or found a suspect claim.
enum KVCacheFusedProgress {
  KVCACHE_PROGRESS_MOVED_BIT = 32,
  KVCACHE_PROGRESS_SKIPPED_BIT = 48,
};

#ifdef __cplusplus
}
#endif

#endif // KVCACHE_KVCACHEABI_H
