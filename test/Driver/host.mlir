// The host target: --emit=llvm gives LLVM IR with the C interface wrappers,
// --emit=obj a relocatable x86-64 ELF object defining them, --emit=mlir the
// LLVM dialect.
// RUN: specc %kernels/move_accept_tokens.mlir --target=host --emit=llvm | FileCheck %s
// RUN: specc %kernels/move_accept_tokens.mlir --target=host --emit=obj -o %t.o
// RUN: od -An -c -N4 %t.o | FileCheck %s --check-prefix=MAGIC
// RUN: llvm-readelf -h -s %t.o | FileCheck %s --check-prefix=OBJ
// RUN: specc %kernels/move_accept_tokens.mlir --target=host --emit=mlir | FileCheck %s --check-prefix=MLIR
// RUN: specc %kernels/move_accept_tokens.mlir --target=host --emit=llvm | grep -c '^define void @_mlir_ciface_' | FileCheck %s --check-prefix=COUNT

// CHECK-DAG: declare ptr @malloc(i64)
// CHECK-DAG: declare void @free(ptr)
// Every specialization is an entry point: 64 of the req_to_token form (ten
// memref arguments), 8 of the window form (seven).
// CHECK: define void @move_accept_tokens__i64_i32_i64_i64_i64_i64(ptr %0, ptr %1, i64 %2, i64 %3, i64 %4,
// CHECK: call void @llvm.memcpy.p0.p0.i64(
// CHECK: define void @_mlir_ciface_move_accept_tokens__i64_i32_i64_i64_i64_i64(ptr %0, ptr %1, ptr %2, ptr %3, ptr %4, ptr %5, ptr %6, ptr %7, ptr %8, ptr %9) {
// CHECK: call void @move_accept_tokens__i64_i32_i64_i64_i64_i64(
// CHECK: define void @_mlir_ciface_move_accept_tokens_window__i64_i64_i64(ptr %0, ptr %1, ptr %2, ptr %3, ptr %4, ptr %5, ptr %6) {
// COUNT: 72

// MAGIC: 177 E L F

// OBJ: Class: ELF64
// OBJ: Type: REL (Relocatable file)
// OBJ: Machine: Advanced Micro Devices X86-64
// OBJ-DAG: FUNC GLOBAL DEFAULT {{.*}} move_accept_tokens__i32_i64_i32_i64_i32_i64{{$}}
// OBJ-DAG: FUNC GLOBAL DEFAULT {{.*}} _mlir_ciface_move_accept_tokens__i32_i64_i32_i64_i32_i64{{$}}
// OBJ-DAG: NOTYPE GLOBAL DEFAULT UND malloc
// OBJ-DAG: NOTYPE GLOBAL DEFAULT UND free

// MLIR-NOT: gpu.module
// MLIR: llvm.func @move_accept_tokens__i32_i32_i32_i32_i32_i32(
// MLIR: llvm.func @_mlir_ciface_move_accept_tokens__i32_i32_i32_i32_i32_i32(
