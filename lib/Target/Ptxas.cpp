//===- Ptxas.cpp - PTX to cubin through ptxas -----------------------------===//
//
// Finds ptxas in a stated order and runs it. A failure leaves the PTX file in
// place and reports the exact command that reproduces it with ptxas's log.
//
//===----------------------------------------------------------------------===//

#include "Target/Target.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

static std::string join(llvm::ArrayRef<llvm::StringRef> args) {
  std::string cmd;
  for (llvm::StringRef a : args)
    cmd += (cmd.empty() ? "" : " ") + a.str();
  return cmd;
}

std::string specc::findPtxas(llvm::StringRef explicitPath) {
  if (!explicitPath.empty())
    return llvm::sys::fs::can_execute(explicitPath) ? explicitPath.str() : "";
  if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char *root = std::getenv(var)) {
      llvm::SmallString<256> path(root);
      llvm::sys::path::append(path, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(path))
        return std::string(path);
    }
  }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  return "";
}

FailureOr<std::string> specc::assemblePTX(llvm::StringRef ptx,
                                          llvm::StringRef chip,
                                          llvm::StringRef ptxas,
                                          std::string &error,
                                          std::string *log) {
  llvm::SmallString<128> input, output, logFile;
  if (llvm::sys::fs::createTemporaryFile("specc", "ptx", input) ||
      llvm::sys::fs::createTemporaryFile("specc", "cubin", output) ||
      llvm::sys::fs::createTemporaryFile("specc-ptxas", "log", logFile)) {
    error = "cannot create temporary files for ptxas";
    return failure();
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec) {
      error = "cannot write " + std::string(input) + ": " + ec.message();
      return failure();
    }
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  // --split-compile=0: one thread per CPU across the kernels of the module
  // ("minimal, if any, impact on the compiled binary", says ptxas).
  llvm::SmallVector<llvm::StringRef> args = {
      ptxas, arch, "-O3", "--split-compile=0", "-v", input, "-o", output};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logFile, logFile};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &execError);
  std::string logText;
  if (auto buf = llvm::MemoryBuffer::getFile(logFile))
    logText = (*buf)->getBuffer().str();
  llvm::sys::fs::remove(logFile);
  if (log)
    *log = logText;
  if (rc != 0) {
    error = "ptxas failed (" +
            (rc < 0 ? execError : "exit code " + std::to_string(rc)) +
            "); reproduce with:\n  " + join(args) + "\nptxas log:\n" + logText;
    llvm::sys::fs::remove(output);
    return failure();
  }
  auto buf = llvm::MemoryBuffer::getFile(output, /*IsText=*/false);
  llvm::sys::fs::remove(output);
  if (!buf || (*buf)->getBufferSize() == 0) {
    // The output file exists from the start; an empty one means ptxas
    // reported success without producing anything.
    error = "ptxas exited 0 but wrote no cubin; reproduce with:\n  " +
            join(args) + "\nptxas log:\n" + logText;
    return failure();
  }
  llvm::sys::fs::remove(input);
  return (*buf)->getBuffer().str();
}
