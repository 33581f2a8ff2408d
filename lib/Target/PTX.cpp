//===- PTX.cpp - PTX and LLVM IR of the lowered kernels -------------------===//
//
// PTX comes from upstream MLIR: gpu-module-to-binary with format=isa runs the
// NVVM target's serialisation (LLVM's NVPTX backend) on the gpu.module.
//
//===----------------------------------------------------------------------===//

#include "Target/Target.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

void specc::registerTargets(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

static gpu::GPUModuleOp singleKernelModule(ModuleOp module) {
  auto range = module.getOps<gpu::GPUModuleOp>();
  if (std::distance(range.begin(), range.end()) != 1) {
    module.emitError("expected exactly one gpu.module of kernels");
    return nullptr;
  }
  return *range.begin();
}

FailureOr<std::string> specc::translateKernelsToLLVMIR(ModuleOp module) {
  gpu::GPUModuleOp kernels = singleKernelModule(module);
  if (!kernels)
    return failure();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(kernels, ctx, kernels.getName());
  if (!llvmModule)
    return failure();
  std::string text;
  llvm::raw_string_ostream os(text);
  llvmModule->print(os, nullptr);
  return text;
}

FailureOr<std::string> specc::emitPTX(ModuleOp module) {
  if (!singleKernelModule(module))
    return failure();
  PassManager pm(module.getContext());
  GpuModuleToBinaryPassOptions options;
  options.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(options));
  if (failed(pm.run(module)))
    return failure();
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute object : binary.getObjects())
      return cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  module.emitError("gpu-module-to-binary produced no object");
  return failure();
}
