//===- FusedMove.cpp - kvcache.move_accepted_tokens to one GPU kernel -----===//
//
// kvcache.move_accepted_tokens -> one kernel named after its function, the
// entry point the runtime launches once per call. Three phases:
//
//  A. Plan. Per request: validate every bound (a bad request is skipped and
//     reported), write its (target, source) pairs at entry i * W + j, and
//     decide whether every hazard stays inside its request: no target is
//     written twice, no source is another request's target, and within a
//     request no entry reads a row an earlier entry writes (a batch that
//     moves nothing skips the check). Batches of at most `C = block * 4`
//     entries are planned by every block on its own, in shared memory (no
//     block waits for another). Larger ones are validated by all blocks, a
//     chunk of `block` requests at a time (claimed from a counter), into the
//     workspace; the block that validates the last chunk checks and plans
//     there while the others wait for its verdict. That block waits for
//     nobody, so this cannot deadlock whatever the residency.
//  B. Move. Safe batch: one thread per (request, two buffers, 16-byte
//     slice) moves the request's entries in order, four at a time in both
//     buffers (loads, then stores). Otherwise the block that owns a
//     (buffer, 16-byte column) stages every moving entry's 16 bytes in
//     registers, waits at a barrier and writes; large batches stage in
//     depth order (MovePlan), chunk by chunk, then copy the entries nobody
//     else writes directly.
//  C. The last block to finish clears the workspace control words.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MovePlan.h"
#include "Patterns.h"

#include "KVCache/IR/KVCache.h"
#include "KVCache/KVCacheABI.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::kvcache;
using P = arith::CmpIPredicate;

namespace {
constexpr int64_t kVectorBytes = 16;
/// Register slots per thread when staging: C = block * kStageSlots entries.
constexpr int64_t kStageSlots = 4;
/// Buffers, and entries of one request, whose slices a thread loads before
/// it stores them (kBufferGroup * kEntryGroup 16-byte loads in flight).
constexpr int64_t kBufferGroup = 2;
constexpr int64_t kEntryGroup = 4;
/// Launch bound the manifest states (blocks per SM the grid may fill).
constexpr int64_t kBlocksPerSM = 2;

/// Shared i64 values of the plan phase.
enum {
  MIN_SLOTS,
  FIRST_BAD,
  CODE,
  ENTRY,
  VALUE,
  BOUND,
  SKIPPED,
  MOVED,
  NUM_VALUES
};
/// Shared i32 flags: hazard across requests, whether the block plans (0)
/// or waits (1), the chunk it claimed, the verdict.
enum { UNSAFE, PLANNER, CLAIMED, VERDICT, NUM_FLAGS };
/// Verdicts published by a planner block (0 = not yet).
enum { V_PER_REQUEST = 1, V_STAGED = 2, V_NONE = 3 };

const char *targetSourceName(TargetSource s) {
  return s == TargetSource::ReqToToken ? "req_to_token" : "window";
}

/// One parameter of the entry point: its ABI name (KVCACHE_FOREACH_PARAM)
/// and, for tensors, the operand it stands for.
struct Param {
  StringRef name;
  Value operand;
  KernelParam kind;
};

struct FusedMoveToKernel : KernelPattern<MoveAcceptedTokensOp> {
  using KernelPattern::KernelPattern;

  LogicalResult matchAndRewrite(MoveAcceptedTokensOp op,
                                PatternRewriter &rewriter) const override {
    auto func = op->getParentOfType<func::FuncOp>();
    if (!func)
      return op.emitOpError("must be inside a func.func: the function is the "
                            "entry point it becomes");
    bool rows = op.getTargets() == TargetSource::ReqToToken;
    int64_t T = options.copyBlockSize;
    int64_t C = T * kStageSlots;
    using KP = KernelParam;
    auto tensor = [&](StringRef name, Value v) {
      return Param{name, v, KP{KP::GlobalPtr, elementAlign(v)}};
    };
    auto scalar = [&](StringRef name) {
      return Param{name, Value(), KP{KP::Scalar}};
    };
    SmallVector<Param> params;
    if (rows) {
      params.push_back(tensor("req_pool_indices", op.getReqPoolIndices()));
      params.push_back(tensor("req_to_token", op.getReqToToken()));
      params.push_back(tensor("seq_lens", op.getSeqLens()));
    }
    params.push_back(tensor("num_correct_drafts", op.getNumCorrectDrafts()));
    params.push_back(tensor("accept_index", op.getAcceptIndex()));
    params.push_back(tensor("out_cache_loc", op.getOutCacheLoc()));
    params.push_back(Param{"buffers", op.getBuffers(), KP{KP::GlobalPtr, 8}});
    params.push_back(
        Param{"workspace", op.getWorkspace(), KP{KP::GlobalPtr, 16}});
    params.push_back(Param{"status", op.getStatus(), KP{KP::GlobalPtr, 8}});
    if (op.getReport())
      params.push_back(Param{"report", op.getReport(), KP{KP::GlobalPtr, 8}});
    for (StringRef s : {"bs", "accept_width"})
      params.push_back(scalar(s));
    if (rows)
      for (StringRef s : {"max_reqs", "pool_len"})
        params.push_back(scalar(s));
    for (StringRef s :
         {"num_out_cache_loc", "num_buffers", "row_vectors", "min_slots"})
      params.push_back(scalar(s));

    // The host entry takes the function's arguments: each must be one of
    // the op's operands, so that the manifest can name it.
    SmallVector<Attribute> hostArgs;
    for (BlockArgument arg : func.getArguments()) {
      auto it = llvm::find_if(params,
                              [&](const Param &p) { return p.operand == arg; });
      if (it == params.end())
        return op.emitOpError()
               << "argument " << arg.getArgNumber() << " of @" << func.getName()
               << " is not an operand of the move: the entry point takes "
                  "exactly the move's operands";
    }
    for (BlockArgument arg : func.getArguments())
      hostArgs.push_back(
          rewriter.getStringAttr(llvm::find_if(params, [&](const Param &p) {
                                   return p.operand == arg;
                                 })->name));
    for (const Param &p : params)
      if (p.operand && !isa<BlockArgument>(p.operand))
        return op.emitOpError()
               << "operand '" << p.name << "' must be an argument of @"
               << func.getName();

    SmallVector<KernelParam> kinds;
    SmallVector<Attribute> names;
    SmallVector<NamedAttribute> types;
    for (const Param &p : params) {
      kinds.push_back(p.kind);
      names.push_back(rewriter.getStringAttr(p.name));
      if (p.operand && p.kind.kind == KP::GlobalPtr)
        types.push_back(rewriter.getNamedAttr(
            p.name, TypeAttr::get(elementType(p.operand))));
    }
    std::string name = func.getName().str();
    gpu::GPUModuleOp module = kernels;
    if (module.lookupSymbol(name))
      return op.emitOpError() << "a kernel named @" << name << " exists";
    KernelBuilder k(module, op.getLoc(), name, kinds, T);
    ImplicitLocOpBuilder &b = k.builder();
    auto entry =
        func->getAttrOfType<FlatSymbolRefAttr>("kvcache.specialization_of");
    k.setLaunch(
        {b.getNamedAttr("block", b.getI64IntegerAttr(T)),
         b.getNamedAttr("grid", b.getStringAttr("work")),
         b.getNamedAttr("grid_units", b.getStrArrayAttr({"bs", "num_buffers",
                                                         "row_vectors"})),
         b.getNamedAttr("blocks_per_sm", b.getI64IntegerAttr(kBlocksPerSM)),
         b.getNamedAttr("dynamic_shared_memory", b.getI64IntegerAttr(0)),
         b.getNamedAttr("entry", b.getStringAttr(entry ? entry.getValue()
                                                       : func.getName())),
         b.getNamedAttr("targets",
                        b.getStringAttr(targetSourceName(op.getTargets()))),
         b.getNamedAttr("params", b.getArrayAttr(names)),
         b.getNamedAttr("host_args", b.getArrayAttr(hostArgs)),
         b.getNamedAttr("types", b.getDictionaryAttr(types))});
    // Residency the grid counts on: ptxas keeps registers within it.
    k.getKernel()->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                           b.getI32IntegerAttr(kBlocksPerSM));
    Emit e(k, op, params, T, C, rows);
    e.build();
    rewriter.eraseOp(op);
    return success();
  }

