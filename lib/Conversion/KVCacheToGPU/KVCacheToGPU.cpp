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
}

namespace {
struct KVCacheToGPUPass : kvcache::impl::KVCacheToGPUBase<KVCacheToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (scanBlockSize % 32 || scanBlockSize < 32 || scanBlockSize > 1024) {
      module.emitError("scan-block-size must be a multiple of 32 in [32, 1024]");
      return signalPassFailure();
    }
    if (tileBytes % 16 || tileBytes < 16 || copyBlockSize % (tileBytes / 16) ||
        copyBlockSize > 1024 || stagingBytes < tileBytes) {
      module.emitError("tile-bytes must be a multiple of 16 dividing "
                       "copy-block-size * 16, and staging-bytes >= tile-bytes");
      return signalPassFailure();
    }
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
    RewritePatternSet patterns(module.getContext());
    populateKVCacheToGPUPatterns(patterns, kernels, options);
    walkAndApplyPatterns(module, std::move(patterns));

    // The ops are gone; their host functions have no job left on the GPU
    // path (the runtime launches the kernels).
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      func.erase();
  }
};
} // namespace
