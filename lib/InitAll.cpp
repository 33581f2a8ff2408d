//===- InitAll.cpp - specc's single registration point --------------------===//
//
// Registers the kvcache dialect, the upstream dialects its lowerings produce
// and the passes and pipelines that specc's tools expose.
//
//===----------------------------------------------------------------------===//

#include "InitAll.h"

#include "KVCache/IR/KVCache.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"

void specc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::kvcache::KVCacheDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::gpu::GPUDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect>();
}

void specc::registerAllPasses() {}
