// kvcache-fuse: three checked stages wired through slot lists that nothing
// else reads, sharing one memref<8xi64> status, become one
// kvcache.move_accepted_tokens; the dead slot-list arguments of an entry
// point nobody calls are dropped. Every other triple is left alone.
// RUN: specc-opt %s --kvcache-fuse | FileCheck %s --implicit-check-not=kvcache.move_accepted_tokens

// CHECK-LABEL: func.func @wired(
// CHECK-SAME: %[[RPI:[^:]+]]: memref<?xi64>, %[[R2T:[^:]+]]: memref<?x?xi32>, %[[SEQ:[^:]+]]: memref<?xi64>, %[[NCD:[^:]+]]: memref<?xi32>, %[[ACC:[^:]+]]: memref<?x?xi32>, %[[OCL:[^:]+]]: memref<?xi64>, %[[BUFS:[^:]+]]: memref<?x3xi64>, %[[WS:[^:]+]]: memref<?xi8>, %[[ST:[^:]+]]: memref<8xi64>) {
// CHECK-NEXT: kvcache.move_accepted_tokens targets <req_to_token> rows(%[[RPI]], %[[R2T]], %[[SEQ]] : memref<?xi64>, memref<?x?xi32>, memref<?xi64>) drafts(%[[NCD]] : memref<?xi32>) accept(%[[ACC]] : memref<?x?xi32>) sentinel -3 slots(%[[OCL]] : memref<?xi64>) buffers(%[[BUFS]] : memref<?x3xi64>) workspace(%[[WS]] : memref<?xi8>) status(%[[ST]] : memref<8xi64>)
// CHECK-NEXT: return
func.func @wired(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi32>,
                 %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>,
                 %tgt: memref<?xi64>, %src: memref<?xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<8xi64>)
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi32> into memref<?xi64>
  kvcache.compact_sources %acc, %ocl into %src sentinel -3 counts(%ncd : memref<?xi32>)
      checked status(%st : memref<8xi64>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>)
      checked status(%st : memref<8xi64>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// A function with a caller keeps its signature: only the ops are fused.
// CHECK-LABEL: func.func @wired_called(
// CHECK-SAME: %{{[^:]+}}: memref<?x3xi64>, %[[TGT:[^:]+]]: memref<?xi64>, %[[SRC:[^:]+]]: memref<?xi64>, %{{[^:]+}}: memref<?xi8>, %{{[^:]+}}: memref<8xi64>) {
// CHECK-NEXT: kvcache.move_accepted_tokens targets <req_to_token>
// CHECK-NOT: %[[TGT]]
// CHECK-NOT: %[[SRC]]
// CHECK: return
// CHECK-LABEL: func.func @caller(
// CHECK: call @wired_called({{.*}}) : (memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?x3xi64>, memref<?xi64>, memref<?xi64>, memref<?xi8>, memref<8xi64>) -> ()
func.func @wired_called(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>,
                        %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>,
                        %tgt: memref<?xi64>, %src: memref<?xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<8xi64>)
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd : memref<?xi64>)
      checked status(%st : memref<8xi64>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>)
      checked status(%st : memref<8xi64>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

func.func @caller(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>,
                  %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>,
                  %tgt: memref<?xi64>, %src: memref<?xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  func.call @wired_called(%rpi, %r2t, %seq, %ncd, %acc, %ocl, %bufs, %tgt, %src, %ws, %st)
      : (memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64>, memref<?x?xi32>, memref<?xi64>,
         memref<?x3xi64>, memref<?xi64>, memref<?xi64>, memref<?xi8>, memref<8xi64>) -> ()
  return
}

// A 4-field status cannot hold the fused record: left alone.
// CHECK-LABEL: func.func @status4(
// CHECK-SAME: %[[TGT:[^:]+]]: memref<?xi64>, %[[SRC:[^:]+]]: memref<?xi64>, %{{[^:]+}}: memref<?xi8>, %[[ST:[^:]+]]: memref<4xi64>) {
// CHECK-NEXT: kvcache.assign_targets {{.*}} into %[[TGT]] checked status(%[[ST]] : memref<4xi64>)
// CHECK-NEXT: kvcache.compact_sources {{.*}} into %[[SRC]] sentinel -1 {{.*}} checked status(%[[ST]] : memref<4xi64>)
// CHECK-NEXT: kvcache.move_rows %{{.*}}, %[[SRC]], %[[TGT]] overlap <gather_then_scatter> {{.*}} checked status(%[[ST]] : memref<4xi64>)
// CHECK-NEXT: return
func.func @status4(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>,
                   %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>,
                   %tgt: memref<?xi64>, %src: memref<?xi64>, %ws: memref<?xi8>, %st: memref<4xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<4xi64>)
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd : memref<?xi64>)
      checked status(%st : memref<4xi64>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>)
      checked status(%st : memref<4xi64>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// An unchecked move reports nothing: left alone.
// CHECK-LABEL: func.func @unchecked(
// CHECK-SAME: %[[TGT:[^:]+]]: memref<?xi64>, %[[SRC:[^:]+]]: memref<?xi64>, %{{[^:]+}}: memref<?xi8>, %[[ST:[^:]+]]: memref<8xi64>) {
// CHECK-NEXT: kvcache.assign_targets {{.*}} into %[[TGT]] checked status(%[[ST]] : memref<8xi64>)
// CHECK-NEXT: kvcache.compact_sources {{.*}} into %[[SRC]] sentinel -1 {{.*}} checked status(%[[ST]] : memref<8xi64>)
// CHECK-NEXT: kvcache.move_rows %{{.*}}, %[[SRC]], %[[TGT]] overlap <gather_then_scatter> workspace(%{{.*}} : memref<?xi8>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
// CHECK-NEXT: return
func.func @unchecked(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>,
                     %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>,
                     %tgt: memref<?xi64>, %src: memref<?xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<8xi64>)
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd : memref<?xi64>)
      checked status(%st : memref<8xi64>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>)
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// The target list is also read after the move: left alone.
// CHECK-LABEL: func.func @slots_used(
// CHECK-SAME: %[[TGT:[^:]+]]: memref<?xi64>, %[[SRC:[^:]+]]: memref<?xi64>, %{{[^:]+}}: memref<?xi8>, %[[ST:[^:]+]]: memref<8xi64>) -> i64 {
// CHECK-NEXT: kvcache.assign_targets {{.*}} into %[[TGT]] checked
// CHECK-NEXT: kvcache.compact_sources {{.*}} into %[[SRC]] sentinel -1
// CHECK-NEXT: kvcache.move_rows %{{.*}}, %[[SRC]], %[[TGT]] overlap <gather_then_scatter>
// CHECK: %[[FIRST:.*]] = memref.load %[[TGT]][%{{.*}}] : memref<?xi64>
// CHECK: return %[[FIRST]] : i64
func.func @slots_used(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>,
                      %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>,
                      %tgt: memref<?xi64>, %src: memref<?xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) -> i64 {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<8xi64>)
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd : memref<?xi64>)
      checked status(%st : memref<8xi64>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8>)
      checked status(%st : memref<8xi64>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  %c0 = arith.constant 0 : index
  %first = memref.load %tgt[%c0] : memref<?xi64>
  return %first : i64
}
