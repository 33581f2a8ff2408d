// KNOWN DEFECT (expected to fail until fixed; then drop the XFAIL line): two
// inputs that define the same function are merged without a diagnostic (the
// merged module is never verified before the pipeline, which erases the host
// functions), and the second copy's kernels are silently renamed
// (move_rows_move_plan_1, move_rows_move_copy_1), names the runtime does not
// look for. specc must reject the duplicate symbol.
// XFAIL: *
// RUN: not specc %kernels/move_rows.mlir %kernels/move_rows.mlir --emit=manifest 2>&1 | FileCheck %s

// CHECK: error:
// CHECK-SAME: move_rows
