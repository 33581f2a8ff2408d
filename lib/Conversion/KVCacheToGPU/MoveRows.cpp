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
#include "MovePlan.h"
#include "Patterns.h"

#include "KVCache/IR/KVCache.h"
#include "KVCache/KVCacheABI.h"

using namespace mlir;
using namespace mlir::kvcache;
using arith::CmpIPredicate;

namespace {
constexpr int64_t kVectorBytes = 16;

/// Parameters shared by the kernels of one move, in this order.
enum { TABLE, SRC, TGT, WS, STATUS, N, B };

struct MoveRowsToKernels : KernelPattern<MoveRowsOp> {
  using KernelPattern::KernelPattern;

  SmallVector<KernelParam> params(MoveRowsOp op, bool withB) const {
    using P = KernelParam;
    SmallVector<KernelParam> ps = {
        P{P::GlobalPtr, 8},
        P{P::GlobalPtr, elementAlign(op.getSources())},
        P{P::GlobalPtr, elementAlign(op.getTargets())},
        P{P::GlobalPtr, 8},
        P{P::GlobalPtr, 8},
        P{P::Scalar}};
    if (withB)
      ps.push_back(P{P::Scalar});
    return ps;
  }

  /// Plan (classify = true) or check-only kernel: one block.
  ///   checked: every moved slot s lies in [0, min_b slots_b), else SLOT error.
  ///   classify: writer(i) = the moving entry whose target is source(i), if
  ///   any; depth(i) = 1 + depth(writer(i)), 0 without a writer, "infinite"
  ///   on or feeding a cycle (found by pointer jumping). The move list holds
  ///   entries of depth >= 1 in non-increasing depth (each reads its source
  ///   before its writer writes it), then the depth-0 entries from the back.
  void buildPlan(MoveRowsOp op, bool classify) const {
    int64_t T = options.scanBlockSize;
    KernelBuilder k(
        kernels, op.getLoc(),
        getKernelName(op, classify ? "move_plan" : "move_check", kernels),
        params(op, /*withB=*/true), T);
    ImplicitLocOpBuilder &b = k.builder();
    k.setLaunch({b.getNamedAttr("block", b.getI64IntegerAttr(T)),
                 b.getNamedAttr("grid", b.getStringAttr("single"))});
    k.setSingleBlock();
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Type srcT = elementType(op.getSources()),
         tgtT = elementType(op.getTargets());
    Value n = k.param(N), numBuffers = k.param(B), status = k.param(STATUS);
    Value zero = k.i64(0), one = k.i64(1), tid = k.threadId(), step = k.i64(T);
    bool checked = op.getChecked();
    using P = arith::CmpIPredicate;

    if (checked) {
      Value minSlots = k.forLoopCarried(
          zero, numBuffers, one, k.i64(INT64_MAX), [&](Value buf, Value m) {
            Value slots =
                k.loadI64(k.param(TABLE), i64,
                          k.add(k.mul(buf, k.i64(KVCACHE_BUFFER_COLUMNS)),
                                k.i64(KVCACHE_BUFFER_SLOTS)));
            return k.select(k.cmp(P::slt, slots, m), slots, m);
          });
      k.forLoop(tid, n, step, [&](Value i) {
        Value s = k.loadI64(k.param(SRC), srcT, i);
        Value t = k.loadI64(k.param(TGT), tgtT, i);
        k.ifThen(k.cmp(P::ne, s, t), [&] {
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

    MovePlan plan(k, k.param(WS), n, T, k.getKernel().getName());
    plan.init();
    auto src = [&](Value i) { return k.loadI64(k.param(SRC), srcT, i); };
    auto tgt = [&](Value i) { return k.loadI64(k.param(TGT), tgtT, i); };
    Value proceed =
        checked ? k.cmp(P::eq, k.statusCode(status), zero) : k.i1(true);
    k.ifThenElse(
        proceed,
        [&] {
          plan.insertTargets(src, tgt, /*duplicate=*/Value());
          plan.plan(src, tgt);
        },
        [&] {
          k.ifThen(k.cmp(P::eq, tid, zero), [&] {
            for (int64_t c = 0; c < 3; ++c)
              k.store(k.i32(0), k.gep(k.param(WS), i32, k.i64(c)), 4);
          });
        });
  }

  /// The bytes one thread of a row-move block moves: block (x, y) owns bytes
  /// [x * tile, (x + 1) * tile) of every row of buffer y; thread `lane` of
  /// each group of tile/16 threads owns 16 of them.
  struct RowTile {
    KernelBuilder &k;
    int64_t tile;
    Value lane, base, rowBytes, tileStart, col, ptr, vectorizable, staging;

    RowTile(KernelBuilder &k, Value table, int64_t tile, Value lane,
            bool staged)
        : k(k), tile(tile), lane(lane) {
      ImplicitLocOpBuilder &b = k.builder();
      Type i64 = b.getI64Type();
      Value row =
          k.mul(k.blockId(gpu::Dimension::y), k.i64(KVCACHE_BUFFER_COLUMNS));
      base = k.loadI64(table, i64, k.add(row, k.i64(KVCACHE_BUFFER_ADDRESS)));
      rowBytes =
          k.loadI64(table, i64, k.add(row, k.i64(KVCACHE_BUFFER_ROW_BYTES)));
      tileStart = k.mul(k.blockId(gpu::Dimension::x), k.i64(tile));
      if (staged)
        staging = k.sharedMemory((k.getKernel().getName() + "_staging").str(),
                                 LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                                 /*external=*/true);
    }
    /// Runs `body` when this block's tile starts inside the rows (blocks
    /// past a short row's end have nothing to do; uniform per block).
    void ifTileInRow(llvm::function_ref<void()> body) {
      k.ifThen(k.cmp(CmpIPredicate::slt, tileStart, rowBytes), [&] {
        ImplicitLocOpBuilder &b = k.builder();
        ptr = LLVM::IntToPtrOp::create(b, k.globalPtrType(), base);
        col = k.add(tileStart, k.mul(lane, k.i64(kVectorBytes)));
        vectorizable =
            k.cmp(CmpIPredicate::eq,
                  k.bitAnd(k.bitOr(base, rowBytes), k.i64(kVectorBytes - 1)),
                  k.i64(0));
        body();
      });
    }
    Value rowAt(Value slot) {
      return k.gep(ptr, k.builder().getI8Type(),
                   k.add(k.mul(slot, rowBytes), col));
    }
    /// This thread's 16 bytes of staging slot `slot` in dynamic shared memory.
    Value stagedAt(Value slot) {
      return k.gep(
          staging, k.builder().getI8Type(),
          k.add(k.mul(slot, k.i64(tile)), k.mul(lane, k.i64(kVectorBytes))));
    }
    /// Moves this thread's 16 bytes from `from` to `to`: one vector when the
    /// rows allow it, else byte by byte up to the end of the row.
    void move16(llvm::function_ref<Value()> from,
                llvm::function_ref<Value()> to) {
      ImplicitLocOpBuilder &b = k.builder();
      Type i8 = b.getI8Type();
      Type vec = VectorType::get({kVectorBytes / 4}, b.getI32Type());
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
            Value end =
                k.select(k.cmp(CmpIPredicate::slt, avail, k.i64(kVectorBytes)),
                         avail, k.i64(kVectorBytes));
            k.forLoop(k.i64(0), end, k.i64(1), [&](Value q) {
              Value v = k.load(i8, k.gep(f, i8, q), 1);
              k.store(v, k.gep(t, i8, q), 1);
            });
          });
    }
  };

  /// Copy kernel (after the plan): it moves the overlapping entries in
  /// chunks through shared memory (read the chunk, barrier, write it,
  /// barrier), deepest first, then copies the other entries straight from
  /// their source rows. With `disjoint`, it copies every entry directly.
  void buildCopy(MoveRowsOp op, bool gatherThenScatter) const {
    int64_t T = options.copyBlockSize, tile = options.tileBytes;
    int64_t lanes = tile / kVectorBytes, groups = T / lanes;
    int64_t capacity = options.stagingBytes / tile;
    KernelBuilder k(kernels, op.getLoc(),
                    getKernelName(op, "move_copy", kernels),
                    params(op, /*withB=*/false), T);
    ImplicitLocOpBuilder &b = k.builder();
    k.setLaunch({b.getNamedAttr("block", b.getI64IntegerAttr(T)),
                 b.getNamedAttr("grid", b.getStringAttr("row_tiles_x_buffers")),
                 b.getNamedAttr("tile_bytes", b.getI64IntegerAttr(tile)),
                 b.getNamedAttr("dynamic_shared_memory",
                                b.getI64IntegerAttr(
                                    gatherThenScatter ? capacity * tile : 0))});
    Type i8 = b.getI8Type(), i32 = b.getI32Type();
    Type srcT = elementType(op.getSources()),
         tgtT = elementType(op.getTargets());
    Value n = k.param(N), status = k.param(STATUS), ws = k.param(WS);
    Value zero = k.i64(0), one = k.i64(1), tid = k.threadId();
    bool checked = op.getChecked();
    Value lane = k.bitAnd(tid, k.i64(lanes - 1));
    Value group = arith::DivUIOp::create(b, tid, k.i64(lanes));
    Value step = k.i64(groups);
    Value list = k.gep(ws, i8, k.i64(16));
    auto entryAt = [&](Value pos) { return k.loadI64(list, i32, pos); };

    auto body = [&] {
      Value moving = gatherThenScatter ? k.loadI64(ws, i32, k.i64(0)) : n;
      Value staged = gatherThenScatter ? k.loadI64(ws, i32, k.i64(1)) : zero;
      RowTile rt(k, k.param(TABLE), tile, lane, gatherThenScatter);
      rt.ifTileInRow([&] {
        if (gatherThenScatter) {
          // Overlapping entries in chunks of `capacity`, deepest first: a
          // chunk is read whole before it is written, and no later chunk
          // reads a row an earlier chunk writes (see the plan kernel).
          Value cap = k.i64(capacity);
          k.forLoop(zero, staged, cap, [&](Value chunk) {
            Value rest = k.sub(staged, chunk);
            Value count =
                k.select(k.cmp(CmpIPredicate::slt, rest, cap), rest, cap);
            k.forLoop(group, count, step, [&](Value slot) {
              Value s =
                  k.loadI64(k.param(SRC), srcT, entryAt(k.add(chunk, slot)));
              rt.move16([&] { return rt.rowAt(s); },
                        [&] { return rt.stagedAt(slot); });
            });
            k.barrier();
            k.forLoop(group, count, step, [&](Value slot) {
              Value t =
                  k.loadI64(k.param(TGT), tgtT, entryAt(k.add(chunk, slot)));
              rt.move16([&] { return rt.stagedAt(slot); },
                        [&] { return rt.rowAt(t); });
            });
            k.barrier();
          });
        }
        k.forLoop(group, k.sub(moving, staged), step, [&](Value pos) {
          Value e =
              gatherThenScatter ? entryAt(k.sub(k.sub(n, one), pos)) : pos;
          Value s = k.loadI64(k.param(SRC), srcT, e);
          Value t = k.loadI64(k.param(TGT), tgtT, e);
          k.ifThen(k.cmp(CmpIPredicate::ne, s, t), [&] {
            rt.move16([&] { return rt.rowAt(s); }, [&] { return rt.rowAt(t); });
          });
        });
      });
    };

    Value proceed = checked
                        ? k.cmp(CmpIPredicate::eq, k.statusCode(status), zero)
                        : k.i1(true);
    k.ifThen(proceed, [&] {
      if (!gatherThenScatter)
        return body();
      // Entries on or feeding a cycle must all be staged in one chunk. All
      // blocks read the same count: either all move, or none writes.
      Value cyclic = k.loadI64(ws, i32, k.i64(2));
      k.ifThenElse(
          k.cmp(CmpIPredicate::sgt, cyclic, k.i64(capacity)),
          [&] {
            if (!checked)
              return;
            Value first =
                k.cmp(CmpIPredicate::eq,
                      k.bitOr(k.bitOr(tid, k.blockId(gpu::Dimension::x)),
                              k.blockId(gpu::Dimension::y)),
                      zero);
            k.ifThen(first, [&] {
              k.recordError(status, KVCACHE_ERR_STAGING_CAPACITY, zero, cyclic,
                            k.i64(capacity));
            });
          },
          body);
    });
  }

  /// Stage-all kernel, for batches of at most `staging-bytes / tile-bytes`
  /// entries, in place of plan + copy: block (x, y) reads the tile of every
  /// moved entry's source row into shared memory, waits at a barrier, then
  /// writes every target. No classification and one launch fewer; a checked
  /// block first tests every slot itself (all blocks find the same
  /// violations, so either all move or none writes).
  void buildStageAll(MoveRowsOp op) const {
    int64_t T = options.copyBlockSize, tile = options.tileBytes;
    int64_t lanes = tile / kVectorBytes, groups = T / lanes;
    int64_t capacity = options.stagingBytes / tile;
    using KP = KernelParam;
    KernelBuilder k(
        kernels, op.getLoc(), getKernelName(op, "move_stage_all", kernels),
        {KP{KP::GlobalPtr, 8}, KP{KP::GlobalPtr, elementAlign(op.getSources())},
         KP{KP::GlobalPtr, elementAlign(op.getTargets())}, KP{KP::GlobalPtr, 8},
         KP{KP::Scalar}, KP{KP::Scalar}},
        T);
    enum { S_TABLE, S_SRC, S_TGT, S_STATUS, S_N, S_B };
    ImplicitLocOpBuilder &b = k.builder();
    k.setLaunch({b.getNamedAttr("block", b.getI64IntegerAttr(T)),
                 b.getNamedAttr("grid", b.getStringAttr("row_tiles_x_buffers")),
                 b.getNamedAttr("tile_bytes", b.getI64IntegerAttr(tile)),
                 b.getNamedAttr("max_entries", b.getI64IntegerAttr(capacity)),
                 b.getNamedAttr("dynamic_shared_memory",
                                b.getI64IntegerAttr(capacity * tile))});
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Type srcT = elementType(op.getSources()),
         tgtT = elementType(op.getTargets());
    Value n = k.param(S_N), status = k.param(S_STATUS),
          table = k.param(S_TABLE);
    Value zero = k.i64(0), tid = k.threadId();
    Value lane = k.bitAnd(tid, k.i64(lanes - 1));
    Value group = arith::DivUIOp::create(b, tid, k.i64(lanes));
    Value step = k.i64(groups);
    auto moved = [&](Value pos, llvm::function_ref<void(Value, Value)> fn) {
      Value s = k.loadI64(k.param(S_SRC), srcT, pos);
      Value t = k.loadI64(k.param(S_TGT), tgtT, pos);
      k.ifThen(k.cmp(CmpIPredicate::ne, s, t), [&] { fn(s, t); });
    };

    Value proceed = op.getChecked()
                        ? k.cmp(CmpIPredicate::eq, k.statusCode(status), zero)
                        : k.i1(true);
    k.ifThen(proceed, [&] {
      Value clean = k.i1(true);
      if (op.getChecked()) {
        // [0]: smallest slot count of all buffers, [1]: 1 once a bad slot
        // is seen by any thread of this block.
        Value shared =
            k.sharedMemory((k.getKernel().getName() + "_check").str(),
                           LLVM::LLVMArrayType::get(i64, 2), false);
        Value minSlotsP = k.gep(shared, i64, k.i64(0));
        Value badP = k.gep(shared, i64, k.i64(1));
        k.ifThen(k.cmp(CmpIPredicate::eq, tid, zero), [&] {
          k.store(k.i64(INT64_MAX), minSlotsP, 8);
          k.store(zero, badP, 8);
        });
        k.barrier();
        k.forLoop(tid, k.param(S_B), k.i64(T), [&](Value buf) {
          Value slots =
              k.loadI64(table, i64,
                        k.add(k.mul(buf, k.i64(KVCACHE_BUFFER_COLUMNS)),
                              k.i64(KVCACHE_BUFFER_SLOTS)));
          LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::min, minSlotsP, slots,
                                    LLVM::AtomicOrdering::monotonic, "block");
        });
        k.barrier();
        Value minSlots = k.load(i64, minSlotsP, 8);
        k.forLoop(tid, n, k.i64(T), [&](Value i) {
          moved(i, [&](Value s, Value t) {
            Value badS = k.outside(s, zero, minSlots);
            Value badT = k.outside(t, zero, minSlots);
            k.ifThen(k.bitOr(badS, badT), [&] {
              k.store(k.i64(1), badP, 8);
              k.recordError(status, KVCACHE_ERR_SLOT, i, k.select(badS, s, t),
                            minSlots);
            });
          });
        });
        k.barrier();
        clean = k.cmp(CmpIPredicate::eq, k.load(i64, badP, 8), zero);
      }
      k.ifThen(clean, [&] {
        RowTile rt(k, table, tile, lane, /*staged=*/true);
        rt.ifTileInRow([&] {
          k.forLoop(group, n, step, [&](Value pos) {
            moved(pos, [&](Value s, Value) {
              rt.move16([&] { return rt.rowAt(s); },
                        [&] { return rt.stagedAt(pos); });
            });
          });
          k.barrier();
          k.forLoop(group, n, step, [&](Value pos) {
            moved(pos, [&](Value, Value t) {
              rt.move16([&] { return rt.stagedAt(pos); },
                        [&] { return rt.rowAt(t); });
            });
          });
        });
      });
    });
    (void)i32;
  }

  LogicalResult matchAndRewrite(MoveRowsOp op,
                                PatternRewriter &rewriter) const override {
    bool gatherThenScatter =
        op.getOverlap() == OverlapPolicy::GatherThenScatter;
    if (gatherThenScatter || op.getChecked())
      buildPlan(op, /*classify=*/gatherThenScatter);
    buildCopy(op, gatherThenScatter);
    if (gatherThenScatter)
      buildStageAll(op);
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void mlir::kvcache::populateMoveRowsToGPUPattern(
    RewritePatternSet &patterns, gpu::GPUModuleOp kernels,
    const GPUKernelOptions &options) {
  patterns.add<MoveRowsToKernels>(patterns.getContext(), kernels, options);
}
