// One case per verifier rule of the kvcache ops, with its exact message.
// RUN: specc-opt %s -split-input-file -verify-diagnostics

func.func @elt_type(%rpi: memref<?xf32>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op 'req_pool_indices' must hold i32 or i64 values, got 'memref<?xf32>'}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<?xf32>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @elt_type_i16(%rpi: memref<?xi64>, %r2t: memref<?x?xi16>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op 'req_to_token' must hold i32 or i64 values, got 'memref<?x?xi16>'}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<?xi64>, memref<?x?xi16>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @table_rank(%rpi: memref<?xi64>, %r2t: memref<?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op 'req_to_token' must have rank 2, got 'memref<?xi32>'}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<?xi64>, memref<?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @targets_rank(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?x?xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op 'targets' must have rank 1, got 'memref<?x?xi64>'}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?x?xi64>
  return
}

// -----

func.func @seq_lens_batch(%rpi: memref<4xi64>, %r2t: memref<?x?xi32>, %seq: memref<3xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op batch sizes disagree: 'seq_lens' has 3 but 'req_pool_indices' has 4}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<4xi64>, memref<?x?xi32>, memref<3xi64>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @drafts_batch(%rpi: memref<4xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<5xi32>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op batch sizes disagree: 'num_correct_drafts' has 5 but 'req_pool_indices' has 4}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<4xi64>, memref<?x?xi32>, memref<?xi64>, memref<5xi32> into memref<?xi64>
  return
}

// -----

func.func @targets_too_short(%rpi: memref<4xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<3xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op 'targets' has 3 entries, fewer than the 4 requests that each accept at least one token}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<4xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<3xi64>
  return
}

// -----

func.func @checked_without_status(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op 'checked' needs a 'status' record to report to}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @status_without_checked(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64>, %st: memref<4xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op a 'status' record is only written by a 'checked' op}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt status(%st : memref<4xi64>) : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @status_shape(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64>, %st: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op 'status' must be memref<4xi64> or memref<8xi64>, got 'memref<?xi64>'}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<?xi64>) : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @status_type(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>, %ncd: memref<?xi64>, %st: memref<4xi32>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'status' must be memref<4xi64> or memref<8xi64>, got 'memref<4xi32>'}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd : memref<?xi64>) checked status(%st : memref<4xi32>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @accept_rank(%acc: memref<?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'accept_index' must have rank 2, got 'memref<?xi32>'}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @out_cache_loc_type(%acc: memref<?x?xi32>, %ocl: memref<?xindex>, %src: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'out_cache_loc' must hold i32 or i64 values, got 'memref<?xindex>'}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<?x?xi32>, memref<?xindex> into memref<?xi64>
  return
}

// -----

func.func @sentinel_nonneg(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op sentinel must be negative so that it never names a position of 'out_cache_loc', got 0}}
  kvcache.compact_sources %acc, %ocl into %src sentinel 0 : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @sources_size(%acc: memref<3x4xi32>, %ocl: memref<?xi64>, %src: memref<11xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'sources' has 11 entries but 'accept_index' holds 12}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<3x4xi32>, memref<?xi64> into memref<11xi64>
  return
}

// -----

func.func @counts_unchecked(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>, %ncd: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'counts' is only read by a 'checked' op}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd : memref<?xi64>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @checked_without_counts(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>, %st: memref<4xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'checked' needs 'counts' (accepted drafts per request) to verify the row counts}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 checked status(%st : memref<4xi64>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @counts_rank(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>, %ncd: memref<?x?xi64>, %st: memref<4xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'counts' must have rank 1, got 'memref<?x?xi64>'}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd : memref<?x?xi64>) checked status(%st : memref<4xi64>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @counts_batch(%acc: memref<3x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>, %ncd: memref<2xi64>, %st: memref<4xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op batch sizes disagree: 'counts' has 2 but 'accept_index' has 3}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd : memref<2xi64>) checked status(%st : memref<4xi64>) : memref<3x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @table_shape(%bufs: memref<?x2xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'buffers' must be a memref<?x3xi64> table of (address, row bytes, slots), got 'memref<?x2xi64>'}}
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> : memref<?x2xi64>, memref<?xi64>, memref<?xi64>
  return
}

