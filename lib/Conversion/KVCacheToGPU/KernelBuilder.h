//===- KernelBuilder.h - building blocks of the kvcache GPU kernels -*- C++
//-*-===//
//
// Emitter (i64 arithmetic, scf loops and branches) plus what GPU kernels need:
// a gpu.func with bare-pointer parameters, loads and stores through
// llvm.getelementptr, shared memory, thread/block ids, a block-wide exclusive
// scan made of warp shuffles, and the status record of checked ops. Every
// kernel of KVCacheToGPU is written with it, so the three op lowerings read
// like the algorithms in Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_LIB_CONVERSION_KVCACHETOGPU_KERNELBUILDER_H
#define SPECC_LIB_CONVERSION_KVCACHETOGPU_KERNELBUILDER_H

#include "../Common/Emitter.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::kvcache {

/// Describes one kernel parameter.
struct KernelParam {
  enum Kind { GlobalPtr, Scalar } kind;
  /// Alignment in bytes of the pointee (pointers only).
  int64_t align = 8;
};

class KernelBuilder : public Emitter {
public:
  /// Creates `name` in `module` with the given parameters (pointers become
  /// `!llvm.ptr<1>` with llvm.align and llvm.noalias, scalars i64), marked
  /// as a kernel of `blockSize` threads, and positions the builder inside it.
  KernelBuilder(gpu::GPUModuleOp module, Location loc, StringRef name,
                ArrayRef<KernelParam> params, int64_t blockSize);

  gpu::GPUFuncOp getKernel() { return kernel; }
  Value param(unsigned i) { return kernel.getArgument(i); }
  /// Attaches the launch contract the runtime follows.
  void setLaunch(ArrayRef<NamedAttribute> entries);
  /// Marks a kernel launched as one block (registers for one block per SM).
  void setSingleBlock();

  // Thread geometry, as i64.
  Value threadId();
  Value blockId(gpu::Dimension d);

  // Memory. `elt` is the element type stored at `base`; `idx` counts elements.
  Value gep(Value base, Type elt, Value idx);
  /// Loads base[idx] and sign-extends it to i64.
  Value loadI64(Value base, Type elt, Value idx);
  /// Truncates the i64 `v` to `elt` and stores it at base[idx].
  void storeI64(Value base, Type elt, Value idx, Value v);
  Value load(Type type, Value ptr, int64_t align);
  void store(Value v, Value ptr, int64_t align);
  /// A global in shared memory (address space 3) of `type`; `external` for
  /// dynamic shared memory. Returns its address.
  Value sharedMemory(StringRef name, Type type, bool external);

  void barrier() { gpu::BarrierOp::create(b); }

  /// The smallest l with 2^l >= x, for the i64 x >= 1.
  Value log2Ceil(Value x);

  /// ifThen for a branch that a common call never takes: marked
  /// kvcache.cold, so that kvcache-outline-cold moves it into a device
  /// function and the common path fetches none of its instructions.
  void ifCold(Value cond, llvm::function_ref<void()> then);

  /// Block-wide exclusive scan of the i32 `v` over all `blockSize` threads
  /// (every thread must call it). Uses `scratch`, a shared array of at least
  /// 32 i32. Returns {exclusive prefix, block total}, both i32.
  std::pair<Value, Value> blockExclusiveScan(Value v, Value scratch);

  /// The skeleton of the one-block stages: items [0, numItems) in rounds of
  /// one per thread; `count(i, active)` gives item i's output count (0 for an
  /// idle thread), a block scan chained over the rounds gives its first
  /// output position, `emit(i, active, count, offset)` writes its outputs.
  /// Returns the total count.
  Value scanRounds(Value numItems,
                   llvm::function_ref<Value(Value, Value)> count,
                   llvm::function_ref<void(Value, Value, Value, Value)> emit);
  /// base[e] = 0 for e in [from, to), spread over the block's threads.
  void zeroFill(Value base, Type elt, Value from, Value to);

  /// Records a violation in the status record at `status` unless one is
  /// recorded already (atomic compare-and-swap on the code field).
  void recordError(Value status, int64_t code, Value entry, Value value,
                   Value bound);
  /// Reads the status code (0 when no violation has been recorded).
  Value statusCode(Value status);

  Type globalPtrType();

private:
  gpu::GPUModuleOp module;
  gpu::GPUFuncOp kernel;
  int64_t blockSize;
};

} // namespace mlir::kvcache

#endif // SPECC_LIB_CONVERSION_KVCACHETOGPU_KERNELBUILDER_H
