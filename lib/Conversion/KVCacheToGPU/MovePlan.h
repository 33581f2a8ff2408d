//===- MovePlan.h - the depth plan of a gather-then-scatter move -*- C++
//-*-===//
//
// The plan phase of a row move whose rows overlap, shared by kvcache.move_rows
// (its plan kernel) and kvcache.move_accepted_tokens (its planner block):
// a table from each moved target to the entry writing it, then each entry's
// depth by pointer jumping and the move list in non-increasing depth. The
// copy phase (MoveCopy.h) follows that list. Workspace offsets come from
// KVCacheABI.h.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_LIB_CONVERSION_KVCACHETOGPU_MOVEPLAN_H
#define SPECC_LIB_CONVERSION_KVCACHETOGPU_MOVEPLAN_H

#include "KernelBuilder.h"

namespace mlir::kvcache {

/// Entry i's source or target slot, as i64.
using SlotFn = llvm::function_ref<Value(Value)>;

/// Emits the plan phase of one block of `blockSize` threads over `n`
/// entries, with the kvcache.move_rows workspace (KVCacheABI.h) at `ws`.
class MovePlan {
public:
  MovePlan(KernelBuilder &k, Value ws, Value n, int64_t blockSize,
           StringRef sharedPrefix);
  /// A table only (insertTargets and writerOf; no plan()): `keys` (of
  /// `keyType`, i64 or i32) and `values` (i32) of 2^log2Capacity entries,
  /// anywhere (shared memory). i32 keys hold slots below 2^31 only.
  MovePlan(KernelBuilder &k, Value keys, Value values, int64_t log2Capacity,
           Value n, int64_t blockSize, StringRef sharedPrefix, Type keyType);

  /// Clears the table and the shared counters; ends with a barrier.
  void init();
  /// Maps every moving entry's target (source != target) to the entry that
  /// writes it; stores i32 1 at `duplicate` (when given) if a target is
  /// written by two entries. Ends with a barrier.
  void insertTargets(SlotFn src, SlotFn tgt, Value duplicate);
  /// Maps target `t` (i64) to `writer` (i32), one thread's entry; stores
  /// i32 1 at `duplicate` (when given) if `t` is mapped already. No
  /// barrier: the caller orders it after the clearing and before lookups.
  void insert(Value t, Value writer, Value duplicate);
  /// A table's keys cleared by one thread of the block (`thread`), in
  /// straight-line code (the table-only constructor's capacity is a
  /// constant); no barrier.
  void clearKeys(Value thread);
  /// The entry writing slot `s` (i64), or -1.
  Value writerOf(Value s);
  /// After insertTargets: depths, the move list and the counters (moving,
  /// overlapping, cyclic entries) at the head of the workspace. Ends with a
  /// barrier.
  void plan(SlotFn src, SlotFn tgt);

  Value list() { return listBuf; }

private:
  Value home(Value key);
  Value nextSlot(Value h);
  Value counter(int64_t c);
  Value loadKey(Value h);
  unsigned keyBytes() { return keyTy.getIntOrFloatBitWidth() / 8; }
  Value atomicAdd(Value ptr, Value v);

  KernelBuilder &k;
  Value ws, n, tid, step;
  int64_t blockSize;
  Value listBuf, nextBuf[2], rankBuf[2], hist, keys, values, capacity, log2P;
  Value counters;
  Type keyTy;
  int64_t fixedCapacity = 0; // the table-only constructor's capacity
};

/// kvcacheMoveWorkspaceBytes(n) of KVCacheABI.h as IR: where the
/// kvcache.move_rows workspace for n entries ends, from the layout the
/// workspace constructor uses.
Value moveWorkspaceBytes(KernelBuilder &k, Value n);

} // namespace mlir::kvcache

#endif // SPECC_LIB_CONVERSION_KVCACHETOGPU_MOVEPLAN_H
