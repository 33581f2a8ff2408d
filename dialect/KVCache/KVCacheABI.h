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

/// Layout of the `status` record (memref<4xi64>) written by checked ops.
enum KVCacheStatusField {
  KVCACHE_STATUS_CODE = 0,  ///< 0 = no violation, else a KVCacheStatusCode
  KVCACHE_STATUS_ENTRY = 1, ///< request, row or entry the violation is about
  KVCACHE_STATUS_VALUE = 2, ///< the offending value
  KVCACHE_STATUS_BOUND = 3, ///< the bound it broke
  KVCACHE_STATUS_FIELDS = 4
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
static inline int64_t kvcacheMoveKeysOffset(int64_t n) {
  return (kvcacheMoveHistOffset(n) + 4 * (n + 2) + 7) / 8 * 8;
}
static inline int64_t kvcacheMoveValuesOffset(int64_t n) {
  return kvcacheMoveKeysOffset(n) + 8 * kvcacheMoveHashCapacity(n);
}
static inline int64_t kvcacheMoveWorkspaceBytes(int64_t n) {
  return kvcacheMoveValuesOffset(n) + 4 * kvcacheMoveHashCapacity(n);
}

#ifdef __cplusplus
}
#endif

#endif // KVCACHE_KVCACHEABI_H
