// --timing reports every stage: parse, the two GPU pipeline stages with their
// passes, emission (with ptxas nested under it for cubins); the host target
// reports its pipeline.
// RUN: specc %stages/move_rows.mlir --timing -o %t.ptx 2>&1 | FileCheck %s
// RUN: specc %stages/move_rows.mlir --target=host --emit=llvm --timing -o %t.ll 2>&1 | FileCheck %s --check-prefix=HOST
// Without --timing, nothing is reported.
// RUN: specc %stages/move_rows.mlir -o %t.ptx 2>&1 | count 0

// CHECK: Execution time report
// CHECK: Wall Time
// CHECK: parse
// CHECK: 01-kvcache-to-gpu
// CHECK-NEXT: KVCacheSpecialize
// CHECK-NEXT: KVCacheFuse
// CHECK-NEXT: KVCacheToGPU
// CHECK: 02-gpu-to-nvvm
// CHECK-NEXT: GpuNVVMAttachTarget
// CHECK: ConvertGpuOpsToNVVMOps
// CHECK: emit
// CHECK: Total

// HOST: Execution time report
// HOST: parse
// HOST: 01-host
// HOST-NEXT: KVCacheSpecialize
// HOST-NEXT: KVCacheFuse
// HOST-NEXT: KVCacheToLoops
// HOST: ConvertFuncToLLVMPass
// HOST: emit
// HOST: Total
