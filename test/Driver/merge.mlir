// Several inputs merge into one module: the kernels of all of them land in
// the one gpu.module, in input order, and the host path keeps every function.
// RUN: rm -rf %t && split-file %s %t
// RUN: specc %stages/move_rows.mlir %t/extra.mlir --emit=manifest | FileCheck %s
// RUN: specc %t/extra.mlir %stages/move_rows.mlir --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: specc %stages/move_rows.mlir %t/extra.mlir --target=host --emit=llvm | FileCheck %s --check-prefix=HOST

// CHECK: # specc launch manifest
// CHECK-NEXT: kernel move_rows_move_plan block 512
// CHECK-NEXT: kernel move_rows_move_copy block 256
// CHECK-NEXT: kernel move_rows_move_stage_all block 256
// CHECK-NEXT: kernel extra_compact_sources block 512
// CHECK-NEXT: kernel extra_move_copy block 256 grid row_tiles_x_buffers tile_bytes 64 smem 0
// CHECK-NEXT: abi {{[0-9]+}}
// CHECK-EMPTY:

// PTX: .visible .entry extra_compact_sources(
// PTX: .visible .entry extra_move_copy(
// PTX: .visible .entry move_rows_move_plan(
// PTX: .visible .entry move_rows_move_copy(

// HOST-DAG: define void @move_rows(
// HOST-DAG: define void @_mlir_ciface_move_rows(
// HOST-DAG: define void @extra(
// HOST-NOT: @_mlir_ciface_extra

//--- extra.mlir
func.func @extra(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>,
                 %bufs: memref<?x3xi64>, %tgt: memref<?xi64>) {
  kvcache.compact_sources %acc, %ocl into %src sentinel -1
      : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint>
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}
