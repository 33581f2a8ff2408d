// A
// ptxas that exits 0 without writing its output file makes specc write an
// empty cubin and exit 0 (the temporary output file exists, so the "ptxas
// wrote no cubin" check never fires). specc must fail instead.
// RUN: rm -rf %t && mkdir -p %t
// RUN: split-file --no-leading-lines %s %t
// RUN: chmod +x %t/silent-ptxas
// RUN: not specc %stages/move_rows.mlir --emit=cubin --ptxas=%t/silent-ptxas -o %t/out.cubin 2>&1 \
// RUN:   | FileCheck %s
// RUN: not ls %t/out.cubin

// CHECK: specc: error: ptxas exited 0 but wrote no cubin; reproduce with:

//--- silent-ptxas
#!/bin/sh
exit 0
