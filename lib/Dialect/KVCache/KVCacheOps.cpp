//===- KVCacheOps.cpp - kvcache op verifiers ------------------------------===//
//
// Verifiers of the kvcache ops. Operands are declared as any memref in ODS so
// that every rule below reports its own message naming the operand by its
// role; each rule has a case in test/Dialect/KVCache/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#include "KVCache/IR/KVCache.h"
#include "KVCache/KVCacheABI.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>

using namespace mlir;
using namespace mlir::kvcache;

#define GET_OP_CLASSES
#include "KVCache/IR/KVCacheOps.cpp.inc"

namespace {
/// The most entries (bs * W, or the length of a slot list) one call may
/// have: the workspace layouts index entries with i32, and the runtime
/// refuses larger calls (lib/Runtime/Mover.cpp). Static shapes past it are
/// rejected here, which also keeps every size computed from them in int64.
constexpr int64_t kMaxEntries = INT32_MAX;

/// Checks that a memref operand is laid out the way every lowering reads it:
/// the identity layout (dense, row-major, no offset) in the default memory
/// space. The GPU kernels take bare pointers and index them densely, so any
/// other layout or memory space would be read wrongly.
LogicalResult verifyPlainMemRef(Operation *op, Value value, StringRef role) {
  auto type = cast<MemRefType>(value.getType());
  if (type.getLayout().isIdentity() && !type.getMemorySpace())
    return success();
  return op->emitOpError() << "'" << role
                           << "' must have the identity layout and the "
                              "default memory space, got "
                           << type;
}

/// verifyPlainMemRef for each (operand, role) pair, in order; absent
/// optional operands are skipped.
LogicalResult verifyPlainMemRefs(
    Operation *op,
    std::initializer_list<std::pair<Value, StringRef>> operands) {
  for (auto [value, role] : operands)
    if (value && failed(verifyPlainMemRef(op, value, role)))
      return failure();
  return success();
}

/// Checks that a static entry count stays within kMaxEntries.
LogicalResult verifyEntryCount(Operation *op, Value value, StringRef role) {
  int64_t n = cast<MemRefType>(value.getType()).getDimSize(0);
  if (ShapedType::isDynamic(n) || n <= kMaxEntries)
    return success();
  return op->emitOpError() << "'" << role << "' has " << n
                           << " entries, more than the " << kMaxEntries
                           << " (2^31 - 1) one call supports";
}

/// Checks that `value` is a memref of i32 or i64 of rank `rank`.
LogicalResult verifyIndexMemRef(Operation *op, Value value, StringRef role,
                                int64_t rank) {
  auto type = cast<MemRefType>(value.getType());
  Type elt = type.getElementType();
  if (!elt.isSignlessInteger(32) && !elt.isSignlessInteger(64))
    return op->emitOpError()
           << "'" << role << "' must hold i32 or i64 values, got " << type;
  if (type.getRank() != rank)
    return op->emitOpError()
           << "'" << role << "' must have rank " << rank << ", got " << type;
  return success();
}

/// Checks that two static extents agree; dynamic extents agree with anything.
LogicalResult verifySameExtent(Operation *op, Value a, unsigned dimA,
                               StringRef roleA, Value b, unsigned dimB,
                               StringRef roleB, StringRef what) {
  int64_t x = cast<MemRefType>(a.getType()).getDimSize(dimA);
  int64_t y = cast<MemRefType>(b.getType()).getDimSize(dimB);
  if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x == y)
    return success();
  return op->emitOpError() << what << " disagree: '" << roleA << "' has " << x
                           << " but '" << roleB << "' has " << y;
}

