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
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

/// Calls fn(m, source, target) for the m-th moving entry of a move, in
/// order (m counts temporary rows).
using MovingFn = llvm::function_ref<void(Value, Value, Value)>;

/// Gather then scatter in every buffer of `table`: a temporary of
/// `rows` rows, tmp[m] = row source of the m-th moving entry, then row
/// target = tmp[m]. Shared by the stage move and the fused op, which pass
/// their own constants and buffer count.
void emitGatherThenScatter(HostEmitter &e, MLIRContext *ctx, Value table,
                           Value numBuffers, Value zero, Value one, Value rows,
                           llvm::function_ref<void(MovingFn)> forMoving) {
  e.forLoop(zero, numBuffers, one, [&](Value buf) {
    Value base = LLVM::IntToPtrOp::create(
        e.builder(), LLVM::LLVMPointerType::get(ctx),
        e.load(table, {buf, e.i64(KVCACHE_BUFFER_ADDRESS)}));
    Value rowBytes = e.load(table, {buf, e.i64(KVCACHE_BUFFER_ROW_BYTES)});
    Value tmp = memref::AllocOp::create(
        e.builder(),
        MemRefType::get({ShapedType::kDynamic}, e.builder().getI8Type()),
        ValueRange{e.toIndex(e.mul(rows, rowBytes))});
    Value tmpPtr = e.pointer(tmp);
    auto rowOf = [&](Value slot) {
      return e.pointerAt(base, e.mul(slot, rowBytes));
    };
    auto staged = [&](Value m) {
      return e.pointerAt(tmpPtr, e.mul(m, rowBytes));
    };
    // Addresses in statements, temporary first: the IR does not depend on
    // the C++ compiler's argument evaluation order.
    forMoving([&](Value m, Value src, Value) {
      Value to = staged(m);
      Value from = rowOf(src);
      e.copyBytes(to, from, rowBytes);
    });
    forMoving([&](Value m, Value, Value tgt) {
      Value from = staged(m);
      Value to = rowOf(tgt);
      e.copyBytes(to, from, rowBytes);
    });
    memref::DeallocOp::create(e.builder(), tmp);
  });
}

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
      emitGatherThenScatter(e, op.getContext(), table, numBuffers, zero, one, n,
                            [&](MovingFn fn) {
                              e.forLoop(zero, n, one, [&](Value i) {
                                Value s = e.load(op.getSources(), {i});
                                Value t = e.load(op.getTargets(), {i});
                                e.ifThen(e.cmp(CmpIPredicate::ne, s, t),
                                         [&] { fn(i, s, t); });
                              });
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

/// The host lowering of one kvcache.move_accepted_tokens, phase by phase:
/// validate each request into the plan, count, classify, move.
class AcceptedTokensLowering {
public:
  AcceptedTokensLowering(MoveAcceptedTokensOp op) : op(op), e(op) {
    zero = e.i64(0);
    one = e.i64(1);
    int64Max = e.i64(INT64_MAX);
    accept = op.getAcceptIndex();
    ocl = op.getOutCacheLoc();
    table = op.getBuffers();
    status = op.getStatus();
    bs = e.dim(accept, 0);
    w = e.dim(accept, 1);
    n = e.mul(bs, w);
    nOcl = e.dim(ocl, 0);
    numBuffers = e.dim(table, 0);
    sentinel = e.i64(op.getSentinelAttr().getInt());
    if (op.getTargets() == TargetSource::ReqToToken) {
      maxReqs = e.dim(op.getReqToToken(), 0);
      poolLen = e.dim(op.getReqToToken(), 1);
    } else {
      // D is only used inside the request loop, where bs > 0; the select
      // keeps the division defined for an empty batch.
      Value divisor = e.select(e.cmp(CmpIPredicate::eq, bs, zero), one, bs);
      window = arith::DivSIOp::create(e.builder(), nOcl, divisor);
    }
    minSlots = e.forLoopCarried(
        zero, numBuffers, one, int64Max, [&](Value buf, Value m) {
          Value slots = column(buf, KVCACHE_BUFFER_SLOTS);
          return e.select(e.cmp(CmpIPredicate::slt, slots, m), slots, m);
        });
  }

  void lower() {
    // The record is rewritten whole; recordError then keeps the first
    // violation, and requests are visited in order.
    e.forLoop(zero, e.i64(KVCACHE_MOVE_STATUS_FIELDS), one,
              [&](Value f) { e.store(zero, status, {f}); });
    // plan[i * W + j] = (target, source) of accepted entry j of request i
    // when the request is valid; every other entry holds (0, 0), which moves
    // nothing, so the later phases need no per-request validity.
    plan = memref::AllocOp::create(
        e.builder(), MemRefType::get({ShapedType::kDynamic, 2}, e.i64Type()),
        ValueRange{e.toIndex(n)});
    Value skipped =
        e.forLoopCarried(zero, bs, one, zero, [&](Value i, Value skip) {
          return e.add(skip, e.select(planRequest(i), zero, one));
        });
    Value moved = e.forLoopCarried(zero, n, one, zero, [&](Value k, Value m) {
      return e.add(m, e.select(entry(k).moves, one, zero));
    });
    e.store(skipped, status, {e.i64(KVCACHE_STATUS_SKIPPED)});
    e.store(moved, status, {e.i64(KVCACHE_STATUS_MOVED)});
    e.store(path(moved), status, {e.i64(KVCACHE_STATUS_PATH)});
    if (Value r = op.getReport())
      report(r, skipped);
    e.ifThen(e.cmp(CmpIPredicate::ne, moved, zero), [&] { move(moved); });
    memref::DeallocOp::create(e.builder(), plan);
  }

  /// On a violation, counts the execution in the report and leaves its first
  /// violation there (the sequence protocol of KVCacheReportField, so host
  /// and GPU records read alike); traps when the caller asked for it, before
  /// any row moves (the valid requests' rows stay as they were).
  void report(Value r, Value skipped) {
    Value code = e.load(status, {e.i64(KVCACHE_STATUS_CODE)});
    e.ifThen(e.cmp(CmpIPredicate::ne, code, zero), [&] {
      auto put = [&](int64_t f, Value v) { e.store(v, r, {e.i64(f)}); };
      Value seq =
          e.bitAnd(e.add(e.load(r, {e.i64(KVCACHE_REPORT_SEQUENCE)}), one),
                   e.i64(~int64_t(1)));
      put(KVCACHE_REPORT_SEQUENCE, e.add(seq, one));
      put(KVCACHE_REPORT_CODE, code);
      for (auto [from, to] :
           {std::pair{KVCACHE_STATUS_ENTRY, KVCACHE_REPORT_ENTRY},
            std::pair{KVCACHE_STATUS_VALUE, KVCACHE_REPORT_VALUE},
            std::pair{KVCACHE_STATUS_BOUND, KVCACHE_REPORT_BOUND}})
        put(to, e.load(status, {e.i64(from)}));
      put(KVCACHE_REPORT_SKIPPED, skipped);
      put(KVCACHE_REPORT_SEQUENCE, e.add(seq, e.i64(2)));
      Value trap = e.load(r, {e.i64(KVCACHE_REPORT_TRAP)});
      e.ifThen(e.cmp(CmpIPredicate::ne, trap, zero),
               [&] { LLVM::Trap::create(e.builder()); });
    });
  }

private:
  struct PlanEntry {
    Value moves, tgt, src;
  };

  Value column(Value buf, int64_t c) { return e.load(table, {buf, e.i64(c)}); }
  PlanEntry entry(Value k) {
    Value tgt = e.load(plan, {k, zero}), src = e.load(plan, {k, one});
    return {e.cmp(CmpIPredicate::ne, tgt, src), tgt, src};
  }
  void clearRow(Value i) {
    e.forLoop(zero, w, one, [&](Value j) {
      Value k = e.add(e.mul(i, w), j);
      e.store(zero, plan, {k, zero});
      e.store(zero, plan, {k, one});
    });
  }
  /// Records (code, at, value, bound) when `bad`; returns !bad.
  Value check(Value bad, int64_t code, Value at, Value value, Value bound) {
    e.ifThen(bad, [&] { e.recordError(status, code, at, value, bound); });
    return e.bitNot(bad);
  }
  /// Runs `next` (which returns whether the request is still valid) only
  /// while `ok` holds, so a request stops at its first failed check.
  Value andThen(Value ok, llvm::function_ref<Value()> next) {
    return e.ifValue(ok, e.builder().getI1Type(), next,
                     [&] { return e.i1(false); });
  }

  /// Checks request i in the order of the op's description and writes its
  /// entries into the plan when it is valid; returns whether it is.
  Value planRequest(Value i) {
    clearRow(i);
    Value rowStart = e.mul(i, w);
    Value ncd = e.load(op.getNumCorrectDrafts(), {i});
    // Saturated so that the reported bound never wraps; equal to ncd + 1
    // once ncd < W holds.
    Value acc = e.select(e.cmp(CmpIPredicate::slt, ncd, int64Max),
                         e.add(ncd, one), int64Max);
    Value ok = check(e.cmp(CmpIPredicate::slt, ncd, zero),
                     KVCACHE_ERR_NEGATIVE_DRAFTS, i, ncd, zero);
    ok = andThen(ok, [&] {
      Value count = e.forLoopCarried(zero, w, one, zero, [&](Value j, Value c) {
        Value a = e.load(accept, {i, j});
        return e.select(e.cmp(CmpIPredicate::ne, a, sentinel), e.add(c, one),
                        c);
      });
      Value bad = e.bitOr(e.cmp(CmpIPredicate::sge, ncd, w),
                          e.cmp(CmpIPredicate::ne, count, acc));
      return check(bad, KVCACHE_ERR_ACCEPT_COUNT, i, count, acc);
    });
    ok = andThen(ok, [&] {
      return e.forLoopCarried(
          zero, w, one, e.i1(true), [&](Value j, Value rowOk) {
            Value a = e.load(accept, {i, j});
            Value bad = e.bitAnd(e.cmp(CmpIPredicate::ne, a, sentinel),
                                 e.outside(a, zero, nOcl));
            // Only the row's first bad position is reported.
            return e.bitAnd(rowOk, check(e.bitAnd(rowOk, bad),
                                         KVCACHE_ERR_ACCEPT_INDEX,
                                         e.add(rowStart, j), a, nOcl));
          });
    });
    if (window) {
      ok = andThen(ok, [&] {
        return check(e.cmp(CmpIPredicate::sgt, acc, window),
                     KVCACHE_ERR_WINDOW_RANGE, i, acc, window);
      });
      Value first = e.mul(i, window);
      return andThen(ok, [&] {
        return planSlots(
            i, [&](Value j) { return e.load(ocl, {e.add(first, j)}); });
      });
    }
    Value r = e.load(op.getReqPoolIndices(), {i});
    Value s = e.load(op.getSeqLens(), {i});
    ok = andThen(ok, [&] {
      return check(e.outside(r, zero, maxReqs), KVCACHE_ERR_REQ_POOL_INDEX, i,
                   r, maxReqs);
    });
    ok = andThen(ok, [&] {
      // acc <= W here, so poolLen - acc and INT64_MAX - acc cannot wrap.
      Value negative = e.cmp(CmpIPredicate::slt, s, zero);
      Value bad =
          e.bitOr(negative, e.cmp(CmpIPredicate::sgt, s, e.sub(poolLen, acc)));
      Value saturates = e.cmp(CmpIPredicate::sgt, s, e.sub(int64Max, acc));
      Value end =
          e.select(negative, s, e.select(saturates, int64Max, e.add(s, acc)));
      return check(bad, KVCACHE_ERR_SEQ_RANGE, i, end, poolLen);
    });
    return andThen(ok, [&] {
      return planSlots(i, [&](Value j) {
        return e.load(op.getReqToToken(), {r, e.add(s, j)});
      });
    });
  }

  /// Check (e): target (first) and source of every accepted entry j of
  /// request i in [0, minSlots), writing the entries into the plan as they
  /// pass; a failure clears the row again. Returns whether all passed.
  Value planSlots(Value i, llvm::function_ref<Value(Value)> targetOf) {
    Value rowStart = e.mul(i, w);
    // Carries j, the number of accepted entries seen so far (the count check
    // passed, so j < acc), or -1 once a slot failed.
    Value seen = e.forLoopCarried(zero, w, one, zero, [&](Value c, Value j) {
      Value a = e.load(accept, {i, c});
      Value live = e.bitAnd(e.cmp(CmpIPredicate::ne, a, sentinel),
                            e.cmp(CmpIPredicate::sge, j, zero));
      return e.ifValue(
          live, e.i64Type(),
          [&] {
            Value tgt = targetOf(j), src = e.load(ocl, {a});
            Value badT = e.outside(tgt, zero, minSlots);
            Value badS = e.outside(src, zero, minSlots);
            Value k = e.add(rowStart, j);
            Value ok = check(e.bitOr(badT, badS), KVCACHE_ERR_SLOT, k,
                             e.select(badT, tgt, src), minSlots);
            e.store(tgt, plan, {k, zero});
            e.store(src, plan, {k, one});
            return e.select(ok, e.add(j, one), e.i64(-1));
          },
          [&] { return j; });
    });
    Value ok = e.cmp(CmpIPredicate::sge, seen, zero);
    e.ifThen(e.bitNot(ok), [&] { clearRow(i); });
    return ok;
  }

  /// NONE without moves, STAGED when a moving target of one request is a
  /// moving source or target of another, else PER_REQUEST. Quadratic and
  /// exact (the host path serves tests); moved > 0 implies W > 0.
  Value path(Value moved) {
    return e.ifValue(
        e.cmp(CmpIPredicate::eq, moved, zero), e.i64Type(),
        [&] { return e.i64(KVCACHE_PATH_NONE); },
        [&] {
          Value cross = e.forLoopCarried(
              zero, n, one, e.i1(false), [&](Value k1, Value any) {
                PlanEntry p1 = entry(k1);
                Value req1 = arith::DivSIOp::create(e.builder(), k1, w);
                return e.forLoopCarried(
                    zero, n, one, any, [&](Value k2, Value found) {
                      PlanEntry p2 = entry(k2);
                      Value req2 = arith::DivSIOp::create(e.builder(), k2, w);
                      Value shared =
                          e.bitOr(e.cmp(CmpIPredicate::eq, p1.tgt, p2.src),
                                  e.cmp(CmpIPredicate::eq, p1.tgt, p2.tgt));
                      Value hazard = e.bitAnd(
                          e.bitAnd(p1.moves, p2.moves),
                          e.bitAnd(e.cmp(CmpIPredicate::ne, req1, req2),
                                   shared));
                      return e.bitOr(found, hazard);
                    });
              });
          return e.select(cross, e.i64(KVCACHE_PATH_STAGED),
                          e.i64(KVCACHE_PATH_PER_REQUEST));
        });
  }

  /// Per buffer: temporary row m <- source of the m-th moving entry, then
  /// its target <- temporary row m.
  void move(Value moved) {
    emitGatherThenScatter(
        e, op.getContext(), table, numBuffers, zero, one, moved,
        [&](MovingFn fn) {
          e.forLoopCarried(zero, n, one, zero, [&](Value k, Value m) {
            PlanEntry p = entry(k);
            e.ifThen(p.moves, [&] { fn(m, p.src, p.tgt); });
            return e.add(m, e.select(p.moves, one, zero));
          });
        });
  }

  MoveAcceptedTokensOp op;
  HostEmitter e;
  Value zero, one, int64Max, accept, ocl, table, status, bs, w, n, nOcl,
      numBuffers, sentinel, maxReqs, poolLen, window, minSlots, plan;
};

/// plan[i * W + j] = (tgt(i, j), src(i, j)) of valid requests, else (0, 0);
/// per buffer: tmp[m] = row src of the m-th moving entry, then row tgt =
/// tmp[m]; status = (first violation, skipped, moved, path, 0).
struct MoveAcceptedTokensToLoops : OpRewritePattern<MoveAcceptedTokensOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MoveAcceptedTokensOp op,
                                PatternRewriter &rewriter) const override {
    AcceptedTokensLowering(op).lower();
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
  patterns.add<AssignTargetsToLoops, CompactSourcesToLoops, MoveRowsToLoops,
               MoveAcceptedTokensToLoops>(patterns.getContext());
}
