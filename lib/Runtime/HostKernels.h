//===- HostKernels.h - the kernels compiled for the host --------*- C++ -*-===//
//
// The CPU path: the same kvcache kernels, lowered by specc-host-pipeline into
// an object linked into the runtime. Each function takes MLIR's C interface
// (a pointer to a strided memref descriptor per memref argument).
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_RUNTIME_HOSTKERNELS_H
#define SPECC_RUNTIME_HOSTKERNELS_H

#include <cstdint>

namespace specc::host {

/// MLIR's strided memref descriptor of rank N (data type erased).
template <int N> struct MemRef {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};

using AssignFn = void (*)(MemRef<1> *rpi, MemRef<2> *reqToToken,
                          MemRef<1> *seqLens, MemRef<1> *ncd,
                          MemRef<1> *targets, MemRef<1> *status);
using CompactFn = void (*)(MemRef<2> *acceptIndex, MemRef<1> *outCacheLoc,
                           MemRef<1> *ncd, MemRef<1> *sources,
                           MemRef<1> *status);
using MoveFn = void (*)(MemRef<2> *buffers, MemRef<1> *sources,
                        MemRef<1> *targets, MemRef<1> *workspace,
                        MemRef<1> *status);

/// By element types (0 = i32, 1 = i64) of rpi/seq_lens and num_correct_drafts.
AssignFn assignTargets(int rpiSeq, int ncd);
/// By element types of accept_index, out_cache_loc and num_correct_drafts.
CompactFn compactSources(int accept, int outCacheLoc, int ncd);
MoveFn moveRows();

} // namespace specc::host

#endif // SPECC_RUNTIME_HOSTKERNELS_H
