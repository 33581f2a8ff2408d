//===- specc.cpp - the specc compiler driver ------------------------------===//
//
// specc FILE.mlir... --emit=mlir|llvm|ptx|cubin|obj|manifest
// [--target=gpu|host]
//       [--chip=sm_90] [-o OUT] [--dump-dir DIR] [--timing] [--ptxas PATH]
// specc FILE.ptx --emit=cubin [--chip=sm_90] [-o OUT] [--ptxas PATH]
//
// Parses and verifies the inputs (merged into one module), runs the pipeline
// built in lib/Pipelines and hands the result to lib/Target. A PTX input (what
// --emit=ptx wrote) skips the pipeline and goes to ptxas with the same flags
// as the pipeline's own PTX, so that a build can make a chip's cubin from the
// PTX it already emitted. Everything here is option handling and output; no
// pipeline logic lives in this file.
//
//===----------------------------------------------------------------------===//

#include "InitAll.h"
#include "Pipelines/Pipelines.h"
#include "Target/Target.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { MLIR, LLVM, PTX, Cubin, Obj, Manifest };
enum class Target { GPU, Host };

cl::OptionCategory category("specc options");
cl::list<std::string> inputs(cl::Positional,
                             cl::desc("<input .mlir files, or one .ptx file>"),
                             cl::OneOrMore, cl::cat(category));
cl::opt<std::string> output("o", cl::desc("Output file ('-' for stdout)"),
                            cl::value_desc("file"), cl::init("-"),
                            cl::cat(category));
cl::opt<Emit>
    emit("emit", cl::desc("What to produce"), cl::init(Emit::PTX),
         cl::values(clEnumValN(Emit::MLIR, "mlir", "lowered MLIR"),
                    clEnumValN(Emit::LLVM, "llvm", "LLVM IR"),
                    clEnumValN(Emit::PTX, "ptx", "PTX (gpu target)"),
                    clEnumValN(Emit::Cubin, "cubin",
                               "cubin through ptxas (gpu target)"),
                    clEnumValN(Emit::Obj, "obj", "object file (host target)"),
                    clEnumValN(Emit::Manifest, "manifest",
                               "launch manifest of the kernels (gpu target)")),
         cl::cat(category));
cl::opt<Target> target(
    "target", cl::desc("Where the code runs"), cl::init(Target::GPU),
    cl::values(clEnumValN(Target::GPU, "gpu", "NVIDIA GPU kernels"),
               clEnumValN(Target::Host, "host", "host loops (the CPU path)")),
    cl::cat(category));
cl::opt<std::string> chip("chip", cl::desc("sm_80, sm_86, sm_89 or sm_90"),
                          cl::init("sm_90"), cl::cat(category));
cl::opt<std::string> dumpDir("dump-dir",
                             cl::desc("Write every stage's output into DIR"),
                             cl::value_desc("DIR"), cl::cat(category));
cl::opt<std::string> ptxasPath("ptxas",
                               cl::desc("ptxas to use (else PATH, "
                                        "$CUDA_HOME/bin, $CUDA_PATH/bin, "
                                        "/usr/local/cuda/bin)"),
                               cl::cat(category));
cl::opt<bool> ptxasVerbose("ptxas-verbose",
                           cl::desc("Print ptxas's resource report"),
                           cl::cat(category));
cl::opt<bool> timing("timing", cl::desc("Report the time of every stage"),
                     cl::cat(category));
cl::opt<int64_t> tileBytes("tile-bytes",
                           cl::desc("Row bytes a row-move block owns"),
                           cl::init(64), cl::cat(category));
cl::opt<int64_t> stagingBytes(
    "staging-bytes",
    cl::desc("Shared memory of a row-move block for overlapping rows"),
    cl::init(98304), cl::cat(category));

