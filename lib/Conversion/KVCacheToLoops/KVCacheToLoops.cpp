//===- KVCacheToLoops.cpp - kvcache ops to sequential host loops ----------===//
//
// The kvcache-to-loops pass: each kvcache op becomes scf.for loops over its
// memrefs (the CPU path). The algorithms are the plain sequential readings of
// the op descriptions; checked ops test each bound before the access it guards
// and record the first violation in the status record.
//
//===----------------------------------------------------------------------===//

#include "../Common/Emitter.h"
#include "../Common/RequestBounds.h"
#include "Conversion/Passes.h"

#include "KVCache/IR/KVCache.h"
#include "KVCache/KVCacheABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::kvcache {
#define GEN_PASS_DEF_KVCACHETOLOOPS
#include "Conversion/Passes.h.inc"
} // namespace mlir::kvcache

using namespace mlir;
using namespace mlir::kvcache;
using arith::CmpIPredicate;

namespace {
/// Emitter plus memref access with i64 indices.
class HostEmitter : public Emitter {
public:
  HostEmitter(Operation *op) : Emitter(op->getLoc(), op->getContext()) {
    b.setInsertionPoint(op);
  }
  /// memref[idx...] sign-extended to i64.
  Value load(Value memref, ArrayRef<Value> idx) {
    SmallVector<Value> indices;
    for (Value v : idx)
      indices.push_back(toIndex(v));
    return toI64(memref::LoadOp::create(b, memref, indices));
  }
  /// Stores the i64 `v`, truncated to the memref's element type.
  void store(Value v, Value memref, ArrayRef<Value> idx) {
    SmallVector<Value> indices;
    for (Value i : idx)
      indices.push_back(toIndex(i));
    Type elt = cast<MemRefType>(memref.getType()).getElementType();
    if (!elt.isInteger(64))
      v = arith::TruncIOp::create(b, elt, v);
    memref::StoreOp::create(b, v, memref, indices);
  }
  Value dim(Value memref, int64_t d) {
    return toI64(memref::DimOp::create(b, memref, d));
  }
  /// status[0] == 0 && status := (code, entry, value, bound).
  void recordError(Value status, int64_t code, Value entry, Value value,
                   Value bound) {
    ifThen(cmp(CmpIPredicate::eq, load(status, {i64(KVCACHE_STATUS_CODE)}),
               i64(0)),
           [&] {
             store(i64(code), status, {i64(KVCACHE_STATUS_CODE)});
             store(entry, status, {i64(KVCACHE_STATUS_ENTRY)});
             store(value, status, {i64(KVCACHE_STATUS_VALUE)});
             store(bound, status, {i64(KVCACHE_STATUS_BOUND)});
           });
  }
  Value ok(Value status) {
    return cmp(CmpIPredicate::eq, load(status, {i64(KVCACHE_STATUS_CODE)}),
               i64(0));
  }
  /// The address held by a memref, as an LLVM pointer.
  Value pointer(Value memref) {
    Value addr = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
    return LLVM::IntToPtrOp::create(
        b, LLVM::LLVMPointerType::get(b.getContext()), toI64(addr));
  }
  Value pointerAt(Value base, Value byteOffset) {
    return LLVM::GEPOp::create(b, base.getType(), b.getI8Type(), base,
                               ArrayRef<LLVM::GEPArg>{byteOffset});
  }
  void copyBytes(Value dst, Value src, Value len) {
    LLVM::MemcpyOp::create(b, dst, src, len, /*isVolatile=*/false);
  }
};

/// off = 0; for i: for j < acc_i: targets[off++] = req_to_token[rpi[i], seq[i]
/// + j]; targets[off..] = 0.
struct AssignTargetsToLoops : OpRewritePattern<AssignTargetsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AssignTargetsOp op,
                                PatternRewriter &rewriter) const override {
    HostEmitter e(op);
    Value zero = e.i64(0), one = e.i64(1);
    Value bs = e.dim(op.getReqPoolIndices(), 0);
    Value maxReqs = e.dim(op.getReqToToken(), 0);
    Value poolLen = e.dim(op.getReqToToken(), 1);
    Value size = e.dim(op.getTargets(), 0);
    Value status = op.getStatus();
    bool checked = op.getChecked();
    Value total =
        e.forLoopCarried(zero, bs, one, zero, [&](Value i, Value off) {
          Value r = e.load(op.getReqPoolIndices(), {i});
          Value s = e.load(op.getSeqLens(), {i});
          Value acc = e.add(e.load(op.getNumCorrectDrafts(), {i}), one);
          auto write = [&] {
            e.forLoop(zero, acc, one, [&](Value j) {
              Value slot = e.load(op.getReqToToken(), {r, e.add(s, j)});
              e.store(slot, op.getTargets(), {e.add(off, j)});
            });
          };
          if (!checked) {
            write();
            return e.add(off, acc);
          }
          RequestBounds bounds(e, r, s, acc, maxReqs, poolLen);
          Value bad = bounds.bad;
          Value overflow = e.cmp(CmpIPredicate::sgt, e.add(off, acc), size);
          e.ifThenElse(
              bad,
              [&] {
                bounds.recordFirst([&](int64_t code, Value value, Value bound) {
                  e.recordError(status, code, i, value, bound);
                });
              },
              [&] {
                e.ifThenElse(
                    overflow,
                    [&] {
                      e.recordError(status, KVCACHE_ERR_TARGETS_OVERFLOW, i,
                                    e.add(off, acc), size);
                    },
                    write);
              });
          return e.add(off, e.select(bad, zero, acc));
        });
    e.forLoop(total, size, one,
              [&](Value k) { e.store(zero, op.getTargets(), {k}); });
    rewriter.eraseOp(op);
    return success();
  }
};

