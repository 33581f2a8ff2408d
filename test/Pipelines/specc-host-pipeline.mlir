// specc-host-pipeline: kvcache ops -> host loops -> LLVM dialect. Only llvm
// dialect ops (in the builtin module) are left; memrefs are expanded into
// descriptor arguments, the move's temporary goes through malloc/free, and
// llvm.emit_c_interface functions get their _mlir_ciface_ wrapper.
// RUN: specc-opt %s --specc-host-pipeline | FileCheck %s \
// RUN:   --implicit-check-not=scf. --implicit-check-not=cf. --implicit-check-not=arith. \
// RUN:   --implicit-check-not=memref. --implicit-check-not=func.func --implicit-check-not=gpu. \
// RUN:   --implicit-check-not=unrealized_conversion_cast --implicit-check-not="kvcache.{{(assign_targets|compact_sources|move_rows)}}"
// Every operation, in generic form, is llvm.* (or the module itself).
// RUN: specc-opt %s --specc-host-pipeline --mlir-print-op-generic \
// RUN:   | grep -oE '"[a-z_]+\.[a-z_0-9.]+"\(' | sort -u | FileCheck %s --check-prefix=OPS
// RUN: specc-opt %s --specc-host-pipeline --mlir-print-op-generic \
// RUN:   | grep -oE '"[a-z_]+\.[a-z_0-9.]+"\(' | not grep -v -e '^"llvm\.' -e '^"builtin\.module"('

// OPS: "builtin.module"(
// OPS: "llvm.call"(
// OPS: "llvm.func"(
// OPS: "llvm.intr.memcpy"(
// OPS: "llvm.load"(
// OPS: "llvm.store"(

// CHECK: module {
// CHECK-DAG: llvm.func @free(!llvm.ptr)
// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr

// A memref<?xi64> is (allocated, aligned, offset, size, stride); the 2-D
// table adds a size and a stride; memref<4xi64> keeps its five fields.
// CHECK-LABEL: llvm.func @assign(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64,
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64,
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: llvm.sext %{{.*}} : i32 to i64
// CHECK: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
// CHECK: llvm.return
// CHECK-NOT: @_mlir_ciface_assign

// CHECK-LABEL: llvm.func @compact(
// CHECK: llvm.return
// CHECK-NOT: @_mlir_ciface_compact

// CHECK-LABEL: llvm.func @move(
// CHECK: %[[TMP:.*]] = llvm.call @malloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: "llvm.intr.memcpy"(%{{.*}}, %{{.*}}, %{{.*}}) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK: "llvm.intr.memcpy"(%{{.*}}, %{{.*}}, %{{.*}}) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK: llvm.call @free(%[[TMP]]) : (!llvm.ptr) -> ()
// CHECK: llvm.return

// The C interface: one pointer to a descriptor per memref.
// CHECK-LABEL: llvm.func @_mlir_ciface_move(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: llvm.call @move(
// CHECK: llvm.return

func.func @assign(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>,
                  %ncd: memref<?xi64>, %tgt: memref<?xi64>, %st: memref<4xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<4xi64>)
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

func.func @compact(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  kvcache.compact_sources %acc, %ocl into %src sentinel -1
      : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

func.func @move(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>,
                %ws: memref<?xi8>, %st: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter>
      workspace(%ws : memref<?xi8>) checked status(%st : memref<4xi64>)
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}
