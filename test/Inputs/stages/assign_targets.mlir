// Stage 1 of the KV move on its own: the segmented gather of target slots
// (sglang's assign_extend_cache_locs), one function per index element type.
// Suffix _<R>_<D>: R is the element type of req_pool_indices and seq_lens,
// D that of num_correct_drafts. Targets are i64; req_to_token is i32.

func.func @assign_targets_i64_i64(%rpi: memref<?xi64>, %req_to_token: memref<?x?xi32>,
    %seq_lens: memref<?xi64>, %ncd: memref<?xi64>, %targets: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.assign_targets %rpi, %req_to_token, %seq_lens, %ncd into %targets
      checked status(%status : memref<4xi64>)
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

func.func @assign_targets_i64_i32(%rpi: memref<?xi64>, %req_to_token: memref<?x?xi32>,
    %seq_lens: memref<?xi64>, %ncd: memref<?xi32>, %targets: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.assign_targets %rpi, %req_to_token, %seq_lens, %ncd into %targets
      checked status(%status : memref<4xi64>)
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi32> into memref<?xi64>
  return
}

func.func @assign_targets_i32_i64(%rpi: memref<?xi32>, %req_to_token: memref<?x?xi32>,
    %seq_lens: memref<?xi32>, %ncd: memref<?xi64>, %targets: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.assign_targets %rpi, %req_to_token, %seq_lens, %ncd into %targets
      checked status(%status : memref<4xi64>)
      : memref<?xi32>, memref<?x?xi32>, memref<?xi32>, memref<?xi64> into memref<?xi64>
  return
}

func.func @assign_targets_i32_i32(%rpi: memref<?xi32>, %req_to_token: memref<?x?xi32>,
    %seq_lens: memref<?xi32>, %ncd: memref<?xi32>, %targets: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.assign_targets %rpi, %req_to_token, %seq_lens, %ncd into %targets
      checked status(%status : memref<4xi64>)
      : memref<?xi32>, memref<?x?xi32>, memref<?xi32>, memref<?xi32> into memref<?xi64>
  return
}
