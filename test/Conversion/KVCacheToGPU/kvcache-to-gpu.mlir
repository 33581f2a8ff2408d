// kvcache-to-gpu: every op becomes kernels with bare-pointer parameters in one
// gpu.module, the host functions are removed, and the pass options reach the
// launch attributes.
// RUN: specc-opt %s --kvcache-to-gpu | FileCheck %s --implicit-check-not=func.func --implicit-check-not=memref --implicit-check-not="kvcache.{{(assign_targets|compact_sources|move_rows)}}"
// RUN: specc-opt %s --kvcache-to-gpu | FileCheck %s --check-prefix=UNCHECKED
// RUN: specc-opt %s --kvcache-to-gpu="tile-bytes=128 staging-bytes=65536 module-name=foo" | FileCheck %s --check-prefix=OPTS
// RUN: specc-opt %s --kvcache-to-gpu="scan-block-size=64 copy-block-size=128" | FileCheck %s --check-prefix=BLOCKS
// RUN: not specc-opt %s --kvcache-to-gpu="scan-block-size=100" 2>&1 | FileCheck %s --check-prefix=BAD-SCAN
// RUN: not specc-opt %s --kvcache-to-gpu="scan-block-size=2048" 2>&1 | FileCheck %s --check-prefix=BAD-SCAN
// RUN: not specc-opt %s --kvcache-to-gpu="scan-block-size=0" 2>&1 | FileCheck %s --check-prefix=BAD-SCAN
// RUN: not specc-opt %s --kvcache-to-gpu="tile-bytes=24" 2>&1 | FileCheck %s --check-prefix=BAD-TILE
// RUN: not specc-opt %s --kvcache-to-gpu="tile-bytes=0" 2>&1 | FileCheck %s --check-prefix=BAD-TILE
// RUN: not specc-opt %s --kvcache-to-gpu="tile-bytes=8192" 2>&1 | FileCheck %s --check-prefix=BAD-TILE
// RUN: not specc-opt %s --kvcache-to-gpu="staging-bytes=32" 2>&1 | FileCheck %s --check-prefix=BAD-STAGING
// RUN: not specc-opt %s --kvcache-to-gpu="staging-bytes=262144" 2>&1 | FileCheck %s --check-prefix=BAD-STAGING
// RUN: not specc-opt %s --kvcache-to-gpu="copy-block-size=0" 2>&1 | FileCheck %s --check-prefix=BAD-COPY
// RUN: not specc-opt %s --kvcache-to-gpu="copy-block-size=16" 2>&1 | FileCheck %s --check-prefix=BAD-COPY
// RUN: not specc-opt %s --kvcache-to-gpu="module-name=" 2>&1 | FileCheck %s --check-prefix=BAD-NAME
// RUN: not specc-opt %s --kvcache-to-gpu="copy-block-size=2048" 2>&1 | FileCheck %s --check-prefix=BAD-COPY

// BAD-SCAN: error: kvcache-to-gpu: scan-block-size must be a multiple of 32 in [32, 1024]
// BAD-TILE: error: kvcache-to-gpu: tile-bytes must be a multiple of 16 whose 16-byte lanes divide copy-block-size
// BAD-STAGING: error: kvcache-to-gpu: staging-bytes must hold one tile and fit a block's shared memory (at most 232448 bytes)
// BAD-COPY: error: kvcache-to-gpu: copy-block-size must be a multiple of 32 in [32, 1024]
// BAD-NAME: error: kvcache-to-gpu: module-name must not be empty

// CHECK: module attributes {gpu.container_module}
// CHECK-NEXT: gpu.module @specc_kernels {
// Shared memory: the scan scratch of each one-block kernel, the counters of
// each plan, the dynamic staging buffer of each gather-then-scatter copy.
// CHECK-DAG: llvm.mlir.global internal @assign_u64_assign_targets_scan() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x i32>
// CHECK-DAG: llvm.mlir.global internal @assign_c32_assign_targets_scan() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x i32>
// CHECK-DAG: llvm.mlir.global internal @compact_u_compact_sources_scan() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x i32>
// CHECK-DAG: llvm.mlir.global internal @compact_c_compact_sources_scan() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x i32>
// CHECK-DAG: llvm.mlir.global internal @move_gc_move_plan_counts() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<{{[0-9]+}} x i32>
// CHECK-DAG: llvm.mlir.global external @move_gc_move_copy_staging() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-DAG: llvm.mlir.global internal @move_gu_move_plan_counts() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<{{[0-9]+}} x i32>
// CHECK-DAG: llvm.mlir.global external @move_gu_move_copy_staging() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>

