//===- MoveRows.cpp - kvcache.move_rows to GPU kernels --------------------===//
//
// kvcache.move_rows -> @F_move_plan (one block: slot checks, the overlap
// classification, the move list) and @F_move_copy (one block per row tile and
// buffer: stage the overlapping rows' tile in shared memory, barrier, write
// everything). A block owns disjoint bytes of one buffer, so the barrier alone
// makes the move gather-then-scatter. With overlap = disjoint, a checked move
// gets @F_move_check (slot checks only) and the copy reads every entry.
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
constexpr int64_t kVectorBytes = 16;
/// Fibonacci hashing multiplier (2^64 / golden ratio).
constexpr uint64_t kHashMultiplier = 0x9E3779B97F4A7C15ull;

/// Parameters shared by the kernels of one move, in this order.
enum { TABLE, SRC, TGT, WS, STATUS, N, B };

struct MoveRowsToKernels : OpRewritePattern<MoveRowsOp> {
  MoveRowsToKernels(MLIRContext *ctx, gpu::GPUModuleOp kernels,
                    const GPUKernelOptions &options)
      : OpRewritePattern(ctx), kernels(kernels), options(options) {}

  SmallVector<KernelParam> params(MoveRowsOp op, bool withB) const {
    using P = KernelParam;
    SmallVector<KernelParam> ps = {
        P{P::GlobalPtr, 8}, P{P::GlobalPtr, elementAlign(op.getSources())},
        P{P::GlobalPtr, elementAlign(op.getTargets())}, P{P::GlobalPtr, 8},
        P{P::GlobalPtr, 8}, P{P::Scalar}};
    if (withB)
      ps.push_back(P{P::Scalar});
    return ps;
  }

