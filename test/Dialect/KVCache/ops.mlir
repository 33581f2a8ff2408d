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

// CHECK-LABEL: func.func @fused_req_to_token
// CHECK-SAME: (%[[RPI:.*]]: memref<?xi64>, %[[R2T:.*]]: memref<?x?xi32>, %[[SEQ:.*]]: memref<?xi32>, %[[NCD:.*]]: memref<?xi64>, %[[ACC:.*]]: memref<?x?xi32>, %[[OCL:.*]]: memref<?xi64>, %[[BUFS:.*]]: memref<?x3xi64>, %[[WS:.*]]: memref<?xi8>, %[[ST:.*]]: memref<8xi64>)
// CHECK: kvcache.move_accepted_tokens targets <req_to_token> rows(%[[RPI]], %[[R2T]], %[[SEQ]] : memref<?xi64>, memref<?x?xi32>, memref<?xi32>) drafts(%[[NCD]] : memref<?xi64>) accept(%[[ACC]] : memref<?x?xi32>) sentinel -1 slots(%[[OCL]] : memref<?xi64>) buffers(%[[BUFS]] : memref<?x3xi64>) workspace(%[[WS]] : memref<?xi8>) status(%[[ST]] : memref<8xi64>)
func.func @fused_req_to_token(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi32>,
                              %ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>,
                              %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <req_to_token>
      rows(%rpi, %r2t, %seq : memref<?xi64>, memref<?x?xi32>, memref<?xi32>)
      drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1
      slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// CHECK-LABEL: func.func @fused_window
// CHECK-SAME: (%[[NCD:.*]]: memref<4xi32>, %[[ACC:.*]]: memref<4x3xi64>, %[[OCL:.*]]: memref<12xi32>, %[[BUFS:.*]]: memref<2x3xi64>, %[[WS:.*]]: memref<1024xi8>, %[[ST:.*]]: memref<8xi64>)
// CHECK: kvcache.move_accepted_tokens targets <window> drafts(%[[NCD]] : memref<4xi32>) accept(%[[ACC]] : memref<4x3xi64>) sentinel -5 slots(%[[OCL]] : memref<12xi32>) buffers(%[[BUFS]] : memref<2x3xi64>) workspace(%[[WS]] : memref<1024xi8>) status(%[[ST]] : memref<8xi64>)
// CHECK-NOT: rows(
func.func @fused_window(%ncd: memref<4xi32>, %acc: memref<4x3xi64>, %ocl: memref<12xi32>,
                        %bufs: memref<2x3xi64>, %ws: memref<1024xi8>, %st: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<4xi32>) accept(%acc : memref<4x3xi64>) sentinel -5
      slots(%ocl : memref<12xi32>) buffers(%bufs : memref<2x3xi64>)
      workspace(%ws : memref<1024xi8>) status(%st : memref<8xi64>)
  return
}

// The generic form parses too; the absent rows(...) are empty segments.
// CHECK-LABEL: func.func @fused_generic
// CHECK-SAME: (%[[RPI:.*]]: memref<?xi32>, %[[R2T:.*]]: memref<?x?xi32>, %[[SEQ:.*]]: memref<?xi64>, %[[NCD:.*]]: memref<?xi32>, %[[ACC:.*]]: memref<?x?xi64>, %[[OCL:.*]]: memref<?xi32>, %[[BUFS:.*]]: memref<?x3xi64>, %[[WS:.*]]: memref<?xi8>, %[[ST:.*]]: memref<8xi64>)
// CHECK: kvcache.move_accepted_tokens targets <req_to_token> rows(%[[RPI]], %[[R2T]], %[[SEQ]] : memref<?xi32>, memref<?x?xi32>, memref<?xi64>) drafts(%[[NCD]] : memref<?xi32>) accept(%[[ACC]] : memref<?x?xi64>) sentinel -1 slots(%[[OCL]] : memref<?xi32>) buffers(%[[BUFS]] : memref<?x3xi64>) workspace(%[[WS]] : memref<?xi8>) status(%[[ST]] : memref<8xi64>)
// CHECK: kvcache.move_accepted_tokens targets <window> drafts(%[[NCD]] : memref<?xi32>) accept(%[[ACC]] : memref<?x?xi64>) sentinel -2 slots(%[[OCL]] : memref<?xi32>) buffers(%[[BUFS]] : memref<?x3xi64>) workspace(%[[WS]] : memref<?xi8>) status(%[[ST]] : memref<8xi64>)
func.func @fused_generic(%rpi: memref<?xi32>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>,
                         %ncd: memref<?xi32>, %acc: memref<?x?xi64>, %ocl: memref<?xi32>,
                         %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  "kvcache.move_accepted_tokens"(%rpi, %r2t, %seq, %ncd, %acc, %ocl, %bufs, %ws, %st)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 0>, sentinel = -1 : i64,
        targets = #kvcache.targets<req_to_token>}>
      : (memref<?xi32>, memref<?x?xi32>, memref<?xi64>, memref<?xi32>, memref<?x?xi64>,
         memref<?xi32>, memref<?x3xi64>, memref<?xi8>, memref<8xi64>) -> ()
  "kvcache.move_accepted_tokens"(%ncd, %acc, %ocl, %bufs, %ws, %st)
      <{operandSegmentSizes = array<i32: 0, 0, 0, 1, 1, 1, 1, 1, 1, 0>, sentinel = -2 : i64,
        targets = #kvcache.targets<window>}>
      : (memref<?xi32>, memref<?x?xi64>, memref<?xi32>, memref<?x3xi64>, memref<?xi8>,
         memref<8xi64>) -> ()
  return
}