// OPTS: gpu.module @foo {
// OPTS-NOT: gpu.module @specc_kernels
// OPTS-LABEL: gpu.func @move_gc_move_copy(
// OPTS-SAME: known_block_size = array<i32: 256, 1, 1>
// OPTS-SAME: kvcache.launch = {block = 256 : i64, dynamic_shared_memory = 65536 : i64, grid = "row_tiles_x_buffers", tile_bytes = 128 : i64}
// 128-byte tiles: 8 lanes of 16 bytes per row, 32 rows per block, 512 staged
// rows in 64 KiB.
// OPTS: %[[TID:.*]] = arith.index_cast %{{.*}} : index to i64
// OPTS: %[[C7:.*]] = arith.constant 7 : i64
// OPTS: arith.andi %[[TID]], %[[C7]] : i64
// OPTS: %[[C8:.*]] = arith.constant 8 : i64
// OPTS: arith.divui %[[TID]], %[[C8]] : i64
// OPTS: %[[CAP:.*]] = arith.constant 512 : i64
// OPTS: arith.cmpi sgt, %{{.*}}, %[[CAP]] : i64
// OPTS: %[[TILE:.*]] = arith.constant 128 : i64
// OPTS: arith.muli %{{.*}}, %[[TILE]] : i64
// OPTS-LABEL: gpu.func @move_gu_move_copy(
// OPTS-SAME: kvcache.launch = {block = 256 : i64, dynamic_shared_memory = 65536 : i64, grid = "row_tiles_x_buffers", tile_bytes = 128 : i64}
// OPTS-LABEL: gpu.func @move_dc_move_copy(
// OPTS-SAME: kvcache.launch = {block = 256 : i64, dynamic_shared_memory = 0 : i64, grid = "row_tiles_x_buffers", tile_bytes = 128 : i64}

// BLOCKS-LABEL: gpu.func @assign_u64_assign_targets(
// BLOCKS-SAME: known_block_size = array<i32: 64, 1, 1>, kvcache.launch = {block = 64 : i64, grid = "single"}
// BLOCKS-LABEL: gpu.func @compact_u_compact_sources(
// BLOCKS-SAME: known_block_size = array<i32: 64, 1, 1>, kvcache.launch = {block = 64 : i64, grid = "single"}
// BLOCKS-LABEL: gpu.func @move_gc_move_plan(
// BLOCKS-SAME: known_block_size = array<i32: 64, 1, 1>, kvcache.launch = {block = 64 : i64, grid = "single"}
// BLOCKS-LABEL: gpu.func @move_gc_move_copy(
// BLOCKS-SAME: known_block_size = array<i32: 128, 1, 1>, kvcache.launch = {block = 128 : i64,
// BLOCKS-LABEL: gpu.func @move_dc_move_check(
// BLOCKS-SAME: known_block_size = array<i32: 64, 1, 1>, kvcache.launch = {block = 64 : i64, grid = "single"}

// Unchecked ops record nothing; disjoint copies neither stage nor wait.
// UNCHECKED-LABEL: gpu.func @assign_u64_assign_targets(
// UNCHECKED-NOT: llvm.cmpxchg
// UNCHECKED: gpu.return
// UNCHECKED-LABEL: gpu.func @compact_u_compact_sources(
// UNCHECKED-NOT: llvm.cmpxchg
// UNCHECKED: gpu.return
// UNCHECKED-LABEL: gpu.func @move_gu_move_plan(
// UNCHECKED-NOT: llvm.load volatile
// The only compare-exchange of an unchecked plan inserts into the target set.
// UNCHECKED: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// UNCHECKED-NOT: llvm.cmpxchg
// UNCHECKED: gpu.return
// UNCHECKED-LABEL: gpu.func @move_gu_move_copy(
// UNCHECKED-NOT: llvm.cmpxchg
// UNCHECKED-NOT: llvm.load volatile
// UNCHECKED: gpu.return
// UNCHECKED-LABEL: gpu.func @move_dc_move_copy(
// UNCHECKED-NOT: gpu.barrier
// UNCHECKED-NOT: llvm.mlir.addressof
// UNCHECKED: gpu.return
// UNCHECKED-LABEL: gpu.func @move_du_move_copy(
// UNCHECKED-NOT: gpu.barrier
// UNCHECKED-NOT: llvm.mlir.addressof
// UNCHECKED-NOT: llvm.cmpxchg
// UNCHECKED-NOT: llvm.load volatile
// UNCHECKED: gpu.return
// UNCHECKED-NOT: gpu.func @move_du_move_plan
// UNCHECKED-NOT: gpu.func @move_du_move_check

