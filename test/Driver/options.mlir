// The row-move options of the driver reach the kernels' launch manifest and
// the PTX; invalid values are rejected by kvcache-to-gpu.
// RUN: specc %stages/move_rows.mlir --tile-bytes=128 --staging-bytes=65536 --emit=manifest | FileCheck %s
// RUN: specc %stages/move_rows.mlir --tile-bytes=128 --staging-bytes=65536 --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: not specc %stages/move_rows.mlir --tile-bytes=24 -o %t.ptx 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not specc %stages/move_rows.mlir --staging-bytes=32 -o %t.ptx 2>&1 | FileCheck %s --check-prefix=BAD-STAGING

// CHECK: kernel move_rows_move_plan block 512 grid single tile_bytes 0 smem 0
// CHECK-NEXT: kernel move_rows_move_copy block 256 grid row_tiles_x_buffers tile_bytes 128 smem 65536

// 512 rows of 128 bytes fit in 64 KiB: more overlapping rows than that is
// the staging-capacity error (code 8).
// PTX-LABEL: .visible .entry move_rows_move_copy(
// PTX: setp.{{[a-z]+}}.s64 {{%p[0-9]+}}, {{%rd[0-9]+}}, {{512|513}};
// PTX: atom{{.*}}.global.cas.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], 0, 8;
// PTX: st.global.b64 [{{%rd[0-9]+}}+24], 512;

// BAD: error: kvcache-to-gpu: tile-bytes must be a multiple of 16 whose 16-byte lanes divide copy-block-size
// BAD-NOT: builtin.module
// BAD-STAGING: error: kvcache-to-gpu: staging-bytes must hold one tile and fit a block's shared memory (at most 232448 bytes)