// -----

func.func @table_type(%bufs: memref<?x3xi32>, %src: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'buffers' must be a memref<?x3xi64> table of (address, row bytes, slots), got 'memref<?x3xi32>'}}
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> : memref<?x3xi32>, memref<?xi64>, memref<?xi64>
  return
}

// -----

func.func @move_sources_type(%bufs: memref<?x3xi64>, %src: memref<?xf64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'sources' must hold i32 or i64 values, got 'memref<?xf64>'}}
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> : memref<?x3xi64>, memref<?xf64>, memref<?xi64>
  return
}

// -----

func.func @move_counts(%bufs: memref<?x3xi64>, %src: memref<4xi64>, %tgt: memref<5xi64>) {
  // expected-error @+1 {{'kvcache.move_rows' op entry counts disagree: 'sources' has 4 but 'targets' has 5}}
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> : memref<?x3xi64>, memref<4xi64>, memref<5xi64>
  return
}

// -----

func.func @needs_workspace(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.move_rows' op overlap policy gather_then_scatter needs a 'workspace' buffer}}
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// -----

func.func @workspace_type(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>, %ws: memref<?xi32>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'workspace' must be a rank-1 memref of i8, got 'memref<?xi32>'}}
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi32>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// -----

func.func @workspace_small(%bufs: memref<?x3xi64>, %src: memref<8xi64>, %tgt: memref<8xi64>, %ws: memref<100xi8>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'workspace' holds 100 bytes, fewer than the 984 that 8 entries need}}
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<100xi8>) : memref<?x3xi64>, memref<8xi64>, memref<8xi64>
  return
}

// -----

