//===- KVCacheToGPU.cpp - the kvcache-to-gpu pass -------------------------===//
//
// Assembles the per-op patterns (AssignTargets.cpp, CompactSources.cpp,
// MoveRows.cpp, FusedMove.cpp) into the kvcache-to-gpu pass: kernels go into
// one gpu.module, the host functions that held the ops are removed (the
// runtime launches the kernels). An op the pass cannot lower (misplaced, in a
// function whose name is no PTX identifier, refused by its pattern) is an
// error where it is, and the host functions then stay. The pass is linear in
// the number of kernels (see KernelSymbols).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "KVCache/IR/KVCache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::kvcache {
#define GEN_PASS_DEF_KVCACHETOGPU
#include "Conversion/Passes.h.inc"
} // namespace mlir::kvcache

using namespace mlir;
using namespace mlir::kvcache;

namespace {
/// Where the patterns build, for one run of the pass, and the symbols of the
/// kernels' gpu.module. gpu.module keeps no symbol table: its lookupSymbol
/// scans every kernel and global, and the builders look up every name they
/// create (getKernelName to make a kernel name unique, the shared-memory
/// globals of KernelBuilder), which made the pass quadratic in the number of
/// kernels. So each op's kernels are built into an empty staging gpu.module,
/// where those lookups see only this op's symbols, and are then moved into
/// the kernels module; names are made unique against a set of its symbols.
class KernelSymbols {
public:
  KernelSymbols(gpu::GPUModuleOp kernels, gpu::GPUModuleOp staging)
      : kernels(kernels), staging(staging) {
    for (Operation &op : *kernels.getBody())
      if (StringAttr name = symbolName(&op))
        names.insert(name.getValue());
  }

  gpu::GPUModuleOp getStaging() const { return staging; }

  /// Whether `name` is taken: by a kernel or global already moved, one
  /// handed out for the op being lowered, or one staged for it.
  bool contains(StringRef name) {
    return names.contains(name) || pending.contains(name) ||
           staging.lookupSymbol(name);
  }
  /// Records a kernel name handed out for the op being lowered.
  void reserve(StringRef name) { pending.insert(name); }

  /// Moves what the op's pattern staged into the kernels module, in the
  /// order building there would have given (globals at the front, newest
  /// first; kernels at the end). A staged global whose name another op's
  /// kernel or global already has is renamed, with its uses; anything else
  /// that clashes is an error at `loc`.
  LogicalResult commit(Location loc) {
    Block *body = staging.getBody();
    LogicalResult result = success();
    for (Operation &op : *body) {
      StringAttr name = symbolName(&op);
      if (!name || pending.contains(name.getValue()) ||
          !names.contains(name.getValue()))
        continue;
      if (!isa<LLVM::GlobalOp>(op)) {
        emitError(loc) << "kernel symbol @" << name.getValue()
                       << " is already defined in @" << kernels.getName();
        result = failure();
        continue;
      }
      std::string fresh;
      for (int i = 1; fresh.empty() || contains(fresh); ++i)
        fresh = (name.getValue() + "_" + Twine(i)).str();
      StringAttr freshAttr = StringAttr::get(op.getContext(), fresh);
      if (failed(SymbolTable::replaceAllSymbolUses(name, freshAttr,
                                                   &staging.getBodyRegion())))
        result = failure();
      SymbolTable::setSymbolName(&op, freshAttr);
    }
    for (Operation &op : *body)
      if (StringAttr name = symbolName(&op))
        names.insert(name.getValue());
    pending.clear();
    auto firstKernel = llvm::find_if(
        *body, [](Operation &op) { return !isa<LLVM::GlobalOp>(op); });
    Block *target = kernels.getBody();
    target->getOperations().splice(target->begin(), body->getOperations(),
                                   body->begin(), firstKernel);
    target->getOperations().splice(target->end(), body->getOperations());
    return result;
  }

private:
  static StringAttr symbolName(Operation *op) {
    return op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
  }

