//===- CompactSources.cpp - kvcache.compact_sources to a GPU kernel -------===//
//
// kvcache.compact_sources -> @F_compact_sources, one block: each thread counts
// the non-sentinel entries of one row of accept_index, a block-wide scan gives
// the row's first output position, the thread writes the row's sources; rounds
// of `blockSize` rows are chained by a carry, then the tail is zero-filled.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "Patterns.h"

#include "KVCache/IR/KVCache.h"
#include "KVCache/KVCacheABI.h"

using namespace mlir;
using namespace mlir::kvcache;
using arith::CmpIPredicate;

namespace {
/// sources[k] = out_cache_loc[a_k], a_k the k-th non-sentinel entry of
/// accept_index in row-major order; sources[k >= count] = 0.
struct CompactSourcesToKernel : KernelPattern<CompactSourcesOp> {
  using KernelPattern::KernelPattern;

  LogicalResult matchAndRewrite(CompactSourcesOp op,
                                PatternRewriter &rewriter) const override {
    int64_t T = options.scanBlockSize;
    enum { ACC, OCL, COUNTS, SRC, STATUS, BS, W, NOCL };
    using P = KernelParam;
    bool checked = op.getChecked();
    KernelBuilder k(
        kernels, op.getLoc(), getKernelName(op, "compact_sources", kernels),
        {P{P::GlobalPtr, elementAlign(op.getAcceptIndex())},
         P{P::GlobalPtr, elementAlign(op.getOutCacheLoc())},
         P{P::GlobalPtr, checked ? elementAlign(op.getCounts()) : 8},
         P{P::GlobalPtr, elementAlign(op.getSources())}, P{P::GlobalPtr, 8},
         P{P::Scalar}, P{P::Scalar}, P{P::Scalar}},
        T);
    ImplicitLocOpBuilder &b = k.builder();
    k.setLaunch({b.getNamedAttr("block", b.getI64IntegerAttr(T)),
                 b.getNamedAttr("grid", b.getStringAttr("single"))});
    k.setSingleBlock();
    Type accT = elementType(op.getAcceptIndex());
    Type oclT = elementType(op.getOutCacheLoc());
    Type srcT = elementType(op.getSources());
    Value status = k.param(STATUS), bs = k.param(BS), w = k.param(W);
    Value nOcl = k.param(NOCL);
    Value sentinel = k.i64(op.getSentinelAttr().getInt());
    Value zero = k.i64(0), one = k.i64(1);

    Value total = k.scanRounds(
        bs,
        [&](Value i, Value active) -> Value {
          Value rowStart = k.mul(i, w);
          Value count = k.ifValue(
              active, k.i64Type(),
              [&]() -> Value {
                return k.forLoopCarried(
                    zero, w, one, zero, [&](Value j, Value c) {
                      Value a =
                          k.loadI64(k.param(ACC), accT, k.add(rowStart, j));
                      Value keep = k.cmp(CmpIPredicate::ne, a, sentinel);
                      return k.select(keep, k.add(c, one), c);
                    });
              },
              [&]() -> Value { return zero; });
          if (checked) {
            k.ifThen(active, [&] {
              Value expected = k.add(
                  k.loadI64(k.param(COUNTS), elementType(op.getCounts()), i),
                  one);
              k.ifThen(k.cmp(CmpIPredicate::ne, count, expected), [&] {
                k.recordError(status, KVCACHE_ERR_ACCEPT_COUNT, i, count,
                              expected);
              });
            });
          }
          return count;
        },
        [&](Value i, Value active, Value, Value off) {
          Value rowStart = k.mul(i, w);
          k.ifThen(active, [&] {
            k.forLoopCarried(zero, w, one, off, [&](Value j, Value pos) {
              Value flat = k.add(rowStart, j);
              Value a = k.loadI64(k.param(ACC), accT, flat);
              Value keep = k.cmp(CmpIPredicate::ne, a, sentinel);
              k.ifThen(keep, [&] {
                auto write = [&] {
                  Value slot = k.loadI64(k.param(OCL), oclT, a);
                  k.storeI64(k.param(SRC), srcT, pos, slot);
                };
                if (!checked)
                  return write();
                k.ifThenElse(
                    k.outside(a, zero, nOcl),
                    [&] {
                      k.recordError(status, KVCACHE_ERR_ACCEPT_INDEX, flat, a,
                                    nOcl);
                      k.storeI64(k.param(SRC), srcT, pos, zero);
                    },
                    write);
              });
              return k.select(keep, k.add(pos, one), pos);
            });
          });
        });
    k.zeroFill(k.param(SRC), srcT, total, k.mul(bs, w));
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void mlir::kvcache::populateCompactSourcesToGPUPattern(
    RewritePatternSet &patterns, gpu::GPUModuleOp kernels,
    const GPUKernelOptions &options) {
  patterns.add<CompactSourcesToKernel>(patterns.getContext(), kernels, options);
}