func.func @workspace_disjoint(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>, %ws: memref<?xi8>) {
  // expected-error @+1 {{'kvcache.move_rows' op a 'workspace' is only used by overlap policy gather_then_scatter}}
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> workspace(%ws : memref<?xi8>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// -----

func.func @bad_policy(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+2 {{expected ::mlir::kvcache::OverlapPolicy to be one of: gather_then_scatter, disjoint}}
  // expected-error @+1 {{failed to parse KVCache_OverlapPolicyAttr parameter 'value'}}
  kvcache.move_rows %bufs, %src, %tgt overlap <sometimes> : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// kvcache.move_accepted_tokens: one case per rule of its verifier, in order.

// -----

func.func @fused_needs_rows(%ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op targets <req_to_token> needs rows(...): req_pool_indices, req_to_token, seq_lens}}
  kvcache.move_accepted_tokens targets <req_to_token> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_window_rows(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op targets <window> takes no rows(...): the targets come from out_cache_loc}}
  kvcache.move_accepted_tokens targets <window> rows(%rpi, %r2t, %seq : memref<?xi64>, memref<?x?xi32>, memref<?xi64>) drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_rpi_type(%rpi: memref<?xi16>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'req_pool_indices' must hold i32 or i64 values, got 'memref<?xi16>'}}
  kvcache.move_accepted_tokens targets <req_to_token> rows(%rpi, %r2t, %seq : memref<?xi16>, memref<?x?xi32>, memref<?xi64>) drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_r2t_rank(%rpi: memref<?xi64>, %r2t: memref<?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'req_to_token' must have rank 2, got 'memref<?xi32>'}}
  kvcache.move_accepted_tokens targets <req_to_token> rows(%rpi, %r2t, %seq : memref<?xi64>, memref<?xi32>, memref<?xi64>) drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_seq_type(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xf32>, %ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'seq_lens' must hold i32 or i64 values, got 'memref<?xf32>'}}
  kvcache.move_accepted_tokens targets <req_to_token> rows(%rpi, %r2t, %seq : memref<?xi64>, memref<?x?xi32>, memref<?xf32>) drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_seq_batch(%rpi: memref<4xi64>, %r2t: memref<?x?xi32>, %seq: memref<3xi64>, %ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op batch sizes disagree: 'seq_lens' has 3 but 'req_pool_indices' has 4}}
  kvcache.move_accepted_tokens targets <req_to_token> rows(%rpi, %r2t, %seq : memref<4xi64>, memref<?x?xi32>, memref<3xi64>) drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_drafts_batch_rows(%rpi: memref<4xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<5xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op batch sizes disagree: 'num_correct_drafts' has 5 but 'req_pool_indices' has 4}}
  kvcache.move_accepted_tokens targets <req_to_token> rows(%rpi, %r2t, %seq : memref<4xi64>, memref<?x?xi32>, memref<?xi64>) drafts(%ncd : memref<5xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_drafts_rank(%ncd: memref<?x?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'num_correct_drafts' must have rank 1, got 'memref<?x?xi64>'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?x?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_accept_rank(%ncd: memref<?xi64>, %acc: memref<?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'accept_index' must have rank 2, got 'memref<?xi32>'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_ocl_type(%ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xindex>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'out_cache_loc' must hold i32 or i64 values, got 'memref<?xindex>'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xindex>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_accept_batch(%ncd: memref<3xi64>, %acc: memref<2x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op batch sizes disagree: 'accept_index' has 2 but 'num_correct_drafts' has 3}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<3xi64>) accept(%acc : memref<2x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_table(%ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x4xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'buffers' must be a memref<?x3xi64> table of (address, row bytes, slots), got 'memref<?x4xi64>'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x4xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_sentinel(%ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op sentinel must be negative so that it never names a position of 'out_cache_loc', got 3}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel 3 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_workspace(%ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?x?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'workspace' must be a rank-1 memref of i8, got 'memref<?x?xi8>'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?x?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_status(%ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<4xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'status' must be memref<8xi64>, got 'memref<4xi64>'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<4xi64>)
  return
}

// -----

func.func @fused_report(%ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>, %r: memref<8xi32>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'report' must be memref<8xi64>, got 'memref<8xi32>'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>) report(%r : memref<8xi32>)
  return
}

// -----

func.func @fused_report_space(%ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>, %r: memref<8xi64, 3>) {
  // expected-error @+1 {{'report'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>) report(%r : memref<8xi64, 3>)
  return
}

// Static entry counts: at most 2^31 - 1 entries per call (what the workspace
// layouts index with i32 and the runtime enforces), checked before any size
// is computed from them, so that no arithmetic of the verifiers overflows.

// -----

func.func @move_count_overflow(%bufs: memref<?x3xi64>, %src: memref<2305843009213693953xi64>, %tgt: memref<2305843009213693953xi64>, %ws: memref<100xi8>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'sources' has 2305843009213693953 entries, more than the 2147483647 (2^31 - 1) one call supports}}
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<100xi8>) : memref<?x3xi64>, memref<2305843009213693953xi64>, memref<2305843009213693953xi64>
  return
}

// -----

func.func @move_count_targets(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<2147483648xi64>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'targets' has 2147483648 entries, more than the 2147483647 (2^31 - 1) one call supports}}
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> : memref<?x3xi64>, memref<?xi64>, memref<2147483648xi64>
  return
}

// -----

// The largest count: its workspace size (about 96 GiB) is still exact.
func.func @move_count_max(%bufs: memref<?x3xi64>, %src: memref<2147483647xi64>, %tgt: memref<?xi64>, %ws: memref<100xi8>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'workspace' holds 100 bytes, fewer than the 103079215104 that 2147483647 entries need}}
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<100xi8>) : memref<?x3xi64>, memref<2147483647xi64>, memref<?xi64>
  return
}

// -----

func.func @accept_count_overflow(%acc: memref<4294967296x4294967296xi32>, %ocl: memref<?xi64>, %src: memref<0xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'accept_index' has 4294967296 x 4294967296 entries, more than the 2147483647 (2^31 - 1) one call supports}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<4294967296x4294967296xi32>, memref<?xi64> into memref<0xi64>
  return
}

// -----

func.func @accept_count_large(%acc: memref<65536x32768xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'accept_index' has 65536 x 32768 entries, more than the 2147483647 (2^31 - 1) one call supports}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<65536x32768xi32>, memref<?xi64> into memref<?xi64>
  return
}

