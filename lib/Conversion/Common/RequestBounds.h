//===- RequestBounds.h - the bounds of one request of assign_targets -*- C++
//-*-===//
//
// kvcache.assign_targets (checked) rejects a request whose drafts count is
// negative, whose row is outside req_to_token, or whose accepted positions
// leave its row. Both lowerings test exactly these bounds in this order, so
// the GPU and the CPU path report the same violation for the same input.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_LIB_CONVERSION_COMMON_REQUESTBOUNDS_H
#define SPECC_LIB_CONVERSION_COMMON_REQUESTBOUNDS_H

#include "Emitter.h"

#include "KVCache/KVCacheABI.h"

namespace mlir::kvcache {

struct RequestBounds {
  /// Tests request row `r`, committed length `s` and `acc` accepted tokens
  /// against req_to_token's [maxReqs, poolLen]; all values i64.
  RequestBounds(Emitter &e, Value r, Value s, Value acc, Value maxReqs,
                Value poolLen)
      : e(e), r(r), acc(acc), maxReqs(maxReqs), poolLen(poolLen) {
    using P = arith::CmpIPredicate;
    Value zero = e.i64(0), one = e.i64(1);
    end = e.add(s, acc);
    badDrafts = e.cmp(P::slt, acc, one);
    badReq = e.outside(r, zero, maxReqs);
    badSeq = e.bitOr(e.cmp(P::slt, s, zero), e.cmp(P::sgt, end, poolLen));
    bad = e.bitOr(badDrafts, e.bitOr(badReq, badSeq));
  }

  /// Emits `record(code, value, bound)` for the first broken bound; to be
  /// placed where `bad` holds.
  void recordFirst(llvm::function_ref<void(int64_t, Value, Value)> record) {
    e.ifThenElse(
        badDrafts,
        [&] {
          record(KVCACHE_ERR_NEGATIVE_DRAFTS, e.sub(acc, e.i64(1)), e.i64(0));
        },
        [&] {
          e.ifThenElse(
              badReq, [&] { record(KVCACHE_ERR_REQ_POOL_INDEX, r, maxReqs); },
              [&] { record(KVCACHE_ERR_SEQ_RANGE, end, poolLen); });
        });
  }

  Emitter &e;
  Value r, acc, maxReqs, poolLen, end, badDrafts, badReq, badSeq, bad;
};

} // namespace mlir::kvcache

#endif // SPECC_LIB_CONVERSION_COMMON_REQUESTBOUNDS_H