/// k = 0; for i, j: a = accept_index[i, j]; if a != sentinel:
/// sources[k++] = out_cache_loc[a]; sources[k..] = 0.
struct CompactSourcesToLoops : OpRewritePattern<CompactSourcesOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CompactSourcesOp op,
                                PatternRewriter &rewriter) const override {
    HostEmitter e(op);
    Value zero = e.i64(0), one = e.i64(1);
    Value bs = e.dim(op.getAcceptIndex(), 0);
    Value w = e.dim(op.getAcceptIndex(), 1);
    Value nOcl = e.dim(op.getOutCacheLoc(), 0);
    Value size = e.dim(op.getSources(), 0);
    Value sentinel = e.i64(op.getSentinelAttr().getInt());
    Value status = op.getStatus();
    bool checked = op.getChecked();
    Value total =
        e.forLoopCarried(zero, bs, one, zero, [&](Value i, Value start) {
          if (checked) {
            Value count =
                e.forLoopCarried(zero, w, one, zero, [&](Value j, Value c) {
                  Value a = e.load(op.getAcceptIndex(), {i, j});
                  return e.select(e.cmp(CmpIPredicate::ne, a, sentinel),
                                  e.add(c, one), c);
                });
            Value expected = e.add(e.load(op.getCounts(), {i}), one);
            e.ifThen(e.cmp(CmpIPredicate::ne, count, expected), [&] {
              e.recordError(status, KVCACHE_ERR_ACCEPT_COUNT, i, count,
                            expected);
            });
          }
          return e.forLoopCarried(zero, w, one, start, [&](Value j, Value k) {
            Value a = e.load(op.getAcceptIndex(), {i, j});
            Value keep = e.cmp(CmpIPredicate::ne, a, sentinel);
            e.ifThen(keep, [&] {
              auto write = [&] {
                e.store(e.load(op.getOutCacheLoc(), {a}), op.getSources(), {k});
              };
              if (!checked)
                return write();
              e.ifThenElse(
                  e.outside(a, zero, nOcl),
                  [&] {
                    e.recordError(status, KVCACHE_ERR_ACCEPT_INDEX,
                                  e.add(e.mul(i, w), j), a, nOcl);
                    e.store(zero, op.getSources(), {k});
                  },
                  write);
            });
            return e.select(keep, e.add(k, one), k);
          });
        });
    e.forLoop(total, size, one,
              [&](Value k) { e.store(zero, op.getSources(), {k}); });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Per buffer b: tmp[i] = row sources[i] of b for every moved i; then
/// row targets[i] of b = tmp[i]. Entries with sources[i] == targets[i] are
/// skipped (they change nothing).
struct MoveRowsToLoops : OpRewritePattern<MoveRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoveRowsOp op,
                                PatternRewriter &rewriter) const override {
    HostEmitter e(op);
    Value zero = e.i64(0), one = e.i64(1);
    Value table = op.getBuffers(), status = op.getStatus();
    Value numBuffers = e.dim(table, 0), n = e.dim(op.getTargets(), 0);
    auto column = [&](Value buf, int64_t c) {
      return e.load(table, {buf, e.i64(c)});
    };
    auto move = [&] {
      e.forLoop(zero, numBuffers, one, [&](Value buf) {
        Value base = LLVM::IntToPtrOp::create(
            e.builder(), LLVM::LLVMPointerType::get(op.getContext()),
            column(buf, KVCACHE_BUFFER_ADDRESS));
        Value rowBytes = column(buf, KVCACHE_BUFFER_ROW_BYTES);
        Value tmp = memref::AllocOp::create(
            e.builder(),
            MemRefType::get({ShapedType::kDynamic}, e.builder().getI8Type()),
            ValueRange{e.toIndex(e.mul(n, rowBytes))});
        Value tmpPtr = e.pointer(tmp);
        auto rowOf = [&](Value slot) {
          return e.pointerAt(base, e.mul(slot, rowBytes));
        };
        auto forMoved = [&](llvm::function_ref<void(Value, Value, Value)> fn) {
          e.forLoop(zero, n, one, [&](Value i) {
            Value s = e.load(op.getSources(), {i});
            Value t = e.load(op.getTargets(), {i});
            e.ifThen(e.cmp(CmpIPredicate::ne, s, t), [&] { fn(i, s, t); });
          });
        };
        forMoved([&](Value i, Value s, Value) {
          e.copyBytes(e.pointerAt(tmpPtr, e.mul(i, rowBytes)), rowOf(s),
                      rowBytes);
        });
        forMoved([&](Value i, Value, Value t) {
          e.copyBytes(rowOf(t), e.pointerAt(tmpPtr, e.mul(i, rowBytes)),
                      rowBytes);
        });
        memref::DeallocOp::create(e.builder(), tmp);
      });
    };
    if (!op.getChecked()) {
      move();
      rewriter.eraseOp(op);
      return success();
    }
    // Every slot of every moved entry is checked before the first write.
    Value minSlots = e.forLoopCarried(
        zero, numBuffers, one, e.i64(INT64_MAX), [&](Value buf, Value m) {
          Value slots = column(buf, KVCACHE_BUFFER_SLOTS);
          return e.select(e.cmp(CmpIPredicate::slt, slots, m), slots, m);
        });
    e.ifThen(e.ok(status), [&] {
      e.forLoop(zero, n, one, [&](Value i) {
        Value s = e.load(op.getSources(), {i});
        Value t = e.load(op.getTargets(), {i});
        Value badS = e.outside(s, zero, minSlots);
        Value badT = e.outside(t, zero, minSlots);
        Value moved = e.cmp(CmpIPredicate::ne, s, t);
        e.ifThen(e.bitAnd(moved, e.bitOr(badS, badT)), [&] {
          e.recordError(status, KVCACHE_ERR_SLOT, i, e.select(badS, s, t),
                        minSlots);
        });
      });
    });
    e.ifThen(e.ok(status), move);
    rewriter.eraseOp(op);
    return success();
  }
};

struct KVCacheToLoopsPass
    : kvcache::impl::KVCacheToLoopsBase<KVCacheToLoopsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateKVCacheToLoopsPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::kvcache::populateKVCacheToLoopsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AssignTargetsToLoops, CompactSourcesToLoops, MoveRowsToLoops>(
      patterns.getContext());
}
