//===- InitAll.cpp - specc's single registration point --------------------===//
//
// Registers the kvcache dialect, the upstream dialects its lowerings produce
// (with their LLVM translations and conversion interfaces), specc's passes and
// pipelines, and the upstream passes those pipelines are made of, so that
// specc-opt can replay any pipeline stage by stage.
//
//===----------------------------------------------------------------------===//

#include "InitAll.h"

#include "Conversion/Passes.h"
#include "KVCache/IR/KVCache.h"
#include "KVCache/Transforms/Passes.h"
#include "Pipelines/Pipelines.h"
#include "Target/Target.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void specc::registerAllDialects(mlir::DialectRegistry &registry) {
  using namespace mlir;
  registry.insert<kvcache::KVCacheDialect, arith::ArithDialect,
                  cf::ControlFlowDialect, func::FuncDialect, gpu::GPUDialect,
                  LLVM::LLVMDialect, NVVM::NVVMDialect, memref::MemRefDialect,
                  scf::SCFDialect>();
  // Interfaces the conversions to LLVM look up on the dialects they meet.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerTargets(registry);
}

void specc::registerAllPasses() {
  mlir::kvcache::registerSpeccConversionPasses();
  mlir::kvcache::registerKVCacheTransformsPasses();
  registerPipelines();
  mlir::registerArithToLLVMConversionPass();
  mlir::registerCanonicalizer();
  mlir::registerConvertControlFlowToLLVMPass();
  mlir::registerConvertFuncToLLVMPass();
  mlir::registerConvertGpuOpsToNVVMOps();
  mlir::registerCSE();
  mlir::registerFinalizeMemRefToLLVMConversionPass();
  mlir::registerGpuModuleToBinaryPass();
  mlir::registerGpuNVVMAttachTarget();
  mlir::registerReconcileUnrealizedCastsPass();
  mlir::registerSCFToControlFlowPass();
}