// ---------------------------------------------------------------------------
// assign_targets, unchecked, i64 indices: one block of 1024 threads, six
// pointers (aligned to their element) then (bs, max_reqs, pool_len, size).
// CHECK-LABEL: gpu.func @assign_u64_assign_targets(
// CHECK-SAME: %[[RPI:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[R2T:[^:]+]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %[[SEQ:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[NCD:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[TGT:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[ST:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[BS:[^:]+]]: i64, %[[MAXREQS:[^:]+]]: i64, %[[POOLLEN:[^:]+]]: i64, %[[SIZE:[^:]+]]: i64)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 512, 1, 1>, kvcache.launch = {block = 512 : i64, grid = "single"}
// CHECK: %[[SCAN:.*]] = llvm.mlir.addressof @assign_u64_assign_targets_scan : !llvm.ptr<3>
// CHECK: %[[TOTAL:.*]] = scf.for %{{.*}} = %{{.*}} to %[[BS]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i64) : i64 {
// CHECK: llvm.getelementptr %[[NCD]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// Block scan: five shuffle-up steps in each warp, the warp totals through
// shared memory, one warp scans them.
// CHECK-COUNT-5: gpu.shuffle up %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-5: gpu.shuffle up %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// The write: req_to_token[rpi * pool_len + seq + j] (i32) into targets (i64).
// CHECK: %[[R:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: %[[S:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: %[[ROWMUL:.*]] = arith.muli %[[R]], %[[POOLLEN]] : i64
// CHECK: %[[ROW:.*]] = arith.addi %[[ROWMUL]], %[[S]] : i64
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK: %[[IDX:.*]] = arith.addi %[[ROW]], %[[J]] : i64
// CHECK: %[[SLOTP:.*]] = llvm.getelementptr %[[R2T]][%[[IDX]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[SLOT32:.*]] = llvm.load %[[SLOTP]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[SLOT:.*]] = arith.extsi %[[SLOT32]] : i32 to i64
// CHECK: %[[TP:.*]] = llvm.getelementptr %[[TGT]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: llvm.store %[[SLOT]], %[[TP]] {alignment = 8 : i64} : i64, !llvm.ptr<1>
// Zero tail from the total to `size`.
// CHECK: %[[FROM:.*]] = arith.addi %[[TOTAL]], %{{.*}} : i64
// CHECK: scf.for %[[E:.*]] = %[[FROM]] to %[[SIZE]] step %{{.*}} : i64 {
// CHECK: %[[ZP:.*]] = llvm.getelementptr %[[TGT]][%[[E]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: llvm.store %{{.*}}, %[[ZP]] {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: gpu.return

