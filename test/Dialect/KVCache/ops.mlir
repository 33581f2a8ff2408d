// Every op prints, reparses, and reparses from the generic form.
// RUN: specc-opt %s | specc-opt | FileCheck %s
// RUN: specc-opt %s --mlir-print-op-generic | specc-opt | FileCheck %s

// CHECK-LABEL: func.func @assign_i64
// CHECK-SAME: (%[[RPI:.*]]: memref<?xi64>, %[[R2T:.*]]: memref<?x?xi32>, %[[SEQ:.*]]: memref<?xi64>, %[[NCD:.*]]: memref<?xi64>, %[[TGT:.*]]: memref<?xi64>)
// CHECK: kvcache.assign_targets %[[RPI]], %[[R2T]], %[[SEQ]], %[[NCD]] into %[[TGT]] : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
func.func @assign_i64(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>,
                      %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

// CHECK-LABEL: func.func @assign_checked_mixed
// CHECK: kvcache.assign_targets %{{.*}} into %{{.*}} checked status(%[[ST:.*]] : memref<4xi64>) : memref<4xi32>, memref<8x64xi32>, memref<4xi32>, memref<4xi64> into memref<16xi32>
func.func @assign_checked_mixed(%rpi: memref<4xi32>, %r2t: memref<8x64xi32>, %seq: memref<4xi32>,
                                %ncd: memref<4xi64>, %tgt: memref<16xi32>, %st: memref<4xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<4xi64>)
      : memref<4xi32>, memref<8x64xi32>, memref<4xi32>, memref<4xi64> into memref<16xi32>
  return
}

// CHECK-LABEL: func.func @compact
// CHECK: kvcache.compact_sources %{{.*}}, %{{.*}} into %{{.*}} sentinel -1 : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
func.func @compact(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  kvcache.compact_sources %acc, %ocl into %src sentinel -1
      : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// CHECK-LABEL: func.func @compact_checked
// CHECK: kvcache.compact_sources %{{.*}}, %{{.*}} into %{{.*}} sentinel -7 counts(%{{.*}} : memref<3xi32>) checked status(%{{.*}} : memref<4xi64>) : memref<3x4xi64>, memref<12xi32> into memref<12xi64>
func.func @compact_checked(%acc: memref<3x4xi64>, %ocl: memref<12xi32>, %src: memref<12xi64>,
                           %ncd: memref<3xi32>, %st: memref<4xi64>) {
  kvcache.compact_sources %acc, %ocl into %src sentinel -7 counts(%ncd : memref<3xi32>)
      checked status(%st : memref<4xi64>)
      : memref<3x4xi64>, memref<12xi32> into memref<12xi64>
  return
}

// CHECK-LABEL: func.func @move_gather_then_scatter
// CHECK: kvcache.move_rows %{{.*}}, %{{.*}}, %{{.*}} overlap <gather_then_scatter> workspace(%{{.*}} : memref<?xi8>) checked status(%{{.*}} : memref<4xi64>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
func.func @move_gather_then_scatter(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>,
                                    %ws: memref<?xi8>, %st: memref<4xi64>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter>
      workspace(%ws : memref<?xi8>) checked status(%st : memref<4xi64>)
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// CHECK-LABEL: func.func @move_disjoint
// CHECK: kvcache.move_rows %{{.*}}, %{{.*}}, %{{.*}} overlap <disjoint> : memref<2x3xi64>, memref<8xi32>, memref<8xi32>
// CHECK-NOT: workspace
func.func @move_disjoint(%bufs: memref<2x3xi64>, %src: memref<8xi32>, %tgt: memref<8xi32>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint>
      : memref<2x3xi64>, memref<8xi32>, memref<8xi32>
  return
}
