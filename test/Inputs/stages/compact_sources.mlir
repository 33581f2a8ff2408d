// Stage 2 of the KV move on its own: the compacting gather of source slots
// (sglang's fill_accept_out_cache_loc), one function per index element type.
// Suffix _<A>_<O>_<D>: element types of accept_index, out_cache_loc and
// num_correct_drafts (read for the row-count check). Sources are i64.

func.func @compact_sources_i32_i64_i64(%accept_index: memref<?x?xi32>,
    %out_cache_loc: memref<?xi64>, %ncd: memref<?xi64>, %sources: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.compact_sources %accept_index, %out_cache_loc into %sources sentinel -1
      counts(%ncd : memref<?xi64>) checked status(%status : memref<4xi64>)
      : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

func.func @compact_sources_i32_i64_i32(%accept_index: memref<?x?xi32>,
    %out_cache_loc: memref<?xi64>, %ncd: memref<?xi32>, %sources: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.compact_sources %accept_index, %out_cache_loc into %sources sentinel -1
      counts(%ncd : memref<?xi32>) checked status(%status : memref<4xi64>)
      : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

func.func @compact_sources_i32_i32_i64(%accept_index: memref<?x?xi32>,
    %out_cache_loc: memref<?xi32>, %ncd: memref<?xi64>, %sources: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.compact_sources %accept_index, %out_cache_loc into %sources sentinel -1
      counts(%ncd : memref<?xi64>) checked status(%status : memref<4xi64>)
      : memref<?x?xi32>, memref<?xi32> into memref<?xi64>
  return
}

func.func @compact_sources_i32_i32_i32(%accept_index: memref<?x?xi32>,
    %out_cache_loc: memref<?xi32>, %ncd: memref<?xi32>, %sources: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.compact_sources %accept_index, %out_cache_loc into %sources sentinel -1
      counts(%ncd : memref<?xi32>) checked status(%status : memref<4xi64>)
      : memref<?x?xi32>, memref<?xi32> into memref<?xi64>
  return
}

func.func @compact_sources_i64_i64_i64(%accept_index: memref<?x?xi64>,
    %out_cache_loc: memref<?xi64>, %ncd: memref<?xi64>, %sources: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.compact_sources %accept_index, %out_cache_loc into %sources sentinel -1
      counts(%ncd : memref<?xi64>) checked status(%status : memref<4xi64>)
      : memref<?x?xi64>, memref<?xi64> into memref<?xi64>
  return
}

func.func @compact_sources_i64_i64_i32(%accept_index: memref<?x?xi64>,
    %out_cache_loc: memref<?xi64>, %ncd: memref<?xi32>, %sources: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.compact_sources %accept_index, %out_cache_loc into %sources sentinel -1
      counts(%ncd : memref<?xi32>) checked status(%status : memref<4xi64>)
      : memref<?x?xi64>, memref<?xi64> into memref<?xi64>
  return
}

func.func @compact_sources_i64_i32_i64(%accept_index: memref<?x?xi64>,
    %out_cache_loc: memref<?xi32>, %ncd: memref<?xi64>, %sources: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.compact_sources %accept_index, %out_cache_loc into %sources sentinel -1
      counts(%ncd : memref<?xi64>) checked status(%status : memref<4xi64>)
      : memref<?x?xi64>, memref<?xi32> into memref<?xi64>
  return
}

func.func @compact_sources_i64_i32_i32(%accept_index: memref<?x?xi64>,
    %out_cache_loc: memref<?xi32>, %ncd: memref<?xi32>, %sources: memref<?xi64>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.compact_sources %accept_index, %out_cache_loc into %sources sentinel -1
      counts(%ncd : memref<?xi32>) checked status(%status : memref<4xi64>)
      : memref<?x?xi64>, memref<?xi32> into memref<?xi64>
  return
}
