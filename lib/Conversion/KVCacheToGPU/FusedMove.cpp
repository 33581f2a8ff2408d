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
//     block waits for another); those of at most `block` request lanes
//     are validated and checked a thread per (request, column), in short
//     code, block 0 prefetching the buffer table for the move meanwhile. Larger
//     ones are validated by all blocks, a chunk at a time (claimed from a
//     counter; block / L requests validated by that same short code, or
//     `block` requests a thread each when W > 32), into the workspace,
//     each moving entry claiming its target and source in the workspace's
//     claim table as it is made (FusedClaims.cpp: a slot written twice, or
//     written by one request and read by another, is seen by the second
//     claim); the block that validates the last chunk decides, checking
//     the batch itself (in its shared memory up to 2 C entries) only when
//     some claim was suspect or none were made, and plans there while the
//     others wait for its verdict, or leave as soon as every chunk is
//     validated and none moved. That block waits for nobody, so this
//     cannot deadlock whatever the residency.
//  B. Move. Safe batch: one thread per (request, two buffers, 16-byte
//     slice), or four buffers when the grid cannot hold a thread per
//     two-buffer task, moves the request's entries in order, four at a
//     time in all the task's buffers (loads, then stores; four entries none
//     of which moves are skipped after their list reads). Otherwise the
//     block that owns a (buffer, 16-byte column) stages every moving
//     entry's 16 bytes in registers, waits at a barrier and writes; large
//     batches stage in depth order (MovePlan), chunk by chunk, then copy
//     the entries nobody else writes directly.
//
// Nothing follows the move: a large launch leaves the workspace ready for
// the next one as it goes (the epochs of KVCacheFusedControl; its waiting
// blocks zero the slot claim table once they have a verdict that moves),
// so no block counts out at its end.
//
// This file holds the pattern (the entry point's parameters and launch
// contract) and the kernel's skeleton (FusedKernel::build); phase A is in
// FusedPlan.cpp and FusedClaims.cpp, phase B in FusedCopy.cpp, their shared
// state in FusedMove.h.
//
//===----------------------------------------------------------------------===//

#include "FusedMove.h"

#include "KVCache/KVCacheABI.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::kvcache;
using namespace mlir::kvcache::fused;

static_assert(8 * (KVCACHE_TOTAL_SUSPECT + 1) <= 64,
              "the workspace's totals fit in its 64 bytes of control words");

namespace {
const char *targetSourceName(TargetSource s) {
  return s == TargetSource::ReqToToken ? "req_to_token" : "window";
}

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
         // A thread moves kBufferGroup buffers: the grid counts groups.
         b.getNamedAttr(
             "grid_units",
             b.getStrArrayAttr({"bs",
                                "num_buffers/" + std::to_string(kBufferGroup),
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
    FusedKernel e(k, op, params, T, C, rows);
    e.build();
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void FusedKernel::build() {
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
  ownRows = k.sharedMemory(
      prefix + "_rows",
      LLVM::LLVMArrayType::get(i64, KVCACHE_BUFFER_COLUMNS * kPrefetchBuffers),
      false);
  // One shared arena (i64 words, so that every view is 8-byte aligned):
  // a local plan's entry lists and hazard table, or a large plan's table.
  arena = k.sharedMemory(prefix + "_plan",
                         LLVM::LLVMArrayType::get(i64, kArenaBytesPerC * C / 8),
                         false);
  Value sTgt = arena;
  Value sSrc = k.gep(arena, i8, k.i64(arenaSourcesOffset()));
  Value ws = p["workspace"];
  tgtList =
      k.select(local, generic(sTgt),
               generic(k.gep(ws, i8, k.i64(kvcacheFusedTargetsOffset()))));
  srcList =
      k.select(local, generic(sSrc),
               generic(k.gep(ws, i8,
                             k.add(k.mul(n, k.i64(8)),
                                   k.i64(kvcacheFusedSourcesOffset(0))))));
  planWs = k.gep(ws, i8,
                 k.add(k.mul(n, k.i64(16)), k.i64(kvcacheFusedPlanOffset(0))));
  Value isThread0 = k.cmp(P::eq, tid, zero);

  k.ifThen(isThread0, [&] {
    k.store(k.i32(0), flag(PLANNER), 4);
    k.store(k.i32(0), flag(UNSAFE), 4);
    k.store(k.i32(0), flag(VERDICT), 4);
    k.store(k.i32(0), flag(CAPACITY), 4);
    k.store(k.i32(0), flag(SUSPECT), 4);
    k.store(k.i32(0), flag(MOVED), 4);
    k.store(k.i32(0), flag(SKIPPED), 4);
    k.store(k.i32(INT32_MAX), flag(FIRST_BAD), 4);
    for (int64_t f : {CODE, ENTRY, VALUE, BOUND, EPOCH})
      k.store(zero, val(f), 8);
  });
  k.barrier();
  // A large batch: every block validates the chunks of requests it
  // claims; the one that validates the last chunk plans.
  // Branches that a small, valid, per-request batch never takes are cold:
  // device functions, out of its instruction stream (KernelBuilder::ifCold).
  k.ifCold(k.bitNot(local), [&] { validateChunks(); });
  Value waiter = k.cmp(P::ne, k.load(i32, flag(PLANNER), 4), k.i32(0));
  k.ifCold(waiter, [&] {
    // Warps 1 to 7 of the blocks without a chunk, while thread 0 polls.
    prefetchSources();
    waitVerdict();
    clearClaims();
  });
  k.ifThen(k.bitNot(waiter), [&] { plan(); });
  k.barrier();
  Value verdict = k.load(i32, flag(VERDICT), 4);
  k.ifThen(k.cmp(P::eq, verdict, k.i32(V_PER_REQUEST)),
           [&] { movePerRequest(); });
  k.ifCold(k.cmp(P::eq, verdict, k.i32(V_STAGED)), [&] { moveStaged(); });
}

void mlir::kvcache::populateMoveAcceptedTokensToGPUPattern(
    RewritePatternSet &patterns, gpu::GPUModuleOp kernels,
    const GPUKernelOptions &options) {
  patterns.add<FusedMoveToKernel>(patterns.getContext(), kernels, options);
}