// Layouts and memory spaces: the GPU kernels take every memref as a bare,
// densely indexed global pointer, so each operand of each op must have the
// identity layout and the default memory space.

// -----

func.func @assign_strided(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64, strided<[2]>>) {
  // expected-error @+1 {{'kvcache.assign_targets' op 'targets' must have the identity layout and the default memory space, got 'memref<?xi64, strided<[2]>>'}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64, strided<[2]>>
  return
}

// -----

func.func @assign_table_space(%rpi: memref<?xi64>, %r2t: memref<?x?xi32, 3>, %seq: memref<?xi64>, %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.assign_targets' op 'req_to_token' must have the identity layout and the default memory space, got 'memref<?x?xi32, 3>'}}
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt : memref<?xi64>, memref<?x?xi32, 3>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @compact_strided(%acc: memref<?x?xi32, strided<[?, 1], offset: ?>>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'accept_index' must have the identity layout and the default memory space, got 'memref<?x?xi32, strided<[?, 1], offset: ?>>'}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 : memref<?x?xi32, strided<[?, 1], offset: ?>>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @compact_counts_space(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>, %ncd: memref<?xi64, 3>, %st: memref<4xi64>) {
  // expected-error @+1 {{'kvcache.compact_sources' op 'counts' must have the identity layout and the default memory space, got 'memref<?xi64, 3>'}}
  kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd : memref<?xi64, 3>) checked status(%st : memref<4xi64>) : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

// -----

func.func @move_table_transposed(%bufs: memref<?x3xi64, affine_map<(d0, d1) -> (d1, d0)>>, %src: memref<?xi64>, %tgt: memref<?xi64>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'buffers' must have the identity layout and the default memory space, got 'memref<?x3xi64, affine_map<(d0, d1) -> (d1, d0)>>'}}
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> : memref<?x3xi64, affine_map<(d0, d1) -> (d1, d0)>>, memref<?xi64>, memref<?xi64>
  return
}

// -----

func.func @move_offset(%bufs: memref<?x3xi64>, %src: memref<8xi64, strided<[1], offset: 4>>, %tgt: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'sources' must have the identity layout and the default memory space, got 'memref<8xi64, strided<[1], offset: 4>>'}}
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> : memref<?x3xi64>, memref<8xi64, strided<[1], offset: 4>>, memref<8xi64>
  return
}

// -----

func.func @move_workspace_space(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>, %ws: memref<?xi8, 3>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'workspace' must have the identity layout and the default memory space, got 'memref<?xi8, 3>'}}
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter> workspace(%ws : memref<?xi8, 3>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// -----

func.func @move_status_space(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>, %st: memref<4xi64, 3>) {
  // expected-error @+1 {{'kvcache.move_rows' op 'status' must have the identity layout and the default memory space, got 'memref<4xi64, 3>'}}
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint> checked status(%st : memref<4xi64, 3>) : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

// -----

func.func @fused_accept_strided(%ncd: memref<?xi64>, %acc: memref<?x?xi32, strided<[?, 1]>>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'accept_index' must have the identity layout and the default memory space, got 'memref<?x?xi32, strided<[?, 1]>>'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32, strided<[?, 1]>>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_rows_space(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64, #gpu.address_space<global>>, %ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'seq_lens' must have the identity layout and the default memory space, got 'memref<?xi64, #gpu.address_space<global>>'}}
  kvcache.move_accepted_tokens targets <req_to_token> rows(%rpi, %r2t, %seq : memref<?xi64>, memref<?x?xi32>, memref<?xi64, #gpu.address_space<global>>) drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

// -----

func.func @fused_status_space(%ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>, %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64, 3>) {
  // expected-error @+1 {{'kvcache.move_accepted_tokens' op 'status' must have the identity layout and the default memory space, got 'memref<8xi64, 3>'}}
  kvcache.move_accepted_tokens targets <window> drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -1 slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>) workspace(%ws : memref<?xi8>) status(%st : memref<8xi64, 3>)
  return
}
