//===- Patterns.h - the per-op patterns of KVCacheToGPU ---------*- C++ -*-===//
//
// Internal to KVCacheToGPU: each op family's file exports the function that
// adds its pattern; KVCacheToGPU.cpp assembles them.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_LIB_CONVERSION_KVCACHETOGPU_PATTERNS_H
#define SPECC_LIB_CONVERSION_KVCACHETOGPU_PATTERNS_H

#include "Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kvcache {
void populateAssignTargetsToGPUPattern(RewritePatternSet &patterns,
                                       gpu::GPUModuleOp kernels,
                                       const GPUKernelOptions &options);
void populateCompactSourcesToGPUPattern(RewritePatternSet &patterns,
                                        gpu::GPUModuleOp kernels,
                                        const GPUKernelOptions &options);
void populateMoveAcceptedTokensToGPUPattern(RewritePatternSet &patterns,
                                            gpu::GPUModuleOp kernels,
                                            const GPUKernelOptions &options);
void populateMoveRowsToGPUPattern(RewritePatternSet &patterns,
                                  gpu::GPUModuleOp kernels,
                                  const GPUKernelOptions &options);

/// Base of the per-op patterns: each builds its kernels into `kernels`.
template <typename OpTy> struct KernelPattern : OpRewritePattern<OpTy> {
  KernelPattern(MLIRContext *ctx, gpu::GPUModuleOp kernels,
                const GPUKernelOptions &options)
      : OpRewritePattern<OpTy>(ctx), kernels(kernels), options(options) {}

  gpu::GPUModuleOp kernels;
  GPUKernelOptions options;
};

/// `<enclosing function>_<stage>`, made unique within `kernels`.
std::string getKernelName(Operation *op, StringRef stage,
                          gpu::GPUModuleOp kernels);

/// Element type of a memref value.
inline Type elementType(Value memref) {
  return cast<MemRefType>(memref.getType()).getElementType();
}
/// Byte alignment of a memref's elements, for the kernel parameter.
inline int64_t elementAlign(Value memref) {
  return elementType(memref).getIntOrFloatBitWidth() / 8;
}
} // namespace mlir::kvcache

#endif // SPECC_LIB_CONVERSION_KVCACHETOGPU_PATTERNS_H
