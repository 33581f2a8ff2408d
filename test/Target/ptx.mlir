// PTX of the runtime's kernels (specc --emit=ptx): bare 64-bit global
// pointers as parameters, 16-byte vector row moves, 64-bit row addressing,
// the block scan's shuffles and barriers, the block sizes as .maxntid.
// RUN: specc %stages/move_rows.mlir --emit=ptx | FileCheck %s --check-prefix=MOVE
// RUN: specc %stages/move_rows.mlir --emit=ptx --chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: specc %stages/assign_targets.mlir --emit=ptx | FileCheck %s --check-prefix=ASSIGN
// RUN: specc %stages/compact_sources.mlir --emit=ptx | FileCheck %s --check-prefix=COMPACT
// RUN: specc %stages/compact_sources.mlir --emit=ptx | FileCheck %s --check-prefix=COMPACT-ALL
// RUN: specc %stages/move_rows.mlir --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: specc %stages/assign_targets.mlir %stages/compact_sources.mlir %stages/move_rows.mlir --emit=manifest \
// RUN:   | FileCheck %s --check-prefix=MANIFEST --implicit-check-not=kernel
// RUN: specc %kernels/move_accept_tokens.mlir --emit=manifest | FileCheck %s --check-prefix=WHOLE --implicit-check-not=kernel

// MOVE: .target sm_90
// MOVE-NEXT: .address_size 64
// The staging buffer is dynamic shared memory, sized at launch.
// MOVE: .extern .shared .align 16 .b8 move_rows_move_copy_staging[];

// MOVE-LABEL: .visible .entry move_rows_move_plan(
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_plan_param_0,
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_plan_param_1,
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_plan_param_2,
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_plan_param_3,
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_plan_param_4,
// MOVE-NEXT: .param .u64 move_rows_move_plan_param_5,
// MOVE-NEXT: .param .u64 move_rows_move_plan_param_6
// MOVE-NEXT: )
// MOVE-NEXT: .maxntid 512, 1, 1
// MOVE: .shared .align 16 .b8 move_rows_move_plan_counts[{{[0-9]+}}];
// MOVE: atom{{.*}}.global.cas.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], 0, 7;
// MOVE: bar.sync 0;
// MOVE: ld.volatile.global.b64
// MOVE: atom{{.*}}.global.cas.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], -1, {{%rd[0-9]+}};
// MOVE: bar.sync 0;
// MOVE: atom.shared.add.u32

// The copy kernel takes exactly six parameters: five pointers and n.
// MOVE-LABEL: .visible .entry move_rows_move_copy(
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_copy_param_0,
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_copy_param_1,
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_copy_param_2,
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_copy_param_3,
// MOVE-NEXT: .param .u64 .ptr .global .align 8 move_rows_move_copy_param_4,
// MOVE-NEXT: .param .u64 move_rows_move_copy_param_5
// MOVE-NEXT: )
// MOVE-NEXT: .maxntid 256, 1, 1
// MOVE: ld.volatile.global.b64
// MOVE: atom{{.*}}.global.cas.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], 0, 8;
// Row bytes (column 1 of the buffer table), then slot * row bytes in 64 bits.
// MOVE: ld.global{{(.nc)?}}.b64 [[ROWBYTES:%rd[0-9]+]], [{{%rd[0-9]+}}+8];
// MOVE: {{mul|mad}}.lo.s64 {{%rd[0-9]+}}, {{.*}} [[ROWBYTES]]{{[,;]}}
// Gather into shared memory with 16-byte vectors, barrier, scatter.
// MOVE: ld.global.v4.b32 {[[A:%r[0-9]+]], [[B:%r[0-9]+]], [[C:%r[0-9]+]], [[D:%r[0-9]+]]}, [{{%rd[0-9]+}}];
// MOVE-NEXT: st.shared.v4.b32 [{{%rd[0-9]+}}], {[[A]], [[B]], [[C]], [[D]]};
// MOVE: bar.sync 0;
// MOVE: ld.shared.v4.b32 {[[A:%r[0-9]+]], [[B:%r[0-9]+]], [[C:%r[0-9]+]], [[D:%r[0-9]+]]}, [{{%rd[0-9]+}}];
// MOVE-NEXT: st.global.v4.b32 [{{%rd[0-9]+}}], {[[A]], [[B]], [[C]], [[D]]};
// Direct copies of the entries that need no staging.
// MOVE: {{mul|mad}}.lo.s64 {{%rd[0-9]+}}, {{.*}} [[ROWBYTES]]{{[,;]}}
// MOVE: ld.global.v4.b32 {[[A:%r[0-9]+]], [[B:%r[0-9]+]], [[C:%r[0-9]+]], [[D:%r[0-9]+]]}, [{{%rd[0-9]+}}];
// MOVE-NEXT: st.global.v4.b32 [{{%rd[0-9]+}}], {[[A]], [[B]], [[C]], [[D]]};
// The stage-all move of small batches: the same tile moves, no workspace.
// MOVE-LABEL: .visible .entry move_rows_move_stage_all(
// MOVE-COUNT-4: .param .u64 .ptr .global .align 8 move_rows_move_stage_all_param_{{[0-3]}},
// MOVE-NEXT: .param .u64 move_rows_move_stage_all_param_4,
// MOVE-NEXT: .param .u64 move_rows_move_stage_all_param_5
// MOVE-NEXT: )
// MOVE: atom.shared.min.s64
// MOVE: ld.global.v4.b32 {[[A:%r[0-9]+]], [[B:%r[0-9]+]], [[C:%r[0-9]+]], [[D:%r[0-9]+]]}, [{{%rd[0-9]+}}];
// MOVE-NEXT: st.shared.v4.b32 [{{%rd[0-9]+}}], {[[A]], [[B]], [[C]], [[D]]};
// MOVE: bar.sync 0;
// MOVE: ld.shared.v4.b32 {[[A:%r[0-9]+]], [[B:%r[0-9]+]], [[C:%r[0-9]+]], [[D:%r[0-9]+]]}, [{{%rd[0-9]+}}];
// MOVE-NEXT: st.global.v4.b32 [{{%rd[0-9]+}}], {[[A]], [[B]], [[C]], [[D]]};
// MOVE-NOT: .entry

