// move_accept_tokens_to_target_kvcache (docs/semantics.md), written once in
// the kvcache dialect. The compiler specializes each function to every
// combination of the element types its index tensors declare
// (kvcache-specialize) and lowers each specialization to one GPU kernel and
// one host function: the entry points the runtime calls, named in the launch
// manifest.
//
// `buffers` is the (address, row bytes, slots) table of the KV buffers;
// `workspace`, `status` and `report` are runtime-owned scratch (the report,
// which outlives each call, in memory the host can read without waiting).
// The stage form of the same function (assign_targets, compact_sources,
// move_rows), from which kvcache-fuse forms this op, is in
// test/Transforms/kvcache-fuse.mlir.

// Targets from the request-to-token table (sglang before 0.5.23).
func.func @move_accept_tokens(
    %req_pool_indices: memref<?xi64> {kvcache.element_types = [i32, i64]},
    %req_to_token: memref<?x?xi32> {kvcache.element_types = [i32, i64]},
    %seq_lens: memref<?xi64> {kvcache.element_types = [i32, i64]},
    %num_correct_drafts: memref<?xi64> {kvcache.element_types = [i32, i64]},
    %accept_index: memref<?x?xi64> {kvcache.element_types = [i32, i64]},
    %out_cache_loc: memref<?xi64> {kvcache.element_types = [i32, i64]},
    %buffers: memref<?x3xi64>, %workspace: memref<?xi8>, %status: memref<8xi64>,
    %report: memref<8xi64>)
    attributes {llvm.emit_c_interface} {
  kvcache.move_accepted_tokens targets <req_to_token>
      rows(%req_pool_indices, %req_to_token, %seq_lens
           : memref<?xi64>, memref<?x?xi32>, memref<?xi64>)
      drafts(%num_correct_drafts : memref<?xi64>) accept(%accept_index : memref<?x?xi64>)
      sentinel -1 slots(%out_cache_loc : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%workspace : memref<?xi8>) status(%status : memref<8xi64>)
      report(%report : memref<8xi64>)
  return
}

// Targets from each request's verify window in out_cache_loc (sglang 0.5.23).
func.func @move_accept_tokens_window(
    %num_correct_drafts: memref<?xi64> {kvcache.element_types = [i32, i64]},
    %accept_index: memref<?x?xi64> {kvcache.element_types = [i32, i64]},
    %out_cache_loc: memref<?xi64> {kvcache.element_types = [i32, i64]},
    %buffers: memref<?x3xi64>, %workspace: memref<?xi8>, %status: memref<8xi64>,
    %report: memref<8xi64>)
    attributes {llvm.emit_c_interface} {
  kvcache.move_accepted_tokens targets <window>
      drafts(%num_correct_drafts : memref<?xi64>) accept(%accept_index : memref<?x?xi64>)
      sentinel -1 slots(%out_cache_loc : memref<?xi64>) buffers(%buffers : memref<?x3xi64>)
      workspace(%workspace : memref<?xi8>) status(%status : memref<8xi64>)
      report(%report : memref<8xi64>)
  return
}
