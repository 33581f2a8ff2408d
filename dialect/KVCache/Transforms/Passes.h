//===- Passes.h - kvcache transformations -----------------------*- C++ -*-===//
//
// Declarations and registration of the kvcache transformations (generated
// from Passes.td) and the mangling of specialized function names.
//
//===----------------------------------------------------------------------===//

#ifndef KVCACHE_TRANSFORMS_PASSES_H
#define KVCACHE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kvcache {
#define GEN_PASS_DECL
#include "KVCache/Transforms/Passes.h.inc"

/// The name of `base` specialized to `types` (one per declared argument, in
/// argument order): `base__i32_i64...`. The only place names are mangled.
std::string mangleSpecialization(StringRef base, ArrayRef<Type> types);

#define GEN_PASS_REGISTRATION
#include "KVCache/Transforms/Passes.h.inc"
} // namespace mlir::kvcache

#endif // KVCACHE_TRANSFORMS_PASSES_H