/// The `checked` attribute and the `status` record come together.
LogicalResult verifyStatus(Operation *op, bool checked, Value status) {
  if (checked && !status)
    return op->emitOpError("'checked' needs a 'status' record to report to");
  if (!checked && status)
    return op->emitOpError(
        "a 'status' record is only written by a 'checked' op");
  if (!status)
    return success();
  // The stage ops write the first fields; a fused op's record (all
  // fields) may be shared with them.
  auto type = cast<MemRefType>(status.getType());
  if (!type.getElementType().isSignlessInteger(64) || type.getRank() != 1 ||
      (type.getDimSize(0) != KVCACHE_STATUS_FIELDS &&
       type.getDimSize(0) != KVCACHE_MOVE_STATUS_FIELDS))
    return op->emitOpError()
           << "'status' must be memref<"
           << static_cast<int>(KVCACHE_STATUS_FIELDS) << "xi64> or memref<"
           << static_cast<int>(KVCACHE_MOVE_STATUS_FIELDS) << "xi64>, got "
           << type;
  return success();
}

/// Checks the (address, row bytes, slots) table of the KV buffers.
LogicalResult verifyBufferTable(Operation *op, Value buffers) {
  auto table = cast<MemRefType>(buffers.getType());
  if (!table.getElementType().isSignlessInteger(64) || table.getRank() != 2 ||
      table.getDimSize(1) != KVCACHE_BUFFER_COLUMNS)
    return op->emitOpError()
           << "'buffers' must be a memref<?x"
           << static_cast<int>(KVCACHE_BUFFER_COLUMNS)
           << "xi64> table of (address, row bytes, slots), got " << table;
  return success();
}
} // namespace

LogicalResult AssignTargetsOp::verify() {
  Operation *op = getOperation();
  if (failed(
          verifyPlainMemRefs(op, {{getReqPoolIndices(), "req_pool_indices"},
                                  {getReqToToken(), "req_to_token"},
                                  {getSeqLens(), "seq_lens"},
                                  {getNumCorrectDrafts(), "num_correct_drafts"},
                                  {getTargets(), "targets"},
                                  {getStatus(), "status"}})))
    return failure();
  if (failed(
          verifyIndexMemRef(op, getReqPoolIndices(), "req_pool_indices", 1)) ||
      failed(verifyIndexMemRef(op, getReqToToken(), "req_to_token", 2)) ||
      failed(verifyIndexMemRef(op, getSeqLens(), "seq_lens", 1)) ||
      failed(verifyIndexMemRef(op, getNumCorrectDrafts(), "num_correct_drafts",
                               1)) ||
      failed(verifyIndexMemRef(op, getTargets(), "targets", 1)))
    return failure();
  if (failed(verifySameExtent(op, getSeqLens(), 0, "seq_lens",
                              getReqPoolIndices(), 0, "req_pool_indices",
                              "batch sizes")) ||
      failed(verifySameExtent(op, getNumCorrectDrafts(), 0,
                              "num_correct_drafts", getReqPoolIndices(), 0,
                              "req_pool_indices", "batch sizes")))
    return failure();
  // Every request accepts at least its bonus token. (A comparison of two
  // extents: no arithmetic that could overflow.)
  int64_t bs = getReqPoolIndices().getType().getDimSize(0);
  int64_t size = getTargets().getType().getDimSize(0);
  if (!ShapedType::isDynamic(bs) && !ShapedType::isDynamic(size) && size < bs)
    return emitOpError() << "'targets' has " << size
                         << " entries, fewer than the " << bs
                         << " requests that each accept at least one token";
  return verifyStatus(op, getChecked(), getStatus());
}

