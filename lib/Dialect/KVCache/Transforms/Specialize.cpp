//===- Specialize.cpp - the kvcache-specialize pass -----------------------===//
//
// Clones every function whose arguments declare `kvcache.element_types` once
// per combination of those types, names each clone with
// mangleSpecialization, and removes the original (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "KVCache/Transforms/Passes.h"

#include "KVCache/IR/KVCache.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"

namespace mlir::kvcache {
#define GEN_PASS_DEF_KVCACHESPECIALIZE
#include "KVCache/Transforms/Passes.h.inc"
} // namespace mlir::kvcache

using namespace mlir;
using namespace mlir::kvcache;

static constexpr llvm::StringLiteral kElementTypes = "kvcache.element_types";

std::string mlir::kvcache::mangleSpecialization(StringRef base,
                                                ArrayRef<Type> types) {
  std::string name = (base + "_").str();
  for (Type t : types) {
    name += "_";
    llvm::raw_string_ostream os(name);
    t.print(os);
  }
  return name;
}

namespace {
struct KVCacheSpecializePass
    : kvcache::impl::KVCacheSpecializeBase<KVCacheSpecializePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> generic;
    for (auto func : module.getOps<func::FuncOp>())
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (func.getArgAttr(i, kElementTypes)) {
          generic.push_back(func);
          break;
        }
    for (func::FuncOp func : generic)
      if (failed(specialize(func, symbols)))
        return signalPassFailure();
  }

  LogicalResult specialize(func::FuncOp func, SymbolTable &symbols) {
    // The declared arguments and the types each may take.
    SmallVector<unsigned> args;
    SmallVector<SmallVector<Type>> choices;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      Attribute attr = func.getArgAttr(i, kElementTypes);
      if (!attr)
        continue;
      auto list = dyn_cast<ArrayAttr>(attr);
      auto memref = dyn_cast<MemRefType>(func.getArgument(i).getType());
      if (!memref)
        return func.emitError() << "argument " << i << " declares '"
                                << kElementTypes << "' but is not a memref";
      if (!list || list.empty())
        return func.emitError() << "'" << kElementTypes << "' of argument " << i
                                << " must be a non-empty array of types";
      SmallVector<Type> types;
      for (Attribute a : list) {
        auto t = dyn_cast<TypeAttr>(a);
        if (!t || !t.getValue().isSignlessIntOrFloat())
          return func.emitError()
                 << "'" << kElementTypes << "' of argument " << i
                 << " must list integer or float types, got " << a;
        if (llvm::is_contained(types, t.getValue()))
          return func.emitError() << "'" << kElementTypes << "' of argument "
                                  << i << " lists " << t << " twice";
        types.push_back(t.getValue());
      }
      args.push_back(i);
      choices.push_back(types);
    }
    // Odometer over the cartesian product, first argument slowest.
    SmallVector<unsigned> pick(args.size(), 0);
    OpBuilder b(func);
    while (true) {
      SmallVector<Type> chosen;
      for (auto [k, c] : llvm::enumerate(pick))
        chosen.push_back(choices[k][c]);
      std::string name = mangleSpecialization(func.getName(), chosen);
      if (symbols.lookup(name))
        return func.emitError() << "specialization @" << name
                                << " collides with an existing symbol";
      func::FuncOp clone = func.clone();
      clone.setName(name);
      SmallVector<Type> inputs(func.getArgumentTypes());
      for (auto [k, i] : llvm::enumerate(args)) {
        auto memref = cast<MemRefType>(inputs[i]);
        inputs[i] =
            MemRefType::get(memref.getShape(), chosen[k], memref.getLayout(),
                            memref.getMemorySpace());
        clone.getArgument(i).setType(inputs[i]);
        clone.removeArgAttr(i, kElementTypes);
      }
      clone.setType(
          FunctionType::get(func.getContext(), inputs, func.getResultTypes()));
      clone->setAttr("kvcache.specialization_of",
                     FlatSymbolRefAttr::get(func.getNameAttr()));
      b.insert(clone);
      symbols.insert(clone);
      if (failed(mlir::verify(clone)))
        return failure();
      // Next combination.
      int k = static_cast<int>(pick.size()) - 1;
      while (k >= 0 && ++pick[k] == choices[k].size())
        pick[k--] = 0;
      if (k < 0)
        break;
    }
    symbols.erase(func);
    return success();
  }
};
} // namespace