/// Parses every input into one module, each with its own source manager so
/// that parse errors point into the right file.
OwningOpRef<ModuleOp> parseInputs(MLIRContext &ctx) {
  OwningOpRef<ModuleOp> merged = ModuleOp::create(UnknownLoc::get(&ctx));
  for (const std::string &file : inputs) {
    std::string error;
    auto buffer = openInputFile(file, &error);
    if (!buffer) {
      llvm::errs() << "specc: error: " << error << "\n";
      return nullptr;
    }
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    SourceMgrDiagnosticHandler handler(sm, &ctx);
    OwningOpRef<ModuleOp> m = parseSourceFile<ModuleOp>(sm, &ctx);
    if (!m)
      return nullptr;
    // Kernels are named after their functions: a name defined twice would
    // give kernels the runtime never finds.
    for (Operation &op : *m->getBody()) {
      auto sym = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      if (!sym)
        continue;
      if (Operation *prev = merged->lookupSymbol(sym)) {
        InFlightDiagnostic d = op.emitError()
                               << "@" << sym.getValue()
                               << " is already defined by an earlier input";
        d.attachNote(prev->getLoc()) << "first defined here";
        return nullptr;
      }
    }
    for (Operation &op : llvm::make_early_inc_range(*m->getBody()))
      op.moveBefore(merged->getBody(), merged->getBody()->end());
  }
  return merged;
}

bool writeFile(llvm::StringRef path, llvm::StringRef data) {
  std::string error;
  auto out = openOutputFile(path, &error);
  if (!out) {
    llvm::errs() << "specc: " << error << "\n";
    return false;
  }
  out->os() << data;
  out->keep();
  return true;
}

std::string dumpPath(llvm::StringRef name) {
  llvm::SmallString<256> p(dumpDir);
  llvm::sys::path::append(p, name);
  return std::string(p);
}

/// Prints `msg` as specc's error; the exit status of a failed run.
int fail(const llvm::Twine &msg) {
  llvm::errs() << "specc: error: " << msg << "\n";
  return 1;
}

/// `ptx` through ptxas for --chip (its log printed with --ptxas-verbose);
/// failure once the error is printed.
FailureOr<std::string> assemble(llvm::StringRef ptx) {
  std::string ptxas = specc::findPtxas(ptxasPath);
  if (ptxas.empty()) {
    fail("ptxas not found (--ptxas, PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, "
         "/usr/local/cuda/bin)");
    return failure();
  }
  std::string error, log;
  FailureOr<std::string> cubin =
      specc::assemblePTX(ptx, chip, ptxas, error, &log);
  if (failed(cubin)) {
    fail(error);
    return failure();
  }
  if (ptxasVerbose)
    llvm::errs() << log;
  return cubin;
}

/// --emit=cubin of a PTX input: ptxas alone.
int assembleInput(const std::string &file) {
  if (emit != Emit::Cubin)
    return fail("a .ptx input gives only --emit=cubin");
  std::string error;
  auto buffer = openInputFile(file, &error);
  if (!buffer)
    return fail(error);
  FailureOr<std::string> cubin = assemble(buffer->getBuffer());
  if (failed(cubin))
    return 1;
  return writeFile(output, *cubin) ? 0 : 1;
}

