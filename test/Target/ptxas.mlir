// ptxas accepts the PTX of every runtime kernel and reports no stack frame
// and no spills; the cubin is a CUDA ELF for the requested chip holding every
// kernel. (Known exceptions, see ptxas-spills-*.mlir: compact_sources on
// sm_80, assign_targets on sm_86/sm_89.)
// REQUIRES: ptxas
//
// All three runtime kernel files, sm_90.
// RUN: specc %stages/assign_targets.mlir %stages/compact_sources.mlir %stages/move_rows.mlir \
// RUN:   --emit=cubin --chip=sm_90 --ptxas=%ptxas --ptxas-verbose -o %t.sm_90.cubin 2> %t.sm_90.log
// RUN: FileCheck %s --check-prefix=CLEAN14 --implicit-check-not='{{[1-9][0-9]* bytes (stack frame|spill|cumulative stack)}}' < %t.sm_90.log
// RUN: FileCheck %s --check-prefixes=ALL,SM90 < %t.sm_90.log
// RUN: od -An -tx1 -N4 %t.sm_90.cubin | FileCheck %s --check-prefix=MAGIC
// RUN: llvm-readelf -h -s %t.sm_90.cubin | FileCheck %s --check-prefixes=ELF,ELF90
//
// The kernels of assign_targets.mlir and move_rows.mlir, sm_80.
// RUN: specc %stages/assign_targets.mlir %stages/move_rows.mlir \
// RUN:   --emit=cubin --chip=sm_80 --ptxas=%ptxas --ptxas-verbose -o %t.sm_80.cubin 2> %t.sm_80.log
// RUN: FileCheck %s --check-prefix=CLEAN6 --implicit-check-not='{{[1-9][0-9]* bytes (stack frame|spill|cumulative stack)}}' < %t.sm_80.log
// RUN: FileCheck %s --check-prefix=SM80 < %t.sm_80.log
// RUN: od -An -tx1 -N4 %t.sm_80.cubin | FileCheck %s --check-prefix=MAGIC
// RUN: llvm-readelf -h %t.sm_80.cubin | FileCheck %s --check-prefix=ELF80
//
// The whole move in one function, sm_90, with the driver finding ptxas by
// itself (PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, as lit did).
// RUN: specc %kernels/move_accept_tokens.mlir --emit=cubin --chip=sm_90 --ptxas-verbose \
// RUN:   -o %t.whole.cubin 2> %t.whole.log
// RUN: FileCheck %s --check-prefix=CLEAN72 --implicit-check-not='{{[1-9][0-9]* bytes (stack frame|spill|cumulative stack)}}' < %t.whole.log
// RUN: FileCheck %s --check-prefix=WHOLE < %t.whole.log
// RUN: llvm-readelf -h -s %t.whole.cubin | FileCheck %s --check-prefix=WHOLE-ELF