// SM80: .target sm_80
// SM80: .visible .entry move_rows_move_plan(
// SM80: .visible .entry move_rows_move_copy(

// One kernel per function of assign_targets.mlir, the targets pointer
// aligned to 8 (i64), req_to_token to 4 (i32), the others to their type.
// ASSIGN-LABEL: .visible .entry assign_targets_i64_i64_assign_targets(
// ASSIGN-NEXT: .param .u64 .ptr .global .align 8 assign_targets_i64_i64_assign_targets_param_0,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 4 assign_targets_i64_i64_assign_targets_param_1,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 8 assign_targets_i64_i64_assign_targets_param_2,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 8 assign_targets_i64_i64_assign_targets_param_3,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 8 assign_targets_i64_i64_assign_targets_param_4,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 8 assign_targets_i64_i64_assign_targets_param_5,
// ASSIGN-NEXT: .param .u64 assign_targets_i64_i64_assign_targets_param_6,
// ASSIGN-NEXT: .param .u64 assign_targets_i64_i64_assign_targets_param_7,
// ASSIGN-NEXT: .param .u64 assign_targets_i64_i64_assign_targets_param_8,
// ASSIGN-NEXT: .param .u64 assign_targets_i64_i64_assign_targets_param_9
// ASSIGN-NEXT: )
// ASSIGN-NEXT: .maxntid 512, 1, 1
// ASSIGN: .shared .align 16 .b8 assign_targets_i64_i64_assign_targets_scan[128];
// ASSIGN: shfl.sync.up.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 1, 0, -1;
// ASSIGN: shfl.sync.up.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 16, 0, -1;
// ASSIGN: bar.sync 0;
// ASSIGN: shfl.sync.up.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 1, 0, -1;
// ASSIGN: bar.sync 0;
// ASSIGN: ret;
// ASSIGN-LABEL: .visible .entry assign_targets_i64_i32_assign_targets(
// ASSIGN-NEXT: .param .u64 .ptr .global .align 8 assign_targets_i64_i32_assign_targets_param_0,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 4 assign_targets_i64_i32_assign_targets_param_1,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 8 assign_targets_i64_i32_assign_targets_param_2,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 4 assign_targets_i64_i32_assign_targets_param_3,
// ASSIGN: shfl.sync.up.b32
// ASSIGN: bar.sync 0;
// ASSIGN-LABEL: .visible .entry assign_targets_i32_i64_assign_targets(
// ASSIGN-NEXT: .param .u64 .ptr .global .align 4 assign_targets_i32_i64_assign_targets_param_0,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 4 assign_targets_i32_i64_assign_targets_param_1,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 4 assign_targets_i32_i64_assign_targets_param_2,
// ASSIGN-NEXT: .param .u64 .ptr .global .align 8 assign_targets_i32_i64_assign_targets_param_3,
// ASSIGN: shfl.sync.up.b32
// ASSIGN: bar.sync 0;
// ASSIGN-LABEL: .visible .entry assign_targets_i32_i32_assign_targets(
// ASSIGN-NEXT: .param .u64 .ptr .global .align 4 assign_targets_i32_i32_assign_targets_param_0,
// ASSIGN: shfl.sync.up.b32
// ASSIGN: bar.sync 0;
// Row of req_to_token: rpi * pool_len in 64 bits.
// ASSIGN: mul.lo.s64
// ASSIGN: ret;