// assign_targets, checked, i32 everywhere: loads are i32 and sign-extended,
// targets are truncated to i32; violations go through a compare-exchange on
// status[0] and the winner writes (entry, value, bound).
// CHECK-LABEL: gpu.func @assign_c32_assign_targets(
// CHECK-SAME: %[[RPI:[^:]+]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %[[R2T:[^:]+]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %[[SEQ:[^:]+]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %[[NCD:[^:]+]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %[[TGT:[^:]+]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %[[ST:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[BS:[^:]+]]: i64, %[[MAXREQS:[^:]+]]: i64, %[[POOLLEN:[^:]+]]: i64, %[[SIZE:[^:]+]]: i64)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 512, 1, 1>, kvcache.launch = {block = 512 : i64, grid = "single"}
// CHECK: %[[RP:.*]] = llvm.getelementptr %[[RPI]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[R32:.*]] = llvm.load %[[RP]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[R:.*]] = arith.extsi %[[R32]] : i32 to i64
// CHECK: arith.cmpi sge, %[[R]], %[[MAXREQS]] : i64
// Negative drafts: code 2.
// CHECK: %[[C2:.*]] = arith.constant 2 : i64
// CHECK: %[[CODEP:.*]] = llvm.getelementptr %[[ST]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: %[[CAS:.*]] = llvm.cmpxchg %[[CODEP]], %{{.*}}, %[[C2]] syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK: %[[WON:.*]] = llvm.extractvalue %[[CAS]][1] : !llvm.struct<(i64, i1)>
// CHECK: scf.if %[[WON]] {
// CHECK-COUNT-3: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// Bad request index (1), sequence range (3), targets overflow (6).
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %[[C1]] syncscope("device") monotonic monotonic
// CHECK: %[[C3:.*]] = arith.constant 3 : i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %[[C3]] syncscope("device") monotonic monotonic
// CHECK-COUNT-5: gpu.shuffle up
// CHECK: gpu.barrier
// CHECK: %[[C6:.*]] = arith.constant 6 : i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %[[C6]] syncscope("device") monotonic monotonic
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK: %[[SP:.*]] = llvm.getelementptr %[[R2T]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[S32:.*]] = llvm.load %[[SP]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[SLOT:.*]] = arith.extsi %[[S32]] : i32 to i64
// CHECK: %[[NARROW:.*]] = arith.trunci %[[SLOT]] : i64 to i32
// CHECK: %[[TP:.*]] = llvm.getelementptr %[[TGT]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: llvm.store %[[NARROW]], %[[TP]] {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK: gpu.return

