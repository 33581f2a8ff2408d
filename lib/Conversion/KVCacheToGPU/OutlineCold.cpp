//===- OutlineCold.cpp - rarely taken kernel branches as device functions -===//
//
// kvcache-outline-cold (Passes.td): the then-region of every scf.if that a
// kernel builder marked `kvcache.cold` (KernelBuilder::ifCold) becomes an
// internal, never-inlined llvm.func of the same gpu.module, called where the
// region was. ptxas lays a kernel's branches out where they stand, whatever
// their weights; out of line, a cold branch's instructions stay out of the
// common path's instruction stream.
//
//===----------------------------------------------------------------------===//

#include "Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::kvcache {
#define GEN_PASS_DEF_KVCACHEOUTLINECOLD
#include "Conversion/Passes.h.inc"
} // namespace mlir::kvcache

using namespace mlir;

namespace {
/// Moves the then-region of `op` into a new function `name` placed before
/// `kernel`; the values it uses from above become the function's
/// arguments, except constants, which are cloned into it.
LogicalResult outline(scf::IfOp op, Operation *kernel, StringRef name) {
  if (op.getNumResults() != 0 || !op.getElseRegion().empty())
    return op.emitOpError("kvcache-outline-cold: a cold branch yields no "
                          "value and has no else region");
  Region &region = op.getThenRegion();
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(region, above);
  SmallVector<Value> args;
  SmallVector<Operation *> constants;
  for (Value v : above) {
    Operation *def = v.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>())
      constants.push_back(def);
    else
      args.push_back(v);
  }
  for (Value v : args)
    if (!LLVM::isCompatibleType(v.getType()))
      return op.emitOpError("kvcache-outline-cold: a value of type ")
             << v.getType() << " cannot be passed to a device function";
  MLIRContext *ctx = op.getContext();
  OpBuilder b(kernel);
  SmallVector<Type> types =
      llvm::map_to_vector(args, [](Value v) { return v.getType(); });
  auto fn = LLVM::LLVMFuncOp::create(
      b, op.getLoc(), name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), types),
      LLVM::Linkage::Internal);
  fn.setPassthroughAttr(b.getArrayAttr({b.getStringAttr("noinline")}));
  Block *entry = fn.addEntryBlock(b);
  // The region's operations move into the function (its terminator stays);
  // inside, the values from above become the arguments and clones of the
  // constants.
  Block &body = region.front();
  entry->getOperations().splice(entry->end(), body.getOperations(),
                                body.begin(),
                                Block::iterator(body.getTerminator()));
  auto inside = [&](OpOperand &use) {
    return fn->isProperAncestor(use.getOwner());
  };
  b.setInsertionPointToStart(entry);
  for (Operation *c : constants) {
    Operation *copy = b.clone(*c);
    for (auto [from, to] : llvm::zip(c->getResults(), copy->getResults()))
      from.replaceUsesWithIf(to, inside);
  }
  for (auto [v, arg] : llvm::zip(args, entry->getArguments()))
    v.replaceUsesWithIf(arg, inside);
  b.setInsertionPointToEnd(entry);
  LLVM::ReturnOp::create(b, op.getLoc(), ValueRange{});
  // The branch now only calls the function.
  b.setInsertionPoint(body.getTerminator());
  LLVM::CallOp::create(b, op.getLoc(), fn, args);
  return success();
}

struct OutlineColdPass
    : kvcache::impl::KVCacheOutlineColdBase<OutlineColdPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    // Innermost first (post-order): an outer cold region then calls the
    // inner one's function.
    SmallVector<scf::IfOp> cold;
    module.walk([&](scf::IfOp op) {
      if (op->hasAttr(kvcache::kColdAttrName))
        cold.push_back(op);
    });
    llvm::StringMap<unsigned> next;
    for (scf::IfOp op : cold) {
      Operation *kernel = op.getOperation();
      while (kernel->getParentOp() != module)
        kernel = kernel->getParentOp();
      StringRef base = SymbolTable::getSymbolName(kernel).getValue();
      std::string name;
      do
        name = (base + "__cold" + Twine(next[base]++)).str();
      while (SymbolTable::lookupSymbolIn(module, name));
      if (failed(outline(op, kernel, name)))
        return signalPassFailure();
      op->removeAttr(kvcache::kColdAttrName);
    }
  }
};
} // namespace
