//===- Fuse.cpp - the kvcache-fuse pass -----------------------------------===//
//
// Replaces the three stages of the KV move (assign_targets, compact_sources,
// move_rows) wired through slot lists that nothing else reads by one
// kvcache.move_accepted_tokens, and drops the dead slot-list arguments of the
// enclosing function (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "KVCache/Transforms/Passes.h"

#include "KVCache/IR/KVCache.h"
#include "KVCache/KVCacheABI.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::kvcache {
#define GEN_PASS_DEF_KVCACHEFUSE
#include "KVCache/Transforms/Passes.h.inc"
} // namespace mlir::kvcache

using namespace mlir;
using namespace mlir::kvcache;

namespace {
/// True when every use of `list` is one of `ops`.
bool onlyUsedBy(Value list, ArrayRef<Operation *> ops) {
  return llvm::all_of(list.getUsers(), [&](Operation *user) {
    return llvm::is_contained(ops, user);
  });
}

bool isFusedStatus(Value status) {
  auto type = dyn_cast<MemRefType>(status.getType());
  return type && type.getRank() == 1 &&
         type.getDimSize(0) == KVCACHE_MOVE_STATUS_FIELDS;
}

struct KVCacheFusePass : kvcache::impl::KVCacheFuseBase<KVCacheFusePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<MoveRowsOp> moves;
    module.walk([&](MoveRowsOp op) { moves.push_back(op); });
    SmallVector<func::FuncOp> touched;
    for (MoveRowsOp move : moves) {
      auto assign = move.getTargets().getDefiningOp<AssignTargetsOp>();
      (void)assign; // Slot lists are operands, not results: search the block.
      AssignTargetsOp a;
      CompactSourcesOp c;
      for (Operation *user : move.getTargets().getUsers())
        if (auto x = dyn_cast<AssignTargetsOp>(user))
          a = x;
      for (Operation *user : move.getSources().getUsers())
        if (auto x = dyn_cast<CompactSourcesOp>(user))
          c = x;
      if (!a || !c || a->getBlock() != move->getBlock() ||
          c->getBlock() != move->getBlock() || !a->isBeforeInBlock(move) ||
          !c->isBeforeInBlock(move))
        continue;
      if (!a.getChecked() || !c.getChecked() || !move.getChecked() ||
          move.getOverlap() != OverlapPolicy::GatherThenScatter ||
          !move.getWorkspace())
        continue;
      Value status = move.getStatus();
      if (a.getStatus() != status || c.getStatus() != status ||
          c.getCounts() != a.getNumCorrectDrafts() || !isFusedStatus(status))
        continue;
      if (!onlyUsedBy(move.getTargets(), {a, move}) ||
          !onlyUsedBy(move.getSources(), {c, move}))
        continue;
      OpBuilder b(move);
      MoveAcceptedTokensOp::create(
          b, move.getLoc(),
          TargetSourceAttr::get(b.getContext(), TargetSource::ReqToToken),
          a.getReqPoolIndices(), a.getReqToToken(), a.getSeqLens(),
          a.getNumCorrectDrafts(), c.getAcceptIndex(), c.getSentinelAttr(),
          c.getOutCacheLoc(), move.getBuffers(), move.getWorkspace(), status,
          /*report=*/Value());
      Value targets = move.getTargets();
      move.erase();
      a.erase();
      c.erase();
      if (auto func =
              dyn_cast<func::FuncOp>(targets.getParentRegion()->getParentOp()))
        if (!llvm::is_contained(touched, func))
          touched.push_back(func);
    }
    // Drop slot-list arguments nothing uses any more from entry points
    // nobody calls: the generated entry takes no scratch it ignores.
    for (func::FuncOp func : touched) {
      if (!SymbolTable::symbolKnownUseEmpty(func, module))
        continue;
      llvm::BitVector dead(func.getNumArguments());
      for (BlockArgument arg : func.getArguments())
        if (arg.use_empty() && isa<MemRefType>(arg.getType()) &&
            func.getArgAttrDict(arg.getArgNumber()) == nullptr)
          dead.set(arg.getArgNumber());
      if (dead.any() && failed(func.eraseArguments(dead)))
        return signalPassFailure();
    }
  }
};
} // namespace
