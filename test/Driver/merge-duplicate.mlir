// Two inputs that define the same function are rejected: kernels are named
// after their functions, so a second copy would yield kernels the runtime
// never looks for.
// RUN: not specc %stages/move_rows.mlir %stages/move_rows.mlir --emit=manifest 2>&1 | FileCheck %s

// CHECK: move_rows.mlir:{{[0-9]+}}:{{[0-9]+}}: error: @move_rows is already defined by an earlier input
// CHECK: move_rows.mlir:{{[0-9]+}}:{{[0-9]+}}: note: first defined here
