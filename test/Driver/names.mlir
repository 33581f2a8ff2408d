// Kernels are named after their functions, and a kernel name must be a PTX
// identifier: a function whose name is not one ('-', '.', '$', non-ASCII
// bytes) is an error located on the function, and specc exits with an error
// instead of aborting in the NVPTX printer ("Symbol name with unsupported
// characters"). `not` fails on a crash, so the exit is an error, not a crash.
// RUN: rm -f %t.ptx
// RUN: not specc %s --emit=ptx -o %t.ptx 2>&1 | FileCheck %s
// RUN: not ls %t.ptx

// CHECK-DAG: names.mlir:[[@LINE+2]]:1: error: kernel name 'a-b.c$d' derived from @"a-b.c$d" is not a valid PTX identifier ([A-Za-z_][A-Za-z0-9_]*)
// CHECK-DAG: names.mlir:[[@LINE+2]]:3: error: 'kvcache.move_accepted_tokens' op could not be lowered to GPU kernels
func.func @"a-b.c$d"(%ncd: memref<?xi32>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi32>)
      sentinel -1 slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// CHECK-DAG: names.mlir:[[@LINE+2]]:1: error: kernel name '\C3\A9_move_plan' derived from @"\C3\A9" is not a valid PTX identifier
// CHECK-DAG: names.mlir:[[@LINE+2]]:3: error: 'kvcache.move_rows' op could not be lowered to GPU kernels
func.func @"é"(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>, %ws: memref<?xi8>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}
// Both functions are reported (names first, then their ops), and nothing
// aborts.
// CHECK-NOT: LLVM ERROR
// CHECK-NOT: Stack dump
