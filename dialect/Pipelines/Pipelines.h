//===- Pipelines.h - specc's pass pipelines ---------------------*- C++ -*-===//
//
// The one place the end-to-end pipelines are built. specc, specc-opt (as the
// named pipelines below) and the build of the runtime's kernels all use these
// builders, so the command line and the library cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_PIPELINES_PIPELINES_H
#define SPECC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace specc {

/// Options of the GPU pipeline (also the options of `specc-gpu-pipeline`).
struct GPUPipelineOptions : mlir::PassPipelineOptions<GPUPipelineOptions> {
  Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVIDIA chip (sm_80, sm_86, sm_89, sm_90)"),
      llvm::cl::init("sm_90")};
  Option<int> optLevel{
      *this, "opt-level",
      llvm::cl::desc("LLVM optimisation level of the NVPTX backend"),
      llvm::cl::init(3)};
  Option<int64_t> scanBlockSize{
      *this, "scan-block-size",
      llvm::cl::desc("Threads of the one-block kernels"), llvm::cl::init(512)};
  Option<int64_t> copyBlockSize{*this, "copy-block-size",
                                llvm::cl::desc("Threads of a row-move block"),
                                llvm::cl::init(256)};
  Option<int64_t> tileBytes{*this, "tile-bytes",
                            llvm::cl::desc("Row bytes a row-move block owns"),
                            llvm::cl::init(64)};
  Option<int64_t> stagingBytes{
      *this, "staging-bytes",
      llvm::cl::desc(
          "Shared memory a row-move block stages overlapping rows in"),
      llvm::cl::init(98304)};
};

/// Chips specc generates code for.
bool isSupportedChip(llvm::StringRef chip);

/// Stage 0, both targets: one clone per declared signature, then the three
/// stages of the move fused into one op (kvcache-specialize, kvcache-fuse).
void buildKVCacheFunctions(mlir::OpPassManager &pm);
/// Stage 1: kvcache functions (stage 0) -> gpu.module of kernels
/// (kvcache-to-gpu).
void buildKVCacheToGPUKernels(mlir::OpPassManager &pm,
                              const GPUPipelineOptions &options);
/// Stage 2: gpu.module of kernels -> NVVM/LLVM dialect with an NVVM target
/// attached (ready for gpu-module-to-binary or translation to LLVM IR).
void buildGPUKernelsToNVVM(mlir::OpPassManager &pm,
                           const GPUPipelineOptions &options);
/// Both stages: `specc-gpu-pipeline`.
void buildGPUPipeline(mlir::OpPassManager &pm,
                      const GPUPipelineOptions &options);

/// kvcache ops -> host loops -> LLVM dialect: `specc-host-pipeline`.
void buildHostPipeline(mlir::OpPassManager &pm);

/// Registers the two named pipelines.
void registerPipelines();

} // namespace specc

#endif // SPECC_PIPELINES_PIPELINES_H
