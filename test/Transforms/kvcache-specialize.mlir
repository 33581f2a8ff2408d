// kvcache-specialize: one clone per combination of the declared element
// types (cartesian product in argument order, each list in its order), named
// <function>__<type>_<type>, with the memref element types substituted, the
// declarations dropped and the origin in kvcache.specialization_of; the
// original is removed and functions without declarations are left alone.
// RUN: specc-opt %s --kvcache-specialize --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @assign__i32_i64(
// CHECK-SAME: %[[RPI:[^:]+]]: memref<?xi32>, %[[R2T:[^:]+]]: memref<?x?xi32>, %[[SEQ:[^:]+]]: memref<?xi64>, %[[NCD:[^:]+]]: memref<?xi64>, %[[TGT:[^:]+]]: memref<?xi64>)
// CHECK-SAME: attributes {kvcache.specialization_of = @assign}
// CHECK-NOT: kvcache.element_types
// CHECK: kvcache.assign_targets %[[RPI]], %[[R2T]], %[[SEQ]], %[[NCD]] into %[[TGT]] : memref<?xi32>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
// CHECK-LABEL: func.func @assign__i32_i32(
// CHECK-SAME: %{{[^:]+}}: memref<?xi32>, %{{[^:]+}}: memref<?x?xi32>, %{{[^:]+}}: memref<?xi32>, %{{[^:]+}}: memref<?xi64>, %{{[^:]+}}: memref<?xi64>)
// CHECK-SAME: attributes {kvcache.specialization_of = @assign}
// CHECK: kvcache.assign_targets {{.*}} : memref<?xi32>, memref<?x?xi32>, memref<?xi32>, memref<?xi64> into memref<?xi64>
// CHECK-LABEL: func.func @assign__i64_i64(
// CHECK-SAME: %{{[^:]+}}: memref<?xi64>, %{{[^:]+}}: memref<?x?xi32>, %{{[^:]+}}: memref<?xi64>, %{{[^:]+}}: memref<?xi64>, %{{[^:]+}}: memref<?xi64>)
// CHECK-SAME: attributes {kvcache.specialization_of = @assign}
// CHECK: kvcache.assign_targets {{.*}} : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
// CHECK-LABEL: func.func @assign__i64_i32(
// CHECK-SAME: %{{[^:]+}}: memref<?xi64>, %{{[^:]+}}: memref<?x?xi32>, %{{[^:]+}}: memref<?xi32>, %{{[^:]+}}: memref<?xi64>, %{{[^:]+}}: memref<?xi64>)
// CHECK-SAME: attributes {kvcache.specialization_of = @assign}
// CHECK: kvcache.assign_targets {{.*}} : memref<?xi64>, memref<?x?xi32>, memref<?xi32>, memref<?xi64> into memref<?xi64>
// CHECK-NOT: func.func @assign(
// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %{{[^:]+}}: memref<?xi64>) {
func.func @assign(%rpi: memref<?xi64> {kvcache.element_types = [i32, i64]}, %r2t: memref<?x?xi32>,
                  %seq: memref<?xi64> {kvcache.element_types = [i64, i32]}, %ncd: memref<?xi64>,
                  %tgt: memref<?xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

func.func @plain(%a: memref<?xi64>) {
  return
}

// -----

// One declared argument with one type: a single clone, static shapes kept.
// CHECK-LABEL: func.func @single__i32(
// CHECK-SAME: %{{[^:]+}}: memref<4x?xi32>, %{{[^:]+}}: memref<8xi64>)
// CHECK-SAME: attributes {kvcache.specialization_of = @single}
func.func @single(%acc: memref<4x?xi64> {kvcache.element_types = [i32]}, %st: memref<8xi64>) {
  return
}

// -----

// expected-error @+1 {{argument 0 declares 'kvcache.element_types' but is not a memref}}
func.func @not_memref(%n: i64 {kvcache.element_types = [i32, i64]}) {
  return
}

// -----

// expected-error @+1 {{'kvcache.element_types' of argument 1 must be a non-empty array of types}}
func.func @empty(%a: memref<?xi64>, %b: memref<?xi64> {kvcache.element_types = []}) {
  return
}

// -----

// expected-error @+1 {{'kvcache.element_types' of argument 0 lists i32 twice}}
func.func @duplicate(%a: memref<?xi64> {kvcache.element_types = [i32, i64, i32]}) {
  return
}

// -----

// expected-error @+1 {{'kvcache.element_types' of argument 0 must list integer or float types, got 3 : i64}}
func.func @not_a_type(%a: memref<?xi64> {kvcache.element_types = [i32, 3]}) {
  return
}