// Eight kernels, each with its block scan.
// COMPACT-ALL: .visible .entry compact_sources_{{i(32|64)_i(32|64)_i(32|64)}}_compact_sources(
// COMPACT-ALL: shfl.sync.up.b32
// COMPACT-ALL: bar.sync 0;
// COMPACT-ALL: .visible .entry compact_sources_{{i(32|64)_i(32|64)_i(32|64)}}_compact_sources(
// COMPACT-ALL: shfl.sync.up.b32
// COMPACT-ALL: bar.sync 0;
// COMPACT-ALL: .visible .entry compact_sources_{{i(32|64)_i(32|64)_i(32|64)}}_compact_sources(
// COMPACT-ALL: shfl.sync.up.b32
// COMPACT-ALL: bar.sync 0;
// COMPACT-ALL: .visible .entry compact_sources_{{i(32|64)_i(32|64)_i(32|64)}}_compact_sources(
// COMPACT-ALL: shfl.sync.up.b32
// COMPACT-ALL: bar.sync 0;
// COMPACT-ALL: .visible .entry compact_sources_{{i(32|64)_i(32|64)_i(32|64)}}_compact_sources(
// COMPACT-ALL: shfl.sync.up.b32
// COMPACT-ALL: bar.sync 0;
// COMPACT-ALL: .visible .entry compact_sources_{{i(32|64)_i(32|64)_i(32|64)}}_compact_sources(
// COMPACT-ALL: shfl.sync.up.b32
// COMPACT-ALL: bar.sync 0;
// COMPACT-ALL: .visible .entry compact_sources_{{i(32|64)_i(32|64)_i(32|64)}}_compact_sources(
// COMPACT-ALL: shfl.sync.up.b32
// COMPACT-ALL: bar.sync 0;
// COMPACT-ALL: .visible .entry compact_sources_{{i(32|64)_i(32|64)_i(32|64)}}_compact_sources(
// COMPACT-ALL: shfl.sync.up.b32
// COMPACT-ALL: bar.sync 0;
// COMPACT-ALL-NOT: .entry
// COMPACT-LABEL: .visible .entry compact_sources_i32_i64_i64_compact_sources(
// COMPACT-NEXT: .param .u64 .ptr .global .align 4 compact_sources_i32_i64_i64_compact_sources_param_0,
// COMPACT-NEXT: .param .u64 .ptr .global .align 8 compact_sources_i32_i64_i64_compact_sources_param_1,
// COMPACT-NEXT: .param .u64 .ptr .global .align 8 compact_sources_i32_i64_i64_compact_sources_param_2,
// COMPACT-NEXT: .param .u64 .ptr .global .align 8 compact_sources_i32_i64_i64_compact_sources_param_3,
// COMPACT-NEXT: .param .u64 .ptr .global .align 8 compact_sources_i32_i64_i64_compact_sources_param_4,
// COMPACT-NEXT: .param .u64 compact_sources_i32_i64_i64_compact_sources_param_5,
// COMPACT-NEXT: .param .u64 compact_sources_i32_i64_i64_compact_sources_param_6,
// COMPACT-NEXT: .param .u64 compact_sources_i32_i64_i64_compact_sources_param_7
// COMPACT-NEXT: )
// COMPACT-NEXT: .maxntid 512, 1, 1
// COMPACT: shfl.sync.up.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 1, 0, -1;
// COMPACT: bar.sync 0;
// COMPACT: ret;

