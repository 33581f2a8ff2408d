//===- KVCache.h - the kvcache dialect and its ops --------------*- C++ -*-===//
//
// Public C++ entry to the kvcache dialect: the dialect class, the enum
// attribute for the overlap policy and the three ops.
//
//===----------------------------------------------------------------------===//

#ifndef KVCACHE_IR_KVCACHE_H
#define KVCACHE_IR_KVCACHE_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "KVCache/IR/KVCacheEnums.h.inc"
#include "KVCache/IR/KVCacheOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "KVCache/IR/KVCacheAttrs.h.inc"

#define GET_OP_CLASSES
#include "KVCache/IR/KVCacheOps.h.inc"

namespace mlir::kvcache {
/// Bytes of workspace kvcache.move_rows needs for `numEntries` entries.
int64_t getMoveWorkspaceBytes(int64_t numEntries);
} // namespace mlir::kvcache

#endif // KVCACHE_IR_KVCACHE_H
