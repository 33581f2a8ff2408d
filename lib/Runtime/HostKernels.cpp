//===- HostKernels.cpp - dispatch to the host-compiled kernels ------------===//
//
// Names the C-interface functions that `specc --target=host --emit=obj`
// produced from kernels/ and picks one by index element types.
//
//===----------------------------------------------------------------------===//

#include "HostKernels.h"

using namespace specc::host;

#define SPECC_DECLARE(fn, type) extern "C" void _mlir_ciface_##fn type;
#define SPECC_ASSIGN_ARGS                                                      \
  (MemRef<1> *, MemRef<2> *, MemRef<1> *, MemRef<1> *, MemRef<1> *, MemRef<1> *)
#define SPECC_COMPACT_ARGS                                                     \
  (MemRef<2> *, MemRef<1> *, MemRef<1> *, MemRef<1> *, MemRef<1> *)
SPECC_DECLARE(assign_targets_i32_i32, SPECC_ASSIGN_ARGS)
SPECC_DECLARE(assign_targets_i32_i64, SPECC_ASSIGN_ARGS)
SPECC_DECLARE(assign_targets_i64_i32, SPECC_ASSIGN_ARGS)
SPECC_DECLARE(assign_targets_i64_i64, SPECC_ASSIGN_ARGS)
SPECC_DECLARE(compact_sources_i32_i32_i32, SPECC_COMPACT_ARGS)
SPECC_DECLARE(compact_sources_i32_i32_i64, SPECC_COMPACT_ARGS)
SPECC_DECLARE(compact_sources_i32_i64_i32, SPECC_COMPACT_ARGS)
SPECC_DECLARE(compact_sources_i32_i64_i64, SPECC_COMPACT_ARGS)
SPECC_DECLARE(compact_sources_i64_i32_i32, SPECC_COMPACT_ARGS)
SPECC_DECLARE(compact_sources_i64_i32_i64, SPECC_COMPACT_ARGS)
SPECC_DECLARE(compact_sources_i64_i64_i32, SPECC_COMPACT_ARGS)
SPECC_DECLARE(compact_sources_i64_i64_i64, SPECC_COMPACT_ARGS)
SPECC_DECLARE(move_rows,
              (MemRef<2> *, MemRef<1> *, MemRef<1> *, MemRef<1> *, MemRef<1> *))

AssignFn specc::host::assignTargets(int rpiSeq, int ncd) {
  static const AssignFn table[2][2] = {{_mlir_ciface_assign_targets_i32_i32,
                                        _mlir_ciface_assign_targets_i32_i64},
                                       {_mlir_ciface_assign_targets_i64_i32,
                                        _mlir_ciface_assign_targets_i64_i64}};
  return table[rpiSeq][ncd];
}

CompactFn specc::host::compactSources(int accept, int outCacheLoc, int ncd) {
  static const CompactFn table[2][2][2] = {
      {{_mlir_ciface_compact_sources_i32_i32_i32,
        _mlir_ciface_compact_sources_i32_i32_i64},
       {_mlir_ciface_compact_sources_i32_i64_i32,
        _mlir_ciface_compact_sources_i32_i64_i64}},
      {{_mlir_ciface_compact_sources_i64_i32_i32,
        _mlir_ciface_compact_sources_i64_i32_i64},
       {_mlir_ciface_compact_sources_i64_i64_i32,
        _mlir_ciface_compact_sources_i64_i64_i64}}};
  return table[accept][outCacheLoc][ncd];
}

MoveFn specc::host::moveRows() { return _mlir_ciface_move_rows; }
