// --dump-dir writes every stage: the merged input, each pass's output of
// the two GPU stages, the NVVM module, the manifest and the PTX (which is the
// same PTX as the output). The host target dumps its own stages and no
// manifest or PTX.
// RUN: rm -rf %t && mkdir -p %t
// RUN: specc %stages/move_rows.mlir --dump-dir %t/dump -o %t/kernels.ptx
// RUN: ls %t/dump | FileCheck %s --check-prefix=LS
// RUN: FileCheck %s --check-prefix=INPUT < %t/dump/00-input.mlir
// RUN: FileCheck %s --check-prefix=STAGE1 < %t/dump/01-kvcache-to-gpu/builtin_module_no-symbol-name/2_kvcache-to-gpu.mlir
// RUN: FileCheck %s --check-prefix=NVVM < %t/dump/03-nvvm.mlir
// RUN: diff %t/dump/kernels.sm_90.ptx %t/kernels.ptx
// RUN: specc %stages/move_rows.mlir --emit=manifest -o %t/kernels.manifest
// RUN: diff %t/dump/kernels.manifest %t/kernels.manifest
// The chip names the PTX file; a nested directory is created.
// RUN: specc %stages/move_rows.mlir --chip=sm_80 --dump-dir %t/a/b/dump80 -o %t/kernels80.ptx
// RUN: ls %t/a/b/dump80 | FileCheck %s --check-prefix=LS80
// RUN: diff %t/a/b/dump80/kernels.sm_80.ptx %t/kernels80.ptx
//
// RUN: specc %stages/move_rows.mlir --target=host --emit=obj --dump-dir %t/host -o %t/host.o
// RUN: ls %t/host | FileCheck %s --check-prefix=HOST
// RUN: FileCheck %s --check-prefix=HOSTLLVM < %t/host/02-llvm.mlir

// LS: 00-input.mlir
// LS-NEXT: 01-kvcache-to-gpu
// LS-NEXT: 02-gpu-to-nvvm
// LS-NEXT: 03-nvvm.mlir
// LS-NEXT: kernels.manifest
// LS-NEXT: kernels.sm_90.ptx
// LS-EMPTY:

// LS80: 03-nvvm.mlir
// LS80: kernels.sm_80.ptx

// INPUT: func.func @move_rows(
// INPUT: kvcache.move_rows

// STAGE1-NOT: func.func
// STAGE1: gpu.module @specc_kernels
// STAGE1: gpu.func @move_rows_move_plan(
// STAGE1: gpu.func @move_rows_move_copy(

// NVVM: gpu.module @specc_kernels [#nvvm.target<O = 3, chip = "sm_90">]
// NVVM: llvm.func @move_rows_move_plan(
// NVVM: llvm.func @move_rows_move_copy(

// HOST: 00-input.mlir
// HOST-NEXT: 01-host
// HOST-NEXT: 02-llvm.mlir
// HOST-EMPTY:

// HOSTLLVM: llvm.func @move_rows(
// HOSTLLVM: llvm.func @_mlir_ciface_move_rows(
