// Stage 3 of the KV move on its own: the row move over every KV buffer
// (sglang's move_kv_cache), with gather-then-scatter meaning for overlapping
// sources and targets, and slots checked against every buffer's size.
func.func @move_rows(%buffers: memref<?x3xi64>, %sources: memref<?xi64>,
    %targets: memref<?xi64>, %workspace: memref<?xi8>,
    %status: memref<4xi64>) attributes {llvm.emit_c_interface} {
  kvcache.move_rows %buffers, %sources, %targets overlap <gather_then_scatter>
      workspace(%workspace : memref<?xi8>) checked status(%status : memref<4xi64>)
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}
