//===- InitAll.h - everything specc's tools register ------------*- C++ -*-===//
//
// The one place that says which dialects, passes and pipelines specc's tools
// know. specc, specc-opt and the tests all call these two functions.
//
//===----------------------------------------------------------------------===//

#ifndef SPECC_INITALL_H
#define SPECC_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace specc {
/// Adds the kvcache dialect and every upstream dialect specc's IR can hold,
/// with the interfaces their translation to LLVM IR needs.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Registers specc's passes and named pipelines, plus the upstream passes a
/// user of specc-opt needs to replay a pipeline stage by stage.
void registerAllPasses();
} // namespace specc

#endif // SPECC_INITALL_H
