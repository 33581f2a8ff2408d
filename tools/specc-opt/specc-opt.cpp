//===- specc-opt.cpp - mlir-opt with the kvcache dialect ------------------===//
//
// An mlir-opt-style tool: parses, verifies, runs passes on and prints IR that
// uses the kvcache dialect. Everything it knows comes from InitAll.
//
//===----------------------------------------------------------------------===//

#include "InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  specc::registerAllDialects(registry);
  specc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "specc optimizer driver\n", registry));
}