std::string print(ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  // --version also names the ptxas that --emit=cubin runs without --ptxas:
  // the one answer to "which ptxas", which the test configuration reads.
  cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    std::string ptxas = specc::findPtxas("");
    os << "  ptxas: "
       << (ptxas.empty() ? "not found (PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, "
                           "/usr/local/cuda/bin)"
                         : ptxas)
       << "\n";
  });
  cl::ParseCommandLineOptions(argc, argv,
                              "specc: compiles kvcache kernels to PTX, cubin "
                              "or host objects\n");
  if (!specc::isSupportedChip(chip))
    return fail("unsupported --chip=" + chip + " (sm_80, sm_86, sm_89, sm_90)");
  bool gpu = target == Target::GPU;
  if (gpu && emit == Emit::Obj)
    return fail("--emit=obj needs --target=host");
  if (!gpu &&
      (emit == Emit::PTX || emit == Emit::Cubin || emit == Emit::Manifest))
    return fail("--emit=ptx, cubin and manifest need --target=gpu");
  if (llvm::any_of(inputs, [](const std::string &f) {
        return llvm::StringRef(f).ends_with(".ptx");
      })) {
    if (inputs.size() != 1)
      return fail("a .ptx input is assembled alone: give one file");
    if (!dumpDir.empty() || timing)
      return fail("--dump-dir and --timing apply to .mlir inputs");
    return assembleInput(inputs.front());
  }
  if (!dumpDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir))
      return fail("cannot create --dump-dir " + dumpDir + ": " + ec.message());

  DefaultTimingManager tm;
  tm.setEnabled(timing);
  TimingScope root = tm.getRootScope();

  DialectRegistry registry;
  specc::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // Diagnostics of later stages: located by file name, loaded on demand.
  llvm::SourceMgr sm;
  SourceMgrDiagnosticHandler diagnostics(sm, &ctx);

  OwningOpRef<ModuleOp> module;
  {
    TimingScope t = root.nest("parse");
    module = parseInputs(ctx);
  }
  if (!module)
    return 1;
  if (!dumpDir.empty() && !writeFile(dumpPath("00-input.mlir"), print(*module)))
    return 1;

  specc::GPUPipelineOptions options;
  options.chip = chip;
  options.tileBytes = tileBytes;
  options.stagingBytes = stagingBytes;
  std::vector<specc::KernelLaunch> launches;
  auto run = [&](llvm::function_ref<void(OpPassManager &)> build,
                 llvm::StringRef name) {
    PassManager pm(&ctx);
    build(pm);
    TimingScope t = root.nest(name);
    pm.enableTiming(t);
    if (!dumpDir.empty())
      pm.enableIRPrintingToFileTree([](Pass *, Operation *) { return false; },
                                    [](Pass *, Operation *) { return true; },
                                    false, false, false, dumpPath(name));
    return pm.run(*module);
  };
  if (gpu) {
    if (failed(run(
            [&](OpPassManager &pm) {
              specc::buildKVCacheToGPUKernels(pm, options);
            },
            "01-kvcache-to-gpu")))
      return 1;
    launches = specc::collectLaunches(*module);
    if (failed(run(
            [&](OpPassManager &pm) {
              specc::buildGPUKernelsToNVVM(pm, options);
            },
            "02-gpu-to-nvvm")))
      return 1;
  } else if (failed(run(specc::buildHostPipeline, "01-host"))) {
    return 1;
  }
  std::string manifest = specc::formatManifest(launches);
  if (!dumpDir.empty()) {
    if (!writeFile(dumpPath(gpu ? "03-nvvm.mlir" : "02-llvm.mlir"),
                   print(*module)))
      return 1;
    if (gpu && !writeFile(dumpPath("kernels.manifest"), manifest))
      return 1;
  }

  std::string result;
  TimingScope emitTimer = root.nest("emit");
  switch (emit) {
  case Emit::MLIR:
    result = print(*module);
    break;
  case Emit::Manifest:
    result = manifest;
    break;
  case Emit::LLVM: {
    FailureOr<std::string> ir = gpu ? specc::translateKernelsToLLVMIR(*module)
                                    : specc::translateHostToLLVMIR(*module);
    if (failed(ir))
      return 1;
    result = *ir;
    break;
  }
  case Emit::Obj: {
    std::string error;
    FailureOr<std::string> obj = specc::emitHostObject(*module, error);
    if (failed(obj))
      return fail(error);
    result = *obj;
    break;
  }
  case Emit::PTX:
  case Emit::Cubin: {
    FailureOr<std::string> ptx = specc::emitPTX(*module);
    if (failed(ptx))
      return 1;
    if (!dumpDir.empty() &&
        !writeFile(dumpPath("kernels." + chip + ".ptx"), *ptx))
      return 1;
    if (emit == Emit::PTX) {
      result = *ptx;
      break;
    }
    TimingScope t = emitTimer.nest("ptxas");
    FailureOr<std::string> cubin = assemble(*ptx);
    if (failed(cubin))
      return 1;
    if (!dumpDir.empty() &&
        !writeFile(dumpPath("kernels." + chip + ".cubin"), *cubin))
      return 1;
    result = *cubin;
    break;
  }
  }
  emitTimer.stop();
  if (!writeFile(output, result))
    return 1;
  return 0;
}