// CLEAN14-COUNT-14: {{^[[:space:]]*}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CLEAN6-COUNT-6: {{^[[:space:]]*}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CLEAN72-COUNT-72: {{^[[:space:]]*}}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// ALL-DAG: Function properties for assign_targets_i64_i64_assign_targets
// SM90-DAG: Compiling entry function 'assign_targets_i64_i64_assign_targets' for 'sm_90'
// ALL-DAG: Function properties for assign_targets_i64_i32_assign_targets
// SM90-DAG: Compiling entry function 'assign_targets_i64_i32_assign_targets' for 'sm_90'
// ALL-DAG: Function properties for assign_targets_i32_i64_assign_targets
// SM90-DAG: Compiling entry function 'assign_targets_i32_i64_assign_targets' for 'sm_90'
// ALL-DAG: Function properties for assign_targets_i32_i32_assign_targets
// SM90-DAG: Compiling entry function 'assign_targets_i32_i32_assign_targets' for 'sm_90'
// ALL-DAG: Function properties for compact_sources_i32_i64_i64_compact_sources
// SM90-DAG: Compiling entry function 'compact_sources_i32_i64_i64_compact_sources' for 'sm_90'
// ALL-DAG: Function properties for compact_sources_i32_i64_i32_compact_sources
// SM90-DAG: Compiling entry function 'compact_sources_i32_i64_i32_compact_sources' for 'sm_90'
// ALL-DAG: Function properties for compact_sources_i32_i32_i64_compact_sources
// SM90-DAG: Compiling entry function 'compact_sources_i32_i32_i64_compact_sources' for 'sm_90'
// ALL-DAG: Function properties for compact_sources_i32_i32_i32_compact_sources
// SM90-DAG: Compiling entry function 'compact_sources_i32_i32_i32_compact_sources' for 'sm_90'
// ALL-DAG: Function properties for compact_sources_i64_i64_i64_compact_sources
// SM90-DAG: Compiling entry function 'compact_sources_i64_i64_i64_compact_sources' for 'sm_90'
// ALL-DAG: Function properties for compact_sources_i64_i64_i32_compact_sources
// SM90-DAG: Compiling entry function 'compact_sources_i64_i64_i32_compact_sources' for 'sm_90'
// ALL-DAG: Function properties for compact_sources_i64_i32_i64_compact_sources
// SM90-DAG: Compiling entry function 'compact_sources_i64_i32_i64_compact_sources' for 'sm_90'
// ALL-DAG: Function properties for compact_sources_i64_i32_i32_compact_sources
// SM90-DAG: Compiling entry function 'compact_sources_i64_i32_i32_compact_sources' for 'sm_90'
// ALL-DAG: Function properties for move_rows_move_plan
// SM90-DAG: Compiling entry function 'move_rows_move_plan' for 'sm_90'
// ALL-DAG: Function properties for move_rows_move_copy
// SM90-DAG: Compiling entry function 'move_rows_move_copy' for 'sm_90'
// SM80-DAG: Compiling entry function 'assign_targets_i64_i64_assign_targets' for 'sm_80'
// SM80-DAG: Compiling entry function 'assign_targets_i64_i32_assign_targets' for 'sm_80'
// SM80-DAG: Compiling entry function 'assign_targets_i32_i64_assign_targets' for 'sm_80'
// SM80-DAG: Compiling entry function 'assign_targets_i32_i32_assign_targets' for 'sm_80'
// SM80-DAG: Compiling entry function 'move_rows_move_plan' for 'sm_80'
// SM80-DAG: Compiling entry function 'move_rows_move_copy' for 'sm_80'

// MAGIC: 7f 45 4c 46

// ELF: Machine: NVIDIA CUDA architecture
// ELF90: Flags: {{.*}}sm_90
// ELF80: Machine: NVIDIA CUDA architecture
// ELF80: Flags: {{.*}}sm_80
// ELF-DAG: FUNC GLOBAL {{.*}} assign_targets_i64_i64_assign_targets{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} assign_targets_i64_i32_assign_targets{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} assign_targets_i32_i64_assign_targets{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} assign_targets_i32_i32_assign_targets{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} compact_sources_i32_i64_i64_compact_sources{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} compact_sources_i32_i64_i32_compact_sources{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} compact_sources_i32_i32_i64_compact_sources{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} compact_sources_i32_i32_i32_compact_sources{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} compact_sources_i64_i64_i64_compact_sources{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} compact_sources_i64_i64_i32_compact_sources{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} compact_sources_i64_i32_i64_compact_sources{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} compact_sources_i64_i32_i32_compact_sources{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} move_rows_move_plan{{$}}
// ELF-DAG: FUNC GLOBAL {{.*}} move_rows_move_copy{{$}}
// WHOLE-DAG: Compiling entry function 'move_accept_tokens__i64_i32_i64_i64_i64_i64' for 'sm_90'
// WHOLE-DAG: Compiling entry function 'move_accept_tokens_window__i64_i64_i64' for 'sm_90'
// The fused entry keeps within the registers of two blocks per SM (128 at most).
// WHOLE-DAG: Used {{([1-9][0-9]|1[0-2][0-9])}} registers, used 1 barriers
// WHOLE-ELF: Flags: {{.*}}sm_90
// WHOLE-ELF-DAG: FUNC GLOBAL {{.*}} move_accept_tokens__i32_i32_i32_i32_i32_i32{{$}}
// WHOLE-ELF-DAG: FUNC GLOBAL {{.*}} move_accept_tokens_window__i32_i64_i32{{$}}
