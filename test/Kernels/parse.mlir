// Every kernel source parses, verifies and round-trips through the generic form.
// RUN: specc-opt %kernels/move_accept_tokens.mlir | specc-opt --mlir-print-op-generic | specc-opt | FileCheck %s --check-prefix=WHOLE
// RUN: specc-opt %stages/assign_targets.mlir | specc-opt --mlir-print-op-generic | specc-opt | FileCheck %s --check-prefix=ASSIGN
// RUN: specc-opt %stages/compact_sources.mlir | specc-opt --mlir-print-op-generic | specc-opt | FileCheck %s --check-prefix=COMPACT
// RUN: specc-opt %stages/move_rows.mlir | specc-opt --mlir-print-op-generic | specc-opt | FileCheck %s --check-prefix=MOVE

// WHOLE-LABEL: func.func @move_accept_tokens(
// WHOLE: kvcache.move_accepted_tokens targets <req_to_token> rows({{.*}}) {{.*}} report(%{{.*}} : memref<8xi64>)
// WHOLE-LABEL: func.func @move_accept_tokens_window(
// WHOLE: kvcache.move_accepted_tokens targets <window> drafts({{.*}}) {{.*}} report(%{{.*}} : memref<8xi64>)

// ASSIGN-COUNT-4: kvcache.assign_targets {{.*}} checked
// ASSIGN-NOT: kvcache.

// COMPACT-COUNT-8: kvcache.compact_sources {{.*}} sentinel -1 {{.*}} checked
// COMPACT-NOT: kvcache.

// MOVE-LABEL: func.func @move_rows
// MOVE: kvcache.move_rows {{.*}} overlap <gather_then_scatter> workspace({{.*}}) checked