// LLVM IR of the kernel module: ptx_kernel functions over addrspace(1)
// pointers, the block size as nvvm.maxntid.
// LLVM-DAG: @move_rows_move_copy_staging = external addrspace(3) global [0 x i8], align 16
// LLVM-DAG: @move_rows_move_plan_counts = internal addrspace(3) global [{{[0-9]+}} x i32] undef, align 16
// LLVM: define ptx_kernel void @move_rows_move_plan(ptr addrspace(1) noalias align 8 %0, ptr addrspace(1) noalias align 8 %1, ptr addrspace(1) noalias align 8 %2, ptr addrspace(1) noalias align 8 %3, ptr addrspace(1) noalias align 8 %4, i64 %5, i64 %6) #[[PLAN:[0-9]+]] {
// LLVM: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
// LLVM: define ptx_kernel void @move_rows_move_copy(ptr addrspace(1) noalias align 8 %0, ptr addrspace(1) noalias align 8 %1, ptr addrspace(1) noalias align 8 %2, ptr addrspace(1) noalias align 8 %3, ptr addrspace(1) noalias align 8 %4, i64 %5) #[[COPY:[0-9]+]] {
// LLVM: load <4 x i32>, ptr addrspace(1) %{{[0-9]+}}, align 16
// LLVM: store <4 x i32> %{{[0-9]+}}, ptr addrspace(3) %{{[0-9]+}}, align 16
// LLVM: attributes #[[PLAN]] = { "nvvm.maxntid"="512,1,1" "nvvm.minctasm"="1" }
// LLVM: attributes #[[COPY]] = { "nvvm.maxntid"="256,1,1" }

// The launch manifest: a header, then one line per kernel.
// MANIFEST: # specc launch manifest: kernel NAME block THREADS grid RULE tile_bytes BYTES smem BYTES
// MANIFEST-NEXT: kernel assign_targets_i64_i64_assign_targets block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel assign_targets_i64_i32_assign_targets block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel assign_targets_i32_i64_assign_targets block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel assign_targets_i32_i32_assign_targets block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel compact_sources_i32_i64_i64_compact_sources block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel compact_sources_i32_i64_i32_compact_sources block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel compact_sources_i32_i32_i64_compact_sources block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel compact_sources_i32_i32_i32_compact_sources block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel compact_sources_i64_i64_i64_compact_sources block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel compact_sources_i64_i64_i32_compact_sources block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel compact_sources_i64_i32_i64_compact_sources block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel compact_sources_i64_i32_i32_compact_sources block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel move_rows_move_plan block 512 grid single tile_bytes 0 smem 0
// MANIFEST-NEXT: kernel move_rows_move_copy block 256 grid row_tiles_x_buffers tile_bytes 64 smem 98304
// MANIFEST-NEXT: kernel move_rows_move_stage_all block 256 grid row_tiles_x_buffers tile_bytes 64 smem 98304
// MANIFEST-NEXT: abi {{[0-9]+}}
// MANIFEST-EMPTY:

// The whole function: one entry point per specialization (64 of the
// req_to_token form, 8 of the window form), each one kernel whose manifest
// line names its parameters and element types; the stage kernels are gone.
// WHOLE: # specc launch manifest: kernel NAME block THREADS grid RULE tile_bytes BYTES smem BYTES
// WHOLE-NEXT: kernel move_accept_tokens__i32_i32_i32_i32_i32_i32 block 256 grid work tile_bytes 0 smem 0 entry move_accept_tokens targets req_to_token units bs,num_buffers/2,row_vectors blocks_per_sm 2 params req_pool_indices,req_to_token,seq_lens,num_correct_drafts,accept_index,out_cache_loc,buffers,workspace,status,report,bs,accept_width,max_reqs,pool_len,num_out_cache_loc,num_buffers,row_vectors,min_slots host_args req_pool_indices,req_to_token,seq_lens,num_correct_drafts,accept_index,out_cache_loc,buffers,workspace,status,report types accept_index:i32,buffers:i64,num_correct_drafts:i32,out_cache_loc:i32,report:i64,req_pool_indices:i32,req_to_token:i32,seq_lens:i32,status:i64,workspace:i8
// WHOLE-COUNT-62: kernel move_accept_tokens__{{[i0-9_]+}} block 256 grid work {{.*}} entry move_accept_tokens targets req_to_token
// WHOLE-NEXT: kernel move_accept_tokens__i64_i64_i64_i64_i64_i64 block 256 {{.*}} types accept_index:i64,buffers:i64,num_correct_drafts:i64,out_cache_loc:i64,report:i64,req_pool_indices:i64,req_to_token:i64,seq_lens:i64,status:i64,workspace:i8
// WHOLE-NEXT: kernel move_accept_tokens_window__i32_i32_i32 block 256 grid work {{.*}} entry move_accept_tokens_window targets window {{.*}} params num_correct_drafts,accept_index,out_cache_loc,buffers,workspace,status,report,bs,accept_width,num_out_cache_loc,num_buffers,row_vectors,min_slots host_args num_correct_drafts,accept_index,out_cache_loc,buffers,workspace,status,report types
// WHOLE-COUNT-7: kernel move_accept_tokens_window__{{[i0-9_]+}} block 256 {{.*}} targets window
// WHOLE-NEXT: abi 8
// WHOLE-EMPTY:
