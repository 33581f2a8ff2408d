//===- HostObject.cpp - LLVM IR and object files for the host path --------===//
//
// Translates a module lowered by specc-host-pipeline to LLVM IR, optimises it
// and emits a position-independent object for generic x86-64, so the CPU path
// links into the runtime's shared library and runs on any x86-64 host.
//
//===----------------------------------------------------------------------===//

#include "Target/Target.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

namespace {
std::unique_ptr<llvm::Module> translate(ModuleOp module,
                                        llvm::LLVMContext &ctx) {
  return translateModuleToLLVMIR(module, ctx, "specc_host");
}
} // namespace

FailureOr<std::string> specc::translateHostToLLVMIR(ModuleOp module) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = translate(module, ctx);
  if (!m)
    return failure();
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  return text;
}

FailureOr<std::string> specc::emitHostObject(ModuleOp module,
                                             std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = translate(module, ctx);
  if (!m) {
    error = "translation to LLVM IR failed";
    return failure();
  }
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = lookupError;
    return failure();
  }
  // Generic CPU: the object must run on every host of the architecture.
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  m->setTargetTriple(triple);
  m->setDataLayout(tm->createDataLayout());
  if (llvm::Error err = makeOptimizingTransformer(3, 0, tm.get())(m.get())) {
    error = llvm::toString(std::move(err));
    return failure();
  }
  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr,
                              llvm::CodeGenFileType::ObjectFile)) {
    error = "the host target cannot emit object files";
    return failure();
  }
  pm.run(*m);
  return std::string(object.str());
}
