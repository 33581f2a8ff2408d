// specc-gpu-pipeline: kvcache ops -> kernels -> NVVM/LLVM dialect, with the
// NVVM target (chip, opt level) attached to the kernel module. Nothing of scf,
// cf, arith, memref, func or the gpu kernel ops is left; the launch attributes
// survive on the llvm.func kernels.
// RUN: specc-opt %s --specc-gpu-pipeline | FileCheck %s --check-prefixes=CHECK,SM90 \
// RUN:   --implicit-check-not=scf. --implicit-check-not=cf. --implicit-check-not=arith. \
// RUN:   --implicit-check-not=memref --implicit-check-not=func.func --implicit-check-not=gpu.func \
// RUN:   --implicit-check-not=gpu.return --implicit-check-not=gpu.barrier --implicit-check-not=gpu.shuffle \
// RUN:   --implicit-check-not=gpu.thread_id --implicit-check-not=gpu.block_id \
// RUN:   --implicit-check-not=unrealized_conversion_cast --implicit-check-not="kvcache.{{(assign_targets|compact_sources|move_rows)}}"
// RUN: not specc-opt %s --specc-gpu-pipeline="chip=sm_70" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: specc-opt %s --specc-gpu-pipeline="scan-block-size=256 copy-block-size=128" | FileCheck %s --check-prefix=BLOCKS
// BADCHIP: error: specc-gpu-pipeline: unsupported chip 'sm_70' (sm_80, sm_86, sm_89, sm_90)
// BLOCKS: kvcache.launch = {block = 256 : i64, grid = "single"}
// BLOCKS: kvcache.launch = {block = 128 : i64, {{.*}}grid = "row_tiles_x_buffers"
// RUN: specc-opt %s --specc-gpu-pipeline="chip=sm_80" | FileCheck %s --check-prefixes=CHECK,SM80 \
// RUN:   --implicit-check-not=scf. --implicit-check-not=gpu.func --implicit-check-not=sm_90
// RUN: specc-opt %s --specc-gpu-pipeline="chip=sm_86 opt-level=1 tile-bytes=128 staging-bytes=65536" \
// RUN:   | FileCheck %s --check-prefix=OPTS

// SM90: gpu.module @specc_kernels [#nvvm.target<O = 3, chip = "sm_90">] {
// SM80: gpu.module @specc_kernels [#nvvm.target<O = 3, chip = "sm_80">] {
// OPTS: gpu.module @specc_kernels [#nvvm.target<O = 1, chip = "sm_86">] {
// OPTS: llvm.func @assign_assign_targets(
// OPTS: llvm.func @move_move_copy(
// OPTS-SAME: kvcache.launch = {block = 256 : i64, dynamic_shared_memory = 65536 : i64, grid = "row_tiles_x_buffers", tile_bytes = 128 : i64}

// CHECK-DAG: llvm.mlir.global internal @assign_assign_targets_scan() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x i32>
// CHECK-DAG: llvm.mlir.global internal @compact_compact_sources_scan() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x i32>
// CHECK-DAG: llvm.mlir.global internal @move_move_plan_counts() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<{{[0-9]+}} x i32>
// CHECK-DAG: llvm.mlir.global external @move_move_copy_staging() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>

// CHECK-LABEL: llvm.func @assign_assign_targets(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64)
// CHECK-SAME: attributes {gpu.kernel, gpu.known_block_size = array<i32: 512, 1, 1>, kvcache.launch = {block = 512 : i64, grid = "single"}, nvvm.kernel, nvvm.maxntid = array<i32: 512, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: nvvm.shfl.sync up
// CHECK: nvvm.barrier0
// CHECK: llvm.cmpxchg %{{.*}} monotonic monotonic : !llvm.ptr<1>, i64
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @compact_compact_sources(
// CHECK-SAME: attributes {gpu.kernel, gpu.known_block_size = array<i32: 512, 1, 1>, kvcache.launch = {block = 512 : i64, grid = "single"}, nvvm.kernel, nvvm.maxntid = array<i32: 512, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: nvvm.shfl.sync up
// CHECK: nvvm.barrier0
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @move_move_plan(
// CHECK-SAME: attributes {gpu.kernel, gpu.known_block_size = array<i32: 512, 1, 1>, kvcache.launch = {block = 512 : i64, grid = "single"}, nvvm.kernel, nvvm.maxntid = array<i32: 512, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: llvm.intr.ctlz
// CHECK: llvm.load volatile
// CHECK: nvvm.barrier0
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} monotonic : !llvm.ptr<3>, i32
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @move_move_copy(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: i64)
// CHECK-SAME: attributes {gpu.kernel, gpu.known_block_size = array<i32: 256, 1, 1>, kvcache.launch = {block = 256 : i64, dynamic_shared_memory = 98304 : i64, grid = "row_tiles_x_buffers", tile_bytes = 64 : i64}, nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>}
// CHECK-DAG: nvvm.read.ptx.sreg.ctaid.x
// CHECK-DAG: nvvm.read.ptx.sreg.ctaid.y
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
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
                %ws: memref<?xi8>, %st: memref<4xi64>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter>
      workspace(%ws : memref<?xi8>) checked status(%st : memref<4xi64>)
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}