  /// Plan (classify = true) or check-only kernel: one block.
  ///   checked: every moved slot s lies in [0, min_b slots_b), else SLOT error.
  ///   classify: set = {t_i : s_i != t_i}; entry i is overlapping when
  ///   s_i != t_i and s_i is in set; the move list holds overlapping entries
  ///   from the front and the other moving entries from the back.
  void buildPlan(MoveRowsOp op, bool classify) const {
    int64_t T = options.scanBlockSize;
    KernelBuilder k(kernels, op.getLoc(),
                    getKernelName(op, classify ? "move_plan" : "move_check",
                                  kernels),
                    params(op, /*withB=*/true), T);
    ImplicitLocOpBuilder &b = k.builder();
    k.setLaunch({b.getNamedAttr("block", b.getI64IntegerAttr(T)),
                 b.getNamedAttr("grid", b.getStringAttr("single"))});
    Type i8 = b.getI8Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
    Type srcT = elementType(op.getSources()), tgtT = elementType(op.getTargets());
    Value n = k.param(N), numBuffers = k.param(B), status = k.param(STATUS);
    Value zero = k.i64(0), one = k.i64(1), tid = k.threadId(), step = k.i64(T);
    bool checked = op.getChecked();

    if (checked) {
      Value minSlots = k.forLoopCarried(
          zero, numBuffers, one, k.i64(INT64_MAX), [&](Value buf, Value m) {
            Value slots = k.loadI64(
                k.param(TABLE), i64,
                k.add(k.mul(buf, k.i64(KVCACHE_BUFFER_COLUMNS)),
                      k.i64(KVCACHE_BUFFER_SLOTS)));
            return k.select(k.cmp(CmpIPredicate::slt, slots, m), slots, m);
          });
      k.forLoop(tid, n, step, [&](Value i) {
        Value s = k.loadI64(k.param(SRC), srcT, i);
        Value t = k.loadI64(k.param(TGT), tgtT, i);
        k.ifThen(k.cmp(CmpIPredicate::ne, s, t), [&] {
          Value badS = k.outside(s, zero, minSlots);
          Value badT = k.outside(t, zero, minSlots);
          k.ifThen(k.bitOr(badS, badT), [&] {
            k.recordError(status, KVCACHE_ERR_SLOT, i, k.select(badS, s, t),
                          minSlots);
          });
        });
      });
    }
    if (!classify)
      return;

    // Workspace layout: KVCacheABI.h.
    Value ws = k.param(WS);
    Value list = k.gep(ws, i8, k.i64(16));
    Value twoN = k.mul(n, k.i64(2));
    Value atLeast = k.select(k.cmp(CmpIPredicate::sgt, twoN, k.i64(64)), twoN,
                             k.i64(64));
    Value clz = LLVM::CountLeadingZerosOp::create(
        b, i64, k.sub(atLeast, one), b.getBoolAttr(false));
    Value log2P = k.sub(k.i64(64), clz);
    Value capacity = arith::ShLIOp::create(b, one, log2P);
    Value hashOffset = k.bitAnd(k.add(k.mul(n, k.i64(4)), k.i64(16 + 7)),
                                k.i64(~int64_t(7)));
    Value set = k.gep(ws, i8, hashOffset);
    Value counters = k.sharedMemory(
        (k.getKernel().getName() + "_counts").str(),
        LLVM::LLVMArrayType::get(i32, 2), /*external=*/false);
    Value empty = k.i64(-1);
    k.ifThen(k.cmp(CmpIPredicate::eq, tid, zero), [&] {
      k.store(k.i32(0), k.gep(counters, i32, k.i64(0)), 4);
      k.store(k.i32(0), k.gep(counters, i32, k.i64(1)), 4);
    });
    k.forLoop(tid, capacity, step,
              [&](Value e) { k.store(empty, k.gep(set, i64, e), 8); });
    k.barrier();

    auto home = [&](Value key) {
      return arith::ShRUIOp::create(
          b, k.mul(key, k.i64(static_cast<int64_t>(kHashMultiplier))),
          k.sub(k.i64(64), log2P));
    };
    auto nextSlot = [&](Value h) {
      return k.bitAnd(k.add(h, one), k.sub(capacity, one));
    };
    Value proceed =
        checked ? k.cmp(CmpIPredicate::eq, k.statusCode(status), zero)
                : Value(arith::ConstantIntOp::create(b, b.getI1Type(), 1));
    k.ifThenElse(
        proceed,
        [&] {
          // Insert every moved target (linear probing; the set holds at
          // least twice as many slots as keys, so probing ends).
          k.forLoop(tid, n, step, [&](Value i) {
            Value s = k.loadI64(k.param(SRC), srcT, i);
            Value t = k.loadI64(k.param(TGT), tgtT, i);
            k.ifThen(k.cmp(CmpIPredicate::ne, s, t), [&] {
              k.whileLoop(home(t), [&](Value h) -> std::pair<Value, Value> {
                auto cas = LLVM::AtomicCmpXchgOp::create(
                    b, k.gep(set, i64, h), empty, t,
                    LLVM::AtomicOrdering::monotonic,
                    LLVM::AtomicOrdering::monotonic);
                Value old = LLVM::ExtractValueOp::create(b, cas, ArrayRef<int64_t>{0});
                Value done = k.bitOr(k.cmp(CmpIPredicate::eq, old, empty),
                                     k.cmp(CmpIPredicate::eq, old, t));
                Value more = arith::XOrIOp::create(
                    b, done, arith::ConstantIntOp::create(b, b.getI1Type(), 1));
                return {more, k.select(done, h, nextSlot(h))};
              });
            });
          });
          k.barrier();
          // Classify and append to the move list.
          k.forLoop(tid, n, step, [&](Value i) {
            Value s = k.loadI64(k.param(SRC), srcT, i);
            Value t = k.loadI64(k.param(TGT), tgtT, i);
            k.ifThen(k.cmp(CmpIPredicate::ne, s, t), [&] {
              Value h = k.whileLoop(home(s), [&](Value h) -> std::pair<Value, Value> {
                Value v = k.load(i64, k.gep(set, i64, h), 8);
                Value stop = k.bitOr(k.cmp(CmpIPredicate::eq, v, s),
                                     k.cmp(CmpIPredicate::eq, v, empty));
                Value more = arith::XOrIOp::create(
                    b, stop, arith::ConstantIntOp::create(b, b.getI1Type(), 1));
                return {more, k.select(stop, h, nextSlot(h))};
              });
              Value overlapping =
                  k.cmp(CmpIPredicate::eq, k.load(i64, k.gep(set, i64, h), 8), s);
              Value which = k.select(overlapping, k.i64(0), k.i64(1));
              Value pos = k.toI64(LLVM::AtomicRMWOp::create(
                  b, LLVM::AtomicBinOp::add, k.gep(counters, i32, which),
                  k.i32(1), LLVM::AtomicOrdering::monotonic));
              Value at = k.select(overlapping, pos, k.sub(k.sub(n, one), pos));
              k.store(k.toI32(i), k.gep(list, i32, at), 4);
            });
          });
          k.barrier();
          k.ifThen(k.cmp(CmpIPredicate::eq, tid, zero), [&] {
            Value over = k.load(i32, k.gep(counters, i32, k.i64(0)), 4);
            Value rest = k.load(i32, k.gep(counters, i32, k.i64(1)), 4);
            k.store(arith::AddIOp::create(b, over, rest), k.gep(ws, i32, k.i64(0)), 4);
            k.store(over, k.gep(ws, i32, k.i64(1)), 4);
          });
        },
        [&] {
          k.ifThen(k.cmp(CmpIPredicate::eq, tid, zero), [&] {
            k.store(k.i32(0), k.gep(ws, i32, k.i64(0)), 4);
            k.store(k.i32(0), k.gep(ws, i32, k.i64(1)), 4);
          });
        });
  }

