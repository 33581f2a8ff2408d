// kvcache.move_accepted_tokens becomes one kernel named after its function:
// the entry point the runtime launches, with its parameters named in the
// launch contract (the manifest), chunks of requests validated by every
// block for large batches (its own first, then those a counter hands out), an acquire/release handshake between the
// planner and the others, and no kvcache op
// left. An op the pattern cannot lower is an error where it is.
// RUN: specc-opt %s --split-input-file --kvcache-to-gpu --verify-diagnostics | FileCheck %s
// RUN: specc-opt %s --split-input-file --kvcache-to-gpu --verify-diagnostics | FileCheck %s --check-prefix=CLEAR

// CHECK-LABEL: gpu.module @specc_kernels
// Shared memory: one arena per block, 40 bytes per entry of the local
// capacity (1024): a local plan's lists and table, or a large plan's table.
// CHECK-DAG: llvm.mlir.global internal @window_values() {addr_space = 3 : i32
// CHECK-DAG: llvm.mlir.global internal @window_rows() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<96 x i64>
// CHECK-DAG: llvm.mlir.global internal @window_plan() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<5120 x i64>
// CHECK: gpu.func @window(%[[NCD:.*]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias}, %[[ACC:.*]]: !llvm.ptr<1> {llvm.align = 4 : i64, llvm.noalias}, %[[OCL:.*]]: !llvm.ptr<1> {llvm.align = 8 : i64, llvm.noalias}, %[[TABLE:.*]]: !llvm.ptr<1> {{.*}}, %[[WS:.*]]: !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias}, %[[ST:.*]]: !llvm.ptr<1> {{.*}}, %[[BS:.*]]: i64, %[[W:.*]]: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) kernel
// CHECK-SAME: kvcache.launch = {block = 256 : i64, blocks_per_sm = 2 : i64, dynamic_shared_memory = 0 : i64, entry = "window", grid = "work", grid_units = ["bs", "num_buffers/2", "row_vectors"], host_args = ["num_correct_drafts", "accept_index", "out_cache_loc", "buffers", "workspace", "status"], params = ["num_correct_drafts", "accept_index", "out_cache_loc", "buffers", "workspace", "status", "bs", "accept_width", "num_out_cache_loc", "num_buffers", "row_vectors", "min_slots"], targets = "window", types = {accept_index = i32, buffers = i64, num_correct_drafts = i32, out_cache_loc = i64, status = i64, workspace = i8}}
// CHECK-SAME: nvvm.minctasm = 2 : i32
// CHECK: %[[N:.*]] = arith.muli %[[BS]], %[[W]] : i64
// CHECK: arith.cmpi sle, %[[N]], %{{.*}} : i64
// CHECK: %[[ROWS:.*]] = llvm.mlir.addressof @window_rows : !llvm.ptr<3>
// Batches past the local capacity: block b's first chunk is b, later ones
// come from tickets of a counter whose high half is the launch's epoch,
// each drawn before the loop or the chunk ahead of the one it names and
// used after that chunk (the block that draws the last ticket stores the
// next epoch); the counts added to the workspace totals, then the block's
// progress after a fence; the planner zeroes the progress and, if some
// block moved or skipped, acquires and takes the totals (exchanges with 0)
// for the next launch.
// CHECK: %[[EPOCHS:.*]] = llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i64
// CHECK: scf.while ({{.*}}) : (i64, i64, i64) -> (i64, i64, i64)
// A chunk's moving entries check their request's earlier targets (index
// shuffles of the target's halves and the position over the request's
// lanes) and claim their slots in the workspace's claim words, tagged
// 1 + epoch mod 254: a compare-and-swap loop carrying both claims, their
// two swaps in flight at each step.
// CHECK: gpu.shuffle  idx %{{.*}}, %{{.*}}, %c32_i32{{.*}} : i32
// CHECK: gpu.shuffle  idx %{{.*}}, %{{.*}}, %c32_i32{{.*}} : i32
// CHECK: gpu.shuffle  idx %{{.*}}, %{{.*}}, %c32_i32{{.*}} : i32
// CHECK: arith.remui %{{.*}}, %c254_i32 : i32
// CHECK: scf.while ({{.*}}) : (i64, i64, i64, i1, i64, i64, i64, i1, i1, i64) -> (i64, i64, i64, i1, i64, i64, i64, i1, i1, i64)
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK: scf.condition
// The drawn ticket, used once the chunk is validated: the last one stores
// the next epoch; the next ticket drawn only when this one named a chunk.
// CHECK: arith.shli
// CHECK: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i64
// The totals: moved, skipped, first bad, suspect blocks; the progress.
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i64
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i64
// CHECK: llvm.atomicrmw max %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i64
// CHECK: llvm.atomicrmw add %{{.*}}, %c1_i64 syncscope("device") monotonic : !llvm.ptr<1>, i64
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i64
// CHECK: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: scf.if
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK-COUNT-4: llvm.atomicrmw xchg %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i64
// The other blocks wait for the planner's verdict (a cold branch, as the
// chunked validation: device functions after kvcache-outline-cold); the
// planner publishes it.
// CHECK: } {kvcache.cold}
// Before the poll, warps 1 to 7 of a block that validates no chunk
// (bid >= chunks) prefetch into L2 the source rows of the first requests'
// entries, within a 24 MiB budget counted as (W + 1) / 2 entries of each
// request moving every buffer's widest row: every 128-byte line from the
// one holding the row's first byte to the one holding its last.
// CHECK: %[[WARP:.*]] = arith.shrui %{{.*}}, %c5_i64 : i64
// CHECK: %[[NOTW0:.*]] = arith.cmpi sge, %[[WARP]], %c1_i64 : i64
// CHECK-NEXT: %[[NOCHUNK:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[IDLE:.*]] = arith.andi %[[NOCHUNK]], %[[NOTW0]] : i1
// CHECK-NEXT: scf.if %[[IDLE]] {
// CHECK: arith.cmpi sle, %{{.*}}, %c25165824_i64 : i64
// CHECK: %[[LINE0:.*]] = arith.andi %{{.*}}, %c-128_i64 : i64
// CHECK: %[[END:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: scf.for %[[LINE:.*]] = %[[LINE0]] to %[[END]] step %c128_i64 : i64 {
// CHECK-NEXT: %[[AT:.*]] = llvm.inttoptr %[[LINE]] : i64 to !llvm.ptr<1>
// CHECK-NEXT: llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l" %[[AT]] : (!llvm.ptr<1>) -> ()
// A waiter's poll: relaxed device-scope i64 loads of FLAG and PROGRESS
// (not volatile: that is system scope), waiting while FLAG's high half is
// not the epoch or its verdict is 0, unless PROGRESS's bits 0-47 are the
// chunk count (nothing moves: verdict 3), or, in a launch that claims its
// slots, its bits 0-31 are and its bits 48-63 zero (no block skipped or
// was suspect: verdict 1); the acquire only for a verdict that moves (not
// 3).
// CHECK: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: arith.cmpi ne, %{{.*}}, %{{.*}} : i64
// CHECK: %[[LOW48:.*]] = arith.andi %{{.*}}, %c281474976710655_i64 : i64
// CHECK-NEXT: %[[NONE3:.*]] = arith.cmpi eq, %[[LOW48]], %{{.*}} : i64
// CHECK: %[[CLEANBITS:.*]] = arith.andi %{{.*}}, %c-281470681743361_i64 : i64
// CHECK-NEXT: %[[CLEAN:.*]] = arith.cmpi eq, %[[CLEANBITS]], %{{.*}} : i64
// CHECK: %[[CLAIMED:.*]] = arith.andi %[[CLEAN]], %{{.*}} : i1
// CHECK-NEXT: arith.select %[[CLAIMED]], %c1_i32{{.*}}, %{{.*}} : i32
// CHECK: arith.select %[[NONE3]], %c3_i32{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK: nvvm.nanosleep %c64_i32
// CHECK: %[[NONE:.*]] = arith.cmpi ne, %{{.*}}, %c3_i32 : i32
// CHECK-NEXT: scf.if %[[NONE]] {
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK: } {kvcache.cold}
// A small local batch: a thread per (request, column); behind its first
// loads, block 0 prefetches the buffer table into L2 for the move; the
// request's lanes combine their columns by ballots (kept columns, their
// positions, indices out of range, bad slots).
// CHECK: llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l" %{{.*}} : (!llvm.ptr<1>) -> ()
// The last warp copies the table rows of the block's buffers (address,
// row bytes; thread T - 1 - q the row of buffer bid + q x grid, q < 32)
// into shared memory for the prefetch after validation.
// CHECK: %[[Q:.*]] = arith.subi %c255_i64, %{{.*}} : i64
// CHECK: arith.cmpi slt, %[[Q]], %c32_i64{{.*}} : i64
// CHECK: llvm.getelementptr %[[ROWS]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache =  ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: llvm.getelementptr %[[ROWS]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache =  ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// Window targets: round trip 1 also copies out_cache_loc, up to 3 words a
// thread (768 at 256 threads), into the arena past the target list's first
// 256 entries, by cp.async (no register waits for it); after the copies'
// wait and a barrier, both slots of an entry are read from there (from
// out_cache_loc when it does not fit).
// CHECK: %[[WIN:.*]] = llvm.getelementptr %{{.*}}[%c2048_i64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %c768_i64 = arith.constant 768 : i64
// CHECK-NEXT: %[[FITS:.*]] = arith.cmpi sle, %{{.*}}, %c768_i64 : i64
// CHECK-COUNT-3: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache =  ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK: nvvm.vote.sync ballot
// CHECK: llvm.intr.ctpop
// CHECK: nvvm.vote.sync ballot
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if %[[FITS]] -> (i64) {
// CHECK-NEXT: llvm.getelementptr %[[WIN]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> i64
// CHECK: scf.if %[[FITS]] -> (i64) {
// CHECK-NEXT: llvm.getelementptr %[[WIN]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> i64
// CHECK: nvvm.vote.sync ballot
// An entry of a whole small batch that moves takes its place in MOVED
// (the count before its own, a shared atomic add) and writes its source
// there in the list of moving sources: the arena's words past the first
// T of the source list (8 x (1024 + 256) bytes in).
// CHECK: %[[LIST:.*]] = llvm.getelementptr %{{.*}}[%c10240_i64{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[PLACE:.*]] = llvm.getelementptr %[[LIST]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK-NEXT: llvm.store %{{.*}}, %[[PLACE]] {alignment = 8 : i64} : i64, !llvm.ptr<3>
// Hazards across requests: a small batch's check without loops (its
// writers numbered i * 32 + j, the request a shift), a larger local
// batch's table of i64 keys in the arena; a large batch's lists prefetched
// into L1, then, up to 2048 entries, a table of i32 keys in the arena;
// larger ones, or an unsafe one, the workspace table. A large batch is
// checked only if some block's claims were suspect (or it made none).
// Before the check, a small batch that moves: the warps past bs x L
// prefetch the moving sources' rows of the block's buffers into L2, from
// the rows validation copied: only the MOVED entries of the list of moving
// sources. One buffer: its row read once, (moving entry, line) pairs at a
// runtime step; several: (buffer, moving entry, line) triples, each
// buffer's row read per triple.
// CHECK: %[[MOVING:.*]] = llvm.getelementptr %{{.*}}[%c10240_i64{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: %[[MOVEDAT:.*]] = llvm.getelementptr %{{.*}}[%c6_i64{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i32
// CHECK-NEXT: %[[MOVED32:.*]] = llvm.load %[[MOVEDAT]] {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK-NEXT: %[[MOVED:.*]] = arith.extsi %[[MOVED32]] : i32 to i64
// CHECK: llvm.getelementptr %[[ROWS]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK: llvm.getelementptr %[[ROWS]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK: arith.muli %[[MOVED]], %{{.*}} : i64
// CHECK: scf.for
// CHECK: arith.divui %{{.*}}, %{{.*}} : i32
// CHECK: llvm.getelementptr %[[MOVING]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK: llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l" %{{.*}} : (!llvm.ptr<1>) -> ()
// CHECK: arith.muli %[[MOVED]], %{{.*}} : i64
// CHECK: scf.for
// CHECK: arith.divui %{{.*}}, %{{.*}} : i32
// CHECK: arith.divui %{{.*}}, %{{.*}} : i32
// CHECK: llvm.getelementptr %[[ROWS]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK: llvm.getelementptr %[[ROWS]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK: llvm.getelementptr %[[MOVING]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK: llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l" %{{.*}} : (!llvm.ptr<1>) -> ()
// A batch of one request whose entries fit one group of four (bs = 1,
// W <= 4) skips the small batch's check.
// CHECK: %[[FOUR:.*]] = arith.cmpi sle, %[[W]], %c4_i64 : i64
// CHECK-NEXT: %[[ONE:.*]] = arith.cmpi eq, %[[BS]], %c1_i64 : i64
// CHECK-NEXT: %[[SOLO:.*]] = arith.andi %[[ONE]], %[[FOUR]] : i1
// CHECK: %[[CHECKED:.*]] = arith.xori %[[SOLO]], %{{.*}} : i1
// CHECK-NEXT: scf.if %[[CHECKED]] {
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") monotonic monotonic : !llvm.ptr<3>, i64
// CHECK: arith.shrsi %{{.*}}, %c5_i64{{.*}} : i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") monotonic monotonic : !llvm.ptr<3>, i64
// CHECK: llvm.inline_asm has_side_effects "prefetch.L1 [$0];", "l" %{{.*}} : (!llvm.ptr) -> ()
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") monotonic monotonic : !llvm.ptr<3>, i32
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") monotonic monotonic : !llvm.ptr<1>, i64
// The planner publishes the verdict before its status record: a fence
// for a verdict that moves (not 3), then a relaxed device-scope store (a
// volatile or release one was a system-scope fence and store).
// CHECK: arith.cmpi ne, %{{.*}}, %c3_i32{{.*}} : i32
// CHECK-NEXT: scf.if
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK: arith.extui %{{.*}} : i32 to i64
// CHECK: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// The per-request move: tasks of two buffers (the grid's unit), or of four
// when bs x ceil(buffers / 2) x lanes exceeds the grid's threads (block 256).
// CHECK: %[[NB:.*]] = arith.muli %[[BS]], %{{.*}} : i64
// CHECK-NEXT: %[[NARROW:.*]] = arith.muli %[[NB]], %{{.*}} : i64
// CHECK-NEXT: %[[GRIDT:.*]] = arith.muli %{{.*}}, %c256_i64 : i64
// CHECK-NEXT: %[[WIDE:.*]] = arith.cmpi sgt, %[[NARROW]], %[[GRIDT]] : i64
// CHECK-NEXT: scf.if %[[WIDE]] {
// CHECK-NEXT: arith.constant 4 : i64
// CHECK: %[[C3:.*]] = arith.constant 3 : i64
// CHECK-NEXT: %[[B3:.*]] = arith.addi %{{.*}}, %[[C3]] : i64
// CHECK-NEXT: arith.divui %[[B3]], %c4_i64{{.*}} : i64
// In the else branch, the value of the same name is rounded up by two.
// CHECK: %[[B3]] = arith.addi %{{.*}}, %c1_i64{{.*}} : i64
// CHECK-NEXT: arith.divui %[[B3]], %c2_i64{{.*}} : i64
// Nothing after the move: no count-out of the blocks.
// CHECK-NOT: llvm.atomicrmw
// CHECK: gpu.return
// CHECK-NOT: kvcache.{{(assign_targets|compact_sources|move_rows|move_accepted_tokens)}}
// CHECK-NOT: func.func @window
// The claim table's clearing, in the large launches' waiting blocks
// (cold), after thread 0's poll: a barrier, the verdict read back, and,
// when it moves (1 or 2) and the launch claims its slots, the block's own
// share of the Q = the power of two >= max(64, 8n) words, then the next
// block's (the planner waits for nobody and clears nothing), a word per
// thread per grid-wide step.
// CLEAR-LABEL: gpu.func @window(
// CLEAR: nvvm.nanosleep
// CLEAR: gpu.barrier
// CLEAR-NEXT: arith.constant 3 : i64
// CLEAR-NEXT: llvm.getelementptr
// CLEAR-NEXT: %[[VERDICT:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CLEAR-NEXT: arith.constant 2 : i32
// CLEAR-NEXT: %[[V2:.*]] = arith.cmpi eq, %[[VERDICT]], %{{.*}} : i32
// CLEAR-NEXT: arith.constant 1 : i32
// CLEAR-NEXT: %[[V1:.*]] = arith.cmpi eq, %[[VERDICT]], %{{.*}} : i32
// CLEAR-NEXT: %[[MOVING:.*]] = arith.ori %[[V1]], %[[V2]] : i1
// CLEAR: %[[CLEAR:.*]] = arith.andi %[[MOVING]], %{{.*}} : i1
// CLEAR-NEXT: scf.if %[[CLEAR]] {
// CLEAR: %[[Q:.*]] = arith.shli %c1_i64, %{{.*}} : i64
// CLEAR-NEXT: arith.constant 256 : i64
// CLEAR-NEXT: %[[GRIDT:.*]] = arith.muli %{{.*}}, %c256_i64 : i64
// CLEAR: scf.for %{{.*}} = %{{.*}} to %[[Q]] step %[[GRIDT]] : i64 {
// CLEAR-NEXT: llvm.getelementptr
// CLEAR-NEXT: llvm.store %c0_i64, %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CLEAR: scf.for %{{.*}} = %{{.*}} to %[[Q]] step %[[GRIDT]] : i64 {
// CLEAR-NEXT: llvm.getelementptr
// CLEAR-NEXT: llvm.store %c0_i64, %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CLEAR: } {kvcache.cold}
func.func @window(%ncd: memref<?xi32>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>,
    %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi32>)
      sentinel -1 slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

// The req_to_token form takes the rows and their two extents too.
// CHECK-LABEL: gpu.func @rows(
// CHECK-SAME: params = ["req_pool_indices", "req_to_token", "seq_lens", "num_correct_drafts", "accept_index", "out_cache_loc", "buffers", "workspace", "status", "bs", "accept_width", "max_reqs", "pool_len", "num_out_cache_loc", "num_buffers", "row_vectors", "min_slots"], targets = "req_to_token"
func.func @rows(%rpi: memref<?xi64>, %r2t: memref<?x?xi64>, %seq: memref<?xi32>,
    %ncd: memref<?xi64>, %acc: memref<?x?xi64>, %ocl: memref<?xi32>,
    %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <req_to_token>
      rows(%rpi, %r2t, %seq : memref<?xi64>, memref<?x?xi64>, memref<?xi32>)
      drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi64>)
      sentinel -1 slots(%ocl : memref<?xi32>) buffers(%buffers : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

// An argument the entry point would not know how to pass.
func.func @extra(%ncd: memref<?xi32>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>,
    %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>, %other: memref<?xi64>) {
  // expected-error @+2 {{argument 6 of @extra is not an operand of the move}}
  // expected-error @+1 {{could not be lowered to GPU kernels}}
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi32>)
      sentinel -1 slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

// Inside a kernel there is no entry point to become: an error, not a
// silently emptied kernel.
gpu.module @user {
  gpu.func @k(%ncd: memref<?xi32>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>,
      %buffers: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) kernel {
    // expected-error @+2 {{must be inside a func.func}}
    // expected-error @+1 {{could not be lowered to GPU kernels}}
    kvcache.move_accepted_tokens targets <window>
        drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi32>)
        sentinel -1 slots(%ocl : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
        workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
    gpu.return
  }
}
