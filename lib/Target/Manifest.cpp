//===- Manifest.cpp - the launch manifest of the generated kernels --------===//
//
// Reads the `kvcache.launch` attribute kvcache-to-gpu puts on each kernel and
// writes it as the line-based manifest the runtime parses.
//
//===----------------------------------------------------------------------===//

#include "Target/Target.h"

#include "KVCache/KVCacheABI.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/StringExtras.h"
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
    auto strings = [&](StringRef key) {
      std::vector<std::string> out;
      if (auto list = dict.getAs<ArrayAttr>(key))
        for (Attribute a : list)
          out.push_back(cast<StringAttr>(a).getValue().str());
      return out;
    };
    if (auto a = dict.getAs<StringAttr>("entry"))
      l.entry = a.getValue().str();
    if (auto a = dict.getAs<StringAttr>("targets"))
      l.targets = a.getValue().str();
    if (auto a = dict.getAs<IntegerAttr>("blocks_per_sm"))
      l.blocksPerSM = a.getInt();
    l.gridUnits = strings("grid_units");
    l.params = strings("params");
    l.hostArgs = strings("host_args");
    if (auto types = dict.getAs<DictionaryAttr>("types"))
      for (NamedAttribute t : types) {
        std::string name;
        llvm::raw_string_ostream os(name);
        cast<TypeAttr>(t.getValue()).getValue().print(os);
        l.types.emplace_back(t.getName().str(), name);
      }
    launches.push_back(l);
  });
  return launches;
}

std::string specc::formatManifest(ArrayRef<KernelLaunch> launches) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# specc launch manifest: kernel NAME block THREADS grid RULE "
        "tile_bytes BYTES smem BYTES\n";
  for (const KernelLaunch &l : launches) {
    os << "kernel " << l.name << " block " << l.block << " grid " << l.grid
       << " tile_bytes " << l.tileBytes << " smem " << l.dynamicSharedMemory;
    if (!l.entry.empty()) {
      auto list = [&](ArrayRef<std::string> items) {
        os << (items.empty() ? "-" : llvm::join(items, ","));
      };
      os << " entry " << l.entry << " targets " << l.targets << " units ";
      list(l.gridUnits);
      os << " blocks_per_sm " << l.blocksPerSM << " params ";
      list(l.params);
      os << " host_args ";
      list(l.hostArgs);
      os << " types ";
      std::vector<std::string> types;
      for (const auto &[name, type] : l.types)
        types.push_back(name + ":" + type);
      list(types);
    }
    os << "\n";
  }
  os << "abi " << KVCACHE_ABI_VERSION << "\n";
  return text;
}
