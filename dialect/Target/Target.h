//===- Target.h - from lowered IR to PTX, cubin and host objects -*- C++
//-*-===//
//
// The last steps of specc's pipelines: the launch manifest of the generated
// kernels, PTX through MLIR's NVVM target (LLVM's NVPTX backend), cubin
// through ptxas, and LLVM IR or an object file for the host path.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_TARGET_TARGET_H
#define SPECC_TARGET_TARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace specc {

/// What the runtime needs to launch one kernel (its `kvcache.launch`).
struct KernelLaunch {
  std::string name;
  int64_t block = 0;
  /// "single" (one block) or "row_tiles_x_buffers".
  std::string grid;
  int64_t tileBytes = 0;
  int64_t dynamicSharedMemory = 0;
  /// Entry points (kvcache.move_accepted_tokens) only: the function they
  /// specialize, the target source, the named values whose product gives the
  /// grid's work items, blocks per SM at most, the parameters and the host
  /// entry's arguments by ABI name, and each tensor's element type.
  std::string entry, targets;
  std::vector<std::string> gridUnits, params, hostArgs;
  std::vector<std::pair<std::string, std::string>> types;
  int64_t blocksPerSM = 0;
};

/// Registers the translations to LLVM IR and the NVVM target interface.
void registerTargets(mlir::DialectRegistry &registry);

/// Reads the launch contract of every kernel after kvcache-to-gpu.
std::vector<KernelLaunch> collectLaunches(mlir::ModuleOp module);
/// One line per kernel: `kernel NAME block N grid RULE tile_bytes T smem S`,
/// entry points followed by `entry E targets M units U,.. blocks_per_sm K
/// params P,.. host_args A,.. types NAME:TYPE,..`; last, `abi V`
/// (KVCACHE_ABI_VERSION).
std::string formatManifest(llvm::ArrayRef<KernelLaunch> launches);

/// LLVM IR of the (lowered) gpu.module of `module`, as text.
mlir::FailureOr<std::string> translateKernelsToLLVMIR(mlir::ModuleOp module);
/// PTX of the lowered gpu.module (runs gpu-module-to-binary{format=isa}).
mlir::FailureOr<std::string> emitPTX(mlir::ModuleOp module);

/// Finds ptxas: `explicitPath` if given, else PATH, else $CUDA_HOME/bin,
/// $CUDA_PATH/bin, /usr/local/cuda/bin. Empty when none is found.
std::string findPtxas(llvm::StringRef explicitPath);
/// Assembles `ptx` for `chip` with ptxas. On failure, `error` holds the
/// command that reproduces it (the PTX file is kept) and ptxas's log.
mlir::FailureOr<std::string>
assemblePTX(llvm::StringRef ptx, llvm::StringRef chip, llvm::StringRef ptxas,
            std::string &error, std::string *log = nullptr);

/// LLVM IR of a host-lowered module, as text.
mlir::FailureOr<std::string> translateHostToLLVMIR(mlir::ModuleOp module);
/// A position-independent x86-64 (host) object of a host-lowered module.
mlir::FailureOr<std::string> emitHostObject(mlir::ModuleOp module,
                                            std::string &error);

} // namespace specc

#endif // SPECC_TARGET_TARGET_H