  gpu::GPUModuleOp kernels, staging;
  llvm::StringSet<> names, pending;
};

/// The symbols of the run of the pass on this thread (patterns run on the
/// pass's thread), if its patterns build into the module asked about.
thread_local KernelSymbols *activeSymbols = nullptr;

/// Installs `symbols` for getKernelName while in scope.
struct ActiveSymbolsScope {
  explicit ActiveSymbolsScope(KernelSymbols &symbols)
      : previous(activeSymbols) {
    activeSymbols = &symbols;
  }
  ~ActiveSymbolsScope() { activeSymbols = previous; }
  KernelSymbols *previous;
};
} // namespace

std::string mlir::kvcache::getKernelName(Operation *op, StringRef stage,
                                         gpu::GPUModuleOp kernels) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  std::string base =
      ((func ? func.getName() : StringRef("kernel")) + "_" + stage).str();
  KernelSymbols *symbols =
      activeSymbols && activeSymbols->getStaging() == kernels ? activeSymbols
                                                              : nullptr;
  // Outside the pass (patterns populated elsewhere) the module is probed.
  auto taken = [&](StringRef name) {
    return symbols ? symbols->contains(name)
                   : static_cast<bool>(kernels.lookupSymbol(name));
  };
  std::string name = base;
  for (int i = 1; taken(name); ++i)
    name = base + "_" + std::to_string(i);
  // The caller builds the kernel under this name right away.
  if (symbols)
    symbols->reserve(name);
  return name;
}

void mlir::kvcache::populateKVCacheToGPUPatterns(
    RewritePatternSet &patterns, gpu::GPUModuleOp kernels,
    const GPUKernelOptions &options) {
  populateAssignTargetsToGPUPattern(patterns, kernels, options);
  populateCompactSourcesToGPUPattern(patterns, kernels, options);
  populateMoveRowsToGPUPattern(patterns, kernels, options);
  populateMoveAcceptedTokensToGPUPattern(patterns, kernels, options);
}

