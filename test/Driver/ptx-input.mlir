// A PTX input skips the pipeline: specc hands it to ptxas with the flags the
// pipeline's own PTX gets, so the cubin is byte for byte the one that
// --emit=cubin makes from the .mlir (the build assembles the sm_80 cubin
// from the PTX artifact this way). Misuse is an error that writes nothing.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: specc %stages/move_rows.mlir --emit=ptx --chip=sm_80 -o %t/k.ptx
// RUN: specc %t/k.ptx --emit=cubin --chip=sm_80 --ptxas=%ptxas -o %t/from-ptx.cubin
// RUN: specc %stages/move_rows.mlir --emit=cubin --chip=sm_80 --ptxas=%ptxas -o %t/direct.cubin
// RUN: cmp %t/from-ptx.cubin %t/direct.cubin
// RUN: specc %t/k.ptx --emit=cubin --chip=sm_90 --ptxas=%ptxas --ptxas-verbose -o %t/sm90.cubin 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VERBOSE
// RUN: llvm-readelf -h %t/sm90.cubin | FileCheck %s --check-prefix=ELF
//
// RUN: not specc %t/k.ptx -o %t/out 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not specc %t/k.ptx --emit=mlir -o %t/out 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not specc %t/k.ptx --emit=cubin --target=host -o %t/out 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not specc %t/k.ptx %stages/move_rows.mlir --emit=cubin -o %t/out 2>&1 | FileCheck %s --check-prefix=ALONE
// RUN: not specc %t/k.ptx --emit=cubin --timing -o %t/out 2>&1 | FileCheck %s --check-prefix=MLIRONLY
// RUN: not specc %t/missing.ptx --emit=cubin -o %t/out 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo "not ptx" > %t/bad.ptx
// RUN: not specc %t/bad.ptx --emit=cubin --ptxas=%ptxas -o %t/out 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ls %t/out

// VERBOSE: ptxas info    : Compiling entry function 'move_rows_
// ELF: Machine: NVIDIA CUDA
// EMIT: specc: error: a .ptx input gives only --emit=cubin
// HOST: specc: error: --emit=ptx, cubin and manifest need --target=gpu
// ALONE: specc: error: a .ptx input is assembled alone: give one file
// MLIRONLY: specc: error: --dump-dir and --timing apply to .mlir inputs
// MISSING: specc: error: {{.*}}missing.ptx
// BAD: specc: error: ptxas
