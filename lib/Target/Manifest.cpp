//===- Manifest.cpp - the launch manifest of the generated kernels --------===//
//
// Reads the `kvcache.launch` attribute kvcache-to-gpu puts on each kernel and
// writes it as the line-based manifest the runtime parses.
//
//===----------------------------------------------------------------------===//

#include "Target/Target.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::vector<specc::KernelLaunch> specc::collectLaunches(ModuleOp module) {
  std::vector<KernelLaunch> launches;
  module.walk([&](gpu::GPUFuncOp func) {
    auto dict = func->getAttrOfType<DictionaryAttr>("kvcache.launch");
    if (!dict)
      return;
    KernelLaunch l;
    l.name = func.getName().str();
    if (auto a = dict.getAs<IntegerAttr>("block"))
      l.block = a.getInt();
    if (auto a = dict.getAs<StringAttr>("grid"))
      l.grid = a.getValue().str();
    if (auto a = dict.getAs<IntegerAttr>("tile_bytes"))
      l.tileBytes = a.getInt();
    if (auto a = dict.getAs<IntegerAttr>("dynamic_shared_memory"))
      l.dynamicSharedMemory = a.getInt();
    launches.push_back(l);
  });
  return launches;
}

std::string specc::formatManifest(ArrayRef<KernelLaunch> launches) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# specc launch manifest: kernel NAME block THREADS grid RULE "
        "tile_bytes BYTES smem BYTES\n";
  for (const KernelLaunch &l : launches)
    os << "kernel " << l.name << " block " << l.block << " grid " << l.grid
       << " tile_bytes " << l.tileBytes << " smem " << l.dynamicSharedMemory
       << "\n";
  return text;
}