  /// The kernel body; one instance per entry point.
  struct Emit {
    KernelBuilder &k;
    ImplicitLocOpBuilder &b;
    MoveAcceptedTokensOp op;
    int64_t T, C;
    bool rows;
    Type i8, i32, i64, ptr, vec;
    llvm::StringMap<Value> p;
    Value tid, bid, nblocks, zero, one, minusOne;
    Value bs, W, n, local;
    Value vals, flags;      // shared plan values and flags
    Value tgtList, srcList; // entry lists (generic pointers)
    Value planWs;           // depth-plan workspace (global)

    Emit(KernelBuilder &k, MoveAcceptedTokensOp op, ArrayRef<Param> params,
         int64_t T, int64_t C, bool rows)
        : k(k), b(k.builder()), op(op), T(T), C(C), rows(rows) {
      for (auto [i, prm] : llvm::enumerate(params))
        p[prm.name] = k.param(i);
      i8 = b.getI8Type();
      i32 = b.getI32Type();
      i64 = b.getI64Type();
      ptr = LLVM::LLVMPointerType::get(b.getContext());
      vec = VectorType::get({kVectorBytes / 4}, i32);
    }

    Type eltOf(StringRef name) {
      if (name == "req_pool_indices")
        return elementType(op.getReqPoolIndices());
      if (name == "req_to_token")
        return elementType(op.getReqToToken());
      if (name == "seq_lens")
        return elementType(op.getSeqLens());
      if (name == "num_correct_drafts")
        return elementType(op.getNumCorrectDrafts());
      if (name == "accept_index")
        return elementType(op.getAcceptIndex());
      return elementType(op.getOutCacheLoc());
    }
    /// name[idx] sign-extended to i64, read only when `cond` holds (else 0):
    /// nothing is ever read out of bounds or from unwritten memory.
    Value loadIf(Value cond, StringRef name, Value idx) {
      return k.ifValue(
          cond, i64,
          [&]() -> Value { return k.loadI64(p[name], eltOf(name), idx); },
          [&]() -> Value { return zero; });
    }
    Value generic(Value v) { return LLVM::AddrSpaceCastOp::create(b, ptr, v); }
    Value val(int64_t f) { return k.gep(vals, i64, k.i64(f)); }
    Value flag(int64_t f) { return k.gep(flags, i32, k.i64(f)); }
    Value ctrl(int64_t f) { return k.gep(p["workspace"], i32, k.i64(f)); }
    Value total(int64_t f) { return k.gep(p["workspace"], i64, k.i64(f)); }
    Value globalAtomic(LLVM::AtomicBinOp bin, Value at, Value v) {
      return LLVM::AtomicRMWOp::create(
          b, bin, at, v, LLVM::AtomicOrdering::monotonic, "device");
    }
    Value sharedAtomic(LLVM::AtomicBinOp bin, Value at, Value v) {
      return LLVM::AtomicRMWOp::create(
          b, bin, at, v, LLVM::AtomicOrdering::monotonic, "block");
    }
    Value tgtAt(Value e) { return k.load(i64, k.gep(tgtList, i64, e), 8); }
    Value srcAt(Value e) { return k.load(i64, k.gep(srcList, i64, e), 8); }