LogicalResult CompactSourcesOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyPlainMemRefs(op, {{getAcceptIndex(), "accept_index"},
                                     {getOutCacheLoc(), "out_cache_loc"},
                                     {getSources(), "sources"},
                                     {getCounts(), "counts"},
                                     {getStatus(), "status"}})))
    return failure();
  if (failed(verifyIndexMemRef(op, getAcceptIndex(), "accept_index", 2)) ||
      failed(verifyIndexMemRef(op, getOutCacheLoc(), "out_cache_loc", 1)) ||
      failed(verifyIndexMemRef(op, getSources(), "sources", 1)))
    return failure();
  int64_t sentinel = getSentinelAttr().getInt();
  if (sentinel >= 0)
    return emitOpError() << "sentinel must be negative so that it never names "
                            "a position of 'out_cache_loc', got "
                         << sentinel;
  MemRefType acc = getAcceptIndex().getType();
  int64_t size = getSources().getType().getDimSize(0);
  if (acc.hasStaticShape()) {
    // bs * W, overflow-checked (getNumElements would wrap).
    std::optional<int64_t> entries =
        llvm::checkedMul(acc.getDimSize(0), acc.getDimSize(1));
    if (!entries || *entries > kMaxEntries)
      return emitOpError() << "'accept_index' has " << acc.getDimSize(0)
                           << " x " << acc.getDimSize(1)
                           << " entries, more than the " << kMaxEntries
                           << " (2^31 - 1) one call supports";
    if (!ShapedType::isDynamic(size) && size != *entries)
      return emitOpError() << "'sources' has " << size
                           << " entries but 'accept_index' holds " << *entries;
  }
  if (Value counts = getCounts()) {
    if (!getChecked())
      return emitOpError("'counts' is only read by a 'checked' op");
    if (failed(verifyIndexMemRef(op, counts, "counts", 1)) ||
        failed(verifySameExtent(op, counts, 0, "counts", getAcceptIndex(), 0,
                                "accept_index", "batch sizes")))
      return failure();
  } else if (getChecked()) {
    return emitOpError("'checked' needs 'counts' (accepted drafts per "
                       "request) to verify the row counts");
  }
  return verifyStatus(op, getChecked(), getStatus());
}

LogicalResult MoveRowsOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyPlainMemRefs(op, {{getBuffers(), "buffers"},
                                     {getSources(), "sources"},
                                     {getTargets(), "targets"},
                                     {getWorkspace(), "workspace"},
                                     {getStatus(), "status"}})))
    return failure();
  if (failed(verifyBufferTable(op, getBuffers())))
    return failure();
  if (failed(verifyIndexMemRef(op, getSources(), "sources", 1)) ||
      failed(verifyIndexMemRef(op, getTargets(), "targets", 1)) ||
      failed(verifySameExtent(op, getSources(), 0, "sources", getTargets(), 0,
                              "targets", "entry counts")) ||
      failed(verifyEntryCount(op, getSources(), "sources")) ||
      failed(verifyEntryCount(op, getTargets(), "targets")))
    return failure();
  Value ws = getWorkspace();
  if (getOverlap() == OverlapPolicy::GatherThenScatter) {
    if (!ws)
      return emitOpError(
          "overlap policy gather_then_scatter needs a 'workspace' buffer");
    auto wsType = cast<MemRefType>(ws.getType());
    if (!wsType.getElementType().isSignlessInteger(8) || wsType.getRank() != 1)
      return emitOpError() << "'workspace' must be a rank-1 memref of i8, got "
                           << wsType;
    // n <= kMaxEntries (checked above), so the bytes fit in int64: at most
    // 24n + 24 + 12 * 2^32, about 96 GiB.
    int64_t n = getTargets().getType().getDimSize(0);
    if (ShapedType::isDynamic(n))
      n = getSources().getType().getDimSize(0);
    int64_t have = wsType.getDimSize(0);
    if (!ShapedType::isDynamic(n) && !ShapedType::isDynamic(have) &&
        have < getMoveWorkspaceBytes(n))
      return emitOpError() << "'workspace' holds " << have
                           << " bytes, fewer than the "
                           << getMoveWorkspaceBytes(n) << " that " << n
                           << " entries need";
  } else if (ws) {
    return emitOpError(
        "a 'workspace' is only used by overlap policy gather_then_scatter");
  }
  return verifyStatus(op, getChecked(), getStatus());
}

