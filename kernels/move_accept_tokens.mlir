// move_accept_tokens_to_target_kvcache, written in the kvcache dialect: the
// three stages composed in one function, every index tensor int64 except
// req_to_token (int32), bounds checked. `buffers` is the (address, row bytes,
// slots) table of the KV buffers; `targets`, `sources` (bs*W entries each),
// `workspace` and `status` are caller-owned scratch.
func.func @move_accept_tokens(
    %req_pool_indices: memref<?xi64>, %req_to_token: memref<?x?xi32>,
    %seq_lens: memref<?xi64>, %num_correct_drafts: memref<?xi64>,
    %accept_index: memref<?x?xi64>, %out_cache_loc: memref<?xi64>,
    %buffers: memref<?x3xi64>,
    %targets: memref<?xi64>, %sources: memref<?xi64>,
    %workspace: memref<?xi8>, %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.assign_targets %req_pool_indices, %req_to_token, %seq_lens, %num_correct_drafts
      into %targets checked status(%status : memref<4xi64>)
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  kvcache.compact_sources %accept_index, %out_cache_loc into %sources sentinel -1
      counts(%num_correct_drafts : memref<?xi64>) checked status(%status : memref<4xi64>)
      : memref<?x?xi64>, memref<?xi64> into memref<?xi64>
  kvcache.move_rows %buffers, %sources, %targets overlap <gather_then_scatter>
      workspace(%workspace : memref<?xi8>) checked status(%status : memref<4xi64>)
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}
