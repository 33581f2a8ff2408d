// With a `report` operand, the block that writes the status record also
// updates the report on a violation, as a sequence lock: odd sequence,
// fields, even sequence, each store volatile and ordered by system-scope
// fences (the runtime maps the record in host memory), then traps when the
// record's trap field is set. The report is a named parameter of the entry;
// its update, taken only on a violation, is a cold branch: a device
// function before the entry in the PTX (kvcache-outline-cold).
// RUN: specc-opt %s --kvcache-to-gpu | FileCheck %s
// RUN: specc %s --emit=ptx --chip=sm_90 | FileCheck %s --check-prefix=PTX

// CHECK: gpu.func @window(
// CHECK-SAME: params = ["num_correct_drafts", "accept_index", "out_cache_loc", "buffers", "workspace", "status", "report", "bs",
// CHECK-SAME: types = {{{.*}}report = i64
// CHECK: %[[SEQ:.*]] = llvm.load volatile %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: llvm.store volatile %{{.*}}, %{{.*}} : i64, !llvm.ptr<1>
// CHECK-NEXT: llvm.fence acq_rel{{$}}
// CHECK-COUNT-5: llvm.store volatile
// CHECK-NEXT: llvm.fence acq_rel{{$}}
// CHECK: llvm.store volatile
// CHECK-NEXT: llvm.fence acq_rel{{$}}
// CHECK: llvm.load volatile
// CHECK: llvm.intr.trap
// CHECK: } {kvcache.cold}

// PTX: .func window__cold{{[0-9]+}}(
// PTX: ld.volatile.global.b64 [[SEQ:%rd[0-9]+]], {{\[}}[[R:%rd[0-9]+]]{{\]}};
// PTX: st.volatile.global.b64 {{\[}}[[R]]{{\]}},
// PTX-NOT: st.
// PTX: fence.acq_rel.sys;
// PTX-NEXT: st.volatile.global.b64 {{\[}}[[R]]+8{{\]}},
// PTX-COUNT-4: st.volatile.global.b64
// PTX-NEXT: fence.acq_rel.sys;
// PTX: trap;
// PTX: .visible .entry window(
func.func @window(%ncd: memref<?xi32>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>,
    %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>, %report: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi32>)
      sentinel -1 slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>) report(%report : memref<8xi64>)
  return
}
