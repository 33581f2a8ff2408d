// kvcache-to-loops with a `report`: after the status record is written, a
// call with a violation makes the sequence odd, copies code, entry, value,
// bound and the skipped count, makes the sequence even (two more than
// before) and traps when the trap field is set; all before any row moves.
// RUN: specc-opt %s --kvcache-to-loops | FileCheck %s

// CHECK-LABEL: func.func @fused_window(
// CHECK-SAME: %[[ST:[^:]+]]: memref<8xi64>, %[[R:[^:]+]]: memref<8xi64>)
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = memref.load %[[R]][%{{.*}}] : memref<8xi64>
// CHECK: %[[UP:.*]] = arith.addi %[[OLD]], %{{.*}} : i64
// CHECK: %[[EVEN:.*]] = arith.andi %[[UP]], %{{.*}} : i64
// CHECK: %[[ODD:.*]] = arith.addi %[[EVEN]], %{{.*}} : i64
// CHECK: memref.store %[[ODD]], %[[R]]
// CHECK-COUNT-5: memref.store %{{.*}}, %[[R]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[EVEN]], %{{.*}} : i64
// CHECK: memref.store %[[NEXT]], %[[R]]
// CHECK: %[[TRAP:.*]] = memref.load %[[R]]
// CHECK: scf.if
// CHECK-NEXT: llvm.intr.trap
func.func @fused_window(%ncd: memref<?xi32>, %acc: memref<?x?xi64>, %ocl: memref<?xi32>,
                        %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>,
                        %report: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi64>) sentinel -1
      slots(%ocl : memref<?xi32>) buffers(%bufs : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>) report(%report : memref<8xi64>)
  return
}
