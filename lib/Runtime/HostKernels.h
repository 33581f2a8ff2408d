//===- HostKernels.h - the entry points compiled for the host ---*- C++ -*-===//
//
// The CPU path: the same kvcache entry points, lowered by specc-host-pipeline
// into an object linked into the runtime. Each takes MLIR's C interface (a
// pointer to a strided memref descriptor per argument); the launch manifest
// names them and their arguments, so nothing here lists them by hand.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_RUNTIME_HOSTKERNELS_H
#define SPECC_RUNTIME_HOSTKERNELS_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace specc::host {

/// MLIR's strided memref descriptor of rank 1 or 2 (element type erased):
/// allocated, aligned, offset, sizes[rank], strides[rank].
struct Descriptor {
  void *allocated = nullptr;
  void *aligned = nullptr;
  int64_t offset = 0;
  int64_t rest[4] = {0, 0, 0, 0};

  static Descriptor rank1(void *data, int64_t size);
  static Descriptor rank2(void *data, int64_t rows, int64_t cols);
};

/// The host entry point `name` (its `_mlir_ciface_` wrapper) linked into
/// this library, or null.
void *findEntry(const std::string &name);

/// Calls `entry` with `n` descriptor pointers (at most 12).
bool callEntry(void *entry, Descriptor *const *args, size_t n);

} // namespace specc::host

#endif // SPECC_RUNTIME_HOSTKERNELS_H
