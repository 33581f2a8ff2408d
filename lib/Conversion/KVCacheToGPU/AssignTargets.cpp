//===- AssignTargets.cpp - kvcache.assign_targets to a GPU kernel ---------===//
//
// kvcache.assign_targets -> @F_assign_targets, one block: a block-wide scan of
// the accepted counts gives each request's first output position, rounds of
// `blockSize` requests are chained by a carry, then the tail is zero-filled.
//
//===----------------------------------------------------------------------===//

#include "../Common/RequestBounds.h"
#include "KernelBuilder.h"
#include "Patterns.h"

#include "KVCache/IR/KVCache.h"
#include "KVCache/KVCacheABI.h"

using namespace mlir;
using namespace mlir::kvcache;
using arith::CmpIPredicate;

namespace {
/// targets[off_i + j] = req_to_token[rpi[i], seq_lens[i] + j] (j < acc_i),
/// off_i = exclusive_scan(acc)_i; targets[k >= off_bs] = 0.
struct AssignTargetsToKernel : KernelPattern<AssignTargetsOp> {
  using KernelPattern::KernelPattern;

  LogicalResult matchAndRewrite(AssignTargetsOp op,
                                PatternRewriter &rewriter) const override {
    int64_t T = options.scanBlockSize;
    enum { RPI, R2T, SEQ, NCD, TGT, STATUS, BS, MAXREQS, POOLLEN, SIZE };
    using P = KernelParam;
    KernelBuilder k(
        kernels, op.getLoc(), getKernelName(op, "assign_targets", kernels),
        {P{P::GlobalPtr, elementAlign(op.getReqPoolIndices())},
         P{P::GlobalPtr, elementAlign(op.getReqToToken())},
         P{P::GlobalPtr, elementAlign(op.getSeqLens())},
         P{P::GlobalPtr, elementAlign(op.getNumCorrectDrafts())},
         P{P::GlobalPtr, elementAlign(op.getTargets())}, P{P::GlobalPtr, 8},
         P{P::Scalar}, P{P::Scalar}, P{P::Scalar}, P{P::Scalar}},
        T);
    ImplicitLocOpBuilder &b = k.builder();
    k.setLaunch({b.getNamedAttr("block", b.getI64IntegerAttr(T)),
                 b.getNamedAttr("grid", b.getStringAttr("single"))});
    k.setSingleBlock();
    Type rpiT = elementType(op.getReqPoolIndices());
    Type r2tT = elementType(op.getReqToToken());
    Type seqT = elementType(op.getSeqLens());
    Type ncdT = elementType(op.getNumCorrectDrafts());
    Type tgtT = elementType(op.getTargets());
    bool checked = op.getChecked();
    Value status = k.param(STATUS), bs = k.param(BS);
    Value maxReqs = k.param(MAXREQS), poolLen = k.param(POOLLEN);
    Value size = k.param(SIZE);
    Value zero = k.i64(0), one = k.i64(1);

    Value total = k.scanRounds(
        bs,
        [&](Value i, Value active) -> Value {
          // acc_i, or 0 for an idle thread or (checked) a request that is out
          // of bounds, so that a bad request cannot shift the others' offsets.
          return k.ifValue(
              active, k.i64Type(),
              [&]() -> Value {
                Value a = k.add(k.loadI64(k.param(NCD), ncdT, i), one);
                if (!checked)
                  return a;
                Value r = k.loadI64(k.param(RPI), rpiT, i);
                Value s = k.loadI64(k.param(SEQ), seqT, i);
                RequestBounds bounds(k, r, s, a, maxReqs, poolLen);
                Value bad = bounds.bad;
                k.ifThen(bad, [&] {
                  bounds.recordFirst(
                      [&](int64_t code, Value value, Value bound) {
                        k.recordError(status, code, i, value, bound);
                      });
                });
                return k.select(bad, zero, a);
              },
              [&]() -> Value { return zero; });
        },
        [&](Value i, Value, Value acc, Value off) {
          k.ifThen(k.cmp(CmpIPredicate::sgt, acc, zero), [&] {
            auto write = [&] {
              Value r = k.loadI64(k.param(RPI), rpiT, i);
              Value s = k.loadI64(k.param(SEQ), seqT, i);
              Value row = k.add(k.mul(r, poolLen), s);
              k.forLoop(zero, acc, one, [&](Value j) {
                Value slot = k.loadI64(k.param(R2T), r2tT, k.add(row, j));
                k.storeI64(k.param(TGT), tgtT, k.add(off, j), slot);
              });
            };
            if (!checked)
              return write();
            Value end = k.add(off, acc);
            k.ifThenElse(
                k.cmp(CmpIPredicate::sgt, end, size),
                [&] {
                  k.recordError(status, KVCACHE_ERR_TARGETS_OVERFLOW, i, end,
                                size);
                },
                write);
          });
        });
    // Entries past the accepted tokens are zero (slot 0 is the pad slot).
    k.zeroFill(k.param(TGT), tgtT, total, size);
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void mlir::kvcache::populateAssignTargetsToGPUPattern(
    RewritePatternSet &patterns, gpu::GPUModuleOp kernels,
    const GPUKernelOptions &options) {
  patterns.add<AssignTargetsToKernel>(patterns.getContext(), kernels, options);
}
