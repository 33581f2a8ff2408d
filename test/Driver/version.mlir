// specc --version names the ptxas that --emit=cubin runs when no --ptxas is
// given, found in the driver's order: PATH, then $CUDA_HOME/bin,
// $CUDA_PATH/bin, /usr/local/cuda/bin. (The suite's `ptxas` feature is this
// answer too.)
// RUN: rm -rf %t && mkdir -p %t/empty %t/path %t/home/bin %t/cudapath/bin
// RUN: echo "#!/bin/sh" > %t/path/ptxas
// RUN: echo "#!/bin/sh" > %t/home/bin/ptxas
// RUN: echo "#!/bin/sh" > %t/cudapath/bin/ptxas
// RUN: chmod +x %t/path/ptxas %t/home/bin/ptxas %t/cudapath/bin/ptxas
// RUN: env PATH=%t/path CUDA_HOME=%t/home CUDA_PATH=%t/cudapath specc --version | FileCheck %s -DROOT=%t --check-prefix=PATH
// RUN: env PATH=%t/empty CUDA_HOME=%t/home CUDA_PATH=%t/cudapath specc --version | FileCheck %s -DROOT=%t --check-prefix=HOME
// RUN: env PATH=%t/empty CUDA_HOME=%t/empty CUDA_PATH=%t/cudapath specc --version | FileCheck %s -DROOT=%t --check-prefix=CPATH

// PATH: LLVM version
// PATH: ptxas: [[ROOT]]/path/ptxas
// HOME: ptxas: [[ROOT]]/home/bin/ptxas
// CPATH: ptxas: [[ROOT]]/cudapath/bin/ptxas
