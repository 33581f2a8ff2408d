//===- KVCacheToGPU.cpp - the kvcache-to-gpu pass -------------------------===//
//
// Assembles the per-op patterns (AssignTargets.cpp, CompactSources.cpp,
// MoveRows.cpp) into the kvcache-to-gpu pass: kernels go into one gpu.module,
// the host functions that held the ops are removed (the runtime launches the
// kernels).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "KVCache/IR/KVCache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::kvcache {
#define GEN_PASS_DEF_KVCACHETOGPU
#include "Conversion/Passes.h.inc"
} // namespace mlir::kvcache

using namespace mlir;
using namespace mlir::kvcache;

std::string mlir::kvcache::getKernelName(Operation *op, StringRef stage,
                                         gpu::GPUModuleOp kernels) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  std::string base =
      ((func ? func.getName() : StringRef("kernel")) + "_" + stage).str();
  std::string name = base;
  for (int i = 1; kernels.lookupSymbol(name); ++i)
    name = base + "_" + std::to_string(i);
  return name;
}

void mlir::kvcache::populateKVCacheToGPUPatterns(
    RewritePatternSet &patterns, gpu::GPUModuleOp kernels,
    const GPUKernelOptions &options) {
  populateAssignTargetsToGPUPattern(patterns, kernels, options);
  populateCompactSourcesToGPUPattern(patterns, kernels, options);
  populateMoveRowsToGPUPattern(patterns, kernels, options);
  populateMoveAcceptedTokensToGPUPattern(patterns, kernels, options);
}

namespace {
struct KVCacheToGPUPass : kvcache::impl::KVCacheToGPUBase<KVCacheToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Option errors name the option, not the whole module.
    auto bad = [&](const Twine &msg) {
      emitError(module.getLoc(), "kvcache-to-gpu: ") << msg;
      signalPassFailure();
    };
    auto warpMultiple = [](int64_t v) {
      return v >= 32 && v <= 1024 && v % 32 == 0;
    };
    if (!warpMultiple(scanBlockSize))
      return bad("scan-block-size must be a multiple of 32 in [32, 1024]");
    if (!warpMultiple(copyBlockSize))
      return bad("copy-block-size must be a multiple of 32 in [32, 1024]");
    if (tileBytes < 16 || tileBytes % 16 || copyBlockSize % (tileBytes / 16))
      return bad("tile-bytes must be a multiple of 16 whose 16-byte lanes "
                 "divide copy-block-size");
    if (stagingBytes < tileBytes || stagingBytes > 227 * 1024)
      return bad("staging-bytes must hold one tile and fit a block's shared "
                 "memory (at most 232448 bytes)");
    if (moduleName.empty())
      return bad("module-name must not be empty");
    GPUKernelOptions options{scanBlockSize, copyBlockSize, tileBytes,
                             stagingBytes};
    OpBuilder b(module.getContext());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(moduleName);
    if (!kernels) {
      b.setInsertionPointToEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(b, module.getLoc(), moduleName);
    }
    // Host functions that hold kvcache ops have no job left once their ops
    // are kernels (the runtime launches them); other functions stay.
    SmallVector<func::FuncOp> hosts;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.walk([](Operation *op) {
                return isa<KVCacheDialect>(op->getDialect())
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted())
        hosts.push_back(func);
    RewritePatternSet patterns(module.getContext());
    populateKVCacheToGPUPatterns(patterns, kernels, options);
    walkAndApplyPatterns(module, std::move(patterns));
    // Nothing is dropped silently: an op no pattern lowered (one outside a
    // function, or one its pattern refused) fails the pass where it is.
    WalkResult left = module.walk([&](Operation *op) {
      if (op->getName().getDialectNamespace() !=
          KVCacheDialect::getDialectNamespace())
        return WalkResult::advance();
      op->emitOpError("could not be lowered to GPU kernels");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      return signalPassFailure();
    for (func::FuncOp func : hosts)
      func.erase();
  }
};
} // namespace
