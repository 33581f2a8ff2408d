// A failing ptxas: specc exits non-zero, writes no output, prints the exact
// command that reproduces the failure (the PTX stays in TMPDIR for it) and
// ptxas's own log. A ptxas that cannot be found is a plain error.
// RUN: rm -rf %t && mkdir -p %t/tmp
// RUN: split-file --no-leading-lines %s %t
// RUN: chmod +x %t/fake-ptxas
// RUN: env TMPDIR=%t/tmp not specc %stages/move_rows.mlir --emit=cubin --chip=sm_86 \
// RUN:   --ptxas=%t/fake-ptxas -o %t/out.cubin 2>&1 | FileCheck %s -DDIR=%t
// RUN: not ls %t/out.cubin
// The PTX named in the reproduce line is there, and is the kernels' PTX.
// RUN: cat %t/tmp/specc-*.ptx | FileCheck %s --check-prefix=LEFT
// RUN: not specc %stages/move_rows.mlir --emit=cubin --ptxas=%t/nonexistent -o %t/none.cubin 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// RUN: not ls %t/none.cubin
// A ptxas path that is not executable is as good as missing.
// RUN: not specc %stages/move_rows.mlir --emit=cubin --ptxas=%t/not-executable -o %t/none.cubin 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING

// CHECK: specc: error: ptxas failed (exit code 3); reproduce with:
// CHECK-NEXT: {{^  }}[[DIR]]/fake-ptxas -arch=sm_86 -O3 --split-compile=0 -v [[DIR]]/tmp/specc-{{[^ ]+}}.ptx -o {{[^ ]+}}.cubin{{$}}
// CHECK-NEXT: ptxas log:
// CHECK-NEXT: ptxas fatal : Unresolved extern function 'bogus_function'
// CHECK-NEXT: ptxas fatal : Ptx assembly aborted due to errors

// LEFT: .target sm_86
// LEFT: .visible .entry move_rows_move_plan(
// LEFT: .visible .entry move_rows_move_copy(

// MISSING: specc: error: ptxas not found (--ptxas, PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin)

//--- fake-ptxas
#!/bin/sh
echo "ptxas fatal   : Unresolved extern function 'bogus_function'" >&2
echo "ptxas fatal   : Ptx assembly aborted due to errors" >&2
exit 3
//--- not-executable
#!/bin/sh
exit 0
