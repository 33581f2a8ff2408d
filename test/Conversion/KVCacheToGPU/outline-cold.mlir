// kvcache-outline-cold: the then-region of an scf.if marked kvcache.cold
// becomes an internal, never-inlined llvm.func before its kernel, taking the
// values the region uses from above (constants are cloned, not passed), and
// the branch calls it. Unmarked branches stay. Nested cold branches are
// outlined innermost first, so the outer function calls the inner one.
// RUN: specc-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(kvcache-outline-cold))' --verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.module @m
// CHECK: llvm.func internal @k__cold0(%[[V:.*]]: i64, %[[P:.*]]: !llvm.ptr<1>) attributes {passthrough = ["noinline"]} {
// CHECK-NEXT: %[[C:.*]] = arith.constant 8 : i64
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[V]], %[[C]] : i64
// CHECK-NEXT: llvm.store %[[S]], %[[P]] : i64, !llvm.ptr<1>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: llvm.return
// CHECK: gpu.func @k(%[[KP:.*]]: !llvm.ptr<1>, %[[KV:.*]]: i64, %[[KC:.*]]: i1) kernel
// CHECK: scf.if %[[KC]] {
// CHECK-NEXT: llvm.call @k__cold0(%[[KV]], %[[KP]]) : (i64, !llvm.ptr<1>) -> ()
// CHECK-NEXT: }
// CHECK-NOT: kvcache.cold
// CHECK: scf.if %[[KC]] {
// CHECK-NEXT: llvm.store %[[KV]], %[[KP]]
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>, %v: i64, %c: i1) kernel {
    %eight = arith.constant 8 : i64
    scf.if %c {
      %s = arith.addi %v, %eight : i64
      llvm.store %s, %p : i64, !llvm.ptr<1>
      gpu.barrier
    } {kvcache.cold}
    scf.if %c {
      llvm.store %v, %p : i64, !llvm.ptr<1>
    }
    gpu.return
  }
}

// -----

// CHECK-LABEL: gpu.module @nested
// CHECK: llvm.func internal @k__cold0(%{{.*}}: i64, %{{.*}}: !llvm.ptr<1>)
// CHECK: llvm.func internal @k__cold1(%{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i1)
// CHECK: scf.if
// CHECK-NEXT: llvm.call @k__cold0(
// CHECK: gpu.func @k(
// CHECK: llvm.call @k__cold1(
gpu.module @nested {
  gpu.func @k(%p: !llvm.ptr<1>, %v: i64, %c: i1) kernel {
    scf.if %c {
      scf.if %c {
        llvm.store %v, %p : i64, !llvm.ptr<1>
      } {kvcache.cold}
    } {kvcache.cold}
    gpu.return
  }
}

// -----

// A name taken by another symbol is skipped.
// CHECK-LABEL: gpu.module @taken
// CHECK: llvm.func @k__cold0()
// CHECK: llvm.func internal @k__cold1(
// CHECK: llvm.call @k__cold1(
gpu.module @taken {
  llvm.func @k__cold0() {
    llvm.return
  }
  gpu.func @k(%p: !llvm.ptr<1>, %v: i64, %c: i1) kernel {
    scf.if %c {
      llvm.store %v, %p : i64, !llvm.ptr<1>
    } {kvcache.cold}
    gpu.return
  }
}

// -----

// A cold branch that yields a value cannot become a call: an error where
// it is, not a branch left in place.
gpu.module @yields {
  gpu.func @k(%v: i64, %c: i1) kernel {
    // expected-error @+1 {{kvcache-outline-cold: a cold branch yields no value and has no else region}}
    %r = scf.if %c -> i64 {
      scf.yield %v : i64
    } else {
      scf.yield %v : i64
    } {kvcache.cold}
    gpu.return
  }
}

// -----

// A value of a type a device function cannot take (index) is an error.
gpu.module @index {
  gpu.func @k(%p: !llvm.ptr<1>, %c: i1) kernel {
    %t = gpu.thread_id x
    // expected-error @+1 {{kvcache-outline-cold: a value of type 'index' cannot be passed to a device function}}
    scf.if %c {
      %i = arith.index_cast %t : index to i64
      llvm.store %i, %p : i64, !llvm.ptr<1>
    } {kvcache.cold}
    gpu.return
  }
}