// compact_sources, unchecked: `counts` is still a parameter (align 8), the
// sentinel is compared in i64.
// CHECK-LABEL: gpu.func @compact_u_compact_sources(
// CHECK-SAME: %[[ACC:[^:]+]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %[[OCL:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[CNT:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[SRC:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[ST:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[BS:[^:]+]]: i64, %[[W:[^:]+]]: i64, %[[NOCL:[^:]+]]: i64)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 512, 1, 1>, kvcache.launch = {block = 512 : i64, grid = "single"}
// CHECK: %[[SENT:.*]] = arith.constant -1 : i64
// CHECK: llvm.mlir.addressof @compact_u_compact_sources_scan : !llvm.ptr<3>
// CHECK: %[[TOTAL:.*]] = scf.for %{{.*}} = %{{.*}} to %[[BS]] step %{{.*}} iter_args
// CHECK: %[[ROWSTART:.*]] = arith.muli %{{.*}}, %[[W]] : i64
// CHECK: %[[A32:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[A:.*]] = arith.extsi %[[A32]] : i32 to i64
// CHECK: arith.cmpi ne, %[[A]], %[[SENT]] : i64
// CHECK-COUNT-5: gpu.shuffle up
// CHECK: gpu.barrier
// CHECK-COUNT-5: gpu.shuffle up
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: %[[OP:.*]] = llvm.getelementptr %[[OCL]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: %[[V:.*]] = llvm.load %[[OP]] {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: %[[SP:.*]] = llvm.getelementptr %[[SRC]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: llvm.store %[[V]], %[[SP]] {alignment = 8 : i64} : i64, !llvm.ptr<1>
// Zero tail up to bs * W.
// CHECK: %[[N:.*]] = arith.muli %[[BS]], %[[W]] : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step
// CHECK: gpu.return

// compact_sources, checked, i64 accept_index, i32 out_cache_loc and counts:
// row count mismatch (5) and accept index out of range (4).
// CHECK-LABEL: gpu.func @compact_c_compact_sources(
// CHECK-SAME: %[[ACC:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[OCL:[^:]+]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %[[CNT:[^:]+]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %[[SRC:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[ST:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[BS:[^:]+]]: i64, %[[W:[^:]+]]: i64, %[[NOCL:[^:]+]]: i64)
// CHECK: %[[SENT:.*]] = arith.constant -3 : i64
// CHECK: %[[A:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: arith.cmpi ne, %[[A]], %[[SENT]] : i64
// CHECK: %[[CP:.*]] = llvm.getelementptr %[[CNT]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[C5:.*]] = arith.constant 5 : i64
// CHECK: %[[CODEP:.*]] = llvm.getelementptr %[[ST]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: llvm.cmpxchg %[[CODEP]], %{{.*}}, %[[C5]] syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK-COUNT-5: gpu.shuffle up
// CHECK: %[[A:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: %[[HI:.*]] = arith.cmpi sge, %[[A]], %[[NOCL]] : i64
// CHECK: %[[C4:.*]] = arith.constant 4 : i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %[[C4]] syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK: } else {
// CHECK: %[[OP:.*]] = llvm.getelementptr %[[OCL]][%[[A]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[V32:.*]] = llvm.load %[[OP]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[V:.*]] = arith.extsi %[[V32]] : i32 to i64
// CHECK: %[[SP:.*]] = llvm.getelementptr %[[SRC]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: llvm.store %[[V]], %[[SP]] {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: gpu.return

// move_rows, gather_then_scatter, checked: the plan kernel (one block) checks
// every slot against the smallest buffer (code 7), reads status[0] once more
// behind a barrier, builds the target set with compare-exchanges.
// CHECK-LABEL: gpu.func @move_gc_move_plan(
// CHECK-SAME: %[[TABLE:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[SRC:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[TGT:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[WS:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[ST:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[N:[^:]+]]: i64, %[[B:[^:]+]]: i64)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 512, 1, 1>, kvcache.launch = {block = 512 : i64, grid = "single"}
// CHECK: %[[MINSLOTS:.*]] = scf.for %{{.*}} = %{{.*}} to %[[B]] step %{{.*}} iter_args
// CHECK: %[[C7:.*]] = arith.constant 7 : i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %[[C7]] syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK: llvm.store %[[MINSLOTS]], %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: llvm.mlir.addressof @move_gc_move_plan_counts : !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK-NEXT: %{{.*}} = arith.constant 0 : i64
// CHECK-NEXT: %[[CODEP:.*]] = llvm.getelementptr %[[ST]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK-NEXT: llvm.load volatile %[[CODEP]] {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: scf.while
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK: gpu.barrier
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} monotonic : !llvm.ptr<3>, i32
// CHECK: gpu.barrier
// CHECK: gpu.return

// The copy kernel: one block per (row tile, buffer); 16-byte vectors between
// global rows and the staging buffer; slot * row_bytes in i64.
// CHECK-LABEL: gpu.func @move_gc_move_copy(
// CHECK-SAME: %[[TABLE:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[SRC:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[TGT:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[WS:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[ST:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[N:[^:]+]]: i64)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>, kvcache.launch = {block = 256 : i64, dynamic_shared_memory = 98304 : i64, grid = "row_tiles_x_buffers", tile_bytes = 64 : i64}
// CHECK: llvm.load volatile %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// Too many overlapping rows for 96 KiB of 64-byte tiles: code 8.
// CHECK: %[[CAP:.*]] = arith.constant 1536 : i64
// CHECK: arith.cmpi sgt, %{{.*}}, %[[CAP]] : i64
// CHECK: %[[C8:.*]] = arith.constant 8 : i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %[[C8]] syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK: } else {
// CHECK: gpu.block_id y
// CHECK: %[[BASE:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: %[[ROWBYTES:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: gpu.block_id x
// CHECK: %[[STAGING:.*]] = llvm.mlir.addressof @move_gc_move_copy_staging : !llvm.ptr<3>
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[BASE]] : i64 to !llvm.ptr<1>
// Stage the overlapping rows...
// CHECK: %[[S:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: %[[OFF:.*]] = arith.muli %[[S]], %[[ROWBYTES]] : i64
// CHECK: %[[FROM:.*]] = llvm.getelementptr %[[PTR]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: %[[V:.*]] = llvm.load %[[FROM]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[STAGING]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: llvm.store %[[V]], %[[TO]] {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// ...and rows that are not 16-byte aligned byte by byte.
// CHECK: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr<1> -> i8
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 1 : i64} : i8, !llvm.ptr<3>
// Everyone has read before anyone writes.
// CHECK: gpu.barrier
// CHECK: %[[V:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: %[[T:.*]] = arith.muli %{{.*}}, %[[ROWBYTES]] : i64
// CHECK: llvm.store %[[V]], %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// The other moving entries, read from the back of the move list, go directly.
// CHECK: arith.subi %[[N]], %{{.*}} : i64
// CHECK: %[[V:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.store %[[V]], %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK: gpu.return