namespace {
/// A PTX identifier, in the subset every PTX consumer accepts:
/// [A-Za-z_][A-Za-z0-9_]*, and not "_" alone (PTX needs a character after a
/// leading underscore). PTX also allows '$' and a leading '%'; kernel names
/// never need them.
bool isPTXIdentifier(StringRef name) {
  if (name.empty() || name == "_" ||
      !(llvm::isAlpha(name.front()) || name.front() == '_'))
    return false;
  return llvm::all_of(name.drop_front(),
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// The name of the first kernel the op's pattern builds, before it is made
/// unique (a "_<n>" suffix keeps it an identifier or not).
std::string firstKernelName(Operation *op, StringRef func) {
  StringRef stage;
  if (isa<AssignTargetsOp>(op))
    stage = "assign_targets";
  else if (isa<CompactSourcesOp>(op))
    stage = "compact_sources";
  else if (auto move = dyn_cast<MoveRowsOp>(op))
    stage = move.getOverlap() == OverlapPolicy::GatherThenScatter
                ? "move_plan"
                : (move.getChecked() ? "move_check" : "move_copy");
  else
    return func.str(); // kvcache.move_accepted_tokens: the function's name.
  return (func + "_" + stage).str();
}

struct KVCacheToGPUPass : kvcache::impl::KVCacheToGPUBase<KVCacheToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Option errors name the option, not the whole module.
    auto bad = [&](const Twine &msg) {
      emitError(module.getLoc(), "kvcache-to-gpu: ") << msg;
      signalPassFailure();
    };
    auto warpMultiple = [](int64_t v) {
      return v >= 32 && v <= 1024 && v % 32 == 0;
    };
    if (!warpMultiple(scanBlockSize))
      return bad("scan-block-size must be a multiple of 32 in [32, 1024]");
    if (!warpMultiple(copyBlockSize))
      return bad("copy-block-size must be a multiple of 32 in [32, 1024]");
    if (tileBytes < 16 || tileBytes % 16 || copyBlockSize % (tileBytes / 16))
      return bad("tile-bytes must be a multiple of 16 whose 16-byte lanes "
                 "divide copy-block-size");
    if (stagingBytes < tileBytes || stagingBytes > 227 * 1024)
      return bad("staging-bytes must hold one tile and fit a block's shared "
                 "memory (at most 232448 bytes)");
    if (moduleName.empty())
      return bad("module-name must not be empty");
    GPUKernelOptions options{scanBlockSize, copyBlockSize, tileBytes,
                             stagingBytes};
    OpBuilder b(module.getContext());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(moduleName);
    if (!kernels) {
      b.setInsertionPointToEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(b, module.getLoc(), moduleName);
    }
    // Where an op can be lowered: directly in the body of a func.func of
    // this module, which becomes the entry point of its kernels (the
    // runtime launches them once per call, and the function is erased). An
    // op in a nested region (a loop, a branch, a gpu.func) or in a nested
    // module would lose what surrounds it: it is an error where it is, and
    // no pattern touches it.
    SmallVector<Operation *> placed;
    llvm::SetVector<func::FuncOp> hosts;
    module.walk([&](Operation *op) {
      if (!isa_and_nonnull<KVCacheDialect>(op->getDialect()))
        return;
      auto func = dyn_cast<func::FuncOp>(op->getParentOp());
      if (!func || func->getParentOp() != module) {
        op->emitOpError("must be inside a func.func of the module, directly "
                        "in its body: the function is the entry point it "
                        "becomes");
        return;
      }
      placed.push_back(op);
      hosts.insert(func);
    });
    // Kernels are named after their function; the NVPTX printer aborts on a
    // name that is not a PTX identifier, so such a function is an error here.
    llvm::SmallPtrSet<Operation *, 4> badNames;
    for (Operation *op : placed) {
      auto func = cast<func::FuncOp>(op->getParentOp());
      std::string kernel = firstKernelName(op, func.getName());
      if (isPTXIdentifier(kernel) || !badNames.insert(func).second)
        continue;
      // Both names printed as the IR prints symbols (escaped bytes).
      std::string escaped, symbol;
      llvm::raw_string_ostream os(escaped), symOs(symbol);
      llvm::printEscapedString(kernel, os);
      FlatSymbolRefAttr::get(func.getNameAttr()).print(symOs);
      func.emitError() << "kernel name '" << escaped << "' derived from "
                       << symbol
                       << " is not a valid PTX identifier "
                          "([A-Za-z_][A-Za-z0-9_]*)";
    }

    // The patterns build into a staging module next to the kernels one
    // (see KernelSymbols), emptied into it after each op.
    b.setInsertionPointAfter(kernels);
    auto staging =
        gpu::GPUModuleOp::create(b, module.getLoc(), moduleName + "_staging");
    RewritePatternSet patterns(module.getContext());
    populateKVCacheToGPUPatterns(patterns, staging, options);
    FrozenRewritePatternSet frozen(std::move(patterns));
    PatternApplicator applicator(frozen);
    applicator.applyDefaultCostModel();
    PatternRewriter rewriter(module.getContext());
    KernelSymbols symbols(kernels, staging);
    bool clash = false;
    {
      ActiveSymbolsScope scope(symbols);
      for (Operation *op : placed) {
        auto func = cast<func::FuncOp>(op->getParentOp());
        if (badNames.contains(func))
          continue;
        // The entry kernel takes its function's name, which must be free
        // (what the pattern checks, against the staging module only).
        if (isa<MoveAcceptedTokensOp>(op) && symbols.contains(func.getName())) {
          op->emitOpError()
              << "a kernel named @" << func.getName() << " exists";
          continue;
        }
        Location loc = op->getLoc();
        rewriter.setInsertionPoint(op);
        (void)applicator.matchAndRewrite(op, rewriter);
        if (failed(symbols.commit(loc)))
          clash = true;
      }
    }
    staging.erase();
    // Nothing is dropped silently: every op no pattern lowered (a misplaced
    // one, one of a badly named function, one its pattern refused) fails
    // the pass where it is, and the host functions stay.
    bool left = false;
    module.walk([&](Operation *op) {
      if (!isa_and_nonnull<KVCacheDialect>(op->getDialect()))
        return;
      op->emitOpError("could not be lowered to GPU kernels");
      left = true;
    });
    if (left || clash)
      return signalPassFailure();
    // Host functions that held kvcache ops have no job left once their ops
    // are kernels (the runtime launches them); other functions stay.
    for (func::FuncOp func : hosts)
      func.erase();
  }
};
} // namespace
