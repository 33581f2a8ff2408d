// kvcache-to-gpu lowers an op only where its function becomes the entry
// point of its kernels: directly in the body of a func.func of the module.
// Anywhere else, in a function whose name cannot name a PTX kernel, or when
// a kernel name is taken, the op is an error where it is (never silently
// dropped), and the host functions stay.
// RUN: specc-opt %s --split-input-file --kvcache-to-gpu --verify-diagnostics | FileCheck %s
// RUN: not specc-opt %s --split-input-file --kvcache-to-gpu --mlir-print-ir-after-failure \
// RUN:   --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=KEPT

// The stage ops inside a kernel: no entry point to become. The kernel keeps
// them.
// KEPT-LABEL: gpu.func @k(%arg0
// KEPT-NEXT: kvcache.assign_targets %arg0
// KEPT-NEXT: kvcache.compact_sources %arg5
// KEPT-NEXT: kvcache.move_rows %arg8
gpu.module @user {
  gpu.func @k(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>,
      %ncd: memref<?xi64>, %tgt: memref<?xi64>, %acc: memref<?x?xi32>,
      %ocl: memref<?xi64>, %src: memref<?xi64>, %bufs: memref<?x3xi64>,
      %ws: memref<?xi8>) kernel {
    // expected-error @+2 {{'kvcache.assign_targets' op must be inside a func.func of the module, directly in its body: the function is the entry point it becomes}}
    // expected-error @+1 {{'kvcache.assign_targets' op could not be lowered to GPU kernels}}
    kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
    // expected-error @+2 {{'kvcache.compact_sources' op must be inside a func.func of the module, directly in its body}}
    // expected-error @+1 {{'kvcache.compact_sources' op could not be lowered to GPU kernels}}
    kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
    // expected-error @+2 {{'kvcache.move_rows' op must be inside a func.func of the module, directly in its body}}
    // expected-error @+1 {{'kvcache.move_rows' op could not be lowered to GPU kernels}}
    kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
    gpu.return
  }
}

// -----

// Inside a region of a function (the kernels run once per call: the loop
// or the branch would be lost). The function stays, with its op.
// KEPT-LABEL: func.func @in_loop(%arg0
// KEPT: scf.for
// KEPT-NEXT: kvcache.move_rows %arg0
func.func @in_loop(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+2 {{'kvcache.move_rows' op must be inside a func.func of the module, directly in its body}}
    // expected-error @+1 {{'kvcache.move_rows' op could not be lowered to GPU kernels}}
    kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  }
  return
}

// -----

// KEPT-LABEL: func.func @in_branch(%arg0
// KEPT: scf.if
// KEPT-NEXT: kvcache.compact_sources %arg0
// KEPT: func.func @fine(%arg0
func.func @in_branch(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>, %c: i1) {
  scf.if %c {
    // expected-error @+2 {{'kvcache.compact_sources' op must be inside a func.func of the module, directly in its body}}
    // expected-error @+1 {{'kvcache.compact_sources' op could not be lowered to GPU kernels}}
    kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  }
  return
}
// A function the pass can lower is lowered, but not erased while the pass
// fails.
func.func @fine(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// -----

// In a function of a nested module: not an entry point of this module.
func.func @outer() {
  return
}
module @inner {
  func.func @nested(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
    // expected-error @+2 {{'kvcache.assign_targets' op must be inside a func.func of the module, directly in its body}}
    // expected-error @+1 {{'kvcache.assign_targets' op could not be lowered to GPU kernels}}
    kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
    return
  }
}

// -----

// Kernels are named after their function: the name must be a PTX
// identifier, or the NVPTX printer would abort.
// KEPT-LABEL: func.func @"a-b.c$d"(%arg0
// KEPT-NEXT: kvcache.move_rows %arg0
// expected-error @+1 {{kernel name 'a-b.c$d_move_plan' derived from @"a-b.c$d" is not a valid PTX identifier ([A-Za-z_][A-Za-z0-9_]*)}}
func.func @"a-b.c$d"(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>, %ws: memref<?xi8>) {
  // expected-error @+1 {{'kvcache.move_rows' op could not be lowered to GPU kernels}}
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}
// Non-ASCII bytes are printed escaped, as the IR prints the symbol.
// expected-error @+1 {{kernel name '\C3\A9_compact_sources' derived from @"\C3\A9" is not a valid PTX identifier}}
func.func @"é"(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  // expected-error @+1 {{could not be lowered to GPU kernels}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}
// The entry kernel takes the function's name itself.
// expected-error @+1 {{kernel name '_1$' derived from @_1$ is not a valid PTX identifier}}
func.func @"_1$"(%ncd: memref<?xi32>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{could not be lowered to GPU kernels}}
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi32>)
      sentinel -1 slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

// The entry kernel's name is taken in the kernels module.
gpu.module @specc_kernels {
  gpu.func @taken() kernel {
    gpu.return
  }
}
func.func @taken(%ncd: memref<?xi32>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+2 {{'kvcache.move_accepted_tokens' op a kernel named @taken exists}}
  // expected-error @+1 {{could not be lowered to GPU kernels}}
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi32>)
      sentinel -1 slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

// Not an error: a stage kernel's name equal to a shared-memory global of
// another kernel (@f_move's entry kernel plans in @f_move_plan, the name of
// @f's kvcache.move_rows plan kernel) is made unique whichever is built
// first. Stage ops first: the global is renamed, with its uses.
// CHECK-LABEL: gpu.module @specc_kernels
// CHECK-DAG: llvm.mlir.global internal @f_move_plan_1() {addr_space = 3 : i32
// CHECK-DAG: gpu.func @f_move_plan(
// CHECK-DAG: gpu.func @f_move(
// CHECK-DAG: llvm.mlir.addressof @f_move_plan_1 : !llvm.ptr<3>
// CHECK-NOT: func.func
func.func @f(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>, %ws: memref<?xi8>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}
func.func @f_move(%ncd: memref<?xi32>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi32>)
      sentinel -1 slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

// The entry kernel first: the stage kernel takes the next free name.
// CHECK-LABEL: gpu.module @specc_kernels
// CHECK-DAG: llvm.mlir.global internal @g_move_plan() {addr_space = 3 : i32
// CHECK-DAG: gpu.func @g_move(
// CHECK-DAG: gpu.func @g_move_plan_1(
// CHECK-NOT: func.func
func.func @g_move(%ncd: memref<?xi32>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi32>)
      sentinel -1 slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}
func.func @g(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>, %ws: memref<?xi8>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}