LogicalResult MoveAcceptedTokensOp::verify() {
  Operation *op = getOperation();
  if (failed(
          verifyPlainMemRefs(op, {{getReqPoolIndices(), "req_pool_indices"},
                                  {getReqToToken(), "req_to_token"},
                                  {getSeqLens(), "seq_lens"},
                                  {getNumCorrectDrafts(), "num_correct_drafts"},
                                  {getAcceptIndex(), "accept_index"},
                                  {getOutCacheLoc(), "out_cache_loc"},
                                  {getBuffers(), "buffers"},
                                  {getWorkspace(), "workspace"},
                                  {getStatus(), "status"},
                                  {getReport(), "report"}})))
    return failure();
  bool fromRows = getTargets() == TargetSource::ReqToToken;
  // Ranks first: the extent checks below read dimension 0.
  if (failed(verifyIndexMemRef(op, getNumCorrectDrafts(), "num_correct_drafts",
                               1)))
    return failure();
  if (fromRows != static_cast<bool>(getReqPoolIndices()))
    return emitOpError() << (fromRows
                                 ? "targets <req_to_token> needs rows(...): "
                                   "req_pool_indices, req_to_token, seq_lens"
                                 : "targets <window> takes no rows(...): the "
                                   "targets come from out_cache_loc");
  if (fromRows &&
      (failed(
           verifyIndexMemRef(op, getReqPoolIndices(), "req_pool_indices", 1)) ||
       failed(verifyIndexMemRef(op, getReqToToken(), "req_to_token", 2)) ||
       failed(verifyIndexMemRef(op, getSeqLens(), "seq_lens", 1)) ||
       failed(verifySameExtent(op, getSeqLens(), 0, "seq_lens",
                               getReqPoolIndices(), 0, "req_pool_indices",
                               "batch sizes")) ||
       failed(verifySameExtent(op, getNumCorrectDrafts(), 0,
                               "num_correct_drafts", getReqPoolIndices(), 0,
                               "req_pool_indices", "batch sizes"))))
    return failure();
  if (failed(verifyIndexMemRef(op, getNumCorrectDrafts(), "num_correct_drafts",
                               1)) ||
      failed(verifyIndexMemRef(op, getAcceptIndex(), "accept_index", 2)) ||
      failed(verifyIndexMemRef(op, getOutCacheLoc(), "out_cache_loc", 1)) ||
      failed(verifySameExtent(op, getAcceptIndex(), 0, "accept_index",
                              getNumCorrectDrafts(), 0, "num_correct_drafts",
                              "batch sizes")) ||
      failed(verifyBufferTable(op, getBuffers())))
    return failure();
  if (getSentinelAttr().getInt() >= 0)
    return emitOpError() << "sentinel must be negative so that it never names "
                            "a position of 'out_cache_loc', got "
                         << getSentinelAttr().getInt();
  auto ws = cast<MemRefType>(getWorkspace().getType());
  if (!ws.getElementType().isSignlessInteger(8) || ws.getRank() != 1)
    return emitOpError() << "'workspace' must be a rank-1 memref of i8, got "
                         << ws;
  auto st = cast<MemRefType>(getStatus().getType());
  if (!st.getElementType().isSignlessInteger(64) || st.getRank() != 1 ||
      st.getDimSize(0) != KVCACHE_MOVE_STATUS_FIELDS)
    return emitOpError() << "'status' must be memref<"
                         << static_cast<int>(KVCACHE_MOVE_STATUS_FIELDS)
                         << "xi64>, got " << st;
  if (Value report = getReport()) {
    auto rt = cast<MemRefType>(report.getType());
    if (!rt.getElementType().isSignlessInteger(64) || rt.getRank() != 1 ||
        rt.getDimSize(0) != KVCACHE_REPORT_FIELDS)
      return emitOpError() << "'report' must be memref<"
                           << static_cast<int>(KVCACHE_REPORT_FIELDS)
                           << "xi64>, got " << rt;
  }
  return success();
}