  /// Copy kernel: block (x, y) owns bytes [x * tile, (x + 1) * tile) of the
  /// rows of buffer y. It stages the overlapping entries' bytes in shared
  /// memory, waits at a barrier, writes them, then copies the other entries
  /// straight from their source rows.
  void buildCopy(MoveRowsOp op, bool gatherThenScatter) const {
    int64_t T = options.copyBlockSize, tile = options.tileBytes;
    int64_t lanes = tile / kVectorBytes, groups = T / lanes;
    int64_t capacity = options.stagingBytes / tile;
    KernelBuilder k(kernels, op.getLoc(),
                    getKernelName(op, "move_copy", kernels),
                    params(op, /*withB=*/false), T);
    ImplicitLocOpBuilder &b = k.builder();
    k.setLaunch(
        {b.getNamedAttr("block", b.getI64IntegerAttr(T)),
         b.getNamedAttr("grid", b.getStringAttr("row_tiles_x_buffers")),
         b.getNamedAttr("tile_bytes", b.getI64IntegerAttr(tile)),
         b.getNamedAttr("dynamic_shared_memory",
                        b.getI64IntegerAttr(gatherThenScatter ? capacity * tile : 0))});
    Type i8 = b.getI8Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
    Type vec = VectorType::get({kVectorBytes / 4}, i32);
    Type srcT = elementType(op.getSources()), tgtT = elementType(op.getTargets());
    Value n = k.param(N), status = k.param(STATUS), ws = k.param(WS);
    Value zero = k.i64(0), one = k.i64(1), tid = k.threadId();
    bool checked = op.getChecked();

    Value lane = k.bitAnd(tid, k.i64(lanes - 1));
    Value group = arith::DivUIOp::create(b, tid, k.i64(lanes));
    Value step = k.i64(groups);
    Value list = k.gep(ws, i8, k.i64(16));

    auto body = [&] {
      Value moving = gatherThenScatter ? k.loadI64(ws, i32, k.i64(0)) : n;
      Value staged = gatherThenScatter ? k.loadI64(ws, i32, k.i64(1)) : zero;
      Value buf = k.blockId(gpu::Dimension::y);
      Value row = k.mul(buf, k.i64(KVCACHE_BUFFER_COLUMNS));
      Value base = k.loadI64(k.param(TABLE), i64,
                             k.add(row, k.i64(KVCACHE_BUFFER_ADDRESS)));
      Value rowBytes = k.loadI64(k.param(TABLE), i64,
                                 k.add(row, k.i64(KVCACHE_BUFFER_ROW_BYTES)));
      Value tileStart = k.mul(k.blockId(gpu::Dimension::x), k.i64(tile));
      k.ifThen(k.cmp(CmpIPredicate::slt, tileStart, rowBytes), [&] {
        Value ptr = LLVM::IntToPtrOp::create(b, k.globalPtrType(), base);
        Value col = k.add(tileStart, k.mul(lane, k.i64(kVectorBytes)));
        Value vectorizable = k.cmp(
            CmpIPredicate::eq,
            k.bitAnd(k.bitOr(base, rowBytes), k.i64(kVectorBytes - 1)), zero);
        Value staging =
            gatherThenScatter
                ? k.sharedMemory((k.getKernel().getName() + "_staging").str(),
                                 LLVM::LLVMArrayType::get(i8, 0), true)
                : Value();
        auto rowAt = [&](Value slot) {
          return k.gep(ptr, i8, k.add(k.mul(slot, rowBytes), col));
        };
        // Moves this thread's 16 bytes from `from` to `to`: one vector when
        // the rows allow it, else byte by byte up to the end of the row.
        auto move16 = [&](llvm::function_ref<Value()> from,
                          llvm::function_ref<Value()> to) {
          k.ifThenElse(
              vectorizable,
              [&] {
                k.ifThen(k.cmp(CmpIPredicate::slt, col, rowBytes), [&] {
                  Value v = k.load(vec, from(), kVectorBytes);
                  k.store(v, to(), kVectorBytes);
                });
              },
              [&] {
                Value f = from(), t = to();
                Value avail = k.sub(rowBytes, col);
                Value end = k.select(
                    k.cmp(CmpIPredicate::slt, avail, k.i64(kVectorBytes)), avail,
                    k.i64(kVectorBytes));
                k.forLoop(zero, end, one, [&](Value q) {
                  k.store(k.load(i8, k.gep(f, i8, q), 1), k.gep(t, i8, q), 1);
                });
              });
        };
        auto stagedAt = [&](Value slotInList) {
          return k.gep(staging, i8,
                       k.add(k.mul(slotInList, k.i64(tile)),
                             k.mul(lane, k.i64(kVectorBytes))));
        };
        auto entryAt = [&](Value pos) { return k.loadI64(list, i32, pos); };
        if (gatherThenScatter) {
          k.forLoop(group, staged, step, [&](Value pos) {
            Value s = k.loadI64(k.param(SRC), srcT, entryAt(pos));
            move16([&] { return rowAt(s); }, [&] { return stagedAt(pos); });
          });
          k.barrier();
          k.forLoop(group, staged, step, [&](Value pos) {
            Value t = k.loadI64(k.param(TGT), tgtT, entryAt(pos));
            move16([&] { return stagedAt(pos); }, [&] { return rowAt(t); });
          });
        }
        k.forLoop(group, k.sub(moving, staged), step, [&](Value pos) {
          Value e = gatherThenScatter ? entryAt(k.sub(k.sub(n, one), pos)) : pos;
          Value s = k.loadI64(k.param(SRC), srcT, e);
          Value t = k.loadI64(k.param(TGT), tgtT, e);
          k.ifThen(k.cmp(CmpIPredicate::ne, s, t), [&] {
            move16([&] { return rowAt(s); }, [&] { return rowAt(t); });
          });
        });
      });
    };

    Value proceed =
        checked ? k.cmp(CmpIPredicate::eq, k.statusCode(status), zero)
                : Value(arith::ConstantIntOp::create(b, b.getI1Type(), 1));
    k.ifThen(proceed, [&] {
      if (!gatherThenScatter)
        return body();
      // All blocks see the same count: either all stage, or none writes.
      Value staged = k.loadI64(ws, i32, k.i64(1));
      k.ifThenElse(
          k.cmp(CmpIPredicate::sgt, staged, k.i64(capacity)),
          [&] {
            if (!checked)
              return;
            Value first = k.cmp(
                CmpIPredicate::eq,
                k.bitOr(k.bitOr(tid, k.blockId(gpu::Dimension::x)),
                        k.blockId(gpu::Dimension::y)),
                zero);
            k.ifThen(first, [&] {
              k.recordError(status, KVCACHE_ERR_STAGING_CAPACITY, zero, staged,
                            k.i64(capacity));
            });
          },
          body);
    });
  }

  LogicalResult matchAndRewrite(MoveRowsOp op,
                                PatternRewriter &rewriter) const override {
    bool gatherThenScatter = op.getOverlap() == OverlapPolicy::GatherThenScatter;
    if (gatherThenScatter || op.getChecked())
      buildPlan(op, /*classify=*/gatherThenScatter);
    buildCopy(op, gatherThenScatter);
    rewriter.eraseOp(op);
    return success();
  }

  gpu::GPUModuleOp kernels;
  GPUKernelOptions options;
};
} // namespace

void mlir::kvcache::populateMoveRowsToGPUPattern(
    RewritePatternSet &patterns, gpu::GPUModuleOp kernels,
    const GPUKernelOptions &options) {
  patterns.add<MoveRowsToKernels>(patterns.getContext(), kernels, options);
}
