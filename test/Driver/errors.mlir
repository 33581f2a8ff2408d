// Driver errors: every one exits non-zero with a diagnostic; input errors are
// located (file:line:col) in the file they come from, also when several
// inputs are given.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
//
// RUN: not specc %stages/move_rows.mlir --chip=sm_70 -o %t/out 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not specc %stages/move_rows.mlir --chip=sm_100 -o %t/out 2>&1 | FileCheck %s --check-prefix=CHIP100
// RUN: not specc %stages/move_rows.mlir --emit=obj -o %t/out 2>&1 | FileCheck %s --check-prefix=OBJ
// RUN: not specc %stages/move_rows.mlir --emit=obj --target=gpu -o %t/out 2>&1 | FileCheck %s --check-prefix=OBJ
// RUN: not specc %stages/move_rows.mlir --target=host --emit=ptx -o %t/out 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not specc %stages/move_rows.mlir --target=host --emit=cubin -o %t/out 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not specc %stages/move_rows.mlir --target=host --emit=manifest -o %t/out 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not ls %t/out
//
// RUN: not specc %t/parse-error.mlir 2>&1 | FileCheck %s --check-prefix=PARSE -DDIR=%t
// RUN: not specc %stages/move_rows.mlir %t/parse-error.mlir 2>&1 | FileCheck %s --check-prefix=PARSE -DDIR=%t
// RUN: not specc %t/verify-error.mlir --target=host --emit=obj -o %t/out 2>&1 | FileCheck %s --check-prefix=VERIFY -DDIR=%t
// RUN: not specc %t/verify-error.mlir %stages/move_rows.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY -DDIR=%t
// RUN: not ls %t/out
// RUN: not specc %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING -DDIR=%t
// RUN: not specc 2>&1 | FileCheck %s --check-prefix=NOINPUT

// CHIP: specc: error: unsupported --chip=sm_70 (sm_80, sm_86, sm_89, sm_90)
// CHIP100: specc: error: unsupported --chip=sm_100 (sm_80, sm_86, sm_89, sm_90)
// OBJ: specc: error: --emit=obj needs --target=host
// HOST: specc: error: --emit=ptx, cubin and manifest need --target=gpu

// PARSE: [[DIR]]/parse-error.mlir:2:26: error: expected non-function type
// PARSE-NEXT: %0 = arith.constant 1 :
// PARSE-NEXT: ^

// VERIFY: [[DIR]]/verify-error.mlir:3:3: error: 'kvcache.compact_sources' op sentinel must be negative so that it never names a position of 'out_cache_loc', got 0
// VERIFY-NEXT: kvcache.compact_sources

// MISSING: specc: error: cannot open input file '[[DIR]]/missing.mlir': No such file or directory
// NOINPUT: specc: Not enough positional command line arguments specified!

//--- parse-error.mlir
func.func @f() {
  %0 = arith.constant 1 :
}
//--- verify-error.mlir
func.func @f(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  // The sentinel must be negative.
  kvcache.compact_sources %acc, %ocl into %src sentinel 0
      : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}
