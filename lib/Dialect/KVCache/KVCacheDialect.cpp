//===- KVCacheDialect.cpp - kvcache dialect registration ------------------===//
//
// Registers the kvcache dialect's ops and attributes with an MLIRContext.
//
//===----------------------------------------------------------------------===//

#include "KVCache/IR/KVCache.h"
#include "KVCache/KVCacheABI.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kvcache;

#include "KVCache/IR/KVCacheEnums.cpp.inc"
#include "KVCache/IR/KVCacheOpsDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "KVCache/IR/KVCacheAttrs.cpp.inc"

void KVCacheDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "KVCache/IR/KVCacheOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "KVCache/IR/KVCacheAttrs.cpp.inc"
      >();
}

int64_t mlir::kvcache::getMoveWorkspaceBytes(int64_t numEntries) {
  return kvcacheMoveWorkspaceBytes(numEntries);
}