    void build() {
      tid = k.threadId();
      bid = k.blockId(gpu::Dimension::x);
      nblocks = k.toI64(gpu::GridDimOp::create(b, gpu::Dimension::x));
      zero = k.i64(0);
      one = k.i64(1);
      minusOne = k.i64(-1);
      bs = p["bs"];
      W = p["accept_width"];
      n = k.mul(bs, W);
      local = k.cmp(P::sle, n, k.i64(C));
      std::string prefix = k.getKernel().getName().str();
      vals = k.sharedMemory(prefix + "_values",
                            LLVM::LLVMArrayType::get(i64, NUM_VALUES), false);
      flags = k.sharedMemory(prefix + "_flags",
                             LLVM::LLVMArrayType::get(i32, NUM_FLAGS), false);
      Value sTgt = k.sharedMemory(prefix + "_targets",
                                  LLVM::LLVMArrayType::get(i64, C), false);
      Value sSrc = k.sharedMemory(prefix + "_sources",
                                  LLVM::LLVMArrayType::get(i64, C), false);
      Value ws = p["workspace"];
      tgtList =
          k.select(local, generic(sTgt),
                   generic(k.gep(ws, i8, k.i64(kvcacheFusedTargetsOffset()))));
      srcList =
          k.select(local, generic(sSrc),
                   generic(k.gep(ws, i8,
                                 k.add(k.mul(n, k.i64(8)),
                                       k.i64(kvcacheFusedSourcesOffset(0))))));
      planWs = k.gep(
          ws, i8, k.add(k.mul(n, k.i64(16)), k.i64(kvcacheFusedPlanOffset(0))));
      Value isThread0 = k.cmp(P::eq, tid, zero);

      k.ifThen(isThread0, [&] {
        k.store(k.i32(0), flag(PLANNER), 4);
        k.store(k.i32(0), flag(UNSAFE), 4);
        k.store(k.i32(0), flag(VERDICT), 4);
        k.store(k.i64(INT64_MAX), val(MIN_SLOTS), 8);
        k.store(k.i64(INT64_MAX), val(FIRST_BAD), 8);
        for (int64_t f : {CODE, ENTRY, VALUE, BOUND, SKIPPED, MOVED})
          k.store(zero, val(f), 8);
      });
      k.barrier();
      // A large batch: every block validates the chunks of requests it
      // claims; the one that validates the last chunk plans.
      k.ifThen(k.bitNot(local), [&] { validateChunks(); });
      Value planner = k.cmp(P::eq, k.load(i32, flag(PLANNER), 4), k.i32(0));
      k.ifThenElse(
          planner, [&] { plan(sTgt, sSrc); }, [&] { waitVerdict(); });
      k.barrier();
      Value verdict = k.load(i32, flag(VERDICT), 4);
      k.ifThen(k.cmp(P::eq, verdict, k.i32(V_PER_REQUEST)),
               [&] { movePerRequest(); });
      k.ifThen(k.cmp(P::eq, verdict, k.i32(V_STAGED)), [&] { moveStaged(); });
      // C. The last block of a launch past the local capacity restores the
      // control words.
      k.ifThen(k.bitAnd(k.bitNot(local), isThread0), [&] {
        LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
        Value done = LLVM::AtomicRMWOp::create(
            b, LLVM::AtomicBinOp::add, ctrl(KVCACHE_CTRL_DONE), k.i32(1),
            LLVM::AtomicOrdering::monotonic, "device");
        k.ifThen(k.cmp(P::eq, k.toI64(done), k.sub(nblocks, one)), [&] {
          for (int64_t c :
               {KVCACHE_CTRL_CLAIM, KVCACHE_CTRL_FLAG, KVCACHE_CTRL_DONE})
            k.store(k.i32(0), ctrl(c), 4);
          for (int64_t t : {KVCACHE_TOTAL_MOVED, KVCACHE_TOTAL_SKIPPED,
                            KVCACHE_TOTAL_FIRST_BAD, KVCACHE_TOTAL_PROGRESS})
            k.store(zero, total(t), 8);
        });
      });
    }

    /// A batch past the local capacity, in every block: claim chunks of T
    /// requests (an atomic counter) and validate them, writing their entries
    /// to the workspace lists, until none is left (the next chunk is claimed
    /// while the current one is validated); then add the block's counts to
    /// the workspace totals and its progress to PROGRESS. The block whose
    /// addition completes the chunk count plans (PLANNER = 0), with the
    /// totals in its shared values; the others wait for its verdict. A block
    /// waits only for the planner, which is running and waits for nobody
    /// (every chunk was validated by a block that had claimed it, without
    /// waiting): no residency assumption can deadlock.
    void validateChunks() {
      Value isThread0 = k.cmp(P::eq, tid, zero);
      Value tT = k.i64(T);
      Value chunks = arith::DivUIOp::create(b, k.add(bs, k.i64(T - 1)), tT);
      auto claim = [&] {
        return globalAtomic(LLVM::AtomicBinOp::add, ctrl(KVCACHE_CTRL_CLAIM),
                            k.i32(1));
      };
      k.ifThen(isThread0, [&] { k.store(claim(), flag(CLAIMED), 4); });
      k.barrier();
      Value mine =
          k.whileLoop(zero, [&](Value done) -> std::pair<Value, Value> {
            Value c = k.toI64(k.load(i32, flag(CLAIMED), 4));
            Value more = k.cmp(P::slt, c, chunks);
            // Every thread has read CLAIMED before thread 0 replaces it.
            k.barrier();
            k.ifThen(more, [&] {
              Value next = k.ifValue(
                  isThread0, i32, [&]() -> Value { return claim(); },
                  [&]() -> Value { return k.i32(0); });
              Value i = k.add(k.mul(c, tT), tid);
              checkRequest(i, k.cmp(P::slt, i, bs), p["min_slots"]);
              k.ifThen(isThread0, [&] { k.store(next, flag(CLAIMED), 4); });
            });
            k.barrier();
            return {more, k.select(more, k.add(done, one), done)};
          });
      k.ifThen(isThread0, [&] {
        Value moved = k.load(i64, val(MOVED), 8);
        Value skipped = k.load(i64, val(SKIPPED), 8);
        Value firstBad = k.load(i64, val(FIRST_BAD), 8);
        Value anyMoved = k.cmp(P::sgt, moved, zero);
        Value anySkipped = k.cmp(P::sgt, skipped, zero);
        Value last = k.ifValue(
            k.cmp(P::sgt, mine, zero), b.getI1Type(),
            [&]() -> Value {
              k.ifThen(anyMoved, [&] {
                globalAtomic(LLVM::AtomicBinOp::add, total(KVCACHE_TOTAL_MOVED),
                             moved);
              });
              k.ifThen(anySkipped, [&] {
                globalAtomic(LLVM::AtomicBinOp::add,
                             total(KVCACHE_TOTAL_SKIPPED), skipped);
                globalAtomic(LLVM::AtomicBinOp::max,
                             total(KVCACHE_TOTAL_FIRST_BAD),
                             k.sub(k.i64(INT64_MAX), firstBad));
              });
              Value progress = k.add(
                  mine,
                  k.add(k.select(anyMoved, k.i64(int64_t(1) << 32), zero),
                        k.select(anySkipped, k.i64(int64_t(1) << 48), zero)));
              // Release: the block's entries and totals before its progress.
              LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
              Value after =
                  k.add(globalAtomic(LLVM::AtomicBinOp::add,
                                     total(KVCACHE_TOTAL_PROGRESS), progress),
                        progress);
              Value isLast =
                  k.cmp(P::eq, k.bitAnd(after, k.i64(0xffffffff)), chunks);
              // Acquire: every block's entries and totals are visible.
              k.ifThen(isLast, [&] {
                LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel,
                                      "device");
                // The totals, read only if some block moved or skipped
                // (otherwise they are all zero: no round trip).
                Value others = k.cmp(
                    P::ne, arith::ShRUIOp::create(b, after, k.i64(32)), zero);
                k.ifThen(others, [&] {
                  auto read = [&](int64_t t) {
                    return globalAtomic(LLVM::AtomicBinOp::add, total(t), zero);
                  };
                  Value m = read(KVCACHE_TOTAL_MOVED);
                  Value sk = read(KVCACHE_TOTAL_SKIPPED);
                  Value fb = read(KVCACHE_TOTAL_FIRST_BAD);
                  k.store(m, val(MOVED), 8);
                  k.store(sk, val(SKIPPED), 8);
                  k.store(k.select(k.cmp(P::eq, fb, zero), k.i64(INT64_MAX),
                                   k.sub(k.i64(INT64_MAX), fb)),
                          val(FIRST_BAD), 8);
                });
              });
              return isLast;
            },
            [&]() -> Value { return k.i1(false); });
        k.store(k.select(last, k.i32(0), k.i32(1)), flag(PLANNER), 4);
      });
      k.barrier();
    }

