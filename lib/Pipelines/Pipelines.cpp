//===- Pipelines.cpp - specc's pass pipelines -----------------------------===//
//
// Builds the GPU pipeline (kvcache -> kernels -> NVVM) and the host pipeline
// (kvcache -> loops -> LLVM) from upstream MLIR passes and specc's own
// lowerings, and registers them as named pipelines.
//
//===----------------------------------------------------------------------===//

#include "Pipelines/Pipelines.h"

#include "Conversion/Passes.h"
#include "KVCache/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

bool specc::isSupportedChip(llvm::StringRef chip) {
  return llvm::is_contained({"sm_80", "sm_86", "sm_89", "sm_90"}, chip);
}

void specc::buildKVCacheFunctions(OpPassManager &pm) {
  pm.addPass(kvcache::createKVCacheSpecialize());
  pm.addPass(kvcache::createKVCacheFuse());
}

void specc::buildKVCacheToGPUKernels(OpPassManager &pm,
                                     const GPUPipelineOptions &options) {
  buildKVCacheFunctions(pm);
  kvcache::KVCacheToGPUOptions o;
  o.scanBlockSize = options.scanBlockSize;
  o.copyBlockSize = options.copyBlockSize;
  o.tileBytes = options.tileBytes;
  o.stagingBytes = options.stagingBytes;
  pm.addPass(kvcache::createKVCacheToGPU(o));
}

void specc::buildGPUKernelsToNVVM(OpPassManager &pm,
                                  const GPUPipelineOptions &options) {
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(kvcache::createKVCacheOutlineCold());
  // scf must be gone before GPU-to-NVVM, which converts cf but not scf.
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void specc::buildGPUPipeline(OpPassManager &pm,
                             const GPUPipelineOptions &options) {
  buildKVCacheToGPUKernels(pm, options);
  buildGPUKernelsToNVVM(pm, options);
}

void specc::buildHostPipeline(OpPassManager &pm) {
  buildKVCacheFunctions(pm);
  pm.addPass(kvcache::createKVCacheToLoops());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void specc::registerPipelines() {
  // Registered by hand rather than through PassPipelineRegistration so that
  // an unsupported chip is an error, not sm_70 code.
  registerPassPipeline(
      "specc-gpu-pipeline",
      "kvcache ops to GPU kernels in the NVVM/LLVM dialect with an NVVM target",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        GPUPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        if (!isSupportedChip(options.chip))
          return errorHandler("specc-gpu-pipeline: unsupported chip '" +
                              options.chip + "' (sm_80, sm_86, sm_89, sm_90)");
        buildGPUPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(GPUPipelineOptions());
      });
  PassPipelineRegistration<>("specc-host-pipeline",
                             "kvcache ops to host loops in the LLVM dialect",
                             buildHostPipeline);
}
