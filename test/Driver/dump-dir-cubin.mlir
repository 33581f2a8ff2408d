// With --emit=cubin, --dump-dir also keeps the cubin, identical to the output.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: specc %stages/move_rows.mlir --emit=cubin --ptxas=%ptxas --dump-dir %t/dump -o %t/kernels.cubin
// RUN: ls %t/dump | FileCheck %s
// RUN: diff %t/dump/kernels.sm_90.cubin %t/kernels.cubin
// RUN: od -An -tx1 -N4 %t/dump/kernels.sm_90.cubin | FileCheck %s --check-prefix=MAGIC

// CHECK: 03-nvvm.mlir
// CHECK-NEXT: kernels.manifest
// CHECK-NEXT: kernels.sm_90.cubin
// CHECK-NEXT: kernels.sm_90.ptx

// MAGIC: 7f 45 4c 46