// Unchecked gather_then_scatter with i32 slots: 4-byte aligned slot lists.
// CHECK-LABEL: gpu.func @move_gu_move_plan(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @move_gu_move_copy(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: kvcache.launch = {block = 256 : i64, dynamic_shared_memory = 98304 : i64, grid = "row_tiles_x_buffers", tile_bytes = 64 : i64}
// CHECK: llvm.mlir.addressof @move_gu_move_copy_staging
// CHECK: gpu.barrier
// CHECK: gpu.return

// Disjoint and checked: a check-only kernel (slot checks, no set, no move
// list), then a copy that reads every entry and stages nothing.
// CHECK-LABEL: gpu.func @move_dc_move_check(
// CHECK-SAME: %[[TABLE:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[SRC:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[TGT:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[WS:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[ST:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[N:[^:]+]]: i64, %[[B:[^:]+]]: i64)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 512, 1, 1>, kvcache.launch = {block = 512 : i64, grid = "single"}
// CHECK-NOT: gpu.barrier
// CHECK: %[[C7:.*]] = arith.constant 7 : i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %[[C7]] syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK-NOT: gpu.barrier
// CHECK-NOT: llvm.intr.ctlz
// CHECK-NOT: llvm.atomicrmw
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @move_dc_move_copy(
// CHECK-SAME: %[[TABLE:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[SRC:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[TGT:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[WS:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[ST:[^:]+]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %[[N:[^:]+]]: i64)
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>, kvcache.launch = {block = 256 : i64, dynamic_shared_memory = 0 : i64, grid = "row_tiles_x_buffers", tile_bytes = 64 : i64}
// CHECK: %[[CODEP:.*]] = llvm.getelementptr %[[ST]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: llvm.load volatile %[[CODEP]] {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK: llvm.getelementptr %[[SRC]][%[[I]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: llvm.getelementptr %[[TGT]][%[[I]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK: gpu.return

// Disjoint, unchecked: the copy kernel alone.
// CHECK-NOT: gpu.func @move_du_move_check
// CHECK-NOT: gpu.func @move_du_move_plan
// CHECK-LABEL: gpu.func @move_du_move_copy(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias},
// CHECK-SAME: %{{[^:]+}}: i64)
// CHECK-SAME: dynamic_shared_memory = 0 : i64
// CHECK: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @assign_u64(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>,
                      %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

func.func @assign_c32(%rpi: memref<?xi32>, %r2t: memref<?x?xi32>, %seq: memref<?xi32>,
                      %ncd: memref<?xi32>, %tgt: memref<?xi32>, %st: memref<4xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<4xi64>)
      : memref<?xi32>, memref<?x?xi32>, memref<?xi32>, memref<?xi32> into memref<?xi32>
  return
}

func.func @compact_u(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  kvcache.compact_sources %acc, %ocl into %src sentinel -1
      : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

func.func @compact_c(%acc: memref<?x?xi64>, %ocl: memref<?xi32>, %src: memref<?xi64>,
                     %ncd: memref<?xi32>, %st: memref<4xi64>) {
  kvcache.compact_sources %acc, %ocl into %src sentinel -3 counts(%ncd : memref<?xi32>)
      checked status(%st : memref<4xi64>)
      : memref<?x?xi64>, memref<?xi32> into memref<?xi64>
  return
}

func.func @move_gc(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>,
                   %ws: memref<?xi8>, %st: memref<4xi64>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter>
      workspace(%ws : memref<?xi8>) checked status(%st : memref<4xi64>)
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

func.func @move_gu(%bufs: memref<?x3xi64>, %src: memref<?xi32>, %tgt: memref<?xi32>,
                   %ws: memref<?xi8>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter>
      workspace(%ws : memref<?xi8>)
      : memref<?x3xi64>, memref<?xi32>, memref<?xi32>
  return
}

func.func @move_dc(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>,
                   %st: memref<4xi64>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> checked status(%st : memref<4xi64>)
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

func.func @move_du(%bufs: memref<?x3xi64>, %src: memref<?xi32>, %tgt: memref<?xi32>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint>
      : memref<?x3xi64>, memref<?xi32>, memref<?xi32>
  return
}
