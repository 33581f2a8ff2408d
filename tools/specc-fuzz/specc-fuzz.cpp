//===- specc-fuzz.cpp - libFuzzer target over specc's pipelines -----------===//
//
// Each input is parsed as an MLIR module with everything specc registers,
// verified, and compiled the way `specc` does it, in process:
//
//   * GPU: kvcache-to-gpu (stage 1), the launch manifest, gpu-to-nvvm
//     (stage 2) and PTX through the NVVM target (no ptxas);
//   * host, on a fresh parse: specc-host-pipeline and translation to LLVM IR.
//
// Diagnostics are the expected answer to a bad input and are swallowed (set
// SPECC_FUZZ_DIAGNOSTICS=1 to print them). Bugs are what stops the process:
// crashes, assertions, sanitizer reports, LLVM fatal errors (made to abort
// here, rather than exit(1), so that libFuzzer sees them), a pass that leaves
// IR the verifier rejects, and a stage that fails without saying why.
//
//===----------------------------------------------------------------------===//

#include "InitAll.h"
#include "Pipelines/Pipelines.h"
#include "Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace mlir;

namespace {
bool printDiagnostics = false;
constexpr size_t kMaxKernelsPastStage1 = 8;

const DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    specc::registerAllDialects(*reg);
    return reg;
  }();
  return *r;
}

[[noreturn]] void bug(const llvm::Twine &what) {
  llvm::errs() << "specc-fuzz: BUG: " << what << "\n";
  llvm::errs().flush();
  std::abort();
}

/// Swallows (or prints) diagnostics and remembers whether an error was seen.
struct Diagnostics {
  explicit Diagnostics(MLIRContext &ctx)
      : handler(&ctx, [this](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error)
            sawError = true;
          if (printDiagnostics)
            llvm::errs() << d.getLocation() << ": " << d << "\n";
          return success();
        }) {}
  ScopedDiagnosticHandler handler;
  bool sawError = false;
};

/// The pass manager's own verification would turn invalid IR out of a pass
/// into one more diagnostic; here it is a bug of that pass.
struct VerifyAfterEachPass : PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (failed(verify(op)))
      bug("pass '" + pass->getArgument() +
          "' produced IR that fails to verify");
  }
};

LogicalResult runPipeline(ModuleOp module, Diagnostics &diags,
                          llvm::StringRef stage,
                          llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext());
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<VerifyAfterEachPass>());
  build(pm);
  if (succeeded(pm.run(module)))
    return success();
  if (!diags.sawError)
    bug(stage + " failed without an error diagnostic");
  return failure();
}

/// Parses and verifies; null (with diagnostics) for an invalid module.
OwningOpRef<ModuleOp> parse(MLIRContext &ctx, Diagnostics &diags,
                            llvm::StringRef text) {
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "input"),
                        llvm::SMLoc());
  ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sm, config);
  if (!module) {
    if (!diags.sawError)
      bug("parse failed without an error diagnostic");
    return nullptr;
  }
  if (failed(verify(*module))) {
    if (!diags.sawError)
      bug("verify failed without an error diagnostic");
    return nullptr;
  }
  return module;
}

void gpu(MLIRContext &ctx, llvm::StringRef text) {
  Diagnostics diags(ctx);
  OwningOpRef<ModuleOp> module = parse(ctx, diags, text);
  if (!module)
    return;
  specc::GPUPipelineOptions options;
  if (failed(
          runPipeline(*module, diags, "kvcache-to-gpu", [&](OpPassManager &pm) {
            specc::buildKVCacheToGPUKernels(pm, options);
          })))
    return;
  // What the driver writes next to the PTX.
  std::vector<specc::KernelLaunch> launches = specc::collectLaunches(*module);
  (void)specc::formatManifest(launches);
  // Stage 2 and the NVPTX backend are upstream code, and slow under the
  // sanitizers (kernels/ declares 72 specializations: some 20 s here). A
  // module of many kernels stops after stage 1 so that the fuzzer keeps its
  // pace; one of a few kernels goes all the way.
  if (launches.size() > kMaxKernelsPastStage1)
    return;
  if (failed(runPipeline(*module, diags, "gpu-to-nvvm", [&](OpPassManager &pm) {
        specc::buildGPUKernelsToNVVM(pm, options);
      })))
    return;
  FailureOr<std::string> ptx = specc::emitPTX(*module);
  if (failed(ptx) && !diags.sawError)
    bug("PTX emission failed without an error diagnostic");
}

void host(MLIRContext &ctx, llvm::StringRef text) {
  Diagnostics diags(ctx);
  OwningOpRef<ModuleOp> module = parse(ctx, diags, text);
  if (!module)
    return;
  if (failed(runPipeline(*module, diags, "specc-host-pipeline",
                         specc::buildHostPipeline)))
    return;
  FailureOr<std::string> ir = specc::translateHostToLLVMIR(*module);
  if (failed(ir) && !diags.sawError)
    bug("translation to LLVM IR failed without an error diagnostic");
}
} // namespace

// The installed LLVM/MLIR libraries are not instrumented, but inline code of
// their headers (BumpPtrAllocator, ...) compiled here poisons memory under
// AddressSanitizer that the libraries' own copies never unpoison: manual
// poisoning is turned off, every other check stays.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  printDiagnostics = std::getenv("SPECC_FUZZ_DIAGNOSTICS") != nullptr;
  // LLVM's default handler exits with status 1, which libFuzzer would take
  // for a normal end.
  llvm::install_fatal_error_handler(
      [](void *, const char *reason, bool) {
        bug(llvm::Twine("LLVM fatal error: ") + reason);
      },
      nullptr);
  registry();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  // One context per input: nothing carries over from one input to the next.
  MLIRContext ctx(registry(), MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  gpu(ctx, text);
  host(ctx, text);
  return 0;
}