    /// Blocks of a launch past the local capacity other than the planner:
    /// wait for the
    /// published verdict (acquire), then read the lists like the planner.
    void waitVerdict() {
      k.ifThen(k.cmp(P::eq, tid, zero), [&] {
        Value v = k.whileLoop(k.i32(0), [&](Value) -> std::pair<Value, Value> {
          Value got = LLVM::LoadOp::create(
              b, i32, ctrl(KVCACHE_CTRL_FLAG), /*alignment=*/4,
              /*isVolatile=*/true, false, false, false,
              LLVM::AtomicOrdering::acquire, "device");
          Value waiting = k.cmp(P::eq, got, k.i32(0));
          k.ifThen(waiting, [&] { NVVM::NanosleepOp::create(b, k.i32(256)); });
          return {waiting, got};
        });
        LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
        k.store(v, flag(VERDICT), 4);
      });
    }

    /// Phase A on the planner: entries, checks, verdict, status record.
    void plan(Value sTgt, Value sSrc) {
      Value isThread0 = k.cmp(P::eq, tid, zero);
      // Every moved slot lies below the smallest slot count of all buffers
      // (the runtime passes it: a table walk here would cost every block a
      // memory round trip and a barrier).
      Value minSlots = p["min_slots"];
      // A local batch: its requests in rounds of T (uniform trip count);
      // a large one was validated by every block (validateChunks).
      k.ifThen(local, [&] {
        k.forLoop(zero, bs, k.i64(T), [&](Value base) {
          Value i = k.add(base, tid);
          Value active = k.cmp(P::slt, i, bs);
          checkRequest(i, active, minSlots);
        });
        k.barrier();
      });
      recordFirstViolation(minSlots);
      // Hazards across requests.
      auto src = [&](Value e) { return srcAt(e); };
      auto tgt = [&](Value e) { return tgtAt(e); };
      auto crossCheck = [&](MovePlan &table) {
        table.init();
        table.insertTargets(src, tgt, flag(UNSAFE));
        k.forLoop(tid, n, k.i64(T), [&](Value e) {
          Value s = srcAt(e), t = tgtAt(e);
          k.ifThen(k.cmp(P::ne, s, t), [&] {
            Value w = table.writerOf(s);
            Value other = k.bitAnd(k.cmp(P::sge, w, zero),
                                   k.cmp(P::ne, arith::DivUIOp::create(b, w, W),
                                         arith::DivUIOp::create(b, e, W)));
            k.ifThen(other, [&] { k.store(k.i32(1), flag(UNSAFE), 4); });
          });
        });
        k.barrier();
      };
      // A batch that moves nothing (a topk-1 chain) has no hazard to find:
      // the check is skipped (MOVED is final behind the rounds' barrier, so
      // the branch is uniform).
      Value anyMoves = k.cmp(P::sgt, k.load(i64, val(MOVED), 8), zero);
      Value capacityError = k.ifValue(
          anyMoves, b.getI1Type(),
          [&]() -> Value {
            return k.ifValue(
                local, b.getI1Type(),
                [&]() -> Value {
                  int64_t log2C = llvm::Log2_64(2 * C);
                  Value keys = k.sharedMemory(
                      (k.getKernel().getName() + "_keys").str(),
                      LLVM::LLVMArrayType::get(i64, int64_t(1) << log2C),
                      false);
                  Value values = k.sharedMemory(
                      (k.getKernel().getName() + "_writers").str(),
                      LLVM::LLVMArrayType::get(i32, int64_t(1) << log2C),
                      false);
                  MovePlan table(k, keys, values, log2C, n, T,
                                 (k.getKernel().getName() + "_local").str());
                  crossCheck(table);
                  return k.i1(false);
                },
                [&]() -> Value {
                  MovePlan table(k, planWs, n, T, k.getKernel().getName());
                  crossCheck(table);
                  Value unsafe =
                      k.cmp(P::ne, k.load(i32, flag(UNSAFE), 4), k.i32(0));
                  k.ifThen(unsafe, [&] { table.plan(src, tgt); });
                  // Rows on or feeding a cycle must fit one chunk.
                  Value cyclic = k.ifValue(
                      unsafe, i64,
                      [&]() -> Value {
                        return k.loadI64(planWs, i32, k.i64(2));
                      },
                      [&]() -> Value { return zero; });
                  return k.cmp(P::sgt, cyclic, k.i64(C));
                });
          },
          [&]() -> Value { return k.i1(false); });
      Value unsafe = k.cmp(P::ne, k.load(i32, flag(UNSAFE), 4), k.i32(0));
      Value moved = k.load(i64, val(MOVED), 8);
      Value verdict = k.select(
          k.bitOr(capacityError, k.cmp(P::eq, moved, zero)), k.i32(V_NONE),
          k.select(unsafe, k.i32(V_STAGED), k.i32(V_PER_REQUEST)));
      // The status record, whole, once per launch.
      Value recorder = k.bitAnd(
          isThread0, k.bitOr(k.bitNot(local), k.cmp(P::eq, bid, zero)));
      k.ifThen(recorder, [&] {
        Value st = p["status"];
        Value code = k.load(i64, val(CODE), 8);
        Value capFirst = k.bitAnd(capacityError, k.cmp(P::eq, code, zero));
        auto pick = [&](int64_t f, Value cap) {
          return k.select(capFirst, cap, k.load(i64, val(f), 8));
        };
        Value cyclic = k.ifValue(
            capacityError, i64,
            [&]() -> Value { return k.loadI64(planWs, i32, k.i64(2)); },
            [&]() -> Value { return zero; });
        auto put = [&](int64_t f, Value v) {
          k.store(v, k.gep(st, i64, k.i64(f)), 8);
        };
        put(KVCACHE_STATUS_CODE,
            k.select(capFirst, k.i64(KVCACHE_ERR_STAGING_CAPACITY), code));
        put(KVCACHE_STATUS_ENTRY, pick(ENTRY, zero));
        put(KVCACHE_STATUS_VALUE, pick(VALUE, cyclic));
        put(KVCACHE_STATUS_BOUND, pick(BOUND, k.i64(C)));
        put(KVCACHE_STATUS_SKIPPED, k.load(i64, val(SKIPPED), 8));
        put(KVCACHE_STATUS_MOVED, k.select(capacityError, zero, moved));
        put(KVCACHE_STATUS_PATH,
            k.select(k.cmp(P::eq, verdict, k.i32(V_NONE)),
                     k.i64(KVCACHE_PATH_NONE),
                     k.select(unsafe, k.i64(KVCACHE_PATH_STAGED),
                              k.i64(KVCACHE_PATH_PER_REQUEST))));
        put(KVCACHE_STATUS_RESERVED, zero);
        if (p.count("report"))
          report(k.select(capFirst, k.i64(KVCACHE_ERR_STAGING_CAPACITY), code),
                 pick(ENTRY, zero), pick(VALUE, cyclic), pick(BOUND, k.i64(C)),
                 k.load(i64, val(SKIPPED), 8));
        k.store(verdict, flag(VERDICT), 4);
        // Publish to the waiting blocks (release: lists and plan first).
        k.ifThen(k.bitNot(local), [&] {
          LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "device");
          LLVM::StoreOp::create(b, verdict, ctrl(KVCACHE_CTRL_FLAG), 4,
                                /*isVolatile=*/true, false, false,
                                LLVM::AtomicOrdering::release, "device");
        });
      });
      // Non-recording blocks of a local plan keep their own verdict.
      k.ifThen(k.bitAnd(isThread0, k.bitNot(recorder)),
               [&] { k.store(verdict, flag(VERDICT), 4); });
      (void)sTgt;
      (void)sSrc;
    }

    /// On a violation, records it in the report (a sequence lock in memory
    /// the host may read while the kernel runs, see KVCacheReportField) and,
    /// if the host asked for it, traps. System-scope volatile accesses and
    /// fences: the record usually lives in mapped host memory. Executions
    /// without a violation do not touch it (no host round trip).
    void report(Value code, Value entry, Value value, Value bound,
                Value skipped) {
      k.ifThen(k.cmp(P::ne, code, zero), [&] {
        Value r = p["report"];
        auto field = [&](int64_t f) { return k.gep(r, i64, k.i64(f)); };
        auto load = [&](int64_t f) {
          return LLVM::LoadOp::create(b, i64, field(f), 8, /*isVolatile=*/true)
              .getResult();
        };
        auto put = [&](int64_t f, Value v) {
          LLVM::StoreOp::create(b, v, field(f), 8, /*isVolatile=*/true);
        };
        auto fence = [&] {
          LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, "");
        };
        // An odd sequence left by a trapped or killed execution is closed
        // by the next update: round up to even first.
        Value seq = k.bitAnd(k.add(load(KVCACHE_REPORT_SEQUENCE), k.i64(1)),
                             k.i64(~int64_t(1)));
        put(KVCACHE_REPORT_SEQUENCE, k.add(seq, k.i64(1)));
        fence();
        put(KVCACHE_REPORT_CODE, code);
        put(KVCACHE_REPORT_ENTRY, entry);
        put(KVCACHE_REPORT_VALUE, value);
        put(KVCACHE_REPORT_BOUND, bound);
        put(KVCACHE_REPORT_SKIPPED, skipped);
        fence();
        put(KVCACHE_REPORT_SEQUENCE, k.add(seq, k.i64(2)));
        fence();
        Value trap = k.cmp(P::ne, load(KVCACHE_REPORT_TRAP), zero);
        k.ifThen(trap, [&] { LLVM::Trap::create(b); });
      });
    }

    /// What validating one request found: whether it breaks the contract,
    /// the first violation (code, entry, value, bound), its entries written
    /// and how many of them move.
    struct Verdict {
      Value bad, code, entry, value, bound, written, moves;
    };

    /// Validates request i (`active`: i < bs); with `write`, writes its
    /// entries at i * W + j (skip entries for the rest, all of them when
    /// the request is bad). Columns go kCols at a time, unrolled, so that
    /// a request's loads are in flight together (two memory round trips for
    /// W <= kCols, not one per column).
    Verdict validate(Value i, Value active, Value minSlots, bool write) {
      constexpr int64_t kCols = 4;
      Value nOcl = p["num_out_cache_loc"];
      Value sentinel = k.i64(op.getSentinelAttr().getInt());
      Value rowStart = k.mul(i, W);
      Value cols = k.i64(kCols);
      Value ncd = loadIf(active, "num_correct_drafts", i);
      Value r = zero, s = zero, d = zero;
      if (rows) {
        r = loadIf(active, "req_pool_indices", i);
        s = loadIf(active, "seq_lens", i);
      } else {
        Value safeBs = k.select(k.cmp(P::sgt, bs, zero), bs, one);
        d = arith::DivSIOp::create(b, nOcl, safeBs);
      }
      auto acceptAt = [&](Value chunk, int64_t q, Value cond) {
        Value j = k.add(chunk, k.i64(q));
        Value in = k.bitAnd(cond, k.cmp(P::slt, j, W));
        return std::make_pair(loadIf(in, "accept_index", k.add(rowStart, j)),
                              in);
      };
      // Pass 1: the row's count and its first position outside
      // [0, len(out_cache_loc)).
      SmallVector<Value> row = k.forLoopCarried(
          zero, W, cols, ValueRange{zero, minusOne, zero},
          [&](Value chunk, ValueRange c) -> SmallVector<Value> {
            Value count = c[0], badJ = c[1], badA = c[2];
            SmallVector<std::pair<Value, Value>> as;
            for (int64_t q = 0; q < kCols; ++q)
              as.push_back(acceptAt(chunk, q, active));
            for (int64_t q = 0; q < kCols; ++q) {
              auto [a, in] = as[q];
              Value keep = k.bitAnd(in, k.cmp(P::ne, a, sentinel));
              Value out = k.bitAnd(keep, k.outside(a, zero, nOcl));
              Value first = k.bitAnd(out, k.cmp(P::slt, badJ, zero));
              count = k.select(keep, k.add(count, one), count);
              badJ = k.select(first, k.add(chunk, k.i64(q)), badJ);
              badA = k.select(first, a, badA);
            }
            return {count, badJ, badA};
          });
      Value count = row[0], badJ = row[1], badA = row[2];
      Value e1 = k.cmp(P::slt, ncd, zero);
      Value e2 =
          k.bitAnd(k.bitNot(e1), k.bitOr(k.cmp(P::sge, ncd, W),
                                         k.cmp(P::ne, count, k.add(ncd, one))));
      Value e3 = k.bitAnd(k.bitNot(k.bitOr(e1, e2)), k.cmp(P::sge, badJ, zero));
      Value acc = k.add(ncd, one); // meaningful once e1, e2 are false
      Value ok3 = k.bitAnd(active, k.bitNot(k.bitOr(k.bitOr(e1, e2), e3)));
      Value e4, e5, v4, v5, b4;
      if (rows) {
        Value maxReqs = p["max_reqs"], poolLen = p["pool_len"];
        e4 = k.bitAnd(ok3, k.outside(r, zero, maxReqs));
        // s + acc <= pool_len, tested as s <= pool_len - acc: no overflow.
        e5 = k.bitAnd(k.bitAnd(ok3, k.bitNot(e4)),
                      k.bitOr(k.cmp(P::slt, s, zero),
                              k.cmp(P::sgt, s, k.sub(poolLen, acc))));
        v4 = r;
        b4 = maxReqs;
        Value sat = k.cmp(P::sgt, s, k.sub(k.i64(INT64_MAX), acc));
        v5 = k.select(k.cmp(P::slt, s, zero), s,
                      k.select(sat, k.i64(INT64_MAX), k.add(s, acc)));
      } else {
        e4 = k.bitAnd(ok3, k.cmp(P::sgt, acc, d));
        e5 = k.i1(false);
        v4 = acc;
        b4 = d;
        v5 = zero;
      }
      Value ok5 = k.bitAnd(ok3, k.bitNot(k.bitOr(e4, e5)));
      Value rowBase = rows ? k.add(k.mul(r, p["pool_len"]), s) : k.mul(i, d);
      // Pass 2: the entries in accepted order; the first slot outside
      // [0, min slots).
      SmallVector<Value> walk = k.forLoopCarried(
          zero, W, cols, ValueRange{zero, minusOne, zero, zero},
          [&](Value chunk, ValueRange c) -> SmallVector<Value> {
            Value pos = c[0], slotJ = c[1], slotV = c[2], moves = c[3];
            SmallVector<Value> keeps, poss, as, ts, ss;
            for (int64_t q = 0; q < kCols; ++q) {
              auto [a, in] = acceptAt(chunk, q, ok5);
              Value keep = k.bitAnd(in, k.cmp(P::ne, a, sentinel));
              keeps.push_back(keep);
              poss.push_back(pos);
              as.push_back(a);
              pos = k.select(keep, k.add(pos, one), pos);
            }
            for (int64_t q = 0; q < kCols; ++q) {
              ts.push_back(loadIf(keeps[q],
                                  rows ? "req_to_token" : "out_cache_loc",
                                  k.add(rowBase, poss[q])));
              ss.push_back(loadIf(keeps[q], "out_cache_loc", as[q]));
            }
            for (int64_t q = 0; q < kCols; ++q) {
              Value badT = k.outside(ts[q], zero, minSlots);
              Value badS = k.outside(ss[q], zero, minSlots);
              Value bad = k.bitAnd(keeps[q], k.bitOr(badT, badS));
              Value first = k.bitAnd(bad, k.cmp(P::slt, slotJ, zero));
              Value flat = k.add(rowStart, poss[q]);
              if (write)
                k.ifThen(keeps[q], [&] {
                  k.store(ts[q], k.gep(tgtList, i64, flat), 8);
                  k.store(ss[q], k.gep(srcList, i64, flat), 8);
                });
              slotJ = k.select(first, flat, slotJ);
              slotV = k.select(first, k.select(badT, ts[q], ss[q]), slotV);
              Value m = k.bitAnd(keeps[q], k.cmp(P::ne, ts[q], ss[q]));
              moves = k.select(m, k.add(moves, one), moves);
            }
            return {pos, slotJ, slotV, moves};
          });
      Value e6 = k.bitAnd(ok5, k.cmp(P::sge, walk[1], zero));
      Verdict v;
      v.bad = k.bitAnd(active, k.bitOr(k.bitOr(k.bitOr(e1, e2), e3),
                                       k.bitOr(k.bitOr(e4, e5), e6)));
      v.written = walk[0];
      v.moves = walk[3];
      auto sel = [&](Value c1, Value c2, Value c3, Value c4, Value c5,
                     Value c6) {
        return k.select(
            e1, c1,
            k.select(e2, c2,
                     k.select(e3, c3, k.select(e4, c4, k.select(e5, c5, c6)))));
      };
      if (!write) {
        Value accBound = k.select(k.cmp(P::eq, ncd, k.i64(INT64_MAX)),
                                  k.i64(INT64_MAX), k.add(ncd, one));
        v.code = sel(
            k.i64(KVCACHE_ERR_NEGATIVE_DRAFTS), k.i64(KVCACHE_ERR_ACCEPT_COUNT),
            k.i64(KVCACHE_ERR_ACCEPT_INDEX),
            k.i64(rows ? KVCACHE_ERR_REQ_POOL_INDEX : KVCACHE_ERR_WINDOW_RANGE),
            k.i64(KVCACHE_ERR_SEQ_RANGE), k.i64(KVCACHE_ERR_SLOT));
        v.entry = sel(i, i, k.add(rowStart, badJ), i, i, walk[1]);
        v.value = sel(ncd, count, badA, v4, v5, walk[2]);
        v.bound = sel(zero, accBound, nOcl, b4, rows ? p["pool_len"] : zero,
                      minSlots);
      }
      return v;
    }

    /// Validates request i and writes its entries (or skip entries); counts
    /// moved entries and skipped requests and keeps the lowest bad request.
    void checkRequest(Value i, Value active, Value minSlots) {
      Value rowStart = k.mul(i, W);
      Verdict v = validate(i, active, minSlots, /*write=*/true);
      // Every entry a request does not move holds the same slot twice.
      Value firstSkip = k.select(v.bad, zero, v.written);
      k.ifThen(active, [&] {
        k.forLoop(firstSkip, W, one, [&](Value q) {
          Value flat = k.add(rowStart, q);
          k.store(minusOne, k.gep(tgtList, i64, flat), 8);
          k.store(minusOne, k.gep(srcList, i64, flat), 8);
        });
      });
      // In-request order: entry q must not read a row an earlier entry of
      // the request writes (the per-request path moves in order).
      Value good = k.bitAnd(active, k.bitNot(v.bad));
      k.ifThen(good, [&] {
        k.forLoop(one, v.written, one, [&](Value q) {
          Value sq = srcAt(k.add(rowStart, q));
          Value tq = tgtAt(k.add(rowStart, q));
          k.ifThen(k.cmp(P::ne, sq, tq), [&] {
            k.forLoop(zero, q, one, [&](Value j) {
              Value tj = tgtAt(k.add(rowStart, j));
              Value sj = srcAt(k.add(rowStart, j));
              k.ifThen(k.bitAnd(k.cmp(P::eq, tj, sq), k.cmp(P::ne, tj, sj)),
                       [&] { k.store(k.i32(1), flag(UNSAFE), 4); });
            });
          });
        });
        k.ifThen(k.cmp(P::sgt, v.moves, zero), [&] {
          sharedAtomic(LLVM::AtomicBinOp::add, val(MOVED), v.moves);
        });
      });
      k.ifThen(v.bad, [&] {
        sharedAtomic(LLVM::AtomicBinOp::min, val(FIRST_BAD), i);
        sharedAtomic(LLVM::AtomicBinOp::add, val(SKIPPED), one);
      });
    }

    /// After every request was checked (behind a barrier): thread 0 finds
    /// the details of the lowest bad request again (one request: cheaper
    /// than carrying every request's details through the rounds).
    void recordFirstViolation(Value minSlots) {
      Value first = k.load(i64, val(FIRST_BAD), 8);
      k.ifThen(k.bitAnd(k.cmp(P::eq, tid, zero),
                        k.cmp(P::ne, first, k.i64(INT64_MAX))),
               [&] {
                 Verdict v = validate(first, k.i1(true), minSlots,
                                      /*write=*/false);
                 k.store(v.code, val(CODE), 8);
                 k.store(v.entry, val(ENTRY), 8);
                 k.store(v.value, val(VALUE), 8);
                 k.store(v.bound, val(BOUND), 8);
               });
    }

    /// Row base pointer, row bytes and whether 16-byte vectors may be used,
    /// for buffer `buf`.
    std::tuple<Value, Value, Value> bufferRow(Value buf) {
      Value table = p["buffers"];
      Value row = k.mul(buf, k.i64(KVCACHE_BUFFER_COLUMNS));
      Value base =
          k.loadI64(table, i64, k.add(row, k.i64(KVCACHE_BUFFER_ADDRESS)));
      Value rowBytes =
          k.loadI64(table, i64, k.add(row, k.i64(KVCACHE_BUFFER_ROW_BYTES)));
      Value vectorizable = k.cmp(
          P::eq, k.bitAnd(k.bitOr(base, rowBytes), k.i64(kVectorBytes - 1)),
          zero);
      return {LLVM::IntToPtrOp::create(b, k.globalPtrType(), base), rowBytes,
              vectorizable};
    }

    /// The 16 bytes at column `col` of row `slot` (bytes past the row's end
    /// read as zero and are never written back).
    Value loadSlice(Value base, Value rowBytes, Value vectorizable, Value slot,
                    Value col) {
      Value at = k.gep(base, i8, k.add(k.mul(slot, rowBytes), col));
      return k.ifValue(
          vectorizable, vec,
          [&]() -> Value { return k.load(vec, at, kVectorBytes); },
          [&]() -> Value {
            // Byte by byte, packed into i32 words: a slice stays in four
            // registers whichever path it takes.
            Value v = zeroVec();
            for (int64_t w = 0; w < kVectorBytes / 4; ++w) {
              Value word = k.i32(0);
              for (int64_t q = 0; q < 4; ++q) {
                int64_t off = 4 * w + q;
                Value in = k.cmp(P::slt, k.add(col, k.i64(off)), rowBytes);
                Value byte = k.ifValue(
                    in, i32,
                    [&]() -> Value {
                      return arith::ExtUIOp::create(
                          b, i32, k.load(i8, k.gep(at, i8, k.i64(off)), 1));
                    },
                    [&]() -> Value { return k.i32(0); });
                word = arith::OrIOp::create(
                    b, word, arith::ShLIOp::create(b, byte, k.i32(8 * q)));
              }
              v = LLVM::InsertElementOp::create(b, v, word, k.i32(w));
            }
            return v;
          });
    }
    void storeSlice(Value base, Value rowBytes, Value vectorizable, Value slot,
                    Value col, Value v) {
      Value at = k.gep(base, i8, k.add(k.mul(slot, rowBytes), col));
      k.ifThenElse(
          vectorizable, [&] { k.store(v, at, kVectorBytes); },
          [&] {
            for (int64_t w = 0; w < kVectorBytes / 4; ++w) {
              Value word = LLVM::ExtractElementOp::create(b, v, k.i32(w));
              for (int64_t q = 0; q < 4; ++q) {
                int64_t off = 4 * w + q;
                k.ifThen(k.cmp(P::slt, k.add(col, k.i64(off)), rowBytes), [&] {
                  Value byte = arith::TruncIOp::create(
                      b, i8, arith::ShRUIOp::create(b, word, k.i32(8 * q)));
                  k.store(byte, k.gep(at, i8, k.i64(off)), 1);
                });
              }
            }
          });
    }
    Value zeroVec() { return LLVM::ZeroOp::create(b, vec); }

    /// Safe batch: thread (request, group of kBufferGroup buffers, slice);
    /// a block takes T / S tasks at once when rows have S <= T slices. A
    /// thread moves the request's entries kEntryGroup at a time, in order,
    /// each in all the group's buffers (loads, then stores): a group reads
    /// after the previous one wrote, which the plan proved safe.
    void movePerRequest() {
      Value S = p["row_vectors"], B = p["num_buffers"];
      Value tT = k.i64(T), G = k.i64(kBufferGroup);
      Value lanes = k.select(k.cmp(P::slt, S, tT), S, tT);
      Value perBlock = arith::DivUIOp::create(b, tT, lanes);
      Value sub = arith::DivUIOp::create(b, tid, lanes);
      Value lane = arith::RemUIOp::create(b, tid, lanes);
      Value groups =
          arith::DivUIOp::create(b, k.add(B, k.i64(kBufferGroup - 1)), G);
      Value tasks = k.mul(bs, groups);
      k.ifThen(k.cmp(P::slt, sub, perBlock), [&] {
        k.forLoop(
            k.add(k.mul(bid, perBlock), sub), tasks, k.mul(nblocks, perBlock),
            [&](Value task) {
              // 32-bit division: the runtime bounds bs * buffers below 2^31.
              Value t32 = k.toI32(task), g32 = k.toI32(groups);
              Value i = k.toI64(arith::DivUIOp::create(b, t32, g32));
              Value group = k.toI64(arith::RemUIOp::create(b, t32, g32));
              SmallVector<std::tuple<Value, Value, Value>> rowsOf;
              SmallVector<Value> present;
              for (int64_t q = 0; q < kBufferGroup; ++q) {
                Value buf = k.add(k.mul(group, G), k.i64(q));
                Value in = k.cmp(P::slt, buf, B);
                // Absent buffers read as zero-byte rows at address 0.
                SmallVector<Value> row = k.ifValues(
                    in, {k.globalPtrType(), i64, b.getI1Type()},
                    [&]() -> SmallVector<Value> {
                      auto [base, rowBytes, vectorizable] = bufferRow(buf);
                      return {base, rowBytes, vectorizable};
                    },
                    [&]() -> SmallVector<Value> {
                      return {LLVM::ZeroOp::create(b, k.globalPtrType()), zero,
                              k.i1(true)};
                    });
                rowsOf.push_back({row[0], row[1], row[2]});
              }
              Value allVector = k.i1(true);
              for (auto [base, rowBytes, vectorizable] : rowsOf)
                allVector = k.bitAnd(allVector, vectorizable);
              Value first = k.mul(i, W);
              k.forLoop(lane, S, lanes, [&](Value c) {
                Value col = k.mul(c, k.i64(kVectorBytes));
                // The common case, every row of the group 16-byte aligned: the
                // request's entries kEntryGroup at a time, each in every buffer
                // of the group, all loads before any store (one memory round
                // trip per group of entries, not per entry).
                k.ifThenElse(
                    allVector,
                    [&] {
                      k.forLoop(zero, W, k.i64(kEntryGroup), [&](Value g) {
                        SmallVector<Value> tg, mv, data;
                        for (int64_t q = 0; q < kEntryGroup; ++q) {
                          Value j = k.add(g, k.i64(q));
                          SmallVector<Value> ts = k.ifValues(
                              k.cmp(P::slt, j, W), {i64, i64},
                              [&]() -> SmallVector<Value> {
                                return {tgtAt(k.add(first, j)),
                                        srcAt(k.add(first, j))};
                              },
                              [&]() -> SmallVector<Value> {
                                return {minusOne, minusOne};
                              });
                          tg.push_back(ts[0]);
                          mv.push_back(k.cmp(P::ne, ts[0], ts[1]));
                          for (auto [base, rowBytes, vectorizable] : rowsOf) {
                            Value here = k.bitAnd(mv.back(),
                                                  k.cmp(P::slt, col, rowBytes));
                            Value at = k.gep(
                                base, i8, k.add(k.mul(ts[1], rowBytes), col));
                            data.push_back(k.ifValue(
                                here, vec,
                                [&]() -> Value {
                                  return k.load(vec, at, kVectorBytes);
                                },
                                [&]() -> Value { return zeroVec(); }));
                          }
                        }
                        for (int64_t q = 0; q < kEntryGroup; ++q)
                          for (auto [r, row] : llvm::enumerate(rowsOf)) {
                            auto [base, rowBytes, vectorizable] = row;
                            Value here =
                                k.bitAnd(mv[q], k.cmp(P::slt, col, rowBytes));
                            k.ifThen(here, [&] {
                              k.store(data[q * rowsOf.size() + r],
                                      k.gep(base, i8,
                                            k.add(k.mul(tg[q], rowBytes), col)),
                                      kVectorBytes);
                            });
                          }
                      });
                    },
                    [&] {
                      // The byte path: entry by entry, buffer by buffer.
                      k.forLoop(zero, W, one, [&](Value j) {
                        Value t = tgtAt(k.add(first, j)),
                              s = srcAt(k.add(first, j));
                        k.ifThen(k.cmp(P::ne, t, s), [&] {
                          for (auto [base, rowBytes, vectorizable] : rowsOf)
                            k.ifThen(k.cmp(P::slt, col, rowBytes), [&] {
                              Value v = loadSlice(base, rowBytes, vectorizable,
                                                  s, col);
                              storeSlice(base, rowBytes, vectorizable, t, col,
                                         v);
                            });
                        });
                      });
                    });
              });
            });
      });
    }

    /// Batch with hazards across requests: block per (buffer, column).
    void moveStaged() {
      Value S = p["row_vectors"], B = p["num_buffers"];
      Value units = k.mul(B, S);
      Value planList = k.gep(planWs, i8, k.i64(kvcacheMoveListOffset()));
      // Local plans stage every entry in one chunk (n <= C); large ones the
      // overlapping entries in depth order, then the rest directly.
      Value staged = k.ifValue(
          local, i64, [&]() -> Value { return n; },
          [&]() -> Value { return k.loadI64(planWs, i32, k.i64(1)); });
      Value direct = k.ifValue(
          local, i64, [&]() -> Value { return zero; },
          [&]() -> Value {
            return k.sub(k.loadI64(planWs, i32, k.i64(0)), staged);
          });
      auto entryAt = [&](Value pos) {
        return k.ifValue(
            local, i64, [&]() -> Value { return pos; },
            [&]() -> Value { return k.loadI64(planList, i32, pos); });
      };
      k.forLoop(bid, units, nblocks, [&](Value u) {
        Value buf = arith::DivUIOp::create(b, u, S);
        Value c = arith::RemUIOp::create(b, u, S);
        auto [base, rowBytes, vectorizable] = bufferRow(buf);
        Value col = k.mul(c, k.i64(kVectorBytes));
        k.ifThen(k.cmp(P::slt, col, rowBytes), [&] {
          k.forLoop(zero, staged, k.i64(C), [&](Value chunk) {
            SmallVector<Value> tg, mv, data;
            for (int64_t q = 0; q < kStageSlots; ++q) {
              Value pos = k.add(chunk, k.add(k.i64(q * T), tid));
              Value in = k.cmp(P::slt, pos, staged);
              SmallVector<Value> ts = k.ifValues(
                  in, {i64, i64},
                  [&]() -> SmallVector<Value> {
                    Value e = entryAt(pos);
                    return {tgtAt(e), srcAt(e)};
                  },
                  [&]() -> SmallVector<Value> {
                    return {minusOne, minusOne};
                  });
              Value moves = k.cmp(P::ne, ts[0], ts[1]);
              tg.push_back(ts[0]);
              mv.push_back(moves);
              data.push_back(k.ifValue(
                  moves, vec,
                  [&]() -> Value {
                    return loadSlice(base, rowBytes, vectorizable, ts[1], col);
                  },
                  [&]() -> Value { return zeroVec(); }));
            }
            k.barrier();
            for (int64_t q = 0; q < kStageSlots; ++q)
              k.ifThen(mv[q], [&] {
                storeSlice(base, rowBytes, vectorizable, tg[q], col, data[q]);
              });
            k.barrier();
          });
          k.forLoop(tid, direct, k.i64(T), [&](Value pos) {
            Value e = k.loadI64(planList, i32, k.sub(k.sub(n, one), pos));
            Value t = tgtAt(e), s = srcAt(e);
            k.ifThen(k.cmp(P::ne, t, s), [&] {
              Value v = loadSlice(base, rowBytes, vectorizable, s, col);
              storeSlice(base, rowBytes, vectorizable, t, col, v);
            });
          });
        });
      });
    }
  };
};
} // namespace

void mlir::kvcache::populateMoveAcceptedTokensToGPUPattern(
    RewritePatternSet &patterns, gpu::GPUModuleOp kernels,
    const GPUKernelOptions &options) {
  patterns.add<FusedMoveToKernel>(patterns.getContext(), kernels, options);
}
